"""The common interface of the text metrics.

A text table is a DataFrame with columns story_id, prompt_id, system, prompt,
story, reference (prompt and reference may be NaN where a dataset has none),
as made by `storyeval.text.datasets`; `texts.attrs["dataset"]` names it.

A metric module exposes
- `NAME`: the metric's name (its catalog key and the name of its score file);
- `NEEDS`: the text columns besides `story` it reads (set(), {"reference"}, {"prompt"});
- `compute(texts, *, <explicit keyword parameters>) -> DataFrame`: index story_id,
  one float column per variant, named by the variant's slug (`rouge-1-recall`);
- `signature(*, <the same parameters>) -> dict`: library versions, tokenisation,
  parameters: everything that changes the numbers.
Roles (spec sections 1 and 4): the story is the candidate ("summary"), the
reference is the human story, the source is the prompt.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from importlib import metadata
from typing import Protocol

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.text.clean import CLEANING
from storyeval.text.datasets import TEXT_COLUMNS  # noqa: F401  (the text-table layout, re-exported)


class Metric(Protocol):
    NAME: str
    NEEDS: frozenset[str]

    def compute(self, texts: pd.DataFrame, **params) -> pd.DataFrame: ...

    def signature(self, **params) -> dict: ...


def dataset_of(texts: pd.DataFrame) -> str:
    return str(texts.attrs.get("dataset", "<texts>"))


def check_texts(texts: pd.DataFrame, needs: Iterable[str], metric: str) -> None:
    """Refuse a table a metric cannot score: missing columns, empty stories, absent needed texts."""
    where = f"dataset {dataset_of(texts)}, metric {metric}"
    missing = [column for column in ["story_id", "story", *needs] if column not in texts.columns]
    if missing:
        raise InputError(f"{where}: the text table lacks columns {missing}; fix: load it with storyeval.text.datasets")
    if texts["story_id"].duplicated().any():
        raise InputError(f"{where}: story id {texts['story_id'][texts['story_id'].duplicated()].iloc[0]} repeats")
    for column in ["story", *sorted(needs)]:
        values = texts[column]
        bad = values.isna() | (values.astype("str").str.strip() == "")
        if bad.any():
            first = texts.loc[bad, "story_id"].iloc[0]
            role = "story" if column == "story" else f"{column} (needed by {metric})"
            raise InputError(
                f"{where}: story {first} has no {role} ({int(bad.sum())} of {len(texts)} stories); "
                f"fix: {'restore the text' if column == 'story' else f'skip {metric} for this dataset or supply the {column}s'}"
            )


def scores_frame(story_ids: Sequence[str], columns: dict[str, Sequence[float]]) -> pd.DataFrame:
    frame = pd.DataFrame({name: np.asarray(values, dtype=float) for name, values in columns.items()})
    frame.index = pd.Index(list(story_ids), name="story_id")
    return frame


def versions(*packages: str) -> dict[str, str]:
    return {package: metadata.version(package) for package in packages}


def describe(name: str, packages: Sequence[str], roles: dict[str, str], parameters: dict, **details) -> dict:
    """A metric's signature: library versions, text cleaning, roles of the texts, method details, parameters."""
    return {"metric": name, "versions": versions(*packages), "cleaning": CLEANING, "roles": roles, **details,
            "parameters": parameters}


def warn_count(metric: str, texts: pd.DataFrame, count: int, what: str) -> None:
    """One warning with a count, for documented fallback values (never silent)."""
    if count:
        warnings.warn(f"dataset {dataset_of(texts)}, metric {metric}: {count} of {len(texts)} stories {what}", stacklevel=3)


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (the convention of ROUGE-1.5.5 and SummEval)."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
