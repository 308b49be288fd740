"""Compare computed scores with HANNA's released ones, column by column."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from storyeval.errors import InputError

COLUMNS = ["metric", "n", "pearson_r", "mean_abs_diff", "max_abs_diff", "share_exact", "atol"]


def released_wide(scores: pd.DataFrame) -> pd.DataFrame:
    """Released long scores (story_id, metric, value) as a story_id x metric table."""
    return scores.pivot(index="story_id", columns="metric", values="value")


def compare_with_released(computed: pd.DataFrame, released: pd.DataFrame, atol: float | dict[str, float] = 0.0,
                          rtol: float = 1e-9) -> pd.DataFrame:
    """One row per column both tables share, over the stories both hold.

    `share_exact`: share of stories with |ours - theirs| <= atol + rtol |theirs|;
    rtol absorbs the decimal printing of the released CSV, atol the released
    rounding (ROUGE-1.5.5 prints 5 decimals: pass 5e-6 for ROUGE columns).
    `pearson_r` is NaN where either side is constant (e.g. the Human row's ROUGE = 1).
    """
    from scipy.stats import pearsonr

    stories = computed.index.intersection(released.index)
    metrics = [column for column in computed.columns if column in released.columns]
    if stories.empty or not metrics:
        raise InputError("validation: the computed and released scores share no story or no metric column; "
                         "fix: compute on the HANNA stories whose ids the released file uses (p000-human ...)")
    rows = []
    for metric in metrics:
        ours, theirs = computed.loc[stories, metric].to_numpy(float), released.loc[stories, metric].to_numpy(float)
        valid = np.isfinite(ours) & np.isfinite(theirs)  # a NaN on either side is left out of every column
        ours, theirs = ours[valid], theirs[valid]
        tolerance = atol.get(metric, 0.0) if isinstance(atol, dict) else atol
        gap = np.abs(ours - theirs)
        constant = len(ours) < 2 or np.ptp(ours) == 0 or np.ptp(theirs) == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = np.nan if constant else pearsonr(ours, theirs).statistic
        rows.append([metric, int(valid.sum()), r, gap.mean(), gap.max(),
                     float(np.mean(gap <= tolerance + rtol * np.abs(theirs))), tolerance])
    return pd.DataFrame(rows, columns=COLUMNS)


def release_tolerances(metrics: list[str]) -> dict[str, float]:
    """Absolute tolerances for the released rounding: ROUGE-1.5.5 printed R and P with 5 decimals
    (half a unit: 5e-6) and computed F from those rounded values (up to ~1.5e-5); exact elsewhere."""
    return {
        metric: (1.5e-5 if metric.endswith("f-score") else 5e-6) for metric in metrics if metric.startswith("rouge-")
    }


def validation_table(computed: pd.DataFrame, released: pd.DataFrame) -> pd.DataFrame:
    """Long computed and released scores (story_id, metric, value) -> one row per shared metric.

    On hanna-llm the shared stories are HANNA's 96 human stories: reference-free
    statistics are compared with the paper's values, and reference-based
    metrics (story = reference) with the released identity values.
    """
    ours, theirs = released_wide(computed), released_wide(released)
    return compare_with_released(ours, theirs, release_tolerances(list(ours.columns)))
