"""One table across datasets: which metrics and LLM judges agree with human judgment, ranked by how well they do
where they are measured.

Each rated dataset is answered once (storyeval.stats.answer, rule dataset_answer): every score set of it (the
authors' released outputs and judges, the metrics and judges computed here) on the stories they all score, with the
statistic the dataset's design calls for, a bootstrap interval over what the design lets vary, and a top cluster
(the best column and those not significantly below it). A cell is one dataset x level x criterion, as a column of
WMT's metrics-task tables (Freitag et al. 2023) is one language pair; the benchmark puts the cells side by side:

- `criteria_terms` names each dataset's criteria in one vocabulary (TERMS), so that HANNA's Coherence, DeltaScore's
  coherence and logicality stand in one group of columns; a criterion that fits no term keeps its own name.
- `benchmark_table`: one row per column (metric or judge) x cell: its r, interval, rank in the cell, top cluster,
  whether the cell is decided (a top cluster that holds most columns, or a best whose interval reaches 0, decides
  nothing and counts for nobody), the writer baseline, the human ceiling and the alt-test's verdict.
- `summary`: per metric or judge (a judge's ratings of every criterion are one item) over the story-level cells
  where it is measured: its mean normalised rank ((rank - 1) / (cell size - 1), 0 best: comparable across cells of
  different sizes), its wins (top cluster of a decided cell), and its coverage (studies and cells) as columns of
  their own. Rankings are over the columns measured in at least `min_studies` studies; r of different datasets
  are never averaged (their stories, raters and scales differ).
- `answer`: the report's opening, a short table.

A study is a paper: its corpora (UNION's ROCStories and WritingPrompts sets) are cells of one study.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from storyeval.stats.alttest import PASSES, verdicts
from storyeval.vocabulary import TERMS, criteria_terms, normalised


@dataclass(frozen=True)
class DatasetAnswer:
    """What rule dataset_answer wrote for one rated dataset, and what the benchmark adds to it."""

    dataset: str
    study: str  # the paper; its corpora count as one study
    rows: pd.DataFrame  # answer.csv: level, criterion, statistic, metric, label, kind, r, ci_low, ci_high, rank, top,
    #                     against_direction, beats_writer, scoreset, source_slug, item, item_label
    summary: pd.DataFrame  # answer_summary.csv: level, criterion, stories, columns, top_size, decided, ceiling, ...
    terms: pd.DataFrame = field(default_factory=pd.DataFrame)  # criteria_terms' rows of this dataset
    alt_test: pd.DataFrame | None = None  # the score sets' alt_test.csv with a scoreset column; None: absent


TABLE_COLUMNS = ["study", "dataset", "level", "criterion", "term", "term_source", "statistic", "metric", "item",
                 "label", "kind", "scoreset", "r", "ci_low", "ci_high", "rank", "cell_size", "rank_share", "top",
                 "top_size", "decided", "beats_writer", "against_direction", "stories", "writers", "ceiling",
                 "writer_baseline", "alt_test"]
# The alt-test's verdict on a cell (storyeval.stats.alttest.verdicts): passes beyond chance; passes, not beyond
# chance; fails; untested.


def alt_verdicts(alt_test: pd.DataFrame | None) -> pd.DataFrame:
    """scoreset, criterion, source_slug, alt_test: the verdict (ALT_VERDICTS) of each column the alt-test tested."""
    columns = ["scoreset", "criterion", "source_slug", "alt_test"]
    if alt_test is None or alt_test.empty:
        return pd.DataFrame(columns=columns)
    return alt_test.assign(alt_test=verdicts(alt_test)).rename(columns={"metric": "source_slug"})[columns]


def dataset_table(answer: DatasetAnswer) -> pd.DataFrame:
    """One dataset's rows of the benchmark table (TABLE_COLUMNS); the writer baseline is no column of its own."""
    rows = answer.rows[answer.rows["r"].notna()].copy()
    cell = rows.groupby(["level", "criterion"], sort=False)["r"]
    rows["cell_size"] = cell.transform("count")
    rows["rank"] = cell.rank(ascending=False, method="min")  # 1: the largest r of the cell
    rows["rank_share"] = ((rows["rank"] - 1) / (rows["cell_size"] - 1)).where(rows["cell_size"] > 1, 0.0)
    facts = answer.summary[["level", "criterion", "stories", "writers", "top_size", "decided", "ceiling",
                            "writer_baseline"]]
    rows = rows.merge(facts, on=["level", "criterion"], how="left", validate="m:1")
    rows["top"] = rows["top"].astype(bool)
    named = set(answer.terms["criterion"]) if not answer.terms.empty else set()
    rest = criteria_terms({answer.dataset: [name for name in rows["criterion"].unique() if name not in named]})
    terms = pd.concat([frame for frame in (answer.terms, rest) if not frame.empty]) if named else rest
    rows = rows.merge(terms[["criterion", "term", "term_source"]], on="criterion", how="left", validate="m:1")
    rows = rows.merge(alt_verdicts(answer.alt_test), on=["scoreset", "criterion", "source_slug"], how="left",
                      validate="m:1")
    rows = rows.assign(study=answer.study, dataset=answer.dataset, label=rows["item_label"].fillna(rows["label"]))
    return rows.reindex(columns=TABLE_COLUMNS)


