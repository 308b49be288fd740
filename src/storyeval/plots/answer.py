"""The design's answer in words and as a table (storyeval.stats.answer): the landing page's paragraph of a score
set and its page."""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.plots.pages import readable

LEVELS = {"story": "Story level", "system": "System level"}


def _interval(low: float, high: float) -> str:
    return f"[{low:+.2f}, {high:+.2f}]" if np.isfinite(low) and np.isfinite(high) else "[no interval]"


def _number(value: float, signed: bool = True) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:+.2f}" if signed else f"{value:.2f}"


def cell_sentence(row) -> str:
    """One criterion's answer: the verdict, the best metric and judge with intervals, baselines, ceiling and the
    size of the family behind the certainty."""
    parts = [f"*{row.criterion}*: {row.verdict}"]
    if row.best:
        best = f"{row.best} {_number(row.best_r)} {_interval(row.best_low, row.best_high)}"
        judge = (f"; best LLM judge {row.best_judge} {_number(row.best_judge_r)}"
                 if row.best_judge and row.best_judge != row.best else "")
        parts.append(f"best {best}{judge}")
    baselines = []
    if row.level == "story":
        if row.statistic == "within":
            baselines.append(f"which writer {_number(row.writer_baseline_pooled)} pooled (0 within by construction)")
        elif np.isfinite(row.writer_baseline):
            baselines.append(f"which writer {_number(row.writer_baseline)}")
        if np.isfinite(row.length_baseline):
            baselines.append(f"Text length {_number(row.length_baseline)}")
    if baselines:
        parts.append("baselines: " + ", ".join(baselines))
    if not np.isfinite(row.ceiling):
        parts.append("no human ceiling (no per-rater ratings)")
    elif row.ceiling <= 0:
        parts.append(f"no human ceiling: two halves of the raters correlate {row.ceiling:+.2f} under this statistic")
    else:
        parts.append(f"human ceiling {row.ceiling:.2f} (two half-panels of the raters, Spearman-Brown)")
    parts.append(f"top cluster {row.top_size} of {row.columns} columns (BH over the {row.columns})")
    if row.kendall_best and row.best and row.kendall_best != row.best:
        parts.append(f"by Kendall's tau the best is {row.kendall_best} ({row.kendall_best_tau:+.2f}): the "
                     "coefficients disagree")
    return "; ".join(parts)


def answer_text(summary: pd.DataFrame, name: str, design_line: str) -> str:
    """The landing page's paragraph (reStructuredText, nested items a level) of a score set's answer."""
    text = f"**{name}: which metric agrees with the humans, for this design** ({design_line})."
    items = []
    for level, rows in summary.groupby("level", sort=False):
        first = rows.iloc[0]
        statistics = sorted(set(rows["statistic_words"]))
        head = (f"{LEVELS[level]} ({len(rows)} {'criterion' if len(rows) == 1 else 'criteria'}; r "
                f"{' / '.join(statistics)}; "
                f"{rows['stories'].iloc[0]} stories, {first.writers or 'no'} writers, {first.raters or 'no'} raters; "
                "intervals "
                f"resample {first.resampled})")
        items.append(head + ": " + ". ".join(cell_sentence(row) for row in rows.itertuples()) + ".")
    against = [f"{row.criterion} ({row.level} level): {row.against_direction}" for row in summary.itertuples()
               if row.against_direction]
    if against:
        items.append("Against the declared direction (the interval of the oriented r lies below 0; such a metric "
                     "ranks last, yet says much): " + "; ".join(dict.fromkeys(against)) + ".")
    return text + "".join(f"\n\n  - {item}" for item in items) + "\n"


SHOWN = {"level": "Level", "criterion": "Criterion", "statistic": "Statistic", "label": "Metric", "kind": "Kind",
         "r": "r", "ci_low": "95 % CI low", "ci_high": "95 % CI high", "pooled_r": "Pooled r", "rank": "Rank",
         "top": "Top cluster", "against_direction": "Against direction", "beats_writer": "Beats which writer",
         "beats_length": "Beats Text length"}


def rows_view(rows: pd.DataFrame, most: int = 10) -> pd.DataFrame:
    """The page's table: per level and criterion the top `most` columns by rank plus every flagged one; r to
    three decimals, flags as yes / no (empty where the level has no such baseline)."""
    kept = rows[rows["against_direction"].astype(bool) | (rows["rank"] <= most)].reset_index(drop=True)
    shown = readable(kept, SHOWN, constant=True)
    for column in ("top", "against_direction", "beats_writer", "beats_length"):
        shown[SHOWN[column]] = [("yes" if flag else "no") if pd.notna(flag) else ""
                                for flag in kept[column].astype("boolean")]
    return shown
