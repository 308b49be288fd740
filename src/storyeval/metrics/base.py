"""The common interface of the text metrics.

A text table is a DataFrame with columns story_id, prompt_id, system, prompt,
story, reference (prompt and reference may be NaN where a dataset has none),
as made by `storyeval.text.datasets`; `texts.attrs["dataset"]` names it.

A metric module declares everything the workflow and the catalog know of it:
- `NAME`: the metric's name (its catalog key and the name of its score file);
- `NEEDS`: the text columns besides `story` it reads (set(), {"reference"}, {"prompt"});
- `COLUMNS`: its score columns at the default parameters, slug -> `Column` (label,
  family, reference-based or free, direction), made by `columns(...)`; the direction is read from the
  metric's definition (a distance, perplexity or share of repeated n-grams: "lower"), and where the definition
  orders no quality (Text length), `convention` says why "higher" is only a convention (config
  `metric_directions` overrides any column's direction);
- `RESOURCE` (neural metrics only): what it reads besides the texts, `Resource`;
- `PINNED` (optional): pinned third-party files it reads, keyword of compute() -> "<source>/<file key>"
  of config.yaml (fetched and checksum-checked by rule fetch, e.g. S3's released models);
- `compute(texts, *, <explicit keyword parameters>) -> DataFrame`: index story_id,
  one float column per variant, named by the variant's slug (`rouge-1-recall`).
  Its keyword defaults are the defaults of the library and of the workflow (written
  only here; config.yaml `metric_params` overrides them);
- `signature(*, <the same parameters, no defaults>) -> dict`, decorated with
  `@defaults_of(compute)`: library versions, tokenisation, parameters: everything
  that changes the numbers.
Module-level imports stay light (numpy, pandas, storyeval): the catalog imports
every metric module when the workflow starts; torch, numba, transformers, spaCy
and the like are imported inside functions.
Roles (SummEval, Fabbri et al. 2021): the story is the candidate ("summary"), the
reference is the human story, the source is the prompt.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Protocol

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.names import slugify
from storyeval.text.clean import CLEANING
from storyeval.text.layouts import TEXT_COLUMNS  # noqa: F401  (the text-table layout, re-exported)

FAMILIES = ("string", "embedding", "model")  # HANNA's markers: § string-based, ε embedding-based, Δ model-based
REFERENCE = ("based", "free")  # Ξ reference-based, ¤ reference-free
DIRECTIONS = ("higher", "lower")  # which end of the scale is better


@dataclass(frozen=True)
class Column:
    """One score column: display label (HANNA's where it released the column), family, reference-based
    ("based") or reference-free ("free"), direction ("lower" for distances), and `convention`: why the direction
    is a convention only, where the definition orders no quality ("" where it does)."""
    label: str
    family: str
    reference: str
    direction: str = "higher"
    convention: str = field(default="", repr=False)

    def __post_init__(self):
        for value, allowed in ((self.family, FAMILIES), (self.reference, REFERENCE), (self.direction, DIRECTIONS)):
            if value not in allowed:
                raise InputError(f"metric column {self.label!r}: {value!r} is not one of {allowed}; "
                                 "fix: use one of them")


@dataclass(frozen=True)
class Resource:
    """What a neural metric reads besides the texts: the keyword of compute() that receives it ("cache": the
    shared token-embedding cache of an encoder; "model": a model; "embeddings": a word-vector file;
    "model_file": a model file the workflow trains on the role's encoder) and the config role (`models.<role>`)."""
    keyword: str
    role: str


def columns(family: str, reference: str, *labels: str, direction: str = "higher", convention: str = ""
            ) -> dict[str, Column]:
    """Score columns named by the slugs of their labels, all of one kind.

    >>> columns("string", "based", "ROUGE-1 Recall")
    {'rouge-1-recall': Column(label='ROUGE-1 Recall', family='string', reference='based', direction='higher')}
    """
    return {slugify(label): Column(label, family, reference, direction, convention) for label in labels}


def keyword_defaults(compute: Callable) -> dict:
    """The keyword-only parameters of `compute` that have a default, with it."""
    return {name: parameter.default for name, parameter in inspect.signature(compute).parameters.items()
            if parameter.kind is parameter.KEYWORD_ONLY and parameter.default is not parameter.empty}


def defaults_of(compute: Callable):
    """Decorate a metric's signature(): parameters a call leaves out take compute()'s defaults, so the
    defaults are written once."""
    def decorate(signature: Callable) -> Callable:
        @functools.wraps(signature)
        def with_defaults(**params) -> dict:
            return signature(**(keyword_defaults(compute) | params))
        return with_defaults
    return decorate


class Metric(Protocol):
    NAME: str
    NEEDS: frozenset[str]
    COLUMNS: dict[str, Column]

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
            fix = "restore the text" if column == "story" else f"skip {metric} for this dataset or supply the {column}s"
            count = f"{int(bad.sum())} of {len(texts)} stories"
            raise InputError(f"{where}: story {first} has no {role} ({count}); fix: {fix}")


def scores_frame(story_ids: Sequence[str], columns: dict[str, Sequence[float]]) -> pd.DataFrame:
    frame = pd.DataFrame({name: np.asarray(values, dtype=float) for name, values in columns.items()})
    frame.index = pd.Index(list(story_ids), name="story_id")
    return frame


def versions(*packages: str) -> dict[str, str]:
    return {package: metadata.version(package) for package in packages}


def describe(name: str, packages: Sequence[str], roles: dict[str, str], parameters: dict, **details) -> dict:
    """A metric's signature: library versions, text cleaning, roles of the texts, method details, parameters."""
    return {
        "metric": name,
        "versions": versions(*packages),
        "cleaning": CLEANING,
        "roles": roles,
        **details,
        "parameters": parameters,
    }


def warn_count(metric: str, texts: pd.DataFrame, count: int, what: str) -> None:
    """One warning with a count, for documented fallback values (never silent)."""
    if count:
        warnings.warn(
            f"dataset {dataset_of(texts)}, metric {metric}: {count} of {len(texts)} stories {what}", stacklevel=3
        )


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (the convention of ROUGE-1.5.5 and SummEval)."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
