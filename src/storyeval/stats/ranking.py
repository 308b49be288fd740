"""Rank metrics by their absolute correlation with human criteria: top-k and Borda counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata


def top_metrics(metric_criterion: pd.DataFrame, k: int) -> pd.DataFrame:
    """Top `k` metrics per (level, coefficient, criterion) by |r|.

    `metric_criterion` has level, coefficient, x (metric), y (criterion), r, order.
    Ties are broken by registry order; metrics with NaN r are not ranked.
    """
    frame = metric_criterion.dropna(subset=["r"]).assign(abs_r=lambda f: f["r"].abs())
    frame = frame.sort_values(["level", "coefficient", "y", "abs_r", "order"], ascending=[True, True, True, False, True])
    frame["rank"] = frame.groupby(["level", "coefficient", "y"]).cumcount() + 1
    top = frame[frame["rank"] <= k].rename(columns={"x": "metric", "y": "criterion"})
    return top[["level", "coefficient", "criterion", "rank", "metric", "abs_r", "r"]].reset_index(drop=True)


def borda_points(abs_r: np.ndarray) -> np.ndarray:
    """Points of each metric in one ranking: the number of metrics ranked below it.

    Tie rule: tied metrics share the average of the ranks they span
    (scipy rankdata 'average', 0-based), so the result never depends on sort
    order. A NaN correlation ranks below every number (ties with other NaNs).
    """
    filled = np.where(np.isnan(abs_r), -1.0, abs_r)
    return rankdata(filled, method="average") - 1.0


def borda(metric_criterion: pd.DataFrame, levels: dict[str, list[str]]) -> pd.DataFrame:
    """Borda counts over the rankings (criterion x coefficient) of each named group of levels.

    `levels` maps an output level name to the correlation levels it sums, e.g.
    {"story": ["story"], "system": ["system"], "global": ["story", "system"]}.
    Final rank: by count descending; equal counts share the lowest rank ('min').
    """
    frame = metric_criterion.assign(abs_r=lambda f: f["r"].abs())
    frame["points"] = frame.groupby(["level", "coefficient", "y"])["abs_r"].transform(
        lambda column: borda_points(column.to_numpy())
    )
    tables = []
    for name, members in levels.items():
        sums = frame[frame["level"].isin(members)].groupby("x", sort=False)["points"].sum()
        rankings = frame[frame["level"].isin(members)].groupby(["level", "coefficient", "y"]).ngroups
        table = sums.rename("borda").rename_axis("metric").reset_index()
        table["rank"] = rankdata(-table["borda"].to_numpy(), method="min").astype(int)
        table.insert(0, "level", name)
        table["rankings"] = rankings
        tables.append(table.sort_values(["rank", "metric"], kind="stable"))
    return pd.concat(tables, ignore_index=True)
