"""Confidence intervals of means."""

from __future__ import annotations

import numpy as np
from scipy import stats


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t interval: mean -/+ sem * t((1+level)/2, n-1) (HANNA Tab. 4)."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    half = float(stats.sem(values) * stats.t.ppf((1 + level) / 2, len(values) - 1))
    return mean, mean - half, mean + half
