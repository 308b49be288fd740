"""Pearson, Spearman and Kendall tau-b, vectorised over many variables at once.

scipy.stats computes one pair per call; HANNA needs ~30k pairs x 96 prompts,
so the three coefficients are written here as array operations and tested
against scipy (pearsonr, spearmanr, kendalltau with its default tau-b).
A constant vector gives NaN, as in scipy.

Missing values (NaN: a judge's unparsable answer, a metric without a value for a story) are dropped pair by
pair: each pair of columns is correlated over the items where both have a value (scipy's nan_policy="omit"
per pair), and is NaN with fewer than MIN_ITEMS of them. Complete columns keep the vectorised path, bit for bit.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.stats import rankdata

from storyeval.stats.kendall import kendall

COEFFICIENTS = ("pearson", "spearman", "kendall")
MIN_ITEMS = 3  # a correlation of two points is +-1 whatever the data
SYSTEM_TIES = ("merged", "authors")
BACKENDS = ("vectorised", "scipy")


def _constant(x: np.ndarray) -> np.ndarray:
    return np.ptp(x, axis=-2) == 0


def _unit_scale(c: np.ndarray) -> np.ndarray:
    # Deviations scaled to max 1 before squaring: tiny ones (CIDEr's 1e-304 on some prompts) would underflow
    # to 0 and give r = +-1; scipy.stats.pearsonr scales by the norm for the same reason.
    scale = np.abs(c).max(axis=-2, keepdims=True)
    return c / np.where(scale > 0, scale, 1.0)


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = _unit_scale(x - x.mean(axis=-2, keepdims=True))
    yc = _unit_scale(y - y.mean(axis=-2, keepdims=True))
    xn = np.sqrt((xc**2).sum(axis=-2))
    yn = np.sqrt((yc**2).sum(axis=-2))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.einsum("...na,...nb->...ab", xc, yc) / (xn[..., :, None] * yn[..., None, :])
    r[_constant(x)[..., :, None] | _constant(y)[..., None, :]] = np.nan
    return np.clip(r, -1.0, 1.0)


def cell_means(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """Means over `axis` of the cells that have a value (NaN where none has): `values.mean(axis)` when all do."""
    values = np.asarray(values, dtype=float)
    present = np.isfinite(values)
    if present.all():
        return values.mean(axis=axis)
    count = present.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.where(present, values, 0.0).sum(axis=axis) / count, np.nan)


def missing_pairs(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[A, B] cells of `x` [P, S, A] and `y` [P, S, B] dropped from each pair's correlation: where either has no
    value."""
    px = np.isfinite(x).reshape(-1, x.shape[-1]).astype(int)
    py = np.isfinite(y).reshape(-1, y.shape[-1]).astype(int)
    return len(px) - px.T @ py


