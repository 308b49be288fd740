"""Confidence intervals of means."""

from __future__ import annotations

import numpy as np
from scipy.special import stdtrit  # Student t quantile, as scipy.stats.t.ppf computes it, without scipy.stats' import


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t interval: mean -/+ sem * t((1+level)/2, n-1) (HANNA Tab. 4)."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    sem = np.std(values, ddof=1) / np.sqrt(len(values))  # scipy.stats.sem
    half = float(sem * stdtrit(len(values) - 1, (1 + level) / 2))
    return mean, mean - half, mean + half
