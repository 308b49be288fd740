"""Arrange tidy story tables as [prompt, system, variable] arrays for the statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from storyeval.errors import InputError


@dataclass(frozen=True)
class Cube:
    values: np.ndarray  # [P, S, K]
    prompts: list
    systems: list[str]
    names: list[str]


def build_cube(
    stories: pd.DataFrame,
    long: pd.DataFrame,
    key: str,
    value: str,
    names: list[str],
    systems: list[str],
    source: str,
) -> Cube:
    """Pivot `long` (story_id, key, value) into [prompt, system, name]; every cell must be present."""
    table = long[long[key].isin(names)].merge(stories[["story_id", "prompt_id", "system"]], on="story_id")
    table = table[table["system"].isin(systems)]
    prompts = sorted(stories.loc[stories["system"].isin(systems), "prompt_id"].unique())
    index = pd.MultiIndex.from_product([prompts, systems, names], names=["prompt_id", "system", key])
    if table.duplicated(["prompt_id", "system", key]).any():
        raise InputError(f"{source}: a story has two values for the same {key}; fix: deduplicate the score table")
    series = table.set_index(["prompt_id", "system", key])[value].reindex(index)
    missing = series[series.isna()]
    if not missing.empty:
        prompt, system, name = missing.index[0]
        raise InputError(
            f"{source}: {key} {name!r} has no value for system {system!r}, prompt {prompt} "
            f"({len(missing)} missing cells); fix: compute it for every story or drop the {key}"
        )
    values = series.to_numpy().reshape(len(prompts), len(systems), len(names))
    return Cube(values, prompts, list(systems), list(names))


MIN_SYSTEMS = 3  # a correlation across the systems of a prompt has two points with two systems: +-1 whatever the data


def pooled(stories: pd.DataFrame) -> pd.DataFrame:
    """The stories as one prompt whose "systems" are the stories: the story level then correlates over all
    stories at once (two systems a prompt: storyeval.text.fit)."""
    return stories.assign(prompt_id=0, system=stories["story_id"])


def analysed_systems(stories: pd.DataFrame, reference_system: str | None) -> list[str]:
    """Systems in first-appearance order, the human reference removed (Mathur et al. 2020)."""
    systems = list(dict.fromkeys(stories["system"]))
    return [system for system in systems if system != reference_system]
