"""Kendall's tau variants and the tie calibration of "Ties Matter" (Deutsch, Foster & Freitag, EMNLP 2023).

Every variant is a function of five pair counts over the n(n-1)/2 pairs of
items: concordant, discordant, tied only in the metric, tied only in the human
score, tied in both (Deutsch et al. 2023, Sec. 2). With s = con - dis:

- tau-b = s / sqrt((pairs - ties_metric) (pairs - ties_human))  (Kendall 1945; scipy's default)
- tau-c = 2 s / (n^2 (m - 1) / m), m = min(#distinct metric, #distinct human)  (Stuart 1953; scipy variant="c")
- tau_23 = (con + ties_both - dis - ties_metric_only - ties_human_only) / pairs  (Deutsch et al. 2023, Eq. 4)
- acc23 = (con + ties_both) / pairs  (pairwise accuracy with ties, Deutsch et al. 2023, Eq. 5)

tau_23 and acc23 reward a metric that predicts the human ties, so the metric
is first "tie-calibrated": |metric difference| <= epsilon counts as a tie, with
epsilon chosen to maximise the statistic on the data (Deutsch et al. 2023,
Sec. 5), and reported beside it.

scipy.stats.kendalltau computes one pair of vectors per call and neither
tau_23/acc23 nor epsilon; here the counts are array operations over many
columns and groups at once (pair signs as matrices, counted by matrix
products), so thousands of (metric, criterion, prompt) triples cost one call.
Inputs follow storyeval.stats.correlation.correlate: metric x [..., n, A],
human y [..., n, B] -> [..., A, B].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from storyeval.errors import InputError

VARIANTS = ("tau_b", "tau_c", "tau_23", "acc23")
CALIBRATED = ("tau_23", "acc23")
# Pair chunks hold at most this many pair x column cells (memory: 4 bytes each, a few arrays).
CHUNK_CELLS = 2**23
# From this many items, pair counts at epsilon 0 come from sorting (O(n log n)), not from all pairs (O(n^2)).
SORT_FROM = 64


@dataclass(frozen=True)
class PairCounts:
    """Pair counts of metric columns [..., A] against human columns [..., B] (see the module docstring)."""

    s: np.ndarray  # con - dis [..., A, B]
    ties_both: np.ndarray  # [..., A, B]
    ties_metric: np.ndarray  # tied in the metric, whatever the human score [..., A, 1]
    ties_human: np.ndarray  # [..., 1, B]
    pairs: int | np.ndarray  # [..., A, B] where values are missing (all_pair_counts)

    @property
    def untied_both(self) -> np.ndarray:
        return self.pairs - self.ties_metric - self.ties_human + self.ties_both

    @property
    def con(self) -> np.ndarray:
        return (self.untied_both + self.s) / 2

    @property
    def dis(self) -> np.ndarray:
        return (self.untied_both - self.s) / 2


def _chunks(n: int, width: int, leading: int):
    i, j = np.triu_indices(n, k=1)
    size = max(1, CHUNK_CELLS // max(1, width * leading))
    for start in range(0, len(i), size):
        yield i[start : start + size], j[start : start + size]


def pair_counts(x: np.ndarray, y: np.ndarray, epsilon: float | np.ndarray = 0.0) -> PairCounts:
    """Pair counts of every metric column of `x` [..., n, A] against every human column of `y` [..., n, B].

    A metric pair whose |difference| <= `epsilon` (a scalar or one value per column, [A]) is a tie;
    human ties are exact (merge float noise first: correlation.merge_float_ties). Long finite vectors at
    epsilon 0 are counted by sorting (`sorted_counts`), the others pair by pair (`all_pair_counts`): the
    same integers either way.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    epsilon = np.asarray(epsilon, dtype=float)
    if np.any(epsilon < 0):
        raise InputError("kendall: epsilon must be >= 0; fix: pass a non-negative tie threshold")
    if x.shape[-2] >= SORT_FROM and not epsilon.any() and np.isfinite(x).all() and np.isfinite(y).all():
        return sorted_counts(x, y)
    return all_pair_counts(x, y, epsilon)


