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
certified sparse one (column generation): POT's network simplex on a few arcs (the previous step's tight arcs,
which carry a feasible plan, plus each row's 8 cheapest arcs in reduced cost), arcs whose reduced cost is
negative under its potentials added until none is (the plan is then optimal on the full problem). The plan
is used only if it is provably the unique optimum: the arcs with reduced cost <= 1e-9 form a forest, so any
exact solver (POT's dense one included) returns it. Otherwise (the first step, ties) POT's dense solver
decides, on the full cost as POT passes it. On 20 real 100-512-token MiniLM texts with idf weights the two
solvers' barycenters are the same measure (W2^2 < 1e-15; in one the rows come out permuted) in 19. In the
20th, step 3 has two optimal plans of equal cost (a tie) and POT's dense solver, given supports 1e-15 apart,
picks differently: the results differ by W2^2 = 2e-7. That is the library's algorithm's own sensitivity,
not an error of either. The certified solver took 28 s where POT's took 51 s on 12 of the texts
(layer-mean start; zeros: 45 s against 78 s), and 14 s against 25 s on 8 others, on 2 busy cores.
Calling POT's sparse solver directly (`emd_c_sparse`, with b rescaled as `ot.emd` does, so the plans are
bit-identical) and testing dual feasibility with one min over the reduced costs took 6 real texts from 19.3 s
to 15.3 s (identical barycenters). What remains per layer and step: the dense cost (a T x T x D product,
~2.5 ms at T = 500), ~2.4 sparse solves of ~3,400 arcs (~1 ms each) and the full reduced-cost checks.

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
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

ARMIJO = 1e-4  # sufficient-increase constant of the backtracking line search
SMALLEST_STEP = 1e-12  # below this step length the objective no longer changes in float64
SOLVERS = ("certified", "pot")
INITS = ("layer-mean", "zeros")
NEIGHBOURS = 8  # cheapest arcs per row added to a sparse transport problem
SLACK = 1e-12  # a reduced cost below -SLACK is a violated dual constraint
TIE = 1e-9  # arcs with reduced cost <= TIE count as tight when certifying uniqueness
MAX_ROUNDS = 50


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
    target = weights[active] * mass.sum() / weights[active].sum()  # as ot.emd rescales b before solving
    support, bases = start(locations, init), [None] * layers
    for _ in range(max_iterations):
        update = np.zeros((size, dim))
        for layer, points in enumerate(locations):
            cost = ot.dist(support, points)
            step = None if bases[layer] is None else certified_plan(mass, target, cost[:, active], bases[layer])
            if step is None:
                plan, log = ot.emd(mass, weights, cost, log=True)  # exactly POT's call
                moved = np.dot(plan, points)
                u, v = log["u"], log["v"][active]
                bases[layer] = np.flatnonzero(tight_arcs(cost[:, active], u, v) | (plan[:, active] > 0)), u, v
            else:
                plan, bases[layer] = step
                moved = plan @ points[active]
            update = update + (1.0 / layers) * 1.0 / mass[:, None] * moved  # POT's arithmetic
        displacement = np.sum((update - support) ** 2)
        support = update
        if displacement <= stop_threshold:
            break
    return support


def tight_arcs(cost: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return cost - u[:, None] - v[None, :] <= TIE


def is_forest(arcs: np.ndarray, shape: tuple[int, int]) -> bool:
    """Whether the bipartite graph of these arcs (flat indices into rows x columns) has no cycle."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n, m = shape
    if len(arcs) > n + m - 1:
        return False
    rows, cols = np.divmod(arcs, m)
    graph = coo_matrix((np.ones(len(arcs)), (rows, n + cols)), shape=(n + m, n + m))
    return len(arcs) == n + m - connected_components(graph, directed=False)[0]


def certified_plan(a: np.ndarray, b: np.ndarray, cost: np.ndarray, basis):
    """The unique optimal plan (sparse) and its tight arcs and potentials, or None when uniqueness is unproven.

    POT's sparse network simplex (`emd_c_sparse`, what `ot.emd` runs on a sparse cost) is called directly on
    flat arc indices: the scipy/POT wrappers cost more than the solve on these ~3,000-arc problems."""
    from ot.lp.emd_wrap import emd_c_sparse
    from scipy.sparse import csr_matrix

    tight, u, v = basis
    n, m = cost.shape
    flat = cost.ravel()
    reduced = np.empty_like(cost)
    candidates = np.zeros(n * m, dtype=bool)
    candidates[tight] = True
    if NEIGHBOURS and m > NEIGHBOURS:
        np.subtract(cost, u[:, None], out=reduced)
        reduced -= v[None, :]
        nearest = np.argpartition(reduced, NEIGHBOURS, axis=1)[:, :NEIGHBOURS] + (np.arange(n) * m)[:, None]
        candidates[nearest.ravel()] = True
    for _ in range(MAX_ROUNDS):
        arcs = np.flatnonzero(candidates)
        rows, cols = np.divmod(arcs, m)
        sources, targets, flows, _, u, v, code = emd_c_sparse(a, b, rows.astype(np.uint64), cols.astype(np.uint64),
                                                             flat[arcs], 100000)
        if code != 1:
            return None
        np.subtract(cost, u[:, None], out=reduced)
        reduced -= v[None, :]
        if reduced.min() >= -SLACK:  # dual feasible on every arc: optimal on the full problem
            tight = np.flatnonzero(reduced.ravel() <= TIE)
            if not is_forest(tight, (n, m)):
                return None
            plan = csr_matrix((flows, (sources.astype(np.int64), targets.astype(np.int64))), shape=(n, m))
            return plan, (tight, u, v)
        candidates |= reduced.ravel() < -SLACK
    return None


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


def one_blas_thread():
    """Limit every loaded BLAS to one thread; POT and scipy.linalg are imported first, since a BLAS library
    loaded after the limit (scipy ships its own OpenBLAS) would keep its default threads."""
    import ot  # noqa: F401
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def single_threaded() -> None:
    """Worker initialiser: one BLAS thread for the worker's life."""
    global _LIMITS
    _LIMITS = one_blas_thread()


def parallel_map(function: Callable, jobs: Iterable, processes: int = 1) -> list:
    """[function(job) for job in jobs], over `processes` worker processes when > 1 (same results, same order).

    Jobs are drawn lazily, at most 2 per worker in flight, so a generator of large jobs never sits in memory
    at once. One BLAS thread per process: on these small (<= 512) matrices threaded OpenBLAS only adds
    contention (measured on 2 busy cores: a 511x511 Cholesky takes 330 ms threaded, 8 ms single-threaded).
    """
    if processes <= 1:
        with one_blas_thread():
            return [function(job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    results, pending = [], deque()
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn"), initializer=single_threaded) as pool:
        for job in jobs:
            pending.append(pool.submit(function, job))
            if len(pending) >= 2 * processes:
                results.append(pending.popleft().result())
        results.extend(future.result() for future in pending)
    return results


def warn_unconverged(metric: str, errors: np.ndarray, tolerance: float) -> None:
    """One warning when some entropic problems stopped above the tolerance (their values are still reported)."""
    late = errors > tolerance
    if late.any():
        warnings.warn(f"metric {metric}: {int(late.sum())} of {late.size} entropic problems stopped with a marginal "
                      f"error up to {errors.max():.1e} (tolerance {tolerance:.0e})", stacklevel=3)
