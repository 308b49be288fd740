"""PERM-BOTH tests and BOOT-BOTH intervals (Deutsch, Dror & Roth, TACL 2021), and WMT significance clusters.

Both resample the two axes of a [prompt, system] score table together, as
Deutsch et al. (2021, Sec. 3-4) recommend for correlations that depend on
systems and inputs alike:

- BOOT-BOTH: each resample draws P prompts and S systems with replacement and
  recomputes the grouped correlation (storyeval.stats.grouping) on that
  sub-table; the interval is the percentile interval of the resamples.
- PERM-BOTH: does metric a correlate better than metric b? Under H0 the two
  are exchangeable, so each permutation swaps a's and b's score independently
  in every (prompt, system) cell (scores standardised over all cells first, as
  in mt-metrics-eval's PermutationSigDiff), and p = (k + 1) / (n + 1) with k
  of the n permutations giving r(a') - r(b') >= the observed r(a) - r(b)
  (Phipson & Smyth 2010: the observed assignment counts as one of the
  permutations, so p is never 0 and the test keeps its level; mt-metrics-eval
  reports k / n, which is 0 when no permutation reaches the observed delta).

Vectorised with numpy: one seeded draw of swap masks [B, P, S] serves every
pair of metrics (common random numbers: each test is valid on its own, and
results do not depend on which pairs are run), and a block of permutations x
a chunk of pairs is one array computation. Missing cells (NaN): a pair of
columns is tested on the cells both have (each keeps its NaN where the other
has none, so a swap moves no value into a missing cell), its observed delta
too; BOOT-BOTH's correlations drop them pair by pair (correlation.correlate).
Differences within FLOAT_TOL count
as equal, so the unswapped permutation ties with the observed delta whatever
the summation order. Optional early stopping (mt-metrics-eval's
PermutationSigDiffParams): after each block of permutations, a pair whose
running p (for its better-looking metric) is below early_min or above
early_max stops; its p then rests on fewer permutations n (column
`permutations`), and the smallest p it can give is 1 / (n + 1) (column
`p_min`, the test's resolution: with blocks of 100, 1/101 = 0.0099).

Significance clusters as WMT reports them (mt-metrics-eval data.AssignRanks):
metrics sorted by r; a metric opens a new rank when one of the metrics of
the current rank beats it at p <= alpha, so all metrics no test separates
from the best share rank 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.stats.correlation import cell_means, correlate, merge_float_ties, story_level
from storyeval.stats.grouping import coefficient_function, grouped_arrays
from storyeval.stats.kendall import CALIBRATED

FLOAT_TOL = 1e-12
SYSTEM_PERMS = ("cells", "systems")
CELLS_PER_CHUNK = 2**22
PERM_CELLS_PER_CHUNK = 2**18  # PERM-BOTH: arrays that stay in cache (item grouping: 2x faster than 2**22)


def _check(human: np.ndarray, metrics: np.ndarray, names: list[str], coefficient: str, n: int, what: str) -> None:
    if human.ndim != 3 or metrics.ndim != 3 or human.shape[:2] != metrics.shape[:2] or metrics.shape[-1] != len(names):
        raise InputError(
            f"{what}: need human [P, S, C] and metrics [P, S, M] cubes on the same stories and one name per "
            f"metric, got {human.shape}, {metrics.shape}, {len(names)} names; fix: pass Cube.values and Cube.names"
        )
    if np.isinf(human).any() or np.isinf(metrics).any():
        raise InputError(f"{what}: scores must not be infinite; fix: drop the columns that have them")
    if coefficient in CALIBRATED:
        raise InputError(
            f"{what}: {coefficient} is tie-calibrated on the data; resampling it would recalibrate each draw; "
            "fix: test tau_b, tau_c, pearson, spearman or kendall"
        )
    coefficient_function(coefficient)
    if n < 1:
        raise InputError(f"{what}: need >= 1 resample, got {n}; fix: check the config")


def batch_correlation(metrics: np.ndarray, human: np.ndarray, grouping: str, coefficient: str) -> np.ndarray:
    """Grouped correlations of batches: metrics [..., P, S, A], human [..., P, S, B] -> [..., A, B]."""
    x, y = grouped_arrays(metrics, grouping), grouped_arrays(human, grouping)
    y = y.reshape(y.shape[:1] + (1,) * (x.ndim - y.ndim) + y.shape[1:])
    return story_level(x, y, coefficient_function(coefficient))[0]


def standardized(metrics: np.ndarray) -> np.ndarray:
    """Each metric column z-scored over all P x S cells that have a value (scipy.stats.zscore), so swapped scores
    share a scale. A column whose values are equal up to rounding (scipy's test for catastrophic cancellation:
    max |x - mean| < 10 eps |mean|; a judge that always answers 3) has no scale and no correlation: NaN, checked
    first, so that scipy's "Precision loss" warning is not raised for it on every job."""
    flat = metrics.reshape(-1, metrics.shape[-1])
    present = ~np.isnan(flat)
    mean = cell_means(flat)
    spread = np.where(present, np.abs(flat - mean), 0.0).max(axis=0)
    varied = spread >= 10 * np.finfo(float).eps * np.abs(mean)
    z = np.full(flat.shape, np.nan)
    z[:, varied] = stats.zscore(flat[:, varied], axis=0, nan_policy="omit" if not present.all() else "propagate")
    return z.reshape(metrics.shape)