def _masked_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson of every column of `x` [..., n, A] with every column of `y` [..., n, B] over the items where both
    have a value: the sums each pair needs are products of the values (zeroed where missing) with the presence
    masks, so every pair's own item set costs no loop. Values are centred and scaled per column first."""
    px, py = np.isfinite(x), np.isfinite(y)
    x = _unit_scale(np.where(px, x - cell_means(x, -2)[..., None, :], 0.0))
    y = _unit_scale(np.where(py, y - cell_means(y, -2)[..., None, :], 0.0))
    px, py = px.astype(float), py.astype(float)

    def sums(a, b):
        return np.einsum("...na,...nb->...ab", a, b)

    n = sums(px, py)
    sx, sy, sxy = sums(x, py), sums(px, y), sums(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        vx, vy = sums(x * x, py) - sx * sx / n, sums(px, y * y) - sy * sy / n
        r = (sxy - sx * sy / n) / np.sqrt(vx * vy)
    defined = (n >= MIN_ITEMS) & (vx > 1e-24) & (vy > 1e-24)  # a constant vector (0 up to rounding) has no r
    return np.where(defined, np.clip(r, -1.0, 1.0), np.nan)


def _pairwise_complete(x: np.ndarray, y: np.ndarray, coefficient) -> np.ndarray:
    """`correlate` where some values are missing: complete columns together as usual, each column with a missing
    value against every other column over the items both have (Pearson by masked sums, the others pair by pair,
    Spearman's ranks among those items)."""
    broadcast = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x, y = (np.broadcast_to(v, broadcast + v.shape[-2:]) for v in (x, y))
    gappy_x = ~np.isfinite(x).all(axis=tuple(range(x.ndim - 1)))
    gappy_y = ~np.isfinite(y).all(axis=tuple(range(y.ndim - 1)))
    r = np.full(broadcast + (x.shape[-1], y.shape[-1]), np.nan)
    whole_x, whole_y = np.flatnonzero(~gappy_x), np.flatnonzero(~gappy_y)
    if len(whole_x) and len(whole_y):
        r[..., whole_x[:, None], whole_y[None, :]] = correlate(x[..., whole_x], y[..., whole_y], coefficient)
    if coefficient == "pearson":
        r[..., gappy_x, :] = _masked_pearson(x[..., gappy_x], y)
        r[..., :, gappy_y] = _masked_pearson(x, y[..., gappy_y])
        return r
    for a, b in zip(*np.nonzero(gappy_x[:, None] | gappy_y[None, :])):
        both = np.isfinite(x[..., a]) & np.isfinite(y[..., b])  # [..., n]
        u, v = np.where(both, x[..., a], np.nan), np.where(both, y[..., b], np.nan)
        if coefficient == "spearman":
            u, v = (rankdata(w, axis=-1, nan_policy="omit") for w in (u, v))
            r[..., a, b] = _masked_pearson(u[..., None], v[..., None])[..., 0, 0]
        else:
            function = coefficient if callable(coefficient) else lambda p, q: kendall(p, q, "tau_b")
            value = function(u[..., None], v[..., None])[..., 0, 0]
            r[..., a, b] = np.where(both.sum(axis=-1) >= MIN_ITEMS, value, np.nan)
    return r


def correlate(x: np.ndarray, y: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlate every column of `x` [..., n, A] with every column of `y` [..., n, B] over axis n.

    Returns [..., A, B]. Missing values (NaN) are dropped pair by pair (module docstring).
    `coefficient` may also be a function of (x, y) with that contract (e.g. storyeval.stats.kendall's variants;
    they count the pairs of items both columns have).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        return _pairwise_complete(x, y, coefficient)
    if callable(coefficient):
        return coefficient(x, y)
    if coefficient == "pearson":
        return _pearson(x, y)
    if coefficient == "spearman":
        return _pearson(rankdata(x, axis=-2), rankdata(y, axis=-2))
    if coefficient == "kendall":  # tau-b from exact pair counts: by sorting for long vectors (kendall.pair_counts)
        return kendall(x, y, "tau_b")
    raise ValueError(f"unknown coefficient {coefficient!r}; choose one of {COEFFICIENTS}")


def merge_float_ties(values: np.ndarray, rtol: float = 1e-12) -> np.ndarray:
    """Make values that are equal up to float rounding exactly equal along axis -2 (each takes its group's smallest).

    A mean of discrete ratings (multiples of 1/3) ties across systems far more
    often than float summation shows: without this, Spearman and Kendall would
    rank such ties by rounding noise.
    """
    order = np.argsort(values, axis=-2, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-2)
    scale = np.maximum(np.abs(ordered[..., 1:, :]), np.abs(ordered[..., :-1, :]))
    starts = np.concatenate(  # a missing value (NaN, sorted last) starts a group of its own and stays NaN
        [np.ones_like(ordered[..., :1, :], dtype=bool), ~(np.diff(ordered, axis=-2) <= rtol * scale)], axis=-2
    )
    positions = np.arange(values.shape[-2])[:, None]
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=-2)
    merged = np.empty_like(values)
    np.put_along_axis(merged, order, np.take_along_axis(ordered, first, axis=-2), axis=-2)
    return merged


def story_level(x: np.ndarray, y: np.ndarray, coefficient: str) -> tuple[np.ndarray, np.ndarray]:
    """HANNA story level: per prompt, correlate over systems; average the prompts.

    `x` [P, S, A], `y` [P, S, B]. Prompts whose coefficient is NaN (a constant
    vector, or fewer than MIN_ITEMS systems with values) are skipped by the
    mean. Returns (mean r [A, B], prompts used [A, B]).
    """
    per_prompt = correlate(x, y, coefficient)
    used = np.isfinite(per_prompt).sum(axis=0)
    with np.errstate(invalid="ignore"):
        mean = np.where(used > 0, np.nansum(per_prompt, axis=0) / np.maximum(used, 1), np.nan)
    return mean, used


def authors_means(x: np.ndarray) -> np.ndarray:
    """Means over axis 0 as HANNA's notebook computed them: np.mean of a [prompts, systems] array, i.e. numpy's
    pairwise summation of each variable's contiguous values. Equal means of Likert averages then differ in the
    last bit (Complexity: 2.4930555555555554 vs 2.493055555555556). Missing cells: `cell_means`."""
    return cell_means(np.ascontiguousarray(np.moveaxis(x, 0, -1)), -1)


def scipy_pairs(x: np.ndarray, y: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlate every column of `x` [n, A] with every column of `y` [n, B], one scipy call a pair (the authors'
    floats to the last bit: their pearsonr, spearmanr, kendalltau), over the items both have."""
    function = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[coefficient]

    def pair(a, b):  # complete pairs as the authors' call saw them; a gappy one needs MIN_ITEMS shared items
        both = np.isfinite(a) & np.isfinite(b)
        if both.all():
            return function(a, b)[0]
        return function(a[both], b[both])[0] if both.sum() >= MIN_ITEMS else np.nan

    with np.errstate(invalid="ignore", divide="ignore"):
        return np.array([[pair(a, b) for b in y.T] for a in x.T], dtype=float).reshape(x.shape[1], y.shape[1])


def system_level(
    x: np.ndarray, y: np.ndarray, coefficient: str, ties: str = "merged", backend: str = "vectorised"
) -> tuple[np.ndarray, np.ndarray]:
    """HANNA system level: average each variable over prompts, correlate the S-long vectors.

    ties "merged": means equal up to float rounding are made equal first, so rank coefficients see the real
    ties of averaged Likert ratings instead of summation noise. ties "authors": the means as HANNA's notebook
    computed them (`authors_means`, ties broken by the last bit: Chhun et al.'s Fig. 2 and Tab. 6, 9).
    backend "scipy": one scipy call a pair (`scipy_pairs`), the papers' floats to the last bit, on which a
    Wilcoxon test over |r| differences depends (Mendras & Nietge's Tab. 2); "vectorised": `correlate`.
    A system's mean is over the prompts where it has a value (`cell_means`); n counts the systems with one.
    """
    if ties not in SYSTEM_TIES or backend not in BACKENDS:
        raise ValueError(f"unknown ties {ties!r} or backend {backend!r}; choose from {SYSTEM_TIES} and {BACKENDS}")
    x, y = (merge_float_ties(cell_means(v)) if ties == "merged" else authors_means(v) for v in (x, y))
    r = correlate(x, y, coefficient) if backend == "vectorised" else scipy_pairs(x, y, coefficient)
    return r, np.isfinite(x).astype(int).T @ np.isfinite(y).astype(int)


LEVELS = {"story": story_level, "system": system_level}
