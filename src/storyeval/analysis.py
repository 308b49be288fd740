"""Assemble the correlation, ranking and system tables of HANNA from tidy inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from storyeval.criteria import AVERAGE, SCALED_AVERAGE, ordered_criteria
from storyeval.data.registry import marked_labels
from storyeval.data.scoreset import Cube
from storyeval.io import FLOAT_FORMAT
from storyeval.stats.intervals import t_interval
from storyeval.stats.ranking import borda, top_metrics

KINDS = ("criteria", "metric_criterion", "metric_metric")
BORDA_LEVELS = {"design": ["design"], "story": ["story"], "system": ["system"], "global": ["story", "system"]}


def _pairs(kind: str, human: Cube, metrics: Cube) -> tuple[Cube, Cube]:
    return {"criteria": (human, human), "metric_criterion": (metrics, human), "metric_metric": (metrics, metrics)}[kind]


def constant_columns(cube: Cube) -> list[str]:
    """The names of `cube`'s variables that take one value on every story that has one: they have no correlation
    (NaN)."""
    values = cube.values.reshape(-1, cube.values.shape[-1])
    present = ~np.isnan(values)  # the cells that have a value
    spread = np.where(present, values, -np.inf).max(axis=0) - np.where(present, values, np.inf).min(axis=0)
    return [name for name, width in zip(cube.names, spread) if width == 0]


def correlation_table(human: Cube | None, metrics: Cube, levels: list[str], coefficients: list[str],
                      system_ties: str = "merged", kinds: tuple[str, ...] = KINDS,
                      system_backend: str = "vectorised") -> pd.DataFrame:
    """Long table: kind, level, coefficient, x, y, r (signed), n, items, missing.

    `human` None (a text set without human ratings, e.g. hanna-llm): metric x metric correlations only.

    n: prompts averaged at story level, systems at system level; items: the
    length of each correlated vector (systems per prompt at story level). A
    dataset without prompts or systems (WP200) is one "prompt" whose stories
    are its "systems": its story level is one correlation over all stories. `system_ties`, `system_backend`:
    how the system level treats equal means and computes (stats.correlation.system_level); `kinds`: of KINDS.
    missing: the stories dropped from the pair's correlations because x or y has no value there.
    """
    from storyeval.stats.correlation import LEVELS, missing_pairs  # scipy.stats: 0.8 CPU-s the other jobs skip

    frames = []
    for kind in kinds if human is not None else ("metric_metric",):
        x, y = _pairs(kind, human, metrics)
        missing = missing_pairs(x.values, y.values).ravel()
        for level in levels:
            for coefficient in coefficients:
                extra = {"ties": system_ties, "backend": system_backend} if level == "system" else {}
                r, n = LEVELS[level](x.values, y.values, coefficient, **extra)
                grid_x, grid_y = np.meshgrid(x.names, y.names, indexing="ij")
                frames.append(pd.DataFrame({
                    "kind": kind, "level": level, "coefficient": coefficient,
                    "x": grid_x.ravel(), "y": grid_y.ravel(), "r": r.ravel(), "n": n.ravel().astype(int),
                    "items": x.values.shape[1], "missing": missing,
                }))
    return pd.concat(frames, ignore_index=True)


def correlation_float_format(system_backend: str) -> str | None:
    """How correlations.csv stores r: scipy's coefficients to the last bit (None: repr), on which the papers' tie
    orders and Mendras & Nietge's Wilcoxon ranks rest; otherwise io.FLOAT_FORMAT."""
    return None if system_backend == "scipy" else FLOAT_FORMAT


def as_written(correlations: pd.DataFrame, system_backend: str) -> pd.DataFrame:
    """`correlations` with r as correlations.csv stores it (`correlation_float_format`): what its readers see."""
    form = correlation_float_format(system_backend)
    return correlations if form is None else correlations.assign(r=[float(form % r) for r in correlations["r"]])


def system_variant(correlations: pd.DataFrame, human: Cube, metrics: Cube, coefficients: list[str],
                   system_ties: str, system_backend: str) -> pd.DataFrame:
    """The criteria and metric x criterion rows of `correlations`, their system level recomputed in memory under
    other settings (`correlation_table`'s `system_ties`, `system_backend`): ten systems' means are cheap, and
    Mendras & Nietge's system means are not HANNA's (config reanalysis.system_ties)."""
    kinds = ("criteria", "metric_criterion")
    kept = correlations[correlations["kind"].isin(kinds) & (correlations["level"] != "system")]
    system = correlation_table(human, metrics, ["system"], coefficients, system_ties, kinds, system_backend)
    return pd.concat([kept, system], ignore_index=True)


