"""Rank metrics by their correlation with human criteria: top-k and Borda counts.

Orientation (config analysis.orientation), one convention for every ranking of the package (these, Kemeny,
Williams, the meta-evaluation): "oriented" ranks by r after orientation, r negated for a lower-is-better metric
(registry `direction`), so "agrees with the humans" is a large positive value and a metric whose scores move
against its own direction ranks low; "absolute" ranks by |r|, as HANNA's tables (Chhun et al. 2022) did, which
rewards a metric for agreeing in the wrong direction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.errors import InputError

ORIENTATIONS = ("oriented", "absolute")
DIRECTIONS = ("higher", "lower")


def ranked_r(metric_criterion: pd.DataFrame, orientation: str = "oriented") -> pd.Series:
    """What the metrics of `metric_criterion` (columns r, and direction with "oriented") rank by: r after
    orientation (-r for a lower-is-better metric) or |r| (`orientation` "absolute")."""
    if orientation == "absolute":
        return metric_criterion["r"].abs()
    if orientation != "oriented":
        raise InputError(f"unknown orientation {orientation!r}; fix: analysis.orientation one of {ORIENTATIONS}")
    directions = metric_criterion.get("direction")
    if directions is None or not directions.isin(DIRECTIONS).all():
        raise InputError(
            "ranking by oriented r needs each metric's direction (higher or lower) beside its r; fix: pass the "
            "registry's direction column (analysis.metric_criterion_table)"
        )
    return metric_criterion["r"].where(directions != "lower", -metric_criterion["r"])


TIE_DECIMALS = 12  # values equal to 12 decimals tie: the same r computed along two paths differs in its last bits


def top_metrics(metric_criterion: pd.DataFrame, k: int, orientation: str = "oriented") -> pd.DataFrame:
    """Top `k` metrics per (level, coefficient, criterion) by `ranked_r` (column ranked_r beside the signed r),
    and every metric tied with the k-th: a tie at the cut is kept whole, so a ranking may run past k.

    `metric_criterion` has level, coefficient, x (metric), y (criterion), r, order (and direction). `rank`: the
    place, ties in registry order; `tied_rank`: the place of the first of equal values, which tied metrics share
    (competition ranking, pandas rank "min"); metrics with NaN r are not ranked.
    """
    keys = ["level", "coefficient", "y"]
    frame = metric_criterion.dropna(subset=["r"])
    frame = frame.assign(ranked_r=ranked_r(frame, orientation))
    frame = frame.sort_values(keys + ["ranked_r", "order"], ascending=[True, True, True, False, True])
    frame["rank"] = frame.groupby(keys).cumcount() + 1
    frame["tied_rank"] = frame.assign(equal=frame["ranked_r"].round(TIE_DECIMALS)).groupby(keys)["equal"].rank(
        method="min", ascending=False).astype(int)
    top = frame[frame["tied_rank"] <= k].rename(columns={"x": "metric", "y": "criterion"})
    return top[["level", "coefficient", "criterion", "rank", "tied_rank", "metric", "ranked_r", "r"]].reset_index(
        drop=True)


BORDA_TIES = ("average", "ordinal")


def _less(a: float, b: float) -> bool:
    return a < b or (b != b and a == a)  # numpy's float order: NaN after every number


def introsort_argsort(values: np.ndarray) -> np.ndarray:
    """np.argsort(kind="quicksort") as numpy computed it before its SIMD sorts (npysort/quicksort.cpp, aquicksort:
    median-of-3 partitions above 16 elements, insertion sort below). Equal values come out in this algorithm's
    order, which HANNA's Borda counts inherit (pandas argsort, 2022); numpy 2 on AVX-512 machines orders them
    differently, so the order is written out here. Deterministic; the heapsort fallback of a 2*log2(n) deep
    recursion is never reached for a few hundred values and raises instead."""
    v = [float(value) for value in values]
    t = list(range(len(v)))
    stack, low, high, depth = [], 0, len(v) - 1, 2 * (len(v).bit_length() - 1)
    while True:
        while high - low > 16:
            if depth < 0:
                raise ValueError("introsort_argsort: recursion limit (numpy would switch to heapsort)")
            mid = low + ((high - low) >> 1)
            for a, b in ((mid, low), (high, mid), (mid, low)):
                if _less(v[t[a]], v[t[b]]):
                    t[a], t[b] = t[b], t[a]
            pivot = v[t[mid]]
            i, j = low, high - 1
            t[mid], t[j] = t[j], t[mid]
            while True:
                i += 1
                while _less(v[t[i]], pivot):
                    i += 1
                j -= 1
                while _less(pivot, v[t[j]]):
                    j -= 1
                if i >= j:
                    break
                t[i], t[j] = t[j], t[i]
            t[i], t[high - 1] = t[high - 1], t[i]
            depth -= 1
            if i - low < high - i:  # the larger part waits on the stack
                stack.append((i + 1, high, depth))
                high = i - 1
            else:
                stack.append((low, i - 1, depth))
                low = i + 1
        for i in range(low + 1, high + 1):  # insertion sort, stable
            item, j = t[i], i
            while j > low and _less(v[item], v[t[j - 1]]):
                t[j] = t[j - 1]
                j -= 1
            t[j] = item
        if not stack:
            return np.array(t, dtype=int)
        low, high, depth = stack.pop()


def borda_points(values: np.ndarray, ties: str = "average") -> np.ndarray:
    """Points of each metric in one ranking by `values` (`ranked_r`): the number of metrics ranked below it.

    ties "average": tied metrics share the average of the ranks they span (pandas rank 'average', 0-based),
    so the result never depends on sort order; a NaN correlation ranks below every number (ties with other
    NaNs). ties "ordinal": HANNA's own rule (Chhun et al. 2022, via Colombo et al.'s ranking_aggregation:
    argsort().argsort() of each column): equal values get distinct points in the order of numpy's classic
    quicksort (`introsort_argsort`) over the metrics in the released file's column order; NaN ranks last.
    """
    if ties == "ordinal":
        points = np.empty(len(values))
        points[introsort_argsort(values)] = np.arange(len(values))
        return points
    if ties != "average":
        raise ValueError(f"unknown ties {ties!r}; choose one of {BORDA_TIES}")
    filled = np.where(np.isnan(values), -np.inf, values)
    return pd.Series(filled).rank(method="average").to_numpy() - 1.0


def borda(metric_criterion: pd.DataFrame, levels: dict[str, list[str]], ties: str = "average",
          orientation: str = "oriented") -> pd.DataFrame:
    """Borda counts over the rankings (criterion x coefficient, each by `ranked_r`) of each named group of levels.

    `levels` maps an output level name to the correlation levels it sums, e.g.
    {"story": ["story"], "system": ["system"], "global": ["story", "system"]}.
    `ties`: `borda_points`; "ordinal" ranks each column's metrics in registry `order` when the table has it.
    Final rank: by count descending; equal counts share the lowest rank ('min').
    """
    frame = metric_criterion.assign(ranked_r=ranked_r(metric_criterion, orientation))
    if ties == "ordinal" and "order" in frame.columns:
        frame = frame.sort_values("order", kind="stable")
    frame["points"] = frame.groupby(["level", "coefficient", "y"])["ranked_r"].transform(
        lambda column: borda_points(column.to_numpy(), ties)
    )
    tables = []
    for name, members in levels.items():
        sums = frame[frame["level"].isin(members)].groupby("x", sort=False)["points"].sum()
        rankings = frame[frame["level"].isin(members)].groupby(["level", "coefficient", "y"]).ngroups
        table = sums.rename("borda").rename_axis("metric").reset_index()
        table["rank"] = (-table["borda"]).rank(method="min").astype(int)
        table.insert(0, "level", name)
        table["rankings"] = rankings
        tables.append(table.sort_values(["rank", "metric"], kind="stable"))
    return pd.concat(tables, ignore_index=True)
