"""One table across datasets: which metrics and LLM judges agree with human judgment on several datasets, and which
on one only.

Each rated (dataset, score set) is meta-evaluated on its own (storyeval.stats.meta): per criterion and grouping a
correlation of every column with the ratings, its BOOT-BOTH interval and its PERM-BOTH significance cluster
(Deutsch, Dror & Roth 2021; WMT's clusters, Freitag et al. 2023). The benchmark puts these side by side:

- `criteria_terms` names each dataset's criteria in one vocabulary (TERMS), so that HANNA's Coherence, DeltaScore's
  coherence and logicality stand in one group of columns; a criterion that fits no term keeps its own name and is
  marked unmapped.
- `benchmark_table`: one row per column (metric or judge) x dataset x criterion, with its r, interval, cluster,
  rank in the cell, registry label and family, the shared term, confound flags, the human ceiling and the
  Alternative Annotator Test's verdict (storyeval.stats.agreement, with its chance control).
- `summary`: per metric (a judge's ratings of every criterion are one item, storyeval.stats.meta.ranked_items)
  across datasets, as WMT summarises its language pairs (Freitag et al. 2023): in how many datasets and cells it is
  in the top cluster, and its mean normalised rank.
- `answer`: the report's opening sentences.

A cluster is defined within one dataset and criterion only: the summary counts clusters, it never compares an r
of one dataset with an r of another (their stories, raters and scales differ).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from storyeval.data.hanna_judges import FAMILY
from storyeval.stats.confounds import flagged
from storyeval.stats.meta import ranked_items
from storyeval.vocabulary import TERMS, criteria_terms, normalised

# Which level of the human agreement (agreement.csv) bounds the correlations of each grouping: grouping none and item
# correlate stories, system the systems' means.
CEILING_LEVEL = {"none": "story", "item": "story", "system": "system"}


@dataclass(frozen=True)
class ScoreSetResults:
    """What the meta-evaluation wrote for one rated (dataset, score set) at the benchmark's grouping."""

    dataset: str
    scoreset: str
    grouping: str
    intervals: pd.DataFrame  # meta/boot_both_<grouping>.csv: grouping, coefficient, metric, label, family, criterion,
    #                          r, ci_low, ci_high
    clusters: pd.DataFrame  # meta/clusters_<grouping>.csv: grouping, coefficient, criterion, metric, rank
    registry: pd.DataFrame  # metrics.csv (and the judges' registry beside HANNA's released scores)
    confounds: pd.DataFrame  # confounds.csv: coefficient, metric, criterion, system, length, confound
    agreement: pd.DataFrame | None = None  # agreement.csv: criterion, level, coefficient, ceiling; None: absent
    terms: pd.DataFrame = field(default_factory=pd.DataFrame)  # criteria_terms' rows of this dataset; a criterion
    #                                                            not among them gets the default map
    alt_test: pd.DataFrame | None = None  # alt_test.csv: metric, criterion, omega, passed, chance_passes; None: absent

    @property
    def name(self) -> str:
        return f"{self.dataset} ({self.scoreset})"


TABLE_COLUMNS = ["dataset", "scoreset", "set", "grouping", "coefficient", "criterion", "term", "term_source",
                 "metric", "item", "label", "family", "kind", "r", "ci_low", "ci_high", "cluster", "top",
                 "top_size", "separates", "rank", "cell_size", "rank_share", "confound", "ceiling",
                 "ceiling_coefficient", "alt_test"]
# The alt-test's verdict on a cell: it passes; it passes as a shuffle of its scores does too (chance_passes > 0:
# the pass means nothing); it fails; or it was not tested (too few raters or stories).
PASSES, PASSES_SHUFFLED, FAILS, UNTESTED = ALT_VERDICTS = ("passes", "passes shuffled too", "fails", "untested")


def alt_verdicts(alt_test: pd.DataFrame | None) -> pd.DataFrame:
    """criterion, metric, alt_test: the verdict (ALT_VERDICTS) of each column the alt-test tested."""
    columns = ["criterion", "metric", "alt_test"]
    if alt_test is None or alt_test.empty:
        return pd.DataFrame(columns=columns)
    passed = alt_test["passed"].astype(bool)
    verdict = np.select([alt_test["omega"].isna(), passed & (alt_test["chance_passes"] > 0), passed],
                        [UNTESTED, PASSES_SHUFFLED, PASSES], FAILS)
    return alt_test.assign(alt_test=verdict)[columns]


