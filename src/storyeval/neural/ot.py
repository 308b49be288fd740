"""Free-support Wasserstein barycenters for BaryScore (Colombo et al. 2021).

Barycenter (`barycenter`). The authors' library calls POT's `ot.lp.free_support_barycenter`: a support of T
points of mass 1/T started at zeros, layers weighted 1/L, and the fixed point X <- sum_l (1/L) T G_l Y_l where
G_l is the exact (network simplex) transport from the support to layer l, for at most 1,000 steps, until the
squared displacement is <= 1e-7 (POT's default).
Start (a fix, `init="zeros"` restores the library's): from zeros every row of the first step's cost is equal,
so every plan is optimal and the network simplex's choice hinges on the last bit of the inputs; the fixed
point is a local optimum that depends on it. Measured on 6 real MiniLM texts with idf weights: normalising
the weights with numpy's instead of Python's sum (a 1e-18 change) moved one text's barycenter by W2^2 = 0.025,
as large as the spread of BaryScore-W between systems. Started at each token's mean over the layers
(`init="layer-mean"`, default) the first step is a generic problem and the same change moves nothing
(< 4e-16); it takes about as many steps (17-95 against 24-74 on 12 texts).
Speed: each step costs L dense T x T network simplex solves (48 ms each at T = 512, 30-75 steps per text:
the library's bottleneck, ~13 s per story in the reanalysis). `solver="pot"` calls POT's function itself.
`solver="certified"` (default) runs the same fixed point and replaces each dense solve after the first by a
warm-started one: the previous step's optimal basis (a spanning tree, still primal feasible since the masses
do not change) is pivoted to the new optimum by the network simplex of `storyeval.neural.simplex`, on costs
kept across steps (`LayerCosts`: only the rows of support points that moved are recomputed). The plan is
used only if it is provably the unique optimum: no arc has reduced cost < -1e-12 (optimal on the full
problem) and none outside the tree has reduced cost <= 1e-9 (unique), so any exact solver (POT's dense one
included) returns it. Otherwise (the first step, ties, a pivot limit) POT's dense solver decides, on the
full cost as POT passes it. Ties make the fixed point sensitive to float noise: on 20 real 100-512-token
MiniLM texts with idf weights the two solvers' barycenters are the same measure (W2^2 < 1e-15) in 19; in
the 20th, step 3 has two optimal plans of equal cost and POT's dense solver, given supports 1e-15 apart,
picks differently (W2^2 = 2e-7 between the results): the library's algorithm's own sensitivity, not an
error of either. Measured on one core (6 real texts, 100-512 tokens): POT's barycenter 10.4 s against 2.8 s
on 4 texts (W2^2 between them < 4e-16); the previous certified solver (column generation with POT's sparse
solver restarted from scratch at each step) 14.7 s, this one 3.7 s, the same barycenters (W2^2 < 5e-16;
in another run the text with a tie differed by 1.6e-6); on 24 random hanna-llm stories (pooled idf) 23
equal POT's barycenter, the 24th took the other plan at a tie in step 6 (W2^2 = 3.6e-5). At the first step
a layer starts from the previous layer's basis, so POT's dense solver runs once per text unless ties
intervene. Where the time goes now (21 real hanna-llm texts, 13.8 s on one core, ~47 steps a text): the
warm-started solves 41 % (their pricing scans vectorised: 10.1 -> 5.7 s), the cost rows 25 % (a BLAS
product at ~35 GFMA/s, near this core's peak), POT's dense solves 13 % (each text's first, and 2 a text at
exact ties), applying plans 6 %, the certificate 2 %. Applying plans again each step only to the rows whose
arcs changed (`Transported`; ~10 % of a layer's rows after the first steps) took the barycenters of the 21
texts from 12.4 to 11.7 CPU-s (mean of 4 alternated runs, quiet machine), the same bits.

Transport between two barycenters: `storyeval.neural.transport`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

SOLVERS = ("certified", "pot")
INITS = ("layer-mean", "zeros")
SLACK = 1e-12  # a reduced cost below -SLACK is a violated dual constraint
TIE = 1e-9  # arcs with reduced cost <= TIE count as tight when certifying uniqueness
PIVOTS_PER_NODE = 50  # pivot limit of a warm-started solve, per node (then POT decides)
DRIFT = 1e-14  # support moves up to this leave its cost rows as they are (LayerCosts)


def start(locations: np.ndarray, init: str) -> np.ndarray:
    """The barycenter's starting support: zeros (the library) or each token's mean over the layers."""
    return np.zeros(locations.shape[1:]) if init == "zeros" else locations.mean(axis=0)


def barycenter(locations: np.ndarray, weights: np.ndarray, max_iterations: int = 1000,
               stop_threshold: float = 1e-7, solver: str = "certified", init: str = "layer-mean") -> np.ndarray:
    """Free-support Wasserstein barycenter [T, D] of L measures sharing the support size T and the weights.

    `locations` [L, T, D] float64: the token vectors of each layer; `weights` [T] on the simplex (zeros
    allowed). As the authors' library: T support points of mass 1/T, layers weighted 1/L; started at `init`.
    """
    import ot

    layers, size, dim = locations.shape
    mass = np.full(size, 1.0 / size)
    if solver == "pot":
        return ot.lp.free_support_barycenter(list(locations), [weights] * layers, start(locations, init), b=mass,
                                             numItermax=max_iterations, stopThr=stop_threshold)
    active = np.flatnonzero(weights > 0)
    costs = LayerCosts(locations[:, active])
    support, trees = start(locations, init), [None] * layers
    transported = Transported(layers, size, dim)
    share = (1.0 / layers) * 1.0 / mass  # POT's arithmetic: update = update + share * (plan @ points)
    changed = np.arange(size)  # the support points that may have moved since the costs were computed
    for _ in range(max_iterations):
        costs.refresh(support, changed)
        for layer, points in enumerate(locations):
            # At the first step a layer starts from the previous layer's basis (feasible: the same masses).
            tree = trees[layer] if trees[layer] is not None or not layer else trees[layer - 1]
            step = None if tree is None else certified_plan(costs.of(layer), tree)
            if step is None:
                plan = ot.emd(mass, weights, ot.dist(support, points))  # exactly POT's call
                transported.dense(layer, np.dot(plan, points))
                trees[layer] = basis_tree(plan[:, active])
            else:
                trees[layer] = step
                transported.sparse(layer, *step, costs.points[layer])
        update, changed = transported.update(support, share)
        displacement = np.sum((update - support) ** 2)
        support = update
        if displacement <= stop_threshold:
            break
    return support


class Transported:
    """Each layer's plan applied to its points (the rows of plan @ points), kept across fixed-point steps, and the
    update sum_l share * (plan_l @ points_l) summed from them in POT's order (layer by layer, from zeros).

    Why: between two steps the warm-started simplex changes the arcs of few rows (the support points that move:
    ~10 % of a layer's rows after the first steps on real texts), yet summing every row of every layer again
    was most of the time spent applying plans. A row whose arcs and flows are bit for bit the previous step's
    has the same sum, and a support point whose rows are all unchanged has the same update as the previous step,
    so both are kept: the update is the same to the last bit as POT's computed anew."""

    def __init__(self, layers: int, size: int, dim: int):
        self.sums = np.zeros((layers, size, dim))  # [layer, row]: sum_k flow_k points[col_k] over the row's arcs
        self.arcs = [None] * layers  # each layer's last sparse plan, sorted (`sort_arcs`); None: none to compare
        self.changed = np.ones(size, np.bool_)

    def dense(self, layer: int, product: np.ndarray) -> None:
        """A dense plan's product (POT's step): every row may have changed."""
        self.sums[layer], self.arcs[layer] = product, None
        self.changed[:] = True

    def sparse(self, layer: int, rows: np.ndarray, cols: np.ndarray, flows: np.ndarray, points: np.ndarray) -> None:
        """A basis tree's plan (rows, cols, flows): only the rows whose arcs or flows changed are summed again."""
        arcs = sort_arcs(rows, cols, flows, self.sums.shape[1])
        last = arcs if self.arcs[layer] is None else self.arcs[layer]
        transport_rows(*arcs, points, self.sums[layer], *last, self.arcs[layer] is None, self.changed)
        self.arcs[layer] = arcs

    def update(self, support: np.ndarray, share: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The step's new support (the rows of changed points summed again, the others kept) and those rows."""
        update, changed = support.copy(), np.flatnonzero(self.changed)
        sum_layers(update, self.sums, share, self.changed)
        self.changed[:] = False
        return update, changed


@njit(cache=True, nogil=True)
def sort_arcs(rows: np.ndarray, cols: np.ndarray, flows: np.ndarray, size: int):
    """The arcs grouped by row (a counting sort), each row's by column, as a sparse product sums them:
    (row offsets [size + 1], columns, flows)."""
    start = np.zeros(size + 1, np.int64)
    for k in range(len(rows)):
        start[rows[k] + 1] += 1
    for row in range(size):
        start[row + 1] += start[row]
    fill, sorted_cols, sorted_flows = start[:-1].copy(), np.empty(len(rows), np.int64), np.empty(len(rows))
    for k in range(len(rows)):
        place = fill[rows[k]]
        fill[rows[k]] += 1
        while place > start[rows[k]] and sorted_cols[place - 1] > cols[k]:  # insertion: a row has few arcs
            sorted_cols[place], sorted_flows[place] = sorted_cols[place - 1], sorted_flows[place - 1]
            place -= 1
        sorted_cols[place], sorted_flows[place] = cols[k], flows[k]
    return start, sorted_cols, sorted_flows


@njit(cache=True, nogil=True)
def transport_rows(start: np.ndarray, cols: np.ndarray, flows: np.ndarray, points: np.ndarray, sums: np.ndarray,
                   last_start: np.ndarray, last_cols: np.ndarray, last_flows: np.ndarray, every_row: bool,
                   changed: np.ndarray) -> None:
    """sums[i] = sum_k flow_k points[col_k] over row i's arcs (`sort_arcs` order, as the sparse product sums
    them; zero-flow tree arcs skipped, as the sparse plan left them out), for the rows whose arcs or flows
    differ from the last plan's (`last_*`), or every row; those rows are marked in `changed`."""
    dim = points.shape[1]
    for row in range(len(sums)):
        first, end = start[row], start[row + 1]
        same = not every_row and end - first == last_start[row + 1] - last_start[row]
        offset = last_start[row] - first
        k = first
        while same and k < end:
            same = cols[k] == last_cols[k + offset] and flows[k] == last_flows[k + offset]
            k += 1
        if same:
            continue
        changed[row] = True
        row_sum = sums[row]
        row_sum[:] = 0.0
        for k in range(first, end):
            flow, point = flows[k], points[cols[k]]  # row views: the loops below vectorise (2.6x measured)
            if flow > 0:
                for d in range(dim):
                    row_sum[d] += flow * point[d]


@njit(cache=True, nogil=True)
def sum_layers(update: np.ndarray, sums: np.ndarray, share: np.ndarray, changed: np.ndarray) -> None:
    """update[i] = ((0 + share_i sums[0, i]) + share_i sums[1, i]) + ... for the changed rows i: POT's
    `update = update + share * (plan @ points)`, layer by layer, element by element."""
    layers, size, dim = sums.shape
    for row in range(size):
        if not changed[row]:
            continue
        target, scale = update[row], share[row]
        target[:] = 0.0
        for layer in range(layers):
            source = sums[layer, row]
            for d in range(dim):
                target[d] += scale * source[d]


class LayerCosts:
    """Squared-Euclidean costs (as `ot.dist`: |x|^2 - 2 x.y + |y|^2, clipped at 0) from the barycenter's support
    to each layer's points, kept across fixed-point steps: a row is recomputed only when its support point moved
    by more than DRIFT.

    Why: after the first steps only 5-25 % of the support points move per step (measured on 500-token texts),
    so recomputing every row each step was a third of the barycenter's time. A point moved by d <= DRIFT
    changes its costs by at most 4 d (unit token vectors, support inside the unit ball): 4e-14, far below
    the certificate's tie margin TIE. The products x.y come from one BLAS product (29 us a row at D = 384);
    numba then writes the costs in one pass (3 us a row, against 16 for numpy's passes and scatter).
    Tried: the products of a support point made by the last step's plans as the flow-weighted sum of ~2 L
    rows of the points' Gram matrix (2 L m flops instead of D): memory-bound on the 52 MB Gram (32 us a row)
    and it changes the costs' rounding, hence the pivot paths and the flows' last bits, and at a tie the
    fixed point (1 of 21 real texts moved by W2^2 = 1e-4).
    """

    def __init__(self, points: np.ndarray):
        self.points = np.ascontiguousarray(points)  # [L, m, D]
        layers, size, dim = self.points.shape
        self.stacked = self.points.reshape(layers * size, dim)
        self.norms = np.einsum("ij,ij->i", self.stacked, self.stacked)
        self.matrices = self.at = None

    def refresh(self, support: np.ndarray, candidates: np.ndarray) -> None:
        """Recompute the rows of the support points among `candidates` (every point that changed since the last
        refresh) that moved by more than DRIFT since their costs were computed."""
        if self.at is None:
            self.at = support.copy()
            self.matrices = np.empty((len(self.points), len(support), self.points.shape[1]))
            rows = np.arange(len(support))
        else:
            drift = np.sqrt(np.sum((support[candidates] - self.at[candidates]) ** 2, axis=1))
            rows = candidates[drift > DRIFT]
            if not len(rows):
                return
            self.at[rows] = support[rows]
        moved = support[rows]
        write_costs(self.matrices, rows, moved @ self.stacked.T, np.einsum("ij,ij->i", moved, moved), self.norms)

    def of(self, layer: int) -> np.ndarray:
        return self.matrices[layer]  # [T, m], C-contiguous: the simplex's pricing loops vectorise only on these


@njit(cache=True, nogil=True)
def write_costs(matrices: np.ndarray, rows: np.ndarray, products: np.ndarray, own_norms: np.ndarray,
                norms: np.ndarray) -> None:
    """matrices[l, rows[r], j] = max(|x|^2 - 2 x.y + |y|^2, 0), summed in `ot.dist`'s order."""
    layers, _, size = matrices.shape
    for r in range(len(rows)):
        for layer in range(layers):
            target, offset = matrices[layer, rows[r]], layer * size
            for j in range(size):
                value = (-2.0 * products[r, offset + j] + own_norms[r]) + norms[offset + j]
                target[j] = value if value > 0.0 else 0.0


def basis_tree(plan: np.ndarray):
    """The spanning tree (row, column and flow arrays) through a dense plan's support, for the next step's warm
    start; None when the support has a cycle (not a basic solution)."""
    from storyeval.neural.simplex import spanning_tree

    rows, cols = np.nonzero(plan)
    tree = spanning_tree(rows.astype(np.int64), cols.astype(np.int64), plan[rows, cols], *plan.shape)
    return tree if len(tree[0]) else None


def certified_plan(cost: np.ndarray, tree):
    """The unique optimal plan as its basis tree (rows, cols, flows; zero-flow arcs included), or None when
    uniqueness is unproven.

    The network simplex of `storyeval.neural.simplex` pivots from the previous step's basis tree (primal
    feasible: the masses do not change) until every arc's reduced cost is >= -SLACK, i.e. the tree's plan is
    optimal on the full problem. It is the unique optimum when no arc outside the tree has reduced cost
    <= TIE; then any exact solver (POT's dense one included) returns it."""
    from storyeval.neural.simplex import OPTIMAL, solve, unique_tight

    n, m = cost.shape
    rows, cols, flows = (array.copy() for array in tree)
    status, u, v, _ = solve(cost, rows, cols, flows, SLACK, PIVOTS_PER_NODE * (n + m))
    if status != OPTIMAL or not unique_tight(cost, u, v, rows, cols, TIE):
        return None
    return rows, cols, flows