def all_pair_counts(x: np.ndarray, y: np.ndarray, epsilon: np.ndarray) -> PairCounts:
    """`pair_counts` over the n(n-1)/2 pairs as sign matrices: O(n^2), any epsilon. A pair of items where a column
    has no value (NaN) is left out of that column pair's counts: then `pairs` and the tie counts are [..., A, B]."""
    leading = int(np.prod(np.broadcast_shapes(x.shape[:-2], y.shape[:-2])))
    gappy = not (np.isfinite(x).all() and np.isfinite(y).all())
    s = ties_both = ties_metric = ties_human = 0.0
    pairs = 0.0

    def product(a, b):  # float32 products of -1/0/1 are exact; sums stay exact below 2**24 pairs per chunk
        return np.matmul(np.swapaxes(a.astype(np.float32), -1, -2), b.astype(np.float32)).astype(float)

    for i, j in _chunks(x.shape[-2], x.shape[-1] + y.shape[-1], leading):
        dx, dy = x[..., i, :] - x[..., j, :], y[..., i, :] - y[..., j, :]
        tie_x, tie_y = np.abs(dx) <= epsilon, dy == 0
        sx = np.where(tie_x | np.isnan(dx), 0, np.sign(dx))
        sy = np.where(np.isnan(dy), 0, np.sign(dy))
        s = s + product(sx, sy)
        ties_both = ties_both + product(tie_x, tie_y)
        if gappy:
            valid_x, valid_y = np.isfinite(dx), np.isfinite(dy)
            pairs = pairs + product(valid_x, valid_y)
            ties_metric = ties_metric + product(tie_x, valid_y)
            ties_human = ties_human + product(valid_x, tie_y)
        else:
            ties_metric = ties_metric + tie_x.sum(axis=-2)[..., :, None]
            ties_human = ties_human + tie_y.sum(axis=-2)[..., None, :]
    n = x.shape[-2]
    return PairCounts(
        np.asarray(s),
        np.asarray(ties_both),
        np.asarray(ties_metric, dtype=float),
        np.asarray(ties_human, dtype=float),
        np.asarray(pairs) if gappy else n * (n - 1) // 2,
    )


def _tied_pairs(same: np.ndarray) -> np.ndarray:
    """Tied pairs of sorted rows given `same` [N, n - 1] (element j + 1 equals element j): per run of c equal
    elements c(c - 1) / 2, as the sum over elements of how many equal ones precede them."""
    position = np.arange(same.shape[-1] + 1)
    starts = np.concatenate([np.ones(same.shape[:-1] + (1,), dtype=bool), ~same], axis=-1)
    return (position - np.maximum.accumulate(np.where(starts, position, 0), axis=-1)).sum(axis=-1)


def _inversions(values: np.ndarray) -> np.ndarray:
    """Pairs i < j with values[i] > values[j] in each row of [N, n], by bottom-up merge sort: O(n log n)."""
    rows, n = values.shape
    size = 1 << max(0, (n - 1).bit_length())
    merged = np.concatenate([values, np.full((rows, size - n), np.inf)], axis=-1)  # +inf at the end: no inversion
    count = np.zeros(rows, dtype=np.int64)
    width = 1
    while width < size:
        blocks = merged.reshape(rows, -1, 2 * width)  # two sorted halves per block
        order = np.argsort(blocks, axis=-1, kind="stable")
        position = np.empty_like(order)
        np.put_along_axis(position, order, np.arange(2 * width), axis=-1)
        # Stable: the left elements equal to a right one sort before it, so a right element at sorted position
        # p, the q-th of its half, has p - q left elements <= it and width - (p - q) greater.
        count += (width - (position[..., width:] - np.arange(width))).sum(axis=(-1, -2))
        merged = np.take_along_axis(blocks, order, axis=-1).reshape(rows, size)
        width *= 2
    return count


