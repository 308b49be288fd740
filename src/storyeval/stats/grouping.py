"""Correlations by grouping: none (all stories), item (per prompt, averaged) or system (system means).

The three ways of turning a [prompt, system] table of scores into correlations
that mt-metrics-eval calls average_by (Deutsch, Foster & Freitag 2023, Sec. 2;
Freitag et al., WMT 2023/2024 metrics tasks):

- "none": one correlation over all P x S stories (global, "no grouping");
- "item": per prompt, over its S systems, then the mean over the prompts
  whose correlation is defined (HANNA's story level, correlation.story_level);
- "system": over the S system means (HANNA's system level; means equal up to
  float rounding are made equal first, correlation.merge_float_ties).

Each grouping is the same computation on a [groups, n, columns] array
(`grouped_arrays`: 1 x PS, P x S or 1 x S), so one code path serves every
coefficient: Pearson, Spearman, Kendall tau-b (storyeval.stats.correlation) and
the Kendall variants of storyeval.stats.kendall (tau-c; tau_23 and acc23 with
their tie calibration, epsilon reported beside the value).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.data.scoreset import Cube
from storyeval.errors import InputError
from storyeval.stats import kendall
from storyeval.stats.correlation import COEFFICIENTS as BASIC
from storyeval.stats.correlation import cell_means, merge_float_ties, missing_pairs, story_level

GROUPINGS = ("none", "item", "system")
COEFFICIENTS = BASIC + kendall.VARIANTS  # "kendall" is tau-b by the fast path of correlation.py


def grouped_arrays(values: np.ndarray, grouping: str) -> np.ndarray:
    """[..., P, S, K] -> [G, ..., n, K]: the groups first (story_level averages over axis 0), batch axes kept."""
    values = np.asarray(values, dtype=float)
    if values.ndim < 3:
        raise InputError(f"grouping: need a [..., prompt, system, column] array, got shape {values.shape}")
    if grouping == "none":
        return values.reshape(values.shape[:-3] + (-1, values.shape[-1]))[None]
    if grouping == "item":
        return np.moveaxis(values, -3, 0)
    if grouping == "system":
        return merge_float_ties(cell_means(values, -3))[None]
    raise InputError(f"grouping: unknown grouping {grouping!r}; fix: choose one of {GROUPINGS}")


def coefficient_function(coefficient: str):
    """What story_level needs for `coefficient`: a name of correlation.py or a function of (x, y)."""
    if coefficient in BASIC:
        return coefficient
    if coefficient in kendall.VARIANTS:
        return kendall.variant_function(coefficient)
    raise InputError(f"grouping: unknown coefficient {coefficient!r}; fix: choose one of {COEFFICIENTS}")


def grouped_correlation(
    metrics: np.ndarray, human: np.ndarray, coefficient: str, grouping: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Correlate every metric column of [P, S, A] with every human column of [P, S, B] under `grouping`.

    Returns (r [A, B], n [A, B], epsilon [A, B]): n counts the groups averaged (prompts with a defined
    coefficient for "item", else 1); epsilon is the calibrated tie threshold of tau_23 / acc23
    (kendall.calibrate), 0 for the other coefficients, whose value is taken at epsilon 0.
    """
    metrics, human = np.asarray(metrics, dtype=float), np.asarray(human, dtype=float)
    if metrics.ndim != 3 or human.ndim != 3 or metrics.shape[:2] != human.shape[:2]:
        raise InputError(
            f"grouping: cubes {metrics.shape} and {human.shape} must be [prompt, system, column] "
            "with the same prompts and systems; fix: build both on the same stories"
        )
    x, y = grouped_arrays(metrics, grouping), grouped_arrays(human, grouping)
    if coefficient in kendall.CALIBRATED:
        value, epsilon = kendall.calibrate(x, y, coefficient)
        return value, np.full(value.shape, x.shape[0]), epsilon
    r, used = story_level(x, y, coefficient_function(coefficient))
    return r, used, np.zeros(r.shape)


def grouped_table(human: Cube, metrics: Cube, groupings: list[str], coefficients: list[str]) -> pd.DataFrame:
    """Long table of metric x criterion correlations: grouping, coefficient, metric, criterion, r, epsilon, n, items,
    missing.

    items: the length of each correlated vector (P x S, S or S); missing: the stories without a value of the
    metric or the criterion, dropped from the pair's correlation (`correlation.correlate`).
    """
    missing = missing_pairs(metrics.values, human.values).ravel()
    frames = []
    for grouping in groupings:
        for coefficient in coefficients:
            r, n, epsilon = grouped_correlation(metrics.values, human.values, coefficient, grouping)
            metric, criterion = np.meshgrid(metrics.names, human.names, indexing="ij")
            frames.append(
                pd.DataFrame(
                    {
                        "grouping": grouping,
                        "coefficient": coefficient,
                        "metric": metric.ravel(),
                        "criterion": criterion.ravel(),
                        "r": r.ravel(),
                        "epsilon": epsilon.ravel(),
                        "n": n.ravel().astype(int),
                        "items": np.prod(metrics.values.shape[:2]) if grouping == "none" else metrics.values.shape[1],
                        "missing": missing,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
