"""Pearson, Spearman and Kendall tau-b, vectorised over many variables at once.

scipy.stats computes one pair per call; HANNA needs ~30k pairs x 96 prompts,
so the three coefficients are written here as array operations and tested
against scipy (pearsonr, spearmanr, kendalltau with its default tau-b).
A constant vector gives NaN, as in scipy.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.stats import rankdata

from storyeval.stats.kendall import kendall

COEFFICIENTS = ("pearson", "spearman", "kendall")
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


def correlate(x: np.ndarray, y: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlate every column of `x` [..., n, A] with every column of `y` [..., n, B] over axis n.

    Returns [..., A, B]. Rows containing NaN are not supported: callers check completeness.
    `coefficient` may also be a function of (x, y) with that contract (e.g. storyeval.stats.kendall's variants).
    """
    if callable(coefficient):
        return coefficient(x, y)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
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
    starts = np.concatenate(
        [np.ones_like(ordered[..., :1, :], dtype=bool), np.diff(ordered, axis=-2) > rtol * scale], axis=-2
    )
    positions = np.arange(values.shape[-2])[:, None]
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=-2)
    merged = np.empty_like(values)
    np.put_along_axis(merged, order, np.take_along_axis(ordered, first, axis=-2), axis=-2)
    return merged


def story_level(x: np.ndarray, y: np.ndarray, coefficient: str) -> tuple[np.ndarray, np.ndarray]:
    """HANNA story level: per prompt, correlate over systems; average the prompts.

    `x` [P, S, A], `y` [P, S, B]. Prompts whose coefficient is NaN (a constant
    vector) are skipped by the mean. Returns (mean r [A, B], prompts used [A, B]).
    """
    per_prompt = correlate(x, y, coefficient)
    used = np.isfinite(per_prompt).sum(axis=0)
    with np.errstate(invalid="ignore"):
        mean = np.where(used > 0, np.nansum(per_prompt, axis=0) / np.maximum(used, 1), np.nan)
    return mean, used


def authors_means(x: np.ndarray) -> np.ndarray:
    """Means over axis 0 as HANNA's notebook computed them: np.mean of a [prompts, systems] array, i.e. numpy's
    pairwise summation of each variable's contiguous values. Equal means of Likert averages then differ in the
    last bit (Complexity: 2.4930555555555554 vs 2.493055555555556)."""
    return np.ascontiguousarray(np.moveaxis(x, 0, -1)).mean(axis=-1)


def scipy_pairs(x: np.ndarray, y: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlate every column of `x` [n, A] with every column of `y` [n, B], one scipy call a pair (the authors'
    floats to the last bit: their pearsonr, spearmanr, kendalltau)."""
    function = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[coefficient]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.array([[function(a, b)[0] for b in y.T] for a in x.T], dtype=float).reshape(x.shape[1], y.shape[1])


def system_level(
    x: np.ndarray, y: np.ndarray, coefficient: str, ties: str = "merged", backend: str = "vectorised"
) -> tuple[np.ndarray, np.ndarray]:
    """HANNA system level: average each variable over prompts, correlate the S-long vectors.

    ties "merged": means equal up to float rounding are made equal first, so rank coefficients see the real
    ties of averaged Likert ratings instead of summation noise. ties "authors": the means as HANNA's notebook
    computed them (`authors_means`, ties broken by the last bit: Chhun et al.'s Fig. 2 and Tab. 6, 9).
    backend "scipy": one scipy call a pair (`scipy_pairs`), the papers' floats to the last bit, on which a
    Wilcoxon test over |r| differences depends (Mendras & Nietge's Tab. 2); "vectorised": `correlate`.
    """
    if ties not in SYSTEM_TIES or backend not in BACKENDS:
        raise ValueError(f"unknown ties {ties!r} or backend {backend!r}; choose from {SYSTEM_TIES} and {BACKENDS}")
    x, y = (merge_float_ties(v.mean(axis=0)) if ties == "merged" else authors_means(v) for v in (x, y))
    r = correlate(x, y, coefficient) if backend == "vectorised" else scipy_pairs(x, y, coefficient)
    return r, np.full(r.shape, x.shape[0])


LEVELS = {"story": story_level, "system": system_level}
