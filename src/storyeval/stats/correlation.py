"""Pearson, Spearman and Kendall tau-b, vectorised over many variables at once.

scipy.stats computes one pair per call; HANNA needs ~30k pairs x 96 prompts,
so the three coefficients are written here as array operations and tested
against scipy (pearsonr, spearmanr, kendalltau with its default tau-b).
A constant vector gives NaN, as in scipy.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

COEFFICIENTS = ("pearson", "spearman", "kendall")


def _constant(x: np.ndarray) -> np.ndarray:
    return np.ptp(x, axis=-2) == 0


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=-2, keepdims=True)
    yc = y - y.mean(axis=-2, keepdims=True)
    xn = np.sqrt((xc**2).sum(axis=-2))
    yn = np.sqrt((yc**2).sum(axis=-2))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.einsum("...na,...nb->...ab", xc, yc) / (xn[..., :, None] * yn[..., None, :])
    r[_constant(x)[..., :, None] | _constant(y)[..., None, :]] = np.nan
    return np.clip(r, -1.0, 1.0)


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # tau-b = sum sign(dx) sign(dy) / sqrt(#pairs untied in x * #pairs untied in y)
    i, j = np.triu_indices(x.shape[-2], k=1)
    sx = np.sign(x[..., i, :] - x[..., j, :])
    sy = np.sign(y[..., i, :] - y[..., j, :])
    untied_x = (sx**2).sum(axis=-2)
    untied_y = (sy**2).sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.einsum("...na,...nb->...ab", sx, sy) / np.sqrt(untied_x[..., :, None] * untied_y[..., None, :])


def correlate(x: np.ndarray, y: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlate every column of `x` [..., n, A] with every column of `y` [..., n, B] over axis n.

    Returns [..., A, B]. Rows containing NaN are not supported: callers check completeness.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if coefficient == "pearson":
        return _pearson(x, y)
    if coefficient == "spearman":
        return _pearson(rankdata(x, axis=-2), rankdata(y, axis=-2))
    if coefficient == "kendall":
        return _kendall_tau_b(x, y)
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
    starts = np.concatenate([np.ones_like(ordered[..., :1, :], dtype=bool), np.diff(ordered, axis=-2) > rtol * scale], axis=-2)
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


def system_level(x: np.ndarray, y: np.ndarray, coefficient: str) -> tuple[np.ndarray, np.ndarray]:
    """HANNA system level: average each variable over prompts, correlate the S-long vectors.

    Means equal up to float rounding are made equal first, so rank coefficients
    see the real ties of averaged Likert ratings instead of summation noise.
    """
    r = correlate(merge_float_ties(x.mean(axis=0)), merge_float_ties(y.mean(axis=0)), coefficient)
    return r, np.full(r.shape, x.shape[1])


LEVELS = {"story": story_level, "system": system_level}
