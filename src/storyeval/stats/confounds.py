"""Confounds of a story-level correlation said beside it: which system wrote the story, and its length.

A correlation pooled over the stories of several systems mixes two things: how well the metric orders stories
of one system, and how far apart the systems are on both sides. When one system writes longer and better-rated
stories, a length count correlates with the ratings over the pool although it orders no system's own stories
(Simpson's paradox; for metrics, Mathur et al. 2020 on outlier systems). So beside each pooled correlation
stands the within-system one: the same coefficient over each system's stories alone (systems with at least
three stories), then the plain mean over systems, as the story level averages its per-prompt correlations. A
pair is flagged where the two differ by more than a margin, or in sign with one of them at least half the margin
from 0.

Length is the field's best-known confound (Text length correlates with many criteria): each metric's
correlation with Text length at the story level is said beside it, and flagged above a limit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyeval.stats.correlation import correlate

LENGTH = "text-length"  # the registry slug of datastats' and textstats' Text length
MIN_STORIES = 3  # a correlation of two points is +-1 whatever the data


def within_system(x: np.ndarray, y: np.ndarray, systems: Sequence, coefficient: str) -> tuple[np.ndarray, int]:
    """(the mean over systems of each system's correlation of the columns of `x` [n, A] with those of `y` [n, B]
    -> [A, B], how many systems have at least MIN_STORIES stories). A system where a column is constant gives no
    value to that pair's mean; NaN where no system does."""
    systems = np.asarray(systems)
    kept = [name for name in dict.fromkeys(systems) if (systems == name).sum() >= MIN_STORIES]
    if not kept:
        return np.full((x.shape[1], y.shape[1]), np.nan), 0
    values = np.stack([correlate(x[systems == name], y[systems == name], coefficient) for name in kept])
    finite = np.isfinite(values)
    with np.errstate(invalid="ignore"):
        mean = np.where(finite, values, 0).sum(axis=0) / finite.sum(axis=0)
    return mean, len(kept)


def disagree(pooled: np.ndarray, within: np.ndarray, margin: float) -> np.ndarray:
    """Where a pooled and a within-system correlation differ by more than `margin`, or in sign with one of them
    at least margin / 2 from 0 (+0.01 against -0.003 is noise, not a reversal); False where either is NaN."""
    with np.errstate(invalid="ignore"):
        reversed_sign = (np.sign(pooled) * np.sign(within) < 0) & (np.maximum(np.abs(pooled), np.abs(within))
                                                                   >= margin / 2)
        return reversed_sign | (np.abs(pooled - within) > margin)


def confound_table(metrics: np.ndarray, human: np.ndarray, systems: Sequence, metric_names: Sequence[str],
                   criteria: Sequence[str], coefficients: Sequence[str], margin: float,
                   length_limit: float) -> pd.DataFrame:
    """Each metric x criterion correlation over all stories (`metrics` [n, A], `human` [n, B]; `systems`: the
    system of each story) with its confounds beside: pooled_r, within_r and systems (`within_system`), length_r
    (the metric's correlation with Text length over all stories, NaN without it) and the flags `system` (pooled
    and within-system disagree, `disagree`), `length` (|length_r| > length_limit, Text length itself not) and
    `confound`, the words a table shows ("" when neither)."""
    grid = pd.MultiIndex.from_product([metric_names, criteria], names=["metric", "criterion"]).to_frame(index=False)
    names = list(metric_names)
    frames = []
    for coefficient in coefficients:
        within, count = within_system(metrics, human, systems, coefficient)
        length = (correlate(metrics, metrics[:, [names.index(LENGTH)]], coefficient)[:, 0] if LENGTH in names
                  else np.full(len(names), np.nan))
        frames.append(grid.assign(coefficient=coefficient, pooled_r=correlate(metrics, human, coefficient).ravel(),
                                  within_r=within.ravel(), systems=count, length_r=np.repeat(length, len(criteria))))
    table = pd.concat(frames, ignore_index=True)
    table = table[["coefficient", "metric", "criterion", "pooled_r", "within_r", "systems", "length_r"]]
    table["system"] = disagree(table["pooled_r"].to_numpy(), table["within_r"].to_numpy(), margin)
    with np.errstate(invalid="ignore"):
        table["length"] = (np.abs(table["length_r"]) > length_limit) & (table["metric"] != LENGTH)
    table["confound"] = [
        "; ".join(name for name, on in (("system", system), ("length", long)) if on)
        for system, long in zip(table["system"], table["length"])
    ]
    return table


def flagged(table: pd.DataFrame, confounds: pd.DataFrame, keys: dict[str, str], rows: pd.Series | None = None,
            system: bool = True) -> pd.DataFrame:
    """`table` with column `confound`: the words of the `confounds` row (`confound_table`) that matches on the
    columns `keys` maps (confounds' name -> table's), on the `rows` mask only (default all); "" elsewhere. With
    `system` False only the length flag counts: the table's correlations pool no systems (a prompt x system grid's
    story level)."""
    words = confounds.assign(confound=confounds["confound"] if system
                             else np.where(confounds["length"], "length", ""))
    words = words.rename(columns=keys)[[*keys.values(), "confound"]]
    merged = table.drop(columns="confound", errors="ignore").merge(words, on=list(keys.values()), how="left")
    keep = np.ones(len(table), bool) if rows is None else np.asarray(rows, bool)
    return merged.assign(confound=np.where(keep, merged["confound"].fillna(""), ""))


def warnings_of(confounds: pd.DataFrame) -> list[str]:
    """One line per flagged row, for the rule's log."""
    lines = []
    for row in confounds[confounds["confound"] != ""].itertuples():
        said = []
        if row.system:
            said.append(f"pooled {row.pooled_r:+.3f} but {row.within_r:+.3f} within the {row.systems} systems")
        if row.length:
            said.append(f"{row.length_r:+.3f} with Text length")
        lines.append(f"confound: {row.metric} x {row.criterion} ({row.coefficient}): {'; '.join(said)}")
    return lines
