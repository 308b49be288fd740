"""Merge per-metric score files into the long score table and registry the analysis reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from storyeval.data.registry import REGISTRY_COLUMNS
from storyeval.errors import InputError


def merge_scores(paths: list[str | Path], released_registry: pd.DataFrame,
                 new_columns: dict[str, tuple[str, str, str, str]] | None = None,
                 judges: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(long scores: story_id, metric, value; registry in the released layout).

    Columns are HANNA slugs, so label, reference/free, family and direction come
    from the released registry; `new_columns` (slug -> label, reference, family,
    direction) registers metrics HANNA did not release, `judges` the LLM-judge columns (storyeval.judges:
    their registry rows, whose judge, criterion, task, template and mode the registry keeps); any other column
    is refused.
    """
    from storyeval.judges import JUDGE_COLUMNS

    extra = pd.DataFrame([(slug, *row) for slug, row in (new_columns or {}).items()],
                         columns=["slug", "label", "reference", "family", "direction"])
    judged = judges if judges is not None and len(judges) else None
    extra = pd.concat([extra, judged[extra.columns]] if judged is not None else [extra], ignore_index=True)
    released_registry = pd.concat([released_registry, extra[~extra["slug"].isin(released_registry["slug"])]],
                                  ignore_index=True)
    frames, slugs = [], []
    known = set(released_registry["slug"])
    for path in paths:
        frame = pd.read_parquet(path).set_index("story_id")
        for column in frame.columns:
            if column in slugs:
                raise InputError(
                    f"{path}: score column {column!r} is also produced by another metric file; fix: compute it once"
                )
            if column not in known:
                raise InputError(
                    f"{path}: score column {column!r} is not a known metric slug; fix: register it in the "
                    "metric catalog"
                )
            slugs.append(column)
        frames.append(frame)
    wide = pd.concat(frames, axis=1, join="outer")
    if wide.index.duplicated().any():
        raise InputError(
            f"story id {wide.index[wide.index.duplicated()][0]} repeats across metric files; fix: recompute them"
        )
    known = released_registry.set_index("slug")
    order = [slug for slug in known.index if slug in slugs]  # the paper's column order
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
