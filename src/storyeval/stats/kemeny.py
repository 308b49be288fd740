"""Kemeny consensus of the metric rankings that Borda aggregates (Colombo et al. 2022).

Rankings: one per (level, coefficient, criterion), metrics by `ranking.ranked_r` (r after orientation, or |r| with
analysis.orientation absolute), NaN last (as `ranking.borda_points`).
Kemeny score of a strict candidate order = Kendall distance to the inputs: 1 per pair an input ranking
orders the other way, 0.5 per pair it ties (either way round: a constant that never moves the optimum).

Exact: the strongly connected components of the weak-majority graph are ordered by strict majorities
and every Kemeny ranking keeps that order (extended Condorcet criterion, Truchon 1998: an adjacent
pair across components could be swapped for a strict gain). Each component is solved by dynamic
programming over subsets (size <= `dp_limit`) or an integer program (pulp + CBC, triangle constraints
added lazily); one the ILP does not close within `ilp_time_limit` seconds gets a local search
(insertion moves from the Borda order until none improves): method 'local-search'.
"""
from __future__ import annotations

import time
import warnings
from itertools import combinations

import numpy as np
import pandas as pd
import pulp
from scipy.sparse.csgraph import connected_components

from storyeval.analysis import BORDA_LEVELS
from storyeval.errors import InputError
from storyeval.stats.ranking import borda, ranked_r


def preference_costs(scores: np.ndarray) -> np.ndarray:
    """[R rankings, M items] scores (higher ranks higher, NaN last) -> cost[a, b] of placing a before b."""
    ranks = pd.DataFrame(np.where(np.isnan(scores), -np.inf, scores)).rank(axis=1).to_numpy()
    sign = np.sign(ranks[:, :, None] - ranks[:, None, :])
    costs = ((1 - sign) / 2).sum(axis=0)
    np.fill_diagonal(costs, 0.0)
    return costs


def kemeny_score(order: np.ndarray, costs: np.ndarray) -> float:
    """Total Kendall distance of the strict `order` (item indices, best first) to the input rankings."""
    order = np.asarray(order)
    return float(np.triu(costs[np.ix_(order, order)], 1).sum())


def kendall_distance(order_a: np.ndarray, order_b: np.ndarray) -> int:
    """Number of item pairs two strict orders of the same items put the other way round."""
    position_a, position_b = np.argsort(order_a), np.argsort(order_b)
    i, j = np.triu_indices(len(position_a), 1)
    return int((np.sign(position_a[i] - position_a[j]) != np.sign(position_b[i] - position_b[j])).sum())


def majority_components(costs: np.ndarray, initial: np.ndarray) -> list[np.ndarray]:
    """Components of the weak-majority graph in consensus order, items of each in `initial` order."""
    weakly_before = (costs <= costs.T) & ~np.eye(len(costs), dtype=bool)
    _, labels = connected_components(weakly_before, directed=True, connection="strong")
    beaten = (costs < costs.T).sum(axis=1)  # items of earlier components beat strictly more items
    labels_in_order = sorted(set(labels), key=lambda label: -beaten[labels == label].max())
    return [np.asarray([item for item in initial if labels[item] == label]) for label in labels_in_order]


def dynamic_programming(costs: np.ndarray) -> np.ndarray:
    """Exact order of a small set (Held-Karp style over subsets, O(2^m m)); ties favour the given item order."""
    m = len(costs)
    added = np.zeros((1 << m, m))  # added[S, v]: cost of putting v after every item of S
    for u in range(m):
        added[1 << u: 1 << (u + 1)] = added[: 1 << u] + costs[u]
    best = np.full(1 << m, np.inf)
    best[0] = 0.0
    last = np.zeros(1 << m, dtype=int)
    subsets = np.arange(1 << m)
    popcount = np.bitwise_count(subsets)
    for size in range(1, m + 1):
        layer = subsets[popcount == size]
        member = (layer[:, None] >> np.arange(m)) & 1 == 1
        previous = np.where(member, layer[:, None] ^ (1 << np.arange(m)), 0)
        candidate = np.where(member, best[previous] + added[previous, np.arange(m)], np.inf)
        choice = m - 1 - np.argmin(candidate[:, ::-1], axis=1)  # on ties the later item goes last
        best[layer], last[layer] = candidate[np.arange(len(layer)), choice], choice
    order, subset = [], (1 << m) - 1
    while subset:
        order.append(last[subset])
        subset ^= 1 << last[subset]
    return np.asarray(order[::-1])