def ceilings(agreement: pd.DataFrame | None, grouping: str, coefficient: str) -> pd.DataFrame:
    """criterion, ceiling, ceiling_coefficient: the human ceiling of each criterion at the grouping's level
    (CEILING_LEVEL; a row whose level is the grouping's own name counts too). Where agreement.csv holds several
    coefficients for a criterion and level, the one named `coefficient` is taken, else the first listed."""
    columns = ["criterion", "ceiling", "ceiling_coefficient"]
    if agreement is None or agreement.empty:
        return pd.DataFrame(columns=columns)
    rows = agreement[agreement["level"].isin([CEILING_LEVEL[grouping], grouping])]
    rows = rows.assign(preferred=rows["coefficient"] != coefficient).sort_values("preferred", kind="stable")
    rows = rows.drop_duplicates("criterion").rename(columns={"coefficient": "ceiling_coefficient"})
    return rows[columns]


def set_table(results: ScoreSetResults) -> pd.DataFrame:
    """One score set's rows of the benchmark table (TABLE_COLUMNS)."""
    keys = ["grouping", "coefficient", "criterion", "metric"]
    rows = results.intervals.merge(results.clusters[keys + ["rank"]].rename(columns={"rank": "cluster"}), on=keys,
                                   how="left", validate="1:1")
    items = ranked_items(results.registry).set_index("slug")
    rows = rows.assign(dataset=results.dataset, scoreset=results.scoreset, set=results.name,
                       item=rows["metric"].map(items["item"]).fillna(rows["metric"]),
                       label=rows["metric"].map(items["label"]).fillna(rows["label"]),
                       kind=np.where(rows["family"] == FAMILY, "LLM judge", "metric"),
                       top=rows["cluster"].eq(1))
    cell = rows.groupby("criterion", sort=False)["r"]
    rows["rank"] = cell.rank(ascending=False, method="min")  # 1: the largest r of the cell; NaN r: no rank
    rows["cell_size"] = cell.transform("count")
    rows["rank_share"] = ((rows["rank"] - 1) / (rows["cell_size"] - 1)).where(rows["cell_size"] > 1, 0.0)
    rows["rank_share"] = rows["rank_share"].where(rows["rank"].notna())
    # A top cluster that holds every ranked column separates none from the best (too few stories to tell the
    # columns apart): a place in it says nothing, and the summary does not count it.
    rows["top_size"] = rows.groupby("criterion", sort=False)["top"].transform("sum").astype(int)
    rows["separates"] = rows["top_size"] < rows["cell_size"]
    confound_keys = {"coefficient": "coefficient", "metric": "metric", "criterion": "criterion"}
    # Grouping none pools the systems' stories: both flags; the per-prompt and system groupings pool no systems,
    # so only the length flag holds there (storyeval.stats.confounds.flagged).
    rows = flagged(rows, results.confounds, confound_keys, system=results.grouping == "none")
    named = set(results.terms["criterion"]) if not results.terms.empty else set()
    rest = criteria_terms({results.dataset: [name for name in rows["criterion"].unique() if name not in named]})
    terms = pd.concat([frame for frame in (results.terms, rest) if not frame.empty]) if named else rest
    rows = rows.merge(terms[["criterion", "term", "term_source"]], on="criterion", how="left", validate="m:1")
    rows = rows.merge(ceilings(results.agreement, results.grouping, rows["coefficient"].iat[0] if len(rows) else ""),
                      on="criterion", how="left", validate="m:1")
    rows = rows.merge(alt_verdicts(results.alt_test), on=["criterion", "metric"], how="left", validate="1:1")
    return rows.reindex(columns=TABLE_COLUMNS)


def benchmark_table(sets: Sequence[ScoreSetResults]) -> pd.DataFrame:
    """Every column (metric or judge) x dataset x criterion of the rated score sets, in their order, each cell's
    best first (TABLE_COLUMNS): r (oriented: higher agrees more), BOOT-BOTH ci_low and ci_high, cluster (PERM-BOTH
    significance cluster within the dataset and criterion, 1 = top) and top (cluster 1), rank (by r, 1 = best, ties
    share the lowest) of cell_size ranked columns and rank_share = (rank - 1) / (cell_size - 1) (0 best, 1 last),
    the shared term and its source, confound (confounds.csv's words), the human ceiling (NaN: no
    agreement.csv, or no row for the criterion and level) and alt_test (ALT_VERDICTS; empty: no alt_test.csv)."""
    table = pd.concat([set_table(results) for results in sets], ignore_index=True)
    table["order"] = table.groupby(["set", "criterion"], sort=False).ngroup()
    table = table.sort_values(["order", "rank", "metric"], kind="stable", na_position="last")
    return table.drop(columns="order").reset_index(drop=True)


