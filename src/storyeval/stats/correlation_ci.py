"""Percentile bootstrap intervals of every metric-criterion correlation, prompts resampled (HANNA, Chhun et al. 2022).

One draw of prompt indices (with replacement) serves every coefficient, cell
and level, so the intervals of different cells come from the same resamples.
scipy.stats.bootstrap draws its own indices per statistic and would recompute
the correlations per resample; here each resample is a row of prompt counts:
- story level: the per-prompt correlations [P, A, B] are computed once; a
  resample's value is their count-weighted mean, NaN prompts skipped as in
  `correlation.story_level`;
- system level: resampled system means are a count-matrix product, then one
  batched `correlate` over all resamples, after merging the ties that float
  summation hides (`merge_float_ties`).
Resamples whose correlation is NaN (a constant resampled vector) are left out
of the percentiles.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from storyeval.data.scoreset import Cube
from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.stats.correlation import correlate, merge_float_ties
from storyeval.stats.resampling import prompt_resamples, resample_counts


def story_level_resamples(x: np.ndarray, y: np.ndarray, coefficient: str, counts: np.ndarray) -> np.ndarray:
    """[B, A, C]: per resample, the mean of the per-prompt correlations of x [P, S, A] and y [P, S, C]."""
    per_prompt = correlate(x, y, coefficient)
    finite = np.isfinite(per_prompt).reshape(len(x), -1)
    sums = counts @ np.where(finite, per_prompt.reshape(len(x), -1), 0.0)
    used = counts @ finite
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(used > 0, sums / used, np.nan).reshape(len(counts), *per_prompt.shape[1:])


def system_level_resamples(x: np.ndarray, y: np.ndarray, coefficient: str, counts: np.ndarray) -> np.ndarray:
    """[B, A, C]: per resample, the correlation of the resampled system means of x and y."""
    def means(values: np.ndarray) -> np.ndarray:  # over the drawn prompts where a system has a value
        flat = values.reshape(len(values), -1)
        present = ~np.isnan(flat)
        if present.all():
            summed = counts @ flat / len(values)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                summed = counts @ np.where(present, flat, 0.0) / (counts @ present)
        return merge_float_ties(summed.reshape(len(counts), *values.shape[1:]))

    with np.errstate(invalid="ignore", divide="ignore"):
        return correlate(means(x), means(y), coefficient)


RESAMPLED = {"story": story_level_resamples, "system": system_level_resamples}


def correlation_intervals(human: Cube, metrics: Cube, levels: list[str], coefficients: list[str],
                          n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """Long table: level, coefficient, x (metric), y (criterion), ci_low, ci_high, n_resamples."""
    if list(metrics.prompts) != list(human.prompts) or list(metrics.systems) != list(human.systems):
        raise InputError("bootstrap: metric and criterion cubes cover different prompts or systems; "
                         "fix: build both from the same stories")
    unknown = [level for level in levels if level not in RESAMPLED]
    if unknown:
        raise InputError(f"bootstrap: unknown levels {unknown}; fix: use {sorted(RESAMPLED)}")
    check_draws(n_resamples, len(human.prompts), len(human.systems), len(metrics.names) + len(human.names),
                "stats.n_resamples")
    counts = resample_counts(prompt_resamples(len(human.prompts), n_resamples, seed), len(human.prompts))
    grid_x, grid_y = np.meshgrid(metrics.names, human.names, indexing="ij")
    frames = []
    for level in levels:
        for coefficient in coefficients:
            draws = RESAMPLED[level](metrics.values, human.values, coefficient, counts)
            with warnings.catch_warnings():  # a cell without one finite resample gets a NaN interval
                warnings.simplefilter("ignore", RuntimeWarning)
                low, high = np.nanquantile(draws, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
            frames.append(pd.DataFrame({
                "level": level, "coefficient": coefficient, "x": grid_x.ravel(), "y": grid_y.ravel(),
                "ci_low": low.ravel(), "ci_high": high.ravel(), "n_resamples": n_resamples,
            }))
    return pd.concat(frames, ignore_index=True)