def rankings(correlations: pd.DataFrame, registry: pd.DataFrame, top_k: int, borda_ties: str = "average",
             orientation: str = "oriented", answer: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Tab. 5, 8, 9's top `top_k` metrics per criterion; Tab. 6's Borda counts of each BORDA_LEVELS group whose
    levels the correlations have, `borda_ties` as stats.ranking.borda_points), each metric with its label (a
    degenerate release marked †, keeping its rank); both rank by stats.ranking.ranked_r under `orientation`.
    `answer` (answer.csv, storyeval.stats.answer): its story-level Pearson r, under the statistic the design calls
    for, ranked and counted too as level "design", so that the tables show the design's answer beside the papers'."""
    if answer is not None:
        correlations = pd.concat([correlations, design_correlations(answer, registry)], ignore_index=True)
    table = metric_criterion_table(correlations, registry)
    groups = {name: levels for name, levels in BORDA_LEVELS.items() if set(levels) <= set(table["level"])}
    return (with_labels(top_metrics(table, top_k, orientation), registry),
            with_labels(borda(table, groups, borda_ties, orientation), registry))


def design_correlations(answer: pd.DataFrame, registry: pd.DataFrame) -> pd.DataFrame:
    """The answer's story-level rows as correlations.csv rows (kind metric_criterion, level design, Pearson), its r
    back to the metric's own sign (the answer orients it: a lower-is-better metric negated)."""
    rows = answer[answer["level"] == "story"]
    lower = rows["metric"].map(registry.set_index("slug")["direction"]).eq("lower")
    return pd.DataFrame({"kind": "metric_criterion", "level": "design", "coefficient": "pearson",
                         "x": rows["metric"], "y": rows["criterion"], "r": rows["r"].where(~lower, -rows["r"]),
                         "n": np.nan})


SYSTEM_MEANS_UNITS = ("story", "rating")  # config analysis.system_means_unit


def criterion_scales(ratings: pd.DataFrame, scale=None) -> dict[str, tuple[float, float]]:
    """Each criterion's scale (low, high): the dataset's declared `scale` [min, max], one for every criterion,
    else the criterion's lowest and highest rating."""
    if scale is not None:
        return {criterion: (float(scale[0]), float(scale[1])) for criterion in set(ratings["criterion"])}
    bounds = ratings.groupby("criterion")["rating"].agg(["min", "max"])
    return {criterion: (float(low), float(high)) for criterion, low, high in bounds.itertuples()}


def average_ratings(table: pd.DataFrame, scales: dict[str, tuple[float, float]]) -> pd.DataFrame | None:
    """Each rater's mean over the criteria of a story (criterion AVERAGE) where every criterion has one scale;
    else over the criteria scaled to [0, 1] by their scales (SCALED_AVERAGE); None where a scale has no width."""
    one_scale = len(set(scales.values())) == 1
    if not one_scale and any(high <= low for low, high in scales.values()):
        return None
    rating = table["rating"]
    if not one_scale:
        low = table["criterion"].map({criterion: low for criterion, (low, _) in scales.items()})
        high = table["criterion"].map({criterion: high for criterion, (_, high) in scales.items()})
        rating = (rating - low) / (high - low)
    average = table.assign(rating=rating).groupby(["system", "story_id", "rater"], sort=False)["rating"].mean()
    return average.reset_index().assign(criterion=AVERAGE if one_scale else SCALED_AVERAGE)


def system_means(stories: pd.DataFrame, ratings: pd.DataFrame, level: float = 0.95, unit: str = "story",
                 scale=None) -> pd.DataFrame:
    """HANNA Tab. 4: per system and criterion, the mean rating and its Student-t interval.

    `unit` story: the interval is over the system's story means (a rater's ratings of one story are not
    independent draws); rating: over the individual ratings as if independent (Chhun et al. 2022). The mean over
    the criteria (`average_ratings`) is plain only where they share a scale (`criterion_scales`, `scale` the
    dataset's declared one). The best system of a column is marked, and every system whose interval overlaps the
    best one's (best included) `within_ci`. Rows: criteria, then systems in the order of `stories`.
    """
    if unit not in SYSTEM_MEANS_UNITS:
        raise ValueError(f"system_means unit {unit!r}: use one of {', '.join(SYSTEM_MEANS_UNITS)}")
    table = ratings.merge(stories[["story_id", "system"]], on="story_id")
    criteria = ordered_criteria(table["criterion"])
    average = average_ratings(table, criterion_scales(table, scale))
    if average is not None:
        table = pd.concat([table, average], ignore_index=True)
        criteria.append(average["criterion"].iloc[0])
    if unit == "story":
        table = table.groupby(["criterion", "system", "story_id"], sort=False)["rating"].mean().reset_index()
    values = {key: group.to_numpy() for key, group in table.groupby(["criterion", "system"], sort=False)["rating"]}
    rows = []
    for criterion in criteria:
        for system in dict.fromkeys(stories["system"]):
            column = values.get((criterion, system), np.array([]))
            mean, low, high = t_interval(column, level)
            rows.append({"system": system, "criterion": criterion, "mean": mean, "ci_low": low, "ci_high": high,
                         "n": len(column), "unit": unit})
    frame = pd.DataFrame(rows)
    best_index = frame.groupby("criterion", sort=False)["mean"].idxmax()
    frame["best"] = frame.index.isin(best_index)
    best_low = frame.loc[best_index].set_index("criterion")["ci_low"]
    frame["within_ci"] = frame["ci_high"] >= frame["criterion"].map(best_low)
    return frame


