"""The two reanalyses of HANNA (Houairi & Thiounn; Mendras & Nietge), on the long correlation table.

Input: `storyeval.analysis.correlation_table` (kind, level, coefficient, x, y,
r, n); only kind 'metric_criterion' rows are used (x = metric, y = criterion).
Every ranking uses |r| (distance metrics, lower = better, are compared in
absolute value, as Houairi & Thiounn do); a NaN correlation ranks last.
"""

from __future__ import annotations

import pandas as pd
from scipy.stats import kendalltau, rankdata, wilcoxon

from storyeval.criteria import ordered_criteria
from storyeval.errors import InputError
from storyeval.stats.ranking import top_metrics

# Houairi & Thiounn's 12 reference-based metrics as HANNA slugs (ROUGE = ROUGE-1).
HOUAIRI_THIOUNN_METRICS = [
    "bleu", "rouge-1-precision", "rouge-1-recall", "rouge-1-f-score", "meteor", "bertscore-precision",
    "bertscore-recall", "bertscore-f1", "baryscore-w", "depthscore", "infolm-fisherrao", "bartscore-sh",
]
COEFFICIENT_PAIRS = (("pearson", "spearman"), ("kendall", "spearman"), ("kendall", "pearson"))
MENDRAS_NIETGE_CRITERIA = ("Relevance", "Coherence", "Surprise")


def metric_criterion_rows(correlations: pd.DataFrame) -> pd.DataFrame:
    required = {"level", "coefficient", "x", "y", "r"}
    if not required <= set(correlations.columns):
        raise InputError(f"correlations: columns {sorted(required - set(correlations.columns))} are missing; "
                         "fix: pass the table of storyeval.analysis.correlation_table")
    if "kind" in correlations.columns:
        correlations = correlations[correlations["kind"] == "metric_criterion"]
    return correlations.assign(abs_r=correlations["r"].abs())


