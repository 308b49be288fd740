"""Optimal-transport helpers of BaryScore (spec section 4): free-support Wasserstein barycenters, exact transport
and entropic transport that stays stable at every regularisation.

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
intervene. Where the time goes now (the 6 texts): the warm-started solves 40 %, the cost rows 21 %, the
fixed-point arithmetic 11 %, POT's dense first step 6 %.

Transport (`transport`): between two point clouds with uniform masses and squared-Euclidean ground cost
(`ot.dist`), as the library: the exact cost (`ot.emd2`) and, for each regularisation eps, the entropic plan
P_eps = argmin <P, C> + eps KL(P | a x b) with its transport cost <P_eps, C> (what `ot.sinkhorn2` returns) and
its objective OT_eps (cost + entropy term, for the debiased Sinkhorn divergence).
The library ran plain Sinkhorn (`ot.bregman.sinkhorn2`), whose kernel exp(-C/eps) underflows at eps = 0.001:
the released SD-0.001 values are 1e-56..1e-9 noise. Here each entropic problem is solved in the log domain,
by Newton's method on the semi-dual (Brauer et al. 2017, "A Sinkhorn-Newton method for entropic optimal
transport"; Cuturi & Peyre 2018 for the semi-dual): g in R^m, f_i = -eps log sum_j b_j exp((g_j - C_ij)/eps)
(a max-shifted log-sum-exp, never underflows), maximise D(g) = <a, f> + <b, g> (= OT_eps at the optimum).
Why Newton and not Sinkhorn: Sinkhorn needs 10^3-10^4 sweeps per problem below eps = 0.1 on 500-token texts
(measured: 11,000 sweeps at eps = 0.1 for one pair); Newton converges quadratically in 2-25 steps. Steps
are damped by Armijo backtracking (D is concave, so this converges from any start); the reduced Hessian is a
weighted graph Laplacian, solved by Cholesky with one potential pinned and a tiny ridge when it is near
singular. The smallest eps starts from the exact transport's dual potentials, each larger one from the
previous solution. Convergence: L1 error of the column marginal below `tolerance` (rows are exact).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ARMIJO = 1e-4  # sufficient-increase constant of the backtracking line search
SMALLEST_STEP = 1e-12  # below this step length the objective no longer changes in float64
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
    for _ in range(max_iterations):
        update = np.zeros((size, dim))
        costs.refresh(support)
        for layer, points in enumerate(locations):
            # At the first step a layer starts from the previous layer's basis (feasible: the same masses).
            tree = trees[layer] if trees[layer] is not None or not layer else trees[layer - 1]
            step = None if tree is None else certified_plan(costs.of(layer), tree)
            if step is None:
                plan = ot.emd(mass, weights, ot.dist(support, points))  # exactly POT's call
                moved = np.dot(plan, points)
                trees[layer] = basis_tree(plan[:, active])
            else:
                plan, trees[layer] = step
                moved = plan @ costs.points[layer]
            update = update + (1.0 / layers) * 1.0 / mass[:, None] * moved  # POT's arithmetic
        displacement = np.sum((update - support) ** 2)
        support = update
        if displacement <= stop_threshold:
            break
    return support


class LayerCosts:
    """Squared-Euclidean costs (as `ot.dist`) from the barycenter's support to each layer's points, kept across
    fixed-point steps: a row is recomputed only when its support point moved by more than DRIFT.

    Why: after the first steps only 5-25 % of the support points move per step (measured on 500-token texts),
    so recomputing every row each step was a third of the barycenter's time. A point moved by d <= DRIFT
    changes its costs by at most 4 d (unit token vectors, support inside the unit ball): 4e-14, far below
    the certificate's tie margin TIE.
    """

    def __init__(self, points: np.ndarray):
        self.points = np.ascontiguousarray(points)  # [L, m, D]
        layers, size, dim = self.points.shape
        self.stacked = self.points.reshape(layers * size, dim)
        self.norms = np.einsum("ij,ij->i", self.stacked, self.stacked).reshape(layers, size)
        self.matrices = self.at = None

    def refresh(self, support: np.ndarray) -> None:
        if self.at is None:
            self.at, self.matrices = support.copy(), np.empty((len(self.points), len(support), self.points.shape[1]))
            rows = np.arange(len(support))
        else:
            rows = np.flatnonzero(np.sqrt(np.sum((support - self.at) ** 2, axis=1)) > DRIFT)
            if not len(rows):
                return
            self.at[rows] = support[rows]
        moved = support[rows]
        products = (moved @ self.stacked.T).reshape(len(rows), *self.norms.shape).transpose(1, 0, 2)
        block = -2 * products + np.einsum("ij,ij->i", moved, moved)[None, :, None] + self.norms[:, None, :]
        self.matrices[:, rows] = np.maximum(block, 0)

    def of(self, layer: int) -> np.ndarray:
        return self.matrices[layer]


def basis_tree(plan: np.ndarray):
    """The spanning tree (row, column and flow arrays) through a dense plan's support, for the next step's warm
    start; None when the support has a cycle (not a basic solution)."""
    from storyeval.neural.simplex import spanning_tree

    rows, cols = np.nonzero(plan)
    tree = spanning_tree(rows.astype(np.int64), cols.astype(np.int64), plan[rows, cols], *plan.shape)
    return tree if len(tree[0]) else None


def certified_plan(cost: np.ndarray, tree):
    """The unique optimal plan (sparse) and its basis tree, or None when uniqueness is unproven.

    The network simplex of `storyeval.neural.simplex` pivots from the previous step's basis tree (primal
    feasible: the masses do not change) until every arc's reduced cost is >= -SLACK, i.e. the tree's plan is
    optimal on the full problem. It is the unique optimum when no arc outside the tree has reduced cost
    <= TIE; then any exact solver (POT's dense one included) returns it."""
    from scipy.sparse import csr_matrix

    from storyeval.neural.simplex import OPTIMAL, solve, unique_tight

    n, m = cost.shape
    rows, cols, flows = (array.copy() for array in tree)
    status, u, v, _ = solve(cost, rows, cols, flows, SLACK, PIVOTS_PER_NODE * (n + m))
    if status != OPTIMAL or not unique_tight(cost, u, v, rows, cols, TIE):
        return None
    carried = flows > 0
    return csr_matrix((flows[carried], (rows[carried], cols[carried])), shape=(n, m)), (rows, cols, flows)


@dataclass(frozen=True)
class Transport:
    exact: float  # min <P, C> over couplings (EMD)
    costs: np.ndarray  # <P_eps, C> per regularisation, in the order asked
    objectives: np.ndarray  # OT_eps = <P_eps, C> + eps KL(P_eps | a x b)
    errors: np.ndarray  # L1 error of the column marginal at the end


def transport(x: np.ndarray, y: np.ndarray, regularisations: Sequence[float], tolerance: float = 1e-9,
              max_steps: int = 100) -> Transport:
    """Exact and entropic transport between the uniform measures on the rows of x and of y (module docstring)."""
    import ot

    cost = ot.dist(x, y)
    a, b = np.full(len(x), 1.0 / len(x)), np.full(len(y), 1.0 / len(y))
    exact, log = ot.emd2(a, b, cost, log=True)
    potential = np.asarray(log["v"], dtype=np.float64)
    order = np.argsort(regularisations, kind="stable")
    costs, objectives, errors = (np.empty(len(order)) for _ in range(3))
    for index in order:
        potential, costs[index], objectives[index], errors[index] = entropic(
            a, b, cost, float(regularisations[index]), potential, tolerance, max_steps)
    return Transport(float(exact), costs, objectives, errors)


def semi_dual(g: np.ndarray, a: np.ndarray, b: np.ndarray, cost: np.ndarray, reg: float):
    """D(g) and the row-conditional plan pi_ij = P_ij / a_i, by a max-shifted log-sum-exp (no underflow).

    Entries below exp(-300) of their row's largest are set to 0 (their share is < 1e-130): left to exp they
    become subnormal floats, which made every later product ~10x slower at eps = 0.001.
    """
    scores = np.log(b) + (g - cost) / reg
    top = scores.max(axis=1, keepdims=True)
    scores -= top
    kernel = np.exp(scores, where=scores > -300.0, out=np.zeros_like(scores))
    total = kernel.sum(axis=1, keepdims=True)
    f = -reg * (top[:, 0] + np.log(total[:, 0]))
    return a @ f + b @ g, kernel / total


def newton_direction(a: np.ndarray, rows: np.ndarray, column_mass: np.ndarray, gradient: np.ndarray,
                     reg: float) -> np.ndarray:
    """Solve (diag(c) - pi^T diag(a) pi) d = reg * gradient with d_0 = 0 (the Laplacian's null space is 1)."""
    from scipy.linalg import cho_factor, cho_solve

    scaled = np.sqrt(a)[:, None] * rows
    laplacian = np.diag(column_mass) - scaled.T @ scaled
    reduced = laplacian[1:, 1:]
    ridge = 1e-12 * float(np.max(np.diag(reduced), initial=0.0)) + 1e-300
    direction = np.zeros(len(gradient))
    for _ in range(12):  # a near-singular Laplacian (very weak edges at small eps) gets a growing ridge
        try:
            factor = cho_factor(reduced + ridge * np.eye(len(reduced)), check_finite=False)
            direction[1:] = cho_solve(factor, reg * gradient[1:], check_finite=False)
            return direction
        except np.linalg.LinAlgError:
            ridge *= 1e3
    return reg * gradient / np.maximum(column_mass, 1e-300)  # diagonal fallback: a scaled gradient step


def entropic(a: np.ndarray, b: np.ndarray, cost: np.ndarray, reg: float, g: np.ndarray, tolerance: float,
             max_steps: int) -> tuple[np.ndarray, float, float, float]:
    """Damped Newton on the semi-dual from g: (g*, <P, C>, OT_eps, column-marginal L1 error)."""
    value, rows = semi_dual(g, a, b, cost, reg)
    error = float(np.abs(b - a @ rows).sum())
    for _ in range(max_steps):
        if error <= tolerance:
            break
        column_mass = a @ rows
        direction = newton_direction(a, rows, column_mass, b - column_mass, reg)
        slope, step = float((b - column_mass) @ direction), 1.0
        while step >= SMALLEST_STEP:
            trial_value, trial_rows = semi_dual(g + step * direction, a, b, cost, reg)
            trial_error = float(np.abs(b - a @ trial_rows).sum())
            # Armijo; near the optimum the predicted gain falls below float64 resolution of D, and a step that
            # lowers the marginal error is taken instead (the Newton step there is the right one).
            if trial_value >= value + ARMIJO * step * slope or (
                    step * slope <= 1e-14 * abs(value) and trial_error < error):
                break
            step /= 2
        if step < SMALLEST_STEP:
            break  # float64 floor reached; the error is reported
        g, value, rows, error = g + step * direction, trial_value, trial_rows, trial_error
    return g, float(a @ (rows * cost).sum(axis=1)), float(value), error


def warn_unconverged(metric: str, errors: np.ndarray, tolerance: float) -> None:
    """One warning when some entropic problems stopped above the tolerance (their values are still reported)."""
    late = errors > tolerance
    if late.any():
        warnings.warn(f"metric {metric}: {int(late.sum())} of {late.size} entropic problems stopped with a marginal "
                      f"error up to {errors.max():.1e} (tolerance {tolerance:.0e})", stacklevel=3)