def sorted_counts(x: np.ndarray, y: np.ndarray) -> PairCounts:
    """`pair_counts` at epsilon 0 in O(n log n) per column pair (Knight 1966, as scipy.stats.kendalltau): ties
    from runs of sorted values, discordant pairs as the inversions of x in (y, x) order. scipy counts one pair
    of vectors per call; this batches every (metric, human) column pair into one array of rows."""
    lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    n, a, b = x.shape[-2], x.shape[-1], y.shape[-1]
    xt = np.moveaxis(np.broadcast_to(x, lead + x.shape[-2:]), -2, -1)  # [..., A, n]
    yt = np.moveaxis(np.broadcast_to(y, lead + y.shape[-2:]), -2, -1)  # [..., B, n]
    pairs_of = (xt[..., :, None, :], yt[..., None, :, :])  # one row per (metric, human) column pair
    rows_x, rows_y = (np.broadcast_to(v, lead + (a, b, n)).reshape(-1, n) for v in pairs_of)
    order = np.lexsort((rows_x, rows_y), axis=-1)
    xs, ys = np.take_along_axis(rows_x, order, axis=-1), np.take_along_axis(rows_y, order, axis=-1)
    ties_both = _tied_pairs((xs[:, 1:] == xs[:, :-1]) & (ys[:, 1:] == ys[:, :-1])).reshape(lead + (a, b))
    ties_metric = _tied_pairs(np.diff(np.sort(xt, axis=-1), axis=-1) == 0)[..., :, None]
    ties_human = _tied_pairs(np.diff(np.sort(yt, axis=-1), axis=-1) == 0)[..., None, :]
    pairs = n * (n - 1) // 2
    untied_both = pairs - ties_metric - ties_human + ties_both
    s = untied_both - 2 * _inversions(xs).reshape(lead + (a, b))
    return PairCounts(*(np.asarray(v, dtype=float) for v in (s, ties_both, ties_metric, ties_human)), pairs)


def _distinct(v: np.ndarray) -> np.ndarray:
    ordered = np.sort(v, axis=-2)  # missing values (NaN) sort last and are not counted
    return 1 + ((np.diff(ordered, axis=-2) != 0) & np.isfinite(ordered[..., 1:, :])).sum(axis=-2)


def from_counts(
    counts: PairCounts, variant: str, n: int | None = None, classes: np.ndarray | None = None
) -> np.ndarray:
    """The `variant` of VARIANTS from pair counts; tau-c also needs n and m = min(#distinct) [..., A, B].

    tau-b and tau-c are NaN when either side is constant (as scipy); tau_23 and acc23 are always defined.
    """
    p = counts.pairs
    with np.errstate(divide="ignore", invalid="ignore"):
        if variant == "tau_b":
            return counts.s / np.sqrt((p - counts.ties_metric) * (p - counts.ties_human))
        if variant == "tau_c":
            tau = 2 * counts.s / (n**2 * (classes - 1) / classes)
            return np.where(classes > 1, tau, np.nan)
        if variant == "tau_23":
            only_metric = counts.ties_metric - counts.ties_both
            only_human = counts.ties_human - counts.ties_both
            return (counts.s + counts.ties_both - only_metric - only_human) / p
        if variant == "acc23":
            return (counts.con + counts.ties_both) / p
    raise InputError(f"kendall: unknown variant {variant!r}; fix: choose one of {VARIANTS}")


def kendall(x: np.ndarray, y: np.ndarray, variant: str = "tau_b", epsilon: float | np.ndarray = 0.0) -> np.ndarray:
    """Kendall `variant` of every column of `x` [..., n, A] with every column of `y` [..., n, B] -> [..., A, B]."""
    if variant == "tau_c" and np.any(np.asarray(epsilon) > 0):
        raise InputError(
            "kendall: tau-c has no tie threshold (its m counts distinct values); fix: epsilon 0 or another variant"
        )
    counts = pair_counts(x, y, epsilon)
    classes = None
    if variant == "tau_c":
        classes = np.minimum(
            _distinct(np.asarray(x, float))[..., :, None], _distinct(np.asarray(y, float))[..., None, :]
        )
    n = np.asarray(x).shape[-2]
    if not np.isscalar(counts.pairs):  # items both columns have, per column pair
        n = np.matmul(np.swapaxes(np.isfinite(x), -1, -2).astype(float), np.isfinite(y).astype(float))
    return from_counts(counts, variant, n, classes)