def integer_program(costs: np.ndarray, time_limit: float) -> np.ndarray | None:
    """Exact order by ILP (x_ab = 1: a before b), None when CBC does not prove optimality in time."""
    m = len(costs)
    i, j = np.triu_indices(m, 1)
    problem = pulp.LpProblem("kemeny", pulp.LpMinimize)
    x = {(a, b): problem.add_variable(f"x_{a}_{b}", 0, 1, cat="Binary") for a, b in zip(i.tolist(), j.tolist())}
    problem += pulp.lpSum(float(costs[a, b] - costs[b, a]) * var for (a, b), var in x.items())
    a, b, c = np.asarray(list(combinations(range(m), 3)), dtype=int).reshape(-1, 3).T
    deadline = time.monotonic() + time_limit
    while (remaining := deadline - time.monotonic()) > 0:
        with warnings.catch_warnings():  # the CBC bundled with pulp 3 is deprecated for pulp 4 (pulp[cbc])
            warnings.simplefilter("ignore", DeprecationWarning)
            problem.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=remaining, threads=1))
        if problem.sol_status != pulp.LpSolutionOptimal:
            return None
        before = np.zeros((m, m))
        before[i, j] = [1 if var.value() is None else round(var.value()) for var in x.values()]  # free: keep order
        before[j, i] = 1 - before[i, j]
        transitive = before[a, b] + before[b, c] - before[a, c]
        violated = np.flatnonzero((transitive < 0) | (transitive > 1))
        if violated.size == 0:
            return np.argsort(-before.sum(axis=1), kind="stable")
        for q in violated:  # cutting planes: only the cycles the last solution contains
            cycle = x[a[q], b[q]] + x[b[q], c[q]] - x[a[q], c[q]]
            problem += cycle >= 0
            problem += cycle <= 1
    return None


def local_search(costs: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Move single items to their best position while a move lowers the score strictly; deterministic."""
    order = list(order)
    improved = True
    while improved:
        improved = False
        for item in list(order):
            rest = [other for other in order if other != item]
            # Inserting before rest[p]: items rest[:p] precede it, rest[p:] follow it.
            total = np.concatenate([[0.0], np.cumsum(costs[rest, item])]) + np.concatenate(
                [np.cumsum(costs[item, rest][::-1])[::-1], [0.0]])
            current = order.index(item)
            if total.min() < total[current] - 1e-9:
                order = rest[: int(np.argmin(total))] + [item] + rest[int(np.argmin(total)):]
                improved = True
    return np.asarray(order)


def kemeny(
    costs: np.ndarray, initial: np.ndarray, dp_limit: int = 16, ilp_time_limit: float = 30.0
) -> tuple[np.ndarray, str]:
    """Kemeny order of all items (best first) and the method: 'exact' or 'local-search'."""
    if not 0 <= dp_limit <= 20:
        raise InputError(f"kemeny: dp_limit {dp_limit} outside 0..20 (the table needs 2^n x n floats); fix: lower it")
    parts, method = [], "exact"
    for component in majority_components(costs, np.asarray(initial)):
        sub = costs[np.ix_(component, component)]
        if len(component) <= dp_limit:
            local = dynamic_programming(sub)
        else:
            local = integer_program(sub, ilp_time_limit) if ilp_time_limit > 0 else None
            if local is None:
                local, method = local_search(sub, np.arange(len(component))), "local-search"
        parts.append(component[local])
    return np.concatenate(parts), method


def kemeny_table(
    metric_criterion: pd.DataFrame,
    levels: dict[str, list[str]] = BORDA_LEVELS,
    dp_limit: int = 16,
    ilp_time_limit: float = 30.0,
    orientation: str = "oriented",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per output level: consensus (level, metric, kemeny_rank, borda_rank) and a summary (level, method,
    kemeny_score, borda_score, kendall_distance, n_rankings, n_metrics); scores: lower is better.

    The Borda order is `ranking.borda`'s (count, ties by metric name), the local search start and the
    order whose Kemeny score is reported.
    """
    frame = (
        metric_criterion[metric_criterion["kind"] == "metric_criterion"]
        if "kind" in metric_criterion
        else metric_criterion
    )
    levels = {name: members for name, members in levels.items() if set(members) <= set(frame["level"])}
    metrics = list(dict.fromkeys(frame["x"]))
    counts = frame.groupby(["level", "coefficient", "y"]).size()
    incomplete = counts[counts != len(metrics)]
    if not incomplete.empty or frame.duplicated(["level", "coefficient", "y", "x"]).any():
        raise InputError(
            f"kemeny_table: a ranking {tuple(incomplete.index[:1])} does not rank each of the "
            f"{len(metrics)} metrics once; fix: pass the complete metric_criterion correlation table"
        )
    frame = frame.assign(ranked_r=ranked_r(frame, orientation))
    borda_table = borda(frame, levels, orientation=orientation)
    consensus, summary = [], []
    for name, members in levels.items():
        rows = frame[frame["level"].isin(members)]
        wide = rows.pivot(index=["level", "coefficient", "y"], columns="x", values="ranked_r")[metrics]
        costs = preference_costs(wide.to_numpy())
        ranked = borda_table[borda_table["level"] == name]
        borda_order = np.asarray([metrics.index(metric) for metric in ranked["metric"]])
        order, method = kemeny(costs, borda_order, dp_limit, ilp_time_limit)
        names = [metrics[item] for item in order]
        consensus.append(
            pd.DataFrame(
                {
                    "level": name,
                    "metric": names,
                    "kemeny_rank": np.arange(1, len(order) + 1),
                    "borda_rank": ranked.set_index("metric").loc[names, "rank"].to_numpy(),
                }
            )
        )
        summary.append(
            {
                "level": name,
                "method": method,
                "kemeny_score": kemeny_score(order, costs),
                "borda_score": kemeny_score(borda_order, costs),
                "kendall_distance": kendall_distance(order, borda_order),
                "n_rankings": len(wide),
                "n_metrics": len(metrics),
            }
        )
    return pd.concat(consensus, ignore_index=True), pd.DataFrame(summary)