def pair_columns(z: np.ndarray, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns `first` and `second` of `z` [..., Q], each NaN where the other has no value."""
    a, b = z[..., first], z[..., second]
    both = ~np.isnan(a) & ~np.isnan(b)
    return np.where(both, a, np.nan), np.where(both, b, np.nan)


def swap_masks(n_permutations: int, prompts: int, systems: int, seed: int) -> np.ndarray:
    """[B, P, S] booleans, True = swap the two metrics' scores in that cell; np.random.default_rng(seed)."""
    return np.random.default_rng(seed).random((n_permutations, prompts, systems)) < 0.5


def _group_mean(r: np.ndarray) -> np.ndarray:
    """story_level's mean over axis 0 of the groups whose correlation is defined."""
    used = np.isfinite(r).sum(axis=0)
    with np.errstate(invalid="ignore"):
        return np.where(used > 0, np.nansum(r, axis=0) / np.maximum(used, 1), np.nan)


def pearson_null(
    z: np.ndarray, human: np.ndarray, first: np.ndarray, second: np.ndarray, swap: np.ndarray, grouping: str
) -> np.ndarray:
    """[B, Q] null deltas r(a') - r(b') of Pearson for swap masks [B, P, S, 1], without building a' and b'.

    a' = a + w (b - a) and b' = b - w (b - a) with w in {0, 1}, so per group the sums Pearson needs
    (sum v, sum v^2 = sum a^2 + w (b^2 - a^2), sum g v) are linear in the masks: one matrix product
    of the masks with [b - a, b^2 - a^2, g (b - a)] per group replaces B recomputations. System
    level: the system means are linear in the masks, so a' means are one product too.
    """
    a, b = z[..., first], z[..., second]
    weights = swap[..., 0].astype(float)
    if grouping == "system":
        # sum over prompts of w [B, P] @ (b - a) [P, Q], one BLAS product per system (einsum does not use BLAS)
        shift = np.matmul(weights.transpose(2, 0, 1), (b - a).transpose(1, 0, 2)).transpose(1, 0, 2) / z.shape[0]
        mean_a, mean_b, g = a.mean(axis=0), b.mean(axis=0), human.mean(axis=0)
        return (correlate(mean_a + shift, g, "pearson") - correlate(mean_b - shift, g, "pearson"))[..., 0]
    ga, gb, g = grouped_arrays(a, grouping), grouped_arrays(b, grouping), grouped_arrays(human, grouping)
    w = grouped_arrays(weights[..., None], grouping)[..., 0]  # [G, B, n]
    n = g.shape[-2]
    # r = sum(h v) / sqrt(sum v^2 - (sum v)^2 / n) with h the centred, unit-norm human vector of the group.
    h = g - g.mean(axis=-2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = h / np.sqrt((h**2).sum(axis=-2, keepdims=True))
    d = gb - ga
    changes = np.split(np.matmul(w, np.concatenate([d, gb**2 - ga**2, h * d], axis=-1)), 3, axis=-1)  # [G, B, Q] each
    means = []
    for sign, v in ((1.0, ga), (-1.0, gb)):
        squares = (v**2).sum(axis=-2)[:, None] + sign * changes[1]
        total = v.sum(axis=-2)[:, None] + sign * changes[0]
        spread = squares - total**2 / n
        numerator = (h * v).sum(axis=-2)[:, None] + sign * changes[2]
        with np.errstate(divide="ignore", invalid="ignore"):
            # a constant vector (spread 0 up to rounding) has no r, as in correlation.correlate
            r = np.where(spread > 1e-12 * squares, numerator / np.sqrt(spread), np.nan)
        means.append(_group_mean(np.clip(r, -1.0, 1.0)))
    return means[0] - means[1]


def perm_both(
    human: np.ndarray,
    metrics: np.ndarray,
    names: list[str],
    grouping: str,
    coefficient: str = "pearson",
    n_permutations: int = 1000,
    seed: int = 0,
    block: int = 100,
    early_stop: tuple[float, float] | None = None,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    system_perm: str = "cells",
) -> pd.DataFrame:
    """PERM-BOTH for every ordered pair of metric columns against one human criterion `human` [P, S].

    `system_perm` (grouping system only): "cells" swaps (prompt, system) cells, "systems" swaps system means
    (module docstring).

    `pairs` (first, second column indices, first < second): test only these pairs, both orders; the
    shared swap masks make each pair's p the same as in the run over all pairs.

    `metrics` [P, S, M] oriented higher-is-better (bootstrap.oriented). `early_stop` (early_min,
    early_max), e.g. (0.02, 0.5) as mt-metrics-eval, is checked after every `block` permutations.
    Returns metric_a, metric_b, r_a, r_b, delta (r_a - r_b), p (H1: a correlates better; (k + 1) / (n + 1),
    `permutation_p`; NaN where delta is), permutations (n), p_min (1 / (n + 1): the smallest p those
    permutations can give).
    """
    human = np.asarray(human, dtype=float)[..., None]
    metrics = np.asarray(metrics, dtype=float)
    _check(human, metrics, names, coefficient, n_permutations, "perm_both")
    if system_perm not in SYSTEM_PERMS:
        raise InputError(f"perm_both: system_perm {system_perm!r}; fix: choose one of {SYSTEM_PERMS}")
    if grouping == "system" and system_perm == "systems":
        # one row of system means: grouping none then correlates the S means, and the masks swap systems
        human, metrics = (merge_float_ties(cell_means(v))[None] for v in (human, metrics))
        grouping = "none"
    prompts, systems, m = metrics.shape
    z = standardized(metrics)
    r = batch_correlation(z, human, grouping, coefficient)[:, 0]
    first, second = np.triu_indices(m, k=1) if pairs is None else map(np.asarray, pairs)
    delta = r[first] - r[second]
    gappy = np.isnan(z).any(axis=(0, 1))
    gappy = gappy[first] | gappy[second] | np.isnan(human).any()  # pairs tested on the cells both have
    if gappy.any():
        a, b = pair_columns(z, first[gappy], second[gappy])
        delta[gappy] = (batch_correlation(a, human, grouping, coefficient)
                        - batch_correlation(b, human, grouping, coefficient))[:, 0]
    better_first = ~(delta < 0)  # early stopping looks at the p of the pair's better-looking metric
    at_least, at_most = np.zeros(len(first)), np.zeros(len(first))  # permutations with delta* >= / <= delta
    used = np.zeros(len(first), dtype=int)
    active = np.arange(len(first))
    check_draws(n_permutations, prompts, systems, m + 1, "meta.n_permutations", pairs=False)
    masks = swap_masks(n_permutations, prompts, systems, seed)[..., None]
    for start in range(0, n_permutations, block):
        swap = masks[start : start + block]
        # Pearson's arrays are [groups, B, 3 pairs]; the others' [B, P, S, pairs] and their pair signs.
        chunk = max(1, PERM_CELLS_PER_CHUNK // (len(swap) * prompts * (1 if coefficient == "pearson" else systems)))
        for offset in range(0, len(active), chunk):
            pairs = active[offset : offset + chunk]
            null = np.empty((len(swap), len(pairs)))
            fast = ~gappy[pairs] if coefficient == "pearson" else np.zeros(len(pairs), bool)
            if fast.any():
                null[:, fast] = pearson_null(z, human, first[pairs[fast]], second[pairs[fast]], swap, grouping)
            if not fast.all():
                a, b = pair_columns(z, first[pairs[~fast]], second[pairs[~fast]])
                null[:, ~fast] = (
                    batch_correlation(np.where(swap, b, a), human, grouping, coefficient)
                    - batch_correlation(np.where(swap, a, b), human, grouping, coefficient)
                )[..., 0]
            at_least[pairs] += (null >= delta[pairs] - FLOAT_TOL).sum(axis=0)
            at_most[pairs] += (null <= delta[pairs] + FLOAT_TOL).sum(axis=0)
        used[active] += len(swap)
        if early_stop is not None:
            running = permutation_p(np.where(better_first, at_least, at_most)[active], used[active])
            active = active[(running >= early_stop[0]) & (running <= early_stop[1])]
    names = np.asarray(names, dtype=object)
    return pd.DataFrame(
        {
            "metric_a": np.concatenate([names[first], names[second]]),
            "metric_b": np.concatenate([names[second], names[first]]),
            "r_a": np.concatenate([r[first], r[second]]),
            "r_b": np.concatenate([r[second], r[first]]),
            "delta": np.concatenate([delta, -delta]),
            # an undefined delta (a column without a correlation: constant, or too few cells) has no test
            "p": np.where(np.isnan(np.concatenate([delta, delta])), np.nan,
                          permutation_p(np.concatenate([at_least, at_most]), np.tile(used, 2))),
            "permutations": np.tile(used, 2),
            "p_min": permutation_p(0, np.tile(used, 2)),
        }
    )


def permutation_p(exceeding, permutations):
    """(k + 1) / (n + 1) for k of n permutations at least as extreme as the observed statistic (Phipson & Smyth
    2010, "Permutation p-values should never be zero"): valid for random permutations, never 0, and at least
    1 / (n + 1), the resolution of n permutations. scipy.stats.permutation_test computes the same for random
    draws, but one statistic at a time; here the counts of every pair come from shared masks."""
    return (np.asarray(exceeding, dtype=float) + 1.0) / (np.asarray(permutations, dtype=float) + 1.0)


def resample_indices(prompts: int, systems: int, n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """BOOT-BOTH draws: prompt indices [B, P] then system indices [B, S], with replacement, default_rng(seed).
    An axis of one (a dataset of one group: one "prompt" whose stories are its "systems") draws index 0, so
    BOOT-BOTH is then the plain bootstrap of the stories."""
    if min(prompts, systems) < 1 or max(prompts, systems) < 2:
        raise InputError(f"boot_both: need >= 2 prompts or >= 2 systems, got {prompts} and {systems}")
    rng = np.random.default_rng(seed)
    return rng.integers(0, prompts, (n_resamples, prompts)), rng.integers(0, systems, (n_resamples, systems))


def boot_draws(
    human: np.ndarray, metrics: np.ndarray, grouping: str, coefficient: str, n_resamples: int = 1000, seed: int = 0
) -> np.ndarray:
    """[B, M, C] grouped correlations of BOOT-BOTH resamples of metrics [P, S, M] and human [P, S, C]."""
    check_draws(n_resamples, *metrics.shape[:2], metrics.shape[2] + human.shape[2], "meta.n_resamples",
                pairs=False)
    prompt_draws, system_draws = resample_indices(*metrics.shape[:2], n_resamples, seed)
    chunk = max(1, CELLS_PER_CHUNK // (metrics.shape[0] * metrics.shape[1] * (metrics.shape[2] + human.shape[2])))
    draws = []
    for start in range(0, n_resamples, chunk):
        rows = prompt_draws[start : start + chunk, :, None]
        columns = system_draws[start : start + chunk, None, :]
        draws.append(batch_correlation(metrics[rows, columns], human[rows, columns], grouping, coefficient))
    return np.concatenate(draws)


def boot_both(
    human: np.ndarray,
    metrics: np.ndarray,
    names: list[str],
    criteria: list[str],
    grouping: str,
    coefficient: str = "pearson",
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """BOOT-BOTH percentile intervals of every metric x criterion correlation.

    Returns metric, criterion, r (on all data), ci_low, ci_high, resamples (draws with a defined r), missing
    (the metric's cells without a value, dropped).
    """
    human, metrics = np.asarray(human, dtype=float), np.asarray(metrics, dtype=float)
    _check(human, metrics, names, coefficient, n_resamples, "boot_both")
    if not 0 < level < 1 or human.shape[-1] != len(criteria):
        raise InputError(
            f"boot_both: level {level} must lie in (0, 1) and criteria name human's columns; fix: check the call"
        )
    r = batch_correlation(metrics, human, grouping, coefficient)
    draws = boot_draws(human, metrics, grouping, coefficient, n_resamples, seed)
    low, high = np.full((2,) + draws.shape[1:], np.nan)
    defined = np.isfinite(draws).any(axis=0)  # a cell without one defined draw keeps a NaN interval
    low[defined], high[defined] = np.nanquantile(draws[:, defined], [(1 - level) / 2, (1 + level) / 2], axis=0)
    metric, criterion = np.meshgrid(names, criteria, indexing="ij")
    return pd.DataFrame(
        {
            "metric": metric.ravel(),
            "criterion": criterion.ravel(),
            "r": r.ravel(),
            "ci_low": low.ravel(),
            "ci_high": high.ravel(),
            "resamples": np.isfinite(draws).sum(axis=0).ravel(),
            "missing": np.repeat(np.isnan(metrics).sum(axis=(0, 1)), len(criteria)),
        }
    )


def significance_clusters(tests: pd.DataFrame, alpha: float = 0.05, p_column: str = "p") -> pd.DataFrame:
    """WMT ranks from ordered-pair tests (perm_both's columns): metric, r, rank (1 = the best's cluster).

    Sorted by r (descending, then name); metric i gets the current rank unless a metric of that
    rank placed before it beats it (p_column <= alpha), which opens the next rank at i.
    """
    r = tests.groupby("metric_a")["r_a"].first()
    order = sorted(r.index, key=lambda name: (-r[name], name))
    p = tests.set_index(["metric_a", "metric_b"])[p_column]
    ranks, current, start = [], 1, 0
    for i, name in enumerate(order):
        if any(p.get((better, name), np.nan) <= alpha for better in order[start:i]):
            current, start = current + 1, i
        ranks.append(current)
    return pd.DataFrame({"metric": order, "r": r[order].to_numpy(), "rank": ranks})