def benchmark_table(answers: Sequence[DatasetAnswer]) -> pd.DataFrame:
    """Every column (metric or judge) x dataset x level x criterion, in the datasets' order, each cell's best first
    (TABLE_COLUMNS): r (oriented: higher agrees more) with its interval, rank (1 = best, ties share the lowest) of
    cell_size columns with an r and rank_share = (rank - 1) / (cell_size - 1) (0 best, 1 last), top (the cell's top
    cluster; a column without r never), decided (the cell tells its best apart: a top cluster of at most half the
    columns, the best's interval above 0), beats_writer (above the which-writer baseline), the cell's stories,
    writers, human ceiling and writer baseline, the shared term and the alt-test's verdict."""
    table = pd.concat([dataset_table(answer) for answer in answers], ignore_index=True)
    table["order"] = table.groupby(["dataset", "level", "criterion"], sort=False).ngroup()
    table = table.sort_values(["order", "rank", "metric"], kind="stable")
    return table.drop(columns="order").reset_index(drop=True)


SUMMARY_COLUMNS = ["rank", "item", "label", "kind", "studies", "cells", "mean_rank_share", "wins", "cells_decided",
                   "beats_writer", "against_direction", "alt_passes", "win_cells"]


def summary(table: pd.DataFrame, min_studies: int = 2) -> pd.DataFrame:
    """Per metric or judge (item) over the story-level cells where it has an r: rank (by mean_rank_share, lower
    first, among the items measured in at least min(`min_studies`, the studies in the table) studies; NaN: below
    that coverage), studies and cells (its coverage), mean_rank_share (its quality where measured), wins (decided
    cells where it is in the top cluster) of cells_decided, beats_writer (cells where it beats the which-writer
    baseline), against_direction (cells where it correlates against its declared direction), alt_passes (cells
    where it passes the alt-test and no shuffle of its scores does) and win_cells (where it wins)."""
    story = table[table["level"] == "story"]
    won = story[story["top"] & story["decided"]]
    grouped = story.groupby("item", sort=False)
    result = pd.DataFrame({
        "label": grouped["label"].first(),
        "kind": grouped["kind"].first(),
        "studies": grouped["study"].nunique(),
        "cells": grouped.size(),
        "mean_rank_share": grouped["rank_share"].mean(),
        "wins": won.groupby("item").size(),
        "cells_decided": grouped["decided"].sum(),
        "beats_writer": grouped["beats_writer"].apply(lambda values: values.fillna(False).astype(bool).sum()),
        "against_direction": grouped["against_direction"].sum(),
        "alt_passes": story["alt_test"].eq(PASSES).groupby(story["item"], sort=False).sum(),
        "win_cells": (won["dataset"] + " " + won["criterion"]).groupby(won["item"], sort=False).agg("; ".join),
    })
    counts = ["wins", "cells_decided", "beats_writer", "against_direction", "alt_passes"]
    result[counts] = result[counts].fillna(0).astype(int)
    result["win_cells"] = result["win_cells"].fillna("")
    result = result.rename_axis("item").reset_index()
    gate = min(min_studies, int(story["study"].nunique()) or 1)
    result = result.assign(below=result["studies"] < gate).sort_values(
        ["below", "mean_rank_share", "wins", "label"], ascending=[True, True, False, True], kind="stable")
    result["rank"] = result["mean_rank_share"].where(~result["below"]).rank(method="min")
    return result[SUMMARY_COLUMNS].reset_index(drop=True)


def listed(names: Sequence[str], most: int = 10) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more (summary.csv)" if len(names) > most else "")