def variant_function(variant: str):
    """A correlate-compatible function (x, y) -> [..., A, B] for `variant` at epsilon 0."""
    if variant not in VARIANTS:
        raise InputError(f"kendall: unknown variant {variant!r}; fix: choose one of {VARIANTS}")
    return lambda x, y: kendall(x, y, variant)


def _gain(dx: np.ndarray, dy: np.ndarray, variant: str) -> np.ndarray:
    """Change of a pair's contribution to the variant's numerator when a metric tie is forced on it."""
    concordant = np.sign(dx) * np.sign(dy) > 0
    human_tie_gained = (dy == 0) & (dx != 0)  # tied only in human -> tied in both
    # acc23: +1 for a new joint tie, -1 for a lost concordance; tau_23 counts both twice (a discordant
    # pair becomes a metric-only tie: -1 either way, no change).
    step = 1.0 if variant == "acc23" else 2.0
    return np.where(np.isnan(dx) | np.isnan(dy), 0.0, step * (human_tie_gained.astype(float) - concordant))


def calibrate(x: np.ndarray, y: np.ndarray, variant: str = "acc23") -> tuple[np.ndarray, np.ndarray]:
    """Tie calibration (Deutsch et al. 2023, Sec. 5) over groups: (value [A, B], epsilon [A, B]).

    `x` [G, n, A], `y` [G, n, B]: the statistic is the mean over the G groups (one epsilon for all
    of them, as for mt-metrics-eval's average_by). Candidates are 0 and every |metric difference|
    of a pair; the objective changes only there, so one sort of the differences and a cumulative
    sum of each pair's gain (_gain) scores every candidate. Ties for the best value go to the
    smallest epsilon. The value is then recomputed from the counts at that epsilon.
    """
    if variant not in CALIBRATED:
        raise InputError(f"kendall: only {CALIBRATED} are tie-calibrated, not {variant!r}; fix: use one of them")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 3 or y.ndim != 3 or x.shape[:2] != y.shape[:2] or x.shape[1] < 2:
        raise InputError(
            f"kendall.calibrate: need [groups, n >= 2, columns] arrays of equal groups and n, "
            f"got {x.shape} and {y.shape}"
        )
    groups, n, columns = x.shape
    i, j = np.triu_indices(n, k=1)
    epsilon = np.zeros((columns, y.shape[-1]))
    dy_all = y[:, i, :] - y[:, j, :]  # [G, E, B]
    step = max(1, CHUNK_CELLS // (groups * len(i)))
    for start in range(0, columns, step):
        block = slice(start, start + step)
        dx = (x[:, i, block] - x[:, j, block]).reshape(groups * len(i), -1)  # [G*E, a]
        size = np.abs(dx)
        order = np.argsort(size, axis=0, kind="stable")
        sorted_size = np.take_along_axis(size, order, axis=0)
        last_of_run = np.vstack([np.diff(sorted_size, axis=0) != 0, np.ones((1, dx.shape[1]), bool)])
        for b in range(y.shape[-1]):
            dy = dy_all[:, :, b].reshape(-1, 1)
            gains = np.take_along_axis(_gain(dx, dy, variant), order, axis=0)
            cumulative = np.where(last_of_run, np.cumsum(gains, axis=0), -np.inf)
            best = np.argmax(cumulative, axis=0)
            better = cumulative[best, np.arange(dx.shape[1])] > 0  # integer gains: strictly better than epsilon 0
            epsilon[block, b] = np.where(better, sorted_size[best, np.arange(dx.shape[1])], 0.0)
    value = np.empty_like(epsilon)
    for b in range(y.shape[-1]):
        per_group = kendall(x, y[..., b : b + 1], variant, epsilon[:, b])[..., 0]
        defined = np.isfinite(per_group).sum(axis=0)  # a group without a pair both columns have is left out
        with np.errstate(invalid="ignore", divide="ignore"):
            value[:, b] = np.where(defined > 0, np.where(defined == groups, per_group.mean(axis=0),
                                                         np.nansum(per_group, axis=0) / defined), np.nan)
    return value, epsilon
