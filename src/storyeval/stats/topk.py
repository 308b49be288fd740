"""System-level correlation on the top-k systems of each criterion (HANNA Fig. 8).

As HANNA (Chhun et al. 2022) and its notebook: per criterion, order the systems by their
mean rating rounded to `decimals` (2, as the authors did), keep the best k for
k = 10 down to 4 (the worst system dropped at each step), and correlate each
metric's system means with the criterion's over the kept systems (the figure
uses Spearman). Tie rule: systems whose rounded means are equal keep the order
of the `systems` argument (stable sort), so the result never depends on the
sort algorithm; `decimals=None` orders by the unrounded means instead.
A system's mean is over the prompts where it has a value (missing cells dropped, counted in column missing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.stats.correlation import COEFFICIENTS, cell_means, correlate


def rank_systems(means: np.ndarray, decimals: int | None = 2) -> np.ndarray:
    """Indices of `means` [S] from best to worst (rounded to `decimals`; ties in input order)."""
    key = means if decimals is None else np.round(means, decimals)
    return np.argsort(-key, kind="stable")


def topk_table(
    human: np.ndarray,
    metrics: np.ndarray,
    metric_names: list[str],
    criterion_names: list[str],
    systems: list[str],
    k_values: list[int] | range = range(10, 3, -1),
    coefficient: str = "spearman",
    decimals: int | None = 2,
) -> pd.DataFrame:
    """Correlation of every metric with every criterion on each criterion's top-k systems.

    `human` [P, S, C], `metrics` [P, S, M] (human reference removed). Returns
    columns criterion, k, metric, r (signed), abs_r, systems (the kept ones,
    best first, ';'-joined), missing (the metric's cells without a value); rows criterion-major, then k as
    given, then metric.
    """
    human, metrics = np.asarray(human, dtype=float), np.asarray(metrics, dtype=float)
    if human.shape[:2] != metrics.shape[:2] or human.shape[1] != len(systems):
        raise InputError(
            f"topk_table: cubes {human.shape}, {metrics.shape} and {len(systems)} systems disagree; fix: build "
            "both cubes on the same systems"
        )
    if (metrics.shape[2], human.shape[2]) != (len(metric_names), len(criterion_names)):
        raise InputError("topk_table: names do not match the cubes' last axes; fix: pass Cube.names")
    if coefficient not in COEFFICIENTS:
        raise InputError(f"topk_table: unknown coefficient {coefficient!r}; fix: one of {COEFFICIENTS}")
    bad = [k for k in k_values if not 2 <= k <= len(systems)]
    if bad:
        raise InputError(
            f"topk_table: k values {bad} outside [2, {len(systems)}]; fix: k_values between 2 and the number of systems"
        )
    human_means, metric_means = cell_means(human), cell_means(metrics)
    missing = np.isnan(metrics).sum(axis=(0, 1))
    names = np.asarray(systems, dtype=object)
    frames = []
    for c, criterion in enumerate(criterion_names):
        order = rank_systems(human_means[:, c], decimals)
        for k in k_values:
            kept = order[:k]
            r = correlate(metric_means[kept], human_means[kept, c : c + 1], coefficient)[:, 0]
            frames.append(
                pd.DataFrame(
                    {
                        "criterion": criterion,
                        "k": k,
                        "metric": metric_names,
                        "r": r,
                        "abs_r": np.abs(r),
                        "systems": ";".join(names[kept]),
                        "missing": missing,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