def answer(table: pd.DataFrame, ranked: pd.DataFrame, min_studies: int = 2, shown: int | None = 10) -> str:
    """The report's opening (reStructuredText): a sentence on what is compared, a short table of the `shown` best
    ranked metrics and judges (None: no table, for a page whose own table follows), the best of each kind, and the
    cells that decide nothing."""
    story = table[table["level"] == "story"]
    cells = story.drop_duplicates(["dataset", "criterion"])
    studies = story["study"].nunique()
    gate = min(min_studies, studies or 1)
    decided = int(cells["decided"].sum())
    text = (f"**Across {studies} stud{'ies' if studies != 1 else 'y'} ({listed(list(dict.fromkeys(story['study'])))})"
            f" and {len(cells)} story-level dataset x criterion cells**, each dataset's released and computed "
            f"columns compared on the stories they share, with the statistic its design calls for; ranked by mean "
            f"normalised rank where measured (0: best in every cell), over the {int(ranked['rank'].notna().sum())} "
            f"of {len(ranked)} metrics and judges measured in at least {gate} stud{'ies' if gate != 1 else 'y'}. "
            f"{decided} of the {len(cells)} cells are decided (a top cluster of at most half the columns, its best "
            f"above 0); a win is a place in a decided cell's top cluster.\n\n")
    best = ranked[ranked["rank"].notna()].head(shown or 0)
    if len(best):
        rows = [("Rank", "Metric or judge", "Kind", "Studies", "Cells", "Mean normalised rank", "Wins")]
        rows += [(f"{row.rank:.0f}", row.label, row.kind, str(row.studies), str(row.cells),
                  f"{row.mean_rank_share:.2f}", str(row.wins)) for row in best.itertuples()]
        text += rst_table(rows) + "\n"
    for kind, rows in ranked[ranked["rank"].notna()].groupby("kind", sort=False):
        first = rows.iloc[0]
        text += (f"Best {kind}: {first['label']} (mean normalised rank {first['mean_rank_share']:.2f} over "
                 f"{first['cells']} cells, {first['wins']} wins). ")
    undecided = cells[~cells["decided"].astype(bool)]
    if len(undecided):
        text += (f"Cells that decide nothing (too few stories or raters, or no column above 0): "
                 f"{listed(list(undecided['dataset'] + ' ' + undecided['criterion']), 8)}.")
    return text.rstrip() + "\n"


def rst_table(rows: list[tuple[str, ...]]) -> str:
    """A reStructuredText simple table of rows of strings (the first: the header)."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    rule = "  ".join("=" * width for width in widths)
    lines = ["  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    return "\n".join([rule, lines[0], rule, *lines[1:], rule]) + "\n"


def cell_columns(table: pd.DataFrame) -> pd.DataFrame:
    """dataset, level, criterion, column: each cell once, grouped by term (TERMS' order, then the unmapped names),
    story level before system level; a column's label names the dataset, the criterion (its term where it differs),
    the level where it is the system one, the stories and the human ceiling: the header of a WMT-style matrix."""
    cells = table.drop_duplicates(["dataset", "level", "criterion"]).copy()
    order = {term: index for index, term in enumerate(TERMS)}
    cells["term_order"] = cells["term"].map(order).fillna(len(order))
    cells["level_order"] = cells["level"].ne("story")
    cells = cells.sort_values(["level_order", "term_order", "term"], kind="stable")
    term = np.where(cells["criterion"].map(normalised) == cells["term"].map(normalised), "", " [" + cells["term"] + "]")
    level = np.where(cells["level"] == "story", "", ", system level: " + cells["writers"].astype(str) + " writers")
    # a split-half r at or below 0 bounds nothing: said as what it is, not as a ceiling
    ceiling = cells["ceiling"].map(lambda value: "" if pd.isna(value) else f", ceiling {value:.2f}" if value > 0
                                   else f", raters' halves r {value:.2f}")
    cells["column"] = (cells["dataset"] + " · " + cells["criterion"] + term + " (n " + cells["stories"].astype(str)
                       + level + ceiling + ")")
    return cells[["dataset", "level", "criterion", "column"]]


def matrices(table: pd.DataFrame, ranked: pd.DataFrame, rows: int | None = None
             ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(r, top, text) as items x cells: the summary's first `rows` items (all: None) in its order, the cells as
    cell_columns orders them; top: the item is in a decided cell's top cluster; text: "r [low, high]", bold where
    top, empty where the item was not measured."""
    chosen = ranked["item"] if rows is None else ranked["item"].head(rows)
    keyed = table[table["item"].isin(chosen)].merge(cell_columns(table), on=["dataset", "level", "criterion"])
    keyed = keyed.assign(won=keyed["top"] & keyed["decided"].astype(bool),
                         said=keyed["r"].map("{:.2f}".format) + " [" + keyed["ci_low"].map("{:.2f}".format) + ", "
                         + keyed["ci_high"].map("{:.2f}".format) + "]")
    keyed["said"] = keyed["said"].where(~keyed["won"], "**" + keyed["said"] + "**")
    columns = cell_columns(table)["column"]
    r, top, text = (keyed.pivot_table(index="item", columns="column", values=value, aggfunc="first", dropna=False)
                    .reindex(index=chosen, columns=columns) for value in ("r", "won", "said"))
    labels = ranked.set_index("item")["label"].loc[chosen].to_numpy()
    r.index = top.index = text.index = labels
    r, top, text = (frame.rename_axis(index=None, columns=None) for frame in (r, top, text))
    return r.astype(float), top.fillna(False).astype(bool), text.fillna("")
