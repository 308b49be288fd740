"""Merge per-metric score files into the long score table and registry the analysis reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from storyeval.data.registry import REGISTRY_COLUMNS, RELEASED_ORDER, released_label
from storyeval.errors import InputError
from storyeval.io import read_parquet


def merge_scores(paths: list[str | Path], columns: dict[str, tuple[str, str, str, str]],
                 judges: pd.DataFrame | None = None, order: Sequence[str] = RELEASED_ORDER,
                 leave_out: Sequence[str] = ()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(long scores: story_id, metric, value; registry in the released layout).

    `columns` (slug -> label, reference, family, direction: what the metric modules declare,
    catalog.registry_rows) registers every column a metric file may hold, `judges` the LLM-judge columns
    (storyeval.judges: their registry rows, whose judge, criterion, task, template and mode the registry
    keeps); any other column is refused. The registry lists the metrics in `order` (HANNA's release), then the
    others in `columns`' order, then the judges. Columns in `leave_out` (a judge without enough ratings for any
    statistic, storyeval.judges.gaps) are left out of both.
    """
    from storyeval.judges import JUDGE_COLUMNS

    known_order = [*[slug for slug in order if slug in columns], *[slug for slug in columns if slug not in order]]
    declared = pd.DataFrame([(slug, *columns[slug]) for slug in known_order],
                                     columns=["slug", "label", "reference", "family", "direction"])
    judged = judges if judges is not None and len(judges) else None
    if judged is not None:
        new = judged[~judged["slug"].isin(declared["slug"])]
        declared = pd.concat([declared, new[declared.columns]], ignore_index=True)
    declared["column"] = released_label(declared)
    frames, writers = [], {}  # score column -> the file that wrote it
    known = set(declared["slug"])
    for path in paths:
        frame = read_parquet(path).set_index("story_id")
        for column in frame.columns:
            if column in writers:
                raise InputError(
                    f"{path}: score column {column!r} is also written by {writers[column]}; fix: let one metric or "
                    "judge write it"
                )
            if column not in known:
                raise InputError(
                    f"{path}: score column {column!r} is not a known metric slug; fix: register it in the "
                    "metric catalog"
                )
            writers[column] = path
        frames.append(frame)
    wide = pd.concat(frames, axis=1, join="outer")
    if wide.index.duplicated().any():
        raise InputError(
            f"story id {wide.index[wide.index.duplicated()][0]} repeats across metric files; fix: recompute them"
        )
    known = declared.set_index("slug")
    order = [slug for slug in known.index if slug in writers and slug not in leave_out]  # the paper's column order
    registry = known.loc[order].reset_index()
    registry["degenerate_release"] = False  # computed here, with stable numerics
    registry["order"] = range(len(registry))
    long = (
        wide[order]
        .rename_axis("story_id")
        .reset_index()
        .melt(id_vars="story_id", var_name="metric", value_name="value")
    )
    if judged is None:
        return long, registry[REGISTRY_COLUMNS]
    return long, registry[REGISTRY_COLUMNS].merge(judged[["slug", *JUDGE_COLUMNS]], on="slug", how="left")