SUMMARY_COLUMNS = ["item", "label", "family", "kind", "datasets", "datasets_top", "cells", "cells_top",
                   "cells_undecided", "cells_alt_pass", "mean_rank", "mean_rank_share", "mean_r", "top_confounded",
                   "top_in"]


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per metric or judge (item) across the benchmark table, the best first: datasets (distinct datasets where it
    is measured; HANNA's released and computed scores are one dataset), datasets_top (datasets where it is in the
    top cluster of at least one criterion whose top cluster separates: leaves some column out), cells and cells_top
    ((score set, criterion) cells where it has an r, and those where it is in a separating top cluster),
    cells_undecided (cells whose top cluster holds every column: no column told apart from the best),
    cells_alt_pass (cells where it passes the alt-test and no shuffle of its scores does), mean_rank
    (mean of its per-cell ranks) and mean_rank_share (mean of rank_share: per-cell ranks normalised by the cell's
    number of columns, comparable across datasets with different metric sets), mean_r (a plain mean over cells, for
    orientation only: r of different datasets are not on one scale), top_confounded (top cells flagged in
    confounds.csv) and top_in (the sets and criteria of its top cells). Sorted by datasets_top, cells_top (more
    first), mean_rank_share (lower first), then label."""
    measured = table[table["r"].notna()]
    top = measured[measured["top"] & measured["separates"]]
    grouped = measured.groupby("item", sort=False)
    result = pd.DataFrame({
        "label": grouped["label"].first(),
        "family": grouped["family"].first(),
        "kind": grouped["kind"].first(),
        "datasets": grouped["dataset"].nunique(),
        "datasets_top": top.groupby("item")["dataset"].nunique(),
        "cells": grouped.size(),
        "cells_top": top.groupby("item").size(),
        "cells_undecided": (~measured["separates"]).groupby(measured["item"], sort=False).sum(),
        "cells_alt_pass": measured["alt_test"].eq(PASSES).groupby(measured["item"], sort=False).sum(),
        "mean_rank": grouped["rank"].mean(),
        "mean_rank_share": grouped["rank_share"].mean(),
        "mean_r": grouped["r"].mean(),
        "top_confounded": top[top["confound"].fillna("") != ""].groupby("item").size(),
        "top_in": top_cells(top),
    })
    counts = ["datasets_top", "cells_top", "cells_undecided", "cells_alt_pass", "top_confounded"]
    result[counts] = result[counts].fillna(0).astype(int)
    result["top_in"] = result["top_in"].fillna("")
    result = result.rename_axis("item").reset_index()
    result = result.sort_values(["datasets_top", "cells_top", "mean_rank_share", "label"],
                                ascending=[False, False, True, True], kind="stable")
    return result[SUMMARY_COLUMNS].reset_index(drop=True)


def top_cells(top: pd.DataFrame) -> pd.Series:
    """item -> where it is in a separating top cluster, one score set after another: "hanna (released):
    Coherence, Empathy"."""
    by_set = top.groupby(["item", "set"], sort=False)["criterion"].agg(", ".join).reset_index()
    return (by_set["set"] + ": " + by_set["criterion"]).groupby(by_set["item"], sort=False).agg("; ".join)


def listed(names: Sequence[str], most: int = 10) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more (summary.csv)" if len(names) > most else "")