def metric_criterion_table(correlations: pd.DataFrame, registry: pd.DataFrame) -> pd.DataFrame:
    """The metric x criterion rows of a correlation table, with each metric's registry order (and direction, where
    the registry has it: what oriented rankings need)."""
    table = correlations[correlations["kind"] == "metric_criterion"]
    kept = [column for column in ("slug", "order", "direction") if column in registry]
    return table.merge(registry[kept], left_on="x", right_on="slug").drop(columns="slug")


DROPPED = {"missing": "Stories without a value", "dropped": "Story pairs with a side without a value"}


def missing_note(frame: pd.DataFrame, registry: pd.DataFrame, column: str = "metric", count: str = "missing") -> str:
    """The sentence a page adds where a statistic dropped cells (`frame`'s column `count`, of DROPPED, per
    `column`: a judge's unparsable answers, a metric without a value for a story); "" where none was dropped."""
    if count not in frame:
        return ""
    own = frame[frame["kind"] != "metric_metric"] if "kind" in frame else frame  # a pair's count holds both sides'
    counts = own.groupby(column, sort=False)[count].max()
    counts = counts[counts > 0]
    if counts.empty:
        return ""
    labels = marked_labels(registry)
    listed = ", ".join(f"{labels.get(name, name)} {int(value)}" for name, value in counts.items())
    return (f"{DROPPED[count]}, left out of the statistic (docs/statistics.md, missing cells; column {count} of "
            f"the CSV): {listed}.")


def with_labels(frame: pd.DataFrame, registry: pd.DataFrame, column: str = "metric") -> pd.DataFrame:
    """Insert the display label of each slug in `column` right after it (degenerate releases marked †)."""
    labels = marked_labels(registry)
    frame = frame.copy()
    frame.insert(
        frame.columns.get_loc(column) + 1,
        f"{column}_label" if column != "metric" else "label",
        frame[column].map(labels),
    )
    return frame


def system_ranking(metrics: Cube, registry: pd.DataFrame) -> pd.DataFrame:
    """How each metric ranks the systems (hanna-llm: the six LLMs), and the Borda consensus of those rankings.

    Per metric: each system's mean score over the prompts (NaN scores skipped) and its rank, 1 = best in the
    metric's direction (registry `direction`; ties share the average rank). Consensus rows, one per metric
    family and one over all metrics ("all"): Borda points = sum over the metrics of (systems - rank), final
    rank by points (equal points share the best rank). Columns: metric, label, family, system, mean, rank, n.
    """
    from scipy.stats import rankdata

    info = registry.set_index("slug").reindex(metrics.names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN system mean stays NaN
        means = np.nanmean(metrics.values, axis=0)  # [S, K]
    counts = np.isfinite(metrics.values).sum(axis=0)
    oriented = np.where((info["direction"] == "lower").to_numpy()[None, :], -means, means)
    ranks = np.column_stack([rankdata(-np.nan_to_num(column, nan=-np.inf), method="average") for column in oriented.T])
    rows = [
        {
            "metric": slug,
            "label": info.at[slug, "label"],
            "family": info.at[slug, "family"],
            "system": system,
            "mean": means[s, k],
            "rank": ranks[s, k],
            "n": int(counts[s, k]),
        }
        for k, slug in enumerate(metrics.names)
        for s, system in enumerate(metrics.systems)
    ]
    size = len(metrics.systems)
    groups = {
        **{family: (info["family"] == family).to_numpy() for family in dict.fromkeys(info["family"])},
        "all": np.ones(len(metrics.names), dtype=bool),
    }
    for group, members in groups.items():
        points = (size - ranks[:, members]).sum(axis=1)
        final = rankdata(-points, method="min")
        rows += [
            {
                "metric": f"borda-{group}",
                "label": f"Borda consensus ({group}, {members.sum()} metrics)",
                "family": "consensus",
                "system": system,
                "mean": points[s],
                "rank": float(final[s]),
                "n": int(members.sum()),
            }
            for s, system in enumerate(metrics.systems)
        ]
    return pd.DataFrame(rows)


def ranking_matrix(ranking: pd.DataFrame) -> pd.DataFrame:
    """Metric labels x systems of ranks, in the table's order (for the markdown table and the figure)."""
    matrix = ranking.pivot(index="label", columns="system", values="rank")
    return matrix.reindex(index=list(dict.fromkeys(ranking["label"])), columns=list(dict.fromkeys(ranking["system"])))
