"""Parse HANNA's released per-system score files into tidy tables.

Each released CSV has one row per system and, per column, a Python-literal
list with one value per prompt (prompts 0..N-1).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.criteria import CODES, CRITERIA
from storyeval.data.csvfile import REFETCH, decode_utf8, read_csv_strings
from storyeval.data.registry import build_registry, is_metric_label, slugify
from storyeval.errors import InputError
from storyeval.limits import MAX_LINE, check_lines

SYSTEM_COLUMN = "Model"
RATER_PATTERN = re.compile(r"^Human (?P<rater>\d+) (?P<code>RE|CH|EM|SU|EG|CX)$")
# Recognised and not used: pairwise rater averages (derivable from the raters)
# and the four LLM judges of the TACL 2024 release.
IGNORED_PATTERNS = [
    re.compile(r"^Human Avg \d+ (RE|CH|EM|SU|EG|CX)$"),
    re.compile(r"^.+ (RE|CH|EM|SU|EG|CX|AVG) \d+$"),
]


@dataclass(frozen=True)
class Released:
    stories: pd.DataFrame  # story_id, prompt_id, system
    human_scores: pd.DataFrame  # story_id, criterion, score (mean of the raters)
    scores: pd.DataFrame  # story_id, metric, value (long form)
    registry: pd.DataFrame  # slug, label, column, reference, family, direction, ...


def story_id(prompt_id: int, system: str) -> str:
    return f"p{prompt_id:03d}-{slugify(system)}"


def parse_cell(cell: object, source: str, column: str, system: str) -> np.ndarray:
    """One released list of finite numbers, one per prompt. A NaN or infinity is refused here: correlations
    would drop that story silently (scipy) or change the system means, and no released list holds one."""
    where = f"column {column!r}, system {system!r}"
    text = str(cell).strip()
    if not (text.startswith("[") and text.endswith("]")):
        what = (
            f"expected a list literal like '[1.0, 2.0]', got {text[:40]!r}"
            if text
            else "an empty cell (a cut-off row?)"
        )
        raise InputError(f"{source}: {what}, {where}; fix: {REFETCH}")
    items = text[1:-1].split(",")
    values = np.empty(len(items))
    for prompt, item in enumerate(items):
        try:
            values[prompt] = float(item)
        except ValueError:
            raise InputError(
                f"{source}: non-numeric value {item.strip()[:20]!r}, {where}, prompt {prompt}; fix: {REFETCH}"
            ) from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise InputError(
            f"{source}: non-finite value {values[bad[0]]} ({bad.size} in this list), {where}, "
            f"prompt {bad[0]}; fix: {REFETCH}, or replace it by the metric's finite score"
        )
    return values


def read_wide(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """{column: {system: values per prompt}} with every list of the same length."""
    frame = read_csv_strings(path, names=[SYSTEM_COLUMN])
    source = str(path)
    if SYSTEM_COLUMN not in frame.columns:
        raise InputError(f"{source}: no {SYSTEM_COLUMN!r} column; fix: use HANNA's released score file")
    systems = frame[SYSTEM_COLUMN].tolist()
    if len(set(systems)) != len(systems):
        raise InputError(f"{source}: column {SYSTEM_COLUMN!r} repeats a system; fix: one row per system")
    columns: dict[str, dict[str, np.ndarray]] = {}
    length = None
    for column in frame.columns.drop(SYSTEM_COLUMN):
        columns[column] = {}
        for system, cell in zip(systems, frame[column]):
            values = columns[column][system] = parse_cell(cell, source, column, system)
            length = len(values) if length is None else length
            if len(values) != length:
                raise InputError(
                    f"{source}: a list of {len(values)} values where the lists before have {length}, "
                    f"column {column!r}, system {system!r}; fix: {REFETCH}"
                )
    return columns


def classify(columns: list[str], source: str) -> tuple[list[str], list[str], list[str]]:
    """Split columns into criteria, rater columns and metric labels; reject anything else."""
    criteria, raters, metrics = [], [], []
    for column in columns:
        if column in CRITERIA:
            criteria.append(column)
        elif RATER_PATTERN.match(column):
            raters.append(column)
        elif is_metric_label(column):
            metrics.append(column)
        elif not any(pattern.match(column) for pattern in IGNORED_PATTERNS):
            build_registry([column], source)  # raises the explanatory error
    missing = [name for name in CRITERIA if name not in criteria]
    if missing:
        raise InputError(f"{source}: criterion columns {missing} are missing; fix: use HANNA's released score file")
    return criteria, raters, metrics


def to_long(columns: dict[str, dict[str, np.ndarray]], names: list[str], key: str, value: str) -> pd.DataFrame:
    frames = []
    for name in names:
        for system, values in columns[name].items():
            frames.append(
                pd.DataFrame(
                    {
                        "story_id": [story_id(prompt, system) for prompt in range(len(values))],
                        key: name,
                        value: values,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def released_registry(path: str | Path) -> pd.DataFrame:
    """The metric registry from the header line of a released score file alone (read at workflow start-up,
    after the file's checksum, so a damaged file is reported as such rather than as an odd header)."""
    with open(path, "rb") as handle:
        line = handle.readline(MAX_LINE + 1)
    check_lines(line, str(path), REFETCH)
    header = next(csv.reader([decode_utf8(line, str(path))]))
    return build_registry([column for column in header if is_metric_label(column)], str(path))


def read_released_scores(path: str | Path, directions: Mapping[str, str] | None = None) -> Released:
    """The released file as tidy tables; `directions` (slug -> direction) as `build_registry`."""
    columns = read_wide(path)
    criteria, _, metric_columns = classify(list(columns), str(path))
    registry = build_registry(metric_columns, str(path), directions)
    first = columns[criteria[0]]
    stories = pd.DataFrame(
        [
            {"story_id": story_id(prompt, system), "prompt_id": prompt, "system": system}
            for system, values in first.items()
            for prompt in range(len(values))
        ]
    )
    human = to_long(columns, criteria, "criterion", "score")
    scores = to_long(columns, metric_columns, "metric", "value")
    scores["metric"] = scores["metric"].map(dict(zip(registry["column"], registry["slug"])))
    return Released(stories, human, scores, registry)


def read_rater_ratings(path: str | Path, human_scores: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-rater ratings (story_id, criterion, rater, rating) from the TACL release.

    Raters are positions 1..3 within a story, not the same people across
    stories. When `human_scores` is given, the rater mean must reproduce it.
    """
    columns = read_wide(path)
    rater_columns = [column for column in columns if RATER_PATTERN.match(column)]
    if not rater_columns:
        raise InputError(f"{path}: no per-rater columns 'Human <k> <RE|CH|...>'; fix: use hanna_metric_scores_llm.csv")
    ratings = to_long(columns, rater_columns, "column", "rating")
    parts = ratings["column"].str.extract(RATER_PATTERN)
    ratings["criterion"] = parts["code"].map(CODES)
    ratings["rater"] = parts["rater"].astype(int)
    ratings = ratings.drop(columns="column")[["story_id", "criterion", "rater", "rating"]]
    if human_scores is not None:
        means = ratings.groupby(["story_id", "criterion"])["rating"].mean()
        joined = human_scores.set_index(["story_id", "criterion"])["score"].align(means, join="inner")
        gap = np.abs(joined[0] - joined[1]).max() if len(joined[0]) else np.inf
        if not gap < 1e-9:
            raise InputError(
                f"{path}: the mean of the rater columns differs from the released averaged criteria "
                f"(max gap {gap}); fix: use score files of the same HANNA release"
            )
    return ratings.sort_values(["story_id", "criterion", "rater"], ignore_index=True)