def answer(table: pd.DataFrame, ranked: pd.DataFrame) -> str:
    """The report's opening (one paragraph of reStructuredText): which metrics and judges are in the top cluster on
    at least two datasets, which on one only, the best of each kind by the summary's order (never hidden behind
    the others), and how many top cells carry a confound."""
    datasets = table["dataset"].nunique()
    cells = table.drop_duplicates(["set", "criterion"])
    sets = table["set"].nunique()
    head = (f"**Across {datasets} dataset{'s' * (datasets != 1)} ({listed(list(dict.fromkeys(table['dataset'])))}; "
            f"{sets} score set{'s' * (sets != 1)}) and {len(cells)} dataset x criterion cells**")
    named = ranked.assign(said=ranked["label"] + " (" + ranked["datasets_top"].astype(str) + " datasets, "
                          + ranked["cells_top"].astype(str) + "/" + ranked["cells"].astype(str) + " cells)")
    several = named[named["datasets_top"] >= 2]
    one = named[named["datasets_top"] == 1]
    parts = [f"in a top significance cluster that leaves other columns out, on two or more datasets: "
             f"{listed(list(several['said']))}"
             if len(several) else "no metric or judge is in the top significance cluster on two or more datasets"
             + (" (one dataset analysed)" if datasets == 1 else "")]
    where = (table[table["top"] & table["separates"]].drop_duplicates("item")
             .set_index("item")["dataset"])  # one dataset each: its name
    one = one.assign(said=one["label"] + " (" + one["item"].map(where) + ", " + one["cells_top"].astype(str) + "/"
                     + one["cells"].astype(str) + " cells)")
    parts.append(f"on one dataset only: {listed(list(one['said']))}" if len(one) else "none on one dataset only")
    text = f"{head}: {'; '.join(parts)}."
    undecided = cells[~cells["separates"]]
    if len(undecided):
        text += (f" {len(undecided)} of the {len(cells)} cells tell no column apart from the best (its top cluster "
                 f"holds every column: too few stories or raters), so they count for none: "
                 f"{listed(list(undecided['set'] + ' ' + undecided['criterion']), 8)}.")
    shared = ranked[ranked["datasets"] >= 2]
    if datasets > 1:  # only these could be top on two datasets
        text += (f" Measured on two or more datasets: {len(shared)} of {len(ranked)}"
                 + (f" ({listed(list(shared['label']))})." if len(shared) else "."))
    for kind, rows in ranked.groupby("kind", sort=False):
        best = rows.iloc[0]
        text += (f" Best {kind} by the summary's order: {best['label']} (top cluster in {best['cells_top']} of "
                 f"{best['cells']} cells, mean normalised rank {best['mean_rank_share']:.2f}).")
    confounded = table[table["top"] & table["separates"] & (table["confound"].fillna("") != "")]
    if len(confounded):
        cases = list(confounded["label"] + " on " + confounded["set"] + " " + confounded["criterion"]
                     + " [" + confounded["confound"] + "]")
        text += (f" {len(confounded)} top cell{'s' * (len(confounded) != 1)} carry a confound (confounds.csv: the "
                 f"pooled r is not what it seems): {listed(cases, 6)}.")
    tested = table[table["alt_test"].isin([PASSES, PASSES_SHUFFLED, FAILS])]
    if len(tested):
        counts = tested["alt_test"].value_counts()
        passing = ranked[ranked["cells_alt_pass"] > 0].sort_values("cells_alt_pass", ascending=False, kind="stable")
        passed_in = passing["cells_alt_pass"].map(lambda count: f" ({count} cell{'s' * (count != 1)})")
        named = f": {listed(list(passing['label'] + passed_in))}" if len(passing) else ""
        text += (f" The Alternative Annotator Test (may it replace a rater?) passes in {counts.get(PASSES, 0)} of "
                 f"{len(tested)} tested cells where no shuffle of the scores passes too{named}; "
                 f"{counts.get(PASSES_SHUFFLED, 0)} more pass as shuffled scores do, which says nothing.")
    unmapped = table.loc[table["term_source"] == "unmapped"].drop_duplicates(["dataset", "criterion"])
    if len(unmapped):
        text += (f" Unmapped criteria (kept under their own names): "
                 f"{listed(list(unmapped['dataset'] + ' ' + unmapped['criterion']))}.")
    return text + "\n"


def ceiling_note(sets: Sequence[ScoreSetResults]) -> str:
    """A sentence naming the score sets without agreement.csv (their ceiling is NaN), or ""."""
    missing = [results.name for results in sets if results.agreement is None]
    return (f"No human ceiling for {', '.join(missing)}: agreement.csv is absent, so the ceiling is NaN."
            if missing else "")


def heatmap_matrix(table: pd.DataFrame, ranked: pd.DataFrame, rows: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(r, top) as items x cells for the heatmap: the summary's first `rows` items, in its order; the cells grouped
    by term (TERMS' order, then the unmapped names), then by set; a column's label names the dataset (and the score
    set where a dataset has two), the criterion, its term where it differs, and its human ceiling where known."""
    chosen = ranked["item"].head(rows)
    kept = table[table["item"].isin(chosen)]
    cells = table.drop_duplicates(["set", "criterion"])[["set", "criterion", "term", "ceiling"]].copy()
    order = {term: index for index, term in enumerate(TERMS)}
    cells["term_order"] = cells["term"].map(order).fillna(len(order))
    cells = cells.sort_values(["term_order", "term"], kind="stable")
    ceiling = cells["ceiling"].map(lambda value: "" if pd.isna(value) else f" (ceiling {value:.2f})")
    term = np.where(cells["criterion"].map(normalised) == cells["term"].map(normalised), "", " [" + cells["term"] + "]")
    sets = table.drop_duplicates("set").set_index("set")
    single = sets.groupby("dataset")["scoreset"].transform("size") == 1  # a dataset of one score set: its name only
    short = pd.Series(np.where(single, sets["dataset"], sets.index), index=sets.index)
    cells["column"] = cells["set"].map(short) + " · " + cells["criterion"] + term + ceiling
    keyed = kept.merge(cells[["set", "criterion", "column"]], on=["set", "criterion"])
    keyed = keyed.assign(top=keyed["top"] & keyed["separates"])  # framed: a top cluster that separates
    labels = ranked.set_index("item")["label"]
    r = keyed.pivot_table(index="item", columns="column", values="r", aggfunc="first", dropna=False)
    top = keyed.pivot_table(index="item", columns="column", values="top", aggfunc="first", dropna=False)
    r, top = (frame.reindex(index=chosen, columns=cells["column"]) for frame in (r, top))
    r.index = top.index = labels.loc[chosen].to_numpy()
    return r, top.fillna(False).astype(bool)
