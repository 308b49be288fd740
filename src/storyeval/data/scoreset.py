"""Arrange tidy story tables as [prompt, system, variable] arrays for the statistics."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from storyeval.errors import InputError

log = logging.getLogger(__name__)
MIN_CELLS = 3  # values a column needs for any statistic: a correlation of two points is +-1 whatever the data


@dataclass(frozen=True)
class Cube:
    values: np.ndarray  # [P, S, K]
    prompts: list
    systems: list[str]
    names: list[str]

    @property
    def missing(self) -> np.ndarray:
        """[K] cells without a value (NaN) per variable: what each statistic drops."""
        return np.isnan(self.values).sum(axis=(0, 1))


def build_cube(
    stories: pd.DataFrame,
    long: pd.DataFrame,
    key: str,
    value: str,
    names: list[str],
    systems: list[str],
    source: str,
) -> Cube:
    """Pivot `long` (story_id, key, value) into [prompt, system, name]. A cell without a value (a judge's
    unparsable answer, a metric without a score for a story) is NaN: each statistic uses the cells it has and
    says how many it dropped; the count is logged here in one line. Refused: a name with fewer than MIN_CELLS
    values, a story with two values of a name, two stories of one prompt and system (`analysis_stories`)."""
    named = long[long[key].isin(names)]
    if named.duplicated(["story_id", key]).any():
        story, name = named.loc[named.duplicated(["story_id", key]), ["story_id", key]].iloc[0]
        raise InputError(f"{source}: story {story} has two values for {key} {name!r}; fix: deduplicate the score "
                         "table")
    analysed = stories[stories["system"].isin(systems)]
    cells = "prompt " + analysed["prompt_id"].astype(str) + ", system " + analysed["system"].astype(str)
    if cells.duplicated().any():
        cell = cells[cells.duplicated()].iloc[0]
        raise InputError(f"{source}: stories {', '.join(analysed.loc[cells == cell, 'story_id'])} are all {cell}; "
                         "fix: give each story of a prompt its own system (storyeval.data.scoreset.analysis_stories)")
    table = named.merge(analysed[["story_id", "prompt_id", "system"]], on="story_id")
    prompts = sorted(analysed["prompt_id"].unique())
    index = pd.MultiIndex.from_product([prompts, systems, names], names=["prompt_id", "system", key])
    series = table.set_index(["prompt_id", "system", key])[value].reindex(index)
    values = series.to_numpy(dtype=float).reshape(len(prompts), len(systems), len(names))
    cube = Cube(values, prompts, list(systems), list(names))
    missing = dict(zip(names, cube.missing.tolist()))
    cells = len(prompts) * len(systems)
    scarce = [name for name, count in missing.items() if cells - count < MIN_CELLS]
    if scarce:
        raise InputError(f"{source}: {key} {scarce[0]!r} has a value for {cells - missing[scarce[0]]} of {cells} "
                         f"stories, fewer than the {MIN_CELLS} any statistic needs; fix: compute it (a judge: "
                         f"look at its answers in the .details.parquet) or drop the {key}")
    gaps = {name: count for name, count in missing.items() if count}
    if gaps:
        log.warning("%s: %d of %d cells without a value (NaN), each statistic uses the cells it has: %s", source,
                    sum(gaps.values()), cells * len(names), ", ".join(f"{k} {v}" for k, v in gaps.items()))
    return cube


MIN_SYSTEMS = 3  # a correlation across the systems of a prompt has two points with two systems: +-1 whatever the data


def pooled(stories: pd.DataFrame) -> pd.DataFrame:
    """The stories as one prompt whose "systems" are the stories: the story level then correlates over all
    stories at once (two systems a prompt: storyeval.text.fit)."""
    return stories.assign(prompt_id=0, system=stories["story_id"])


def analysis_stories(stories: pd.DataFrame) -> pd.DataFrame:
    """story_id, prompt_id, system as the cubes take them: a story without a prompt or a system (WP200; a set
    reduced to one group, storyeval.text.fit) becomes a "system" of its own in prompt 0, so that its story level is
    one correlation over all such stories (`build_cube` needs one story per prompt and system)."""
    stories = stories[["story_id", "prompt_id", "system"]].copy()
    flat = stories["prompt_id"].isna() | stories["system"].isna()
    stories.loc[flat, "prompt_id"] = 0
    stories.loc[flat, "system"] = stories.loc[flat, "story_id"]
    return stories


def analysed_systems(stories: pd.DataFrame, reference_system: str | None) -> list[str]:
    """Systems in first-appearance order, the human reference removed (Mathur et al. 2020)."""
    systems = list(dict.fromkeys(stories["system"]))
    return [system for system in systems if system != reference_system]