def sum_of_ranks(correlations: pd.DataFrame, metrics: list[str],
                 criteria: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Houairi & Thiounn: per (level, coefficient) rank the metrics on each criterion (default: every criterion
    of the table, HANNA's six first) by |r|
    (1 = best; ties share their average rank), sum the criterion ranks, rank the sums
    (lowest sum = 1; equal sums share the lowest rank, 'min').

    Returns (table: level, coefficient, metric, rank_sum, rank, one column per
    criterion with its rank; the names in `metrics` absent from the correlations).
    """
    frame = metric_criterion_rows(correlations)
    criteria = ordered_criteria(frame["y"]) if criteria is None else criteria
    present = set(frame["x"])
    missing = [metric for metric in metrics if metric not in present]
    used = [metric for metric in metrics if metric in present]
    rated = set(frame["y"])
    absent = [criterion for criterion in criteria if criterion not in rated]
    if len(used) < 2 or absent:
        raise InputError(f"sum_of_ranks: {len(used)} of the metrics {metrics} and criteria {absent} missing in the "
                         "correlations; fix: pass >= 2 computed metrics and every criterion")
    frame = frame[frame["x"].isin(used) & frame["y"].isin(criteria)]
    counts = frame.groupby(["level", "coefficient", "y"]).size()
    if (counts != len(used)).any():
        raise InputError(f"sum_of_ranks: ranking {counts[counts != len(used)].index[0]} does not hold each of "
                         f"{used} once; fix: pass a complete correlation table")
    frame["criterion_rank"] = frame.groupby(["level", "coefficient", "y"])["abs_r"].transform(
        lambda column: rankdata(-column.fillna(-1.0).to_numpy(), method="average"))
    wide = frame.pivot(index=["level", "coefficient", "x"], columns="y", values="criterion_rank")[list(criteria)]
    table = wide.rename_axis(columns=None).reset_index().rename(columns={"x": "metric"})
    table.insert(3, "rank_sum", wide.sum(axis=1).to_numpy())
    table.insert(4, "rank", table.groupby(["level", "coefficient"])["rank_sum"].transform(
        lambda column: rankdata(column.to_numpy(), method="min")).astype(int))
    table["_order"] = table["metric"].map(used.index)
    table = table.sort_values(["level", "coefficient", "rank", "_order"], ignore_index=True).drop(columns="_order")
    return table, missing


def top_k_by_coefficient(correlations: pd.DataFrame, criteria: tuple[str, ...] = MENDRAS_NIETGE_CRITERIA,
                         level: str = "system", k: int = 5, metrics: list[str] | None = None) -> pd.DataFrame:
    """Mendras & Nietge Tab. 1, 3, 4: top-k metrics by |r| per coefficient for the given criteria at one level.

    Columns of `ranking.top_metrics` (level, coefficient, criterion, rank, tied_rank, metric, abs_r, r); equal
    |r| keep the metrics' order in the table, and a tie at the k-th is kept whole. `metrics` (slugs): rank only
    these; None: every metric.
    """
    frame = metric_criterion_rows(correlations)
    frame = frame[(frame["level"] == level) & frame["y"].isin(criteria)].drop(columns="abs_r")
    if metrics is not None:
        frame = frame[frame["x"].isin(metrics)]
    if frame.empty:
        raise InputError(
            f"top_k_by_coefficient: no correlations at level {level!r} for {list(criteria)}; fix: compute them"
        )
    if "order" not in frame.columns:
        frame = frame.assign(order=frame["x"].map({metric: i for i, metric in enumerate(dict.fromkeys(frame["x"]))}))
    # Mendras & Nietge ranked by |r|, as HANNA did: their tables are reproduced as printed
    return top_metrics(frame, k, "absolute").rename(columns={"ranked_r": "abs_r"})


def mendras_nietge(
    correlations: pd.DataFrame,
    criteria: tuple[str, ...] = MENDRAS_NIETGE_CRITERIA,
    k: int = 5,
    metrics: list[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mendras & Nietge's tables: (Tab. 1, 3, 4: `top_k_by_coefficient` of `metrics` at system level, at story
    level for a dataset without systems; Tab. 2: `coefficient_agreement` at every level)."""
    level = "system" if "system" in set(correlations["level"]) else "story"
    return top_k_by_coefficient(correlations, criteria, level, k, metrics), coefficient_agreement(correlations)


def coefficient_agreement(
    correlations: pd.DataFrame, pairs: tuple[tuple[str, str], ...] = COEFFICIENT_PAIRS
) -> pd.DataFrame:
    """Mendras & Nietge Tab. 2: per level, criterion and pair of coefficients,
    scipy's paired Wilcoxon signed-rank test on the metrics' |r| (defaults: two-sided, zero
    differences dropped) and Kendall tau-b between the two |r| rankings. Metrics with a NaN
    r under either coefficient are left out.

    Columns: level, criterion, coefficient_a, coefficient_b, n_metrics, wilcoxon_statistic,
    wilcoxon_p, kendall_tau, kendall_p.
    """
    frame = metric_criterion_rows(correlations)
    wide = frame.pivot(index=["level", "y", "x"], columns="coefficient", values="abs_r")
    rows = []
    for level, criterion in frame[["level", "y"]].drop_duplicates().itertuples(index=False):
        block = wide.loc[(level, criterion)]
        for first, second in pairs:
            if first not in block or second not in block:
                raise InputError(f"coefficient_agreement: no {first!r} or {second!r} correlations; fix: compute both")
            paired = block[[first, second]].dropna().to_numpy()
            test, tau = wilcoxon(paired[:, 0], paired[:, 1]), kendalltau(paired[:, 0], paired[:, 1])
            rows.append(
                {
                    "level": level,
                    "criterion": criterion,
                    "coefficient_a": first,
                    "coefficient_b": second,
                    "n_metrics": len(paired),
                    "wilcoxon_statistic": float(test.statistic),
                    "wilcoxon_p": float(test.pvalue),
                    "kendall_tau": float(tau.statistic),
                    "kendall_p": float(tau.pvalue),
                }
            )
    return pd.DataFrame(rows)
