"""Text datasets normalised to one table: story_id, prompt_id, system, prompt, story, reference.

Every loader cleans prompts, stories and references with `storyeval.text.clean`
(the same cleaning for every metric), refuses empty texts, and returns a
TextDataset whose `texts.attrs["dataset"]` names the dataset for error messages.
Story ids follow `storyeval.data.hanna.story_id` (`p007-human`) where a story has
a prompt and a system, so computed scores line up with HANNA's released ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.criteria import CRITERIA
from storyeval.data.csvfile import decode_utf8, read_csv_strings
from storyeval.data.hanna import story_id
from storyeval.errors import InputError
from storyeval.pickles import load_restricted
from storyeval.text import layouts
from storyeval.text.clean import clean_text

TEXT_COLUMNS = ["story_id", "prompt_id", "system", "prompt", "story", "reference"]
HUMAN = "Human"
LLM_COLUMNS = ["Prompt", "Human", "Story", "Model"]
# hanna_stories_annotations.csv, one row per (story, rater); README of dig-team/hanna-benchmark-asg.
ANNOTATION_COLUMNS = ["Story ID", "Prompt", "Human", "Story", "Model", *CRITERIA, "Worker ID"]
STORYER_CRITERION = "Overall"  # StoryER's averaged human preference score in [0, 1] (8 raters)
TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet"}  # the user's own file


@dataclass(frozen=True)
class TextDataset:
    name: str
    texts: pd.DataFrame  # TEXT_COLUMNS
    human_scores: pd.DataFrame | None = None  # story_id, criterion, score (rater mean)
    ratings: pd.DataFrame | None = None  # story_id, criterion, worker, rating


def read_utf8_csv(path: str | Path, name: str) -> pd.DataFrame:
    """Read a CSV of strings; an empty, non-UTF-8, damaged or header-only file is one InputError."""
    return read_csv_strings(path, f"dataset {name}: {path}")


def require_columns(frame: pd.DataFrame, columns: list[str], name: str, path: str | Path) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise InputError(f"dataset {name}: {path} lacks columns {missing}; fix: use the released file")


def finish(name: str, texts: pd.DataFrame) -> pd.DataFrame:
    """Clean the texts, check them, order the columns and tag the dataset name."""
    texts = texts.copy()
    for column in ("story", "reference", "prompt"):
        present = texts[column].notna()
        texts.loc[present, column] = texts.loc[present, column].map(clean_text)
        empty = (present & (texts[column] == "")) | (~present if column == "story" else False)
        if empty.any():
            first = texts.loc[empty, "story_id"].iloc[0]
            raise InputError(
                f"dataset {name}: story {first} has an empty {column} after cleaning ({int(empty.sum())} such rows); "
                "fix: remove the story or restore its text"
            )
    if texts["story_id"].duplicated().any():
        raise InputError(
            f"dataset {name}: story id {texts['story_id'][texts['story_id'].duplicated()].iloc[0]} repeats"
        )
    texts = texts[TEXT_COLUMNS].reset_index(drop=True)
    texts.attrs["dataset"] = name
    return texts


def prompt_ids(prompts: pd.Series) -> pd.Series:
    """Prompt i = i-th distinct prompt in order of first appearance (HANNA's score-list order)."""
    order = {prompt: index for index, prompt in enumerate(pd.unique(prompts))}
    return prompts.map(order).astype("int64")


def single_reference(frame: pd.DataFrame, name: str, path: str | Path) -> pd.Series:
    """The human story of each prompt_id; a prompt with two different human stories is an error."""
    counts = frame.groupby("prompt_id")["Human"].nunique()
    if (counts > 1).any():
        raise InputError(
            f"dataset {name}: {path} gives prompt {counts[counts > 1].index[0]} two different human stories; "
            "fix: use the released file"
        )
    return frame.groupby("prompt_id")["Human"].first()


def load_hanna_llm(path: str | Path, name: str = "hanna-llm") -> TextDataset:
    """hanna_llm_stories.csv: the 96 human stories (system "Human", story = reference) and six LLMs' stories."""
    frame = read_utf8_csv(path, name)
    require_columns(frame, LLM_COLUMNS, name, path)
    frame["prompt_id"] = prompt_ids(frame["Prompt"])
    humans = single_reference(frame, name, path)
    prompts = frame.groupby("prompt_id")["Prompt"].first()
    generated = pd.DataFrame(
        {
            "prompt_id": frame["prompt_id"],
            "system": frame["Model"],
            "prompt": frame["Prompt"],
            "story": frame["Story"],
            "reference": frame["Human"],
        }
    )
    human = pd.DataFrame(
        {
            "prompt_id": humans.index,
            "system": HUMAN,
            "prompt": prompts.loc[humans.index].to_numpy(),
            "story": humans.to_numpy(),
            "reference": humans.to_numpy(),
        }
    )
    texts = pd.concat([human, generated], ignore_index=True)
    texts["story_id"] = [story_id(prompt, system) for prompt, system in zip(texts["prompt_id"], texts["system"])]
    return TextDataset(name, finish(name, texts))


def load_hanna_annotations(path: str | Path, name: str = "hanna") -> TextDataset:
    """hanna_stories_annotations.csv: 1,056 stories (96 prompts x Human + 10 systems), 3 ratings each.

    `Story ID` runs 0..1055 grouped by system (0-95 Human, 96-191 BertGeneration, ...), so the
    prompt of a story is `Story ID` mod 96, the order of HANNA's released score lists.
    """
    frame = read_utf8_csv(path, name)
    require_columns(frame, ANNOTATION_COLUMNS, name, path)
    try:
        number = frame["Story ID"].astype("int64")
        ratings = frame[CRITERIA].astype("float64")
    except ValueError as error:
        raise InputError(f"dataset {name}: {path} has a non-numeric Story ID or rating ({error})") from error
    n_prompts = frame["Prompt"].nunique()
    frame["prompt_id"] = number % n_prompts
    if (frame.groupby("prompt_id")["Prompt"].nunique() > 1).any():
        raise InputError(
            f"dataset {name}: {path}: Story ID mod {n_prompts} does not identify the prompt; "
            "fix: use the released file (stories grouped by system, 96 per system)"
        )
    humans = single_reference(frame, name, path)
    stories = frame.drop_duplicates("Story ID")
    texts = pd.DataFrame(
        {
            "prompt_id": stories["prompt_id"].to_numpy(),
            "system": stories["Model"].to_numpy(),
            "prompt": stories["Prompt"].to_numpy(),
            "story": stories["Story"].to_numpy(),
            "reference": humans.loc[stories["prompt_id"]].to_numpy(),
        }
    )
    texts["story_id"] = [story_id(prompt, system) for prompt, system in zip(texts["prompt_id"], texts["system"])]
    ids = dict(zip(stories["Story ID"], texts["story_id"]))
    long = ratings.assign(story_id=frame["Story ID"].map(ids), worker=frame["Worker ID"]).melt(
        id_vars=["story_id", "worker"], var_name="criterion", value_name="rating"
    )
    long = long[["story_id", "criterion", "worker", "rating"]].sort_values(["story_id", "criterion", "worker"])
    scores = long.groupby(["story_id", "criterion"], sort=True)["rating"].mean().rename("score").reset_index()
    return TextDataset(name, finish(name, texts), scores, long.reset_index(drop=True))


def load_storyer(path: str | Path, name: str) -> TextDataset:
    """WP200 / SCARY200 pickle: a list of (story, averaged human score) pairs; no prompt, no reference."""
    items = load_restricted(path)
    if not isinstance(items, list) or not items:
        raise InputError(f"dataset {name}: {path} should hold a non-empty list of (story, score) pairs")
    for index, item in enumerate(items):
        if not (
            isinstance(item, (tuple, list))
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], (int, float))
            and not isinstance(item[1], bool)
        ):
            raise InputError(f"dataset {name}: {path} item {index} is not a (story, score) pair: {str(item)[:60]!r}")
    ids = [f"{name}-{index:03d}" for index in range(len(items))]
    absent = pd.Series([np.nan] * len(items), dtype="str")
    texts = pd.DataFrame(
        {
            "story_id": ids,
            "prompt_id": pd.array([pd.NA] * len(items), dtype="Int64"),
            "system": absent,
            "prompt": absent,
            "story": [story for story, _ in items],
            "reference": absent,
        }
    )
    scores = pd.DataFrame({"story_id": ids, "criterion": STORYER_CRITERION, "score": [float(v) for _, v in items]})
    return TextDataset(name, finish(name, texts), scores)


def table_format(path: str | Path, file_format: str | None) -> str:
    """csv, tsv, jsonl or parquet: `file_format` when given, else the file's suffix."""
    chosen = file_format or TABLE_FORMATS.get(Path(path).suffix.lower())
    if chosen not in TABLE_FORMATS.values():
        raise InputError(
            f"{path}: not a {', '.join(TABLE_FORMATS)} file; fix: rename it or set format: to one of "
            f"{', '.join(TABLE_FORMATS.values())}"
        )
    return chosen


def read_table_file(path: str | Path, file_format: str, label: str) -> pd.DataFrame:
    """A user's CSV, TSV, JSONL or Parquet file as a frame; an unreadable file is one InputError."""
    if file_format in ("csv", "tsv"):
        text = decode_utf8(Path(path).read_bytes(), label, "re-save the file as UTF-8")
        try:
            return pd.read_csv(
                StringIO(text), sep="\t" if file_format == "tsv" else ",", dtype=str, keep_default_na=False
            )
        except pd.errors.ParserError as error:
            raise InputError(
                f"{label}: not a well-formed {file_format.upper()} file ({' '.join(str(error).split())}); "
                "fix: repair or re-export the file"
            ) from error
    try:
        if file_format == "jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        return pd.read_parquet(path)
    except (ValueError, OSError) as error:
        raise InputError(
            f"{label}: not a readable {file_format} file ({' '.join(str(error).split())[:200]}); "
            "fix: repair or re-export the file"
        ) from error


def load_table(
    path: str | Path,
    name: str,
    *,
    columns: Mapping,
    criteria: Mapping[str, str | list[str]],
    file_format: str | None = None,
    layout: str = "wide",
    scale: Sequence[float] | None = None,
    integer: bool = False,
) -> TextDataset:
    """The user's own rated stories in one of `storyeval.text.layouts`' layouts.

    `columns` maps story_id, story and optionally prompt_id, prompt, system, reference and rater (and, layout
    long, criterion and score) to the file's column names; `criteria` maps each human criterion to its numeric
    column (a list of per-rater columns, or layout long the criterion column's value). Ratings are checked
    against `scale` [min, max] and `integer`. Prompt ids are numbered by first appearance. Where stories have
    both prompts and systems, each prompt must have one story of each system (the story level correlates across
    systems within a prompt, Chhun et al. 2022).
    """
    label = f"dataset {name}: {path}"
    frame = read_table_file(path, table_format(path, file_format), label)
    if frame.empty:
        raise InputError(f"{label}: no data rows; fix: export the rated stories into the file")
    keys = ("story_id", "prompt_id", "prompt", "system", "story", "reference", "rater")
    keys += ("criterion", "score") if layout == "long" else ()
    mapped = {key: columns[key] for key in keys if columns.get(key)}
    by_criterion = [] if layout == "long" else [(f"criteria.{name}", column) for name, value in criteria.items()
                                                for column in _as_list(value)]
    rating_columns = [column for _, column in by_criterion]
    for key, column in [*mapped.items(), *by_criterion]:
        if column not in frame.columns:
            raise InputError(
                f"{label} has no column {column!r} (datasets.{name}.columns.{key}); fix: name one of "
                f"its columns there: {', '.join(map(str, frame.columns[:12]))}"
            )
    if layout == "long":
        frame, criteria = layouts.long_to_wide(frame, mapped, criteria, label, scale, integer)
        del mapped["criterion"], mapped["score"]
    elif any(isinstance(value, list) for value in criteria.values()):
        if "rater" in mapped:
            raise InputError(f"{label}: per-rater criteria columns and a rater column (datasets.{name}.columns.rater) "
                             "are two ways to name raters; fix: use one of them")
        layouts.check_ratings(frame, rating_columns, label, scale, integer)
        frame, criteria = layouts.per_rater_to_wide(frame, mapped, {c: _as_list(v) for c, v in criteria.items()}, label)
        mapped["rater"] = layouts.RATER
    else:
        layouts.check_ratings(frame, rating_columns, label, scale, integer)
        if "rater" in mapped:
            layouts.refuse_repeats(frame, [mapped["story_id"], mapped["rater"]], label, "story and rater")
    return rated_texts(frame, name, label, mapped, criteria)


def _as_list(value: str | list[str]) -> list[str]:
    return list(value) if isinstance(value, list) else [value]


def rated_texts(frame: pd.DataFrame, name: str, label: str, mapped: Mapping[str, str],
                criteria: Mapping[str, str]) -> TextDataset:
    """One row per story (or per story and rater), criteria as numeric columns -> the dataset's tables."""
    text = frame[list(dict.fromkeys(mapped.values()))].astype("str")
    ratings = rating_values(frame, criteria, label)
    ids = text[mapped["story_id"]]
    per_story = text.assign(_id=ids).drop_duplicates("_id")
    for key in ("story", "prompt", "system", "reference", "prompt_id"):
        if key in mapped and (text.assign(_id=ids).groupby("_id")[mapped[key]].nunique(dropna=False) > 1).any():
            raise InputError(
                f"{label}: a story id has rows with two different values in column {mapped[key]!r}; "
                f"fix: one {key} per story id (column {mapped['story_id']!r})"
            )
    if "rater" not in mapped and ids.duplicated().any():
        raise InputError(
            f"{label}: story id {ids[ids.duplicated()].iloc[0]!r} is on two rows; fix: one row per "
            f"story, or name the rater column under datasets.{name}.columns.rater"
        )
    absent = pd.Series(np.nan, index=per_story.index, dtype="str")
    grouping = per_story[mapped["prompt_id"]] if "prompt_id" in mapped else per_story.get(mapped.get("prompt"))
    texts = pd.DataFrame(
        {
            "story_id": per_story["_id"],
            "prompt_id": prompt_ids(grouping) if grouping is not None else pd.array([pd.NA] * len(per_story), "Int64"),
            "system": per_story[mapped["system"]] if "system" in mapped else absent,
            "prompt": per_story[mapped["prompt"]] if "prompt" in mapped else absent,
            "story": per_story[mapped["story"]],
            "reference": per_story[mapped["reference"]] if "reference" in mapped else absent,
        }
    )
    if grouping is not None and "system" in mapped:
        check_grid(texts, label, mapped)
    if not criteria:
        return TextDataset(name, finish(name, texts))
    long = ratings.assign(story_id=ids.astype(str), worker=text[mapped["rater"]] if "rater" in mapped else "mean")
    long = long.melt(id_vars=["story_id", "worker"], var_name="criterion", value_name="rating")
    scores = long.groupby(["story_id", "criterion"], sort=True)["rating"].mean().rename("score").reset_index()
    long = long[["story_id", "criterion", "worker", "rating"]].sort_values(["story_id", "criterion", "worker"])
    return TextDataset(name, finish(name, texts), scores, long.reset_index(drop=True) if "rater" in mapped else None)


def rating_values(frame: pd.DataFrame, criteria: Mapping[str, str], label: str) -> pd.DataFrame:
    """The criteria columns as finite numbers, named by criterion."""
    values = layouts.check_ratings(frame, list(criteria.values()), label, None, False)
    return values.rename(columns={column: criterion for criterion, column in criteria.items()})


def check_grid(texts: pd.DataFrame, label: str, mapped: Mapping[str, str]) -> None:
    """One story per prompt and system, every system on every prompt."""
    counts = texts.groupby(["prompt_id", "system"]).size().unstack(fill_value=0)
    if (counts != 1).any(axis=None):
        prompt, system = counts.stack()[counts.stack() != 1].index[0]
        prompt_value = texts.loc[texts["prompt_id"] == prompt, "prompt"].iloc[0]
        shown = prompt_value if isinstance(prompt_value, str) else f"#{prompt}"
        raise InputError(
            f"{label}: prompt {shown[:40]!r} has {counts.at[prompt, system]} stories of system {system!r} "
            f"(columns {mapped.get('prompt_id', mapped.get('prompt'))!r}, {mapped['system']!r}); fix: one "
            "story per prompt and system, or leave system (or the prompt) out of the columns map"
        )


def subset_prompts(texts: pd.DataFrame, human: pd.DataFrame | None, max_prompts: int | None):
    """The stories of the first `max_prompts` prompts (all when None), and their human scores."""
    if max_prompts is None or texts["prompt_id"].isna().all():
        return texts, human
    kept = texts[texts["prompt_id"] < max_prompts].reset_index(drop=True)
    kept.attrs = dict(texts.attrs)
    return kept, None if human is None else human[human["story_id"].isin(kept["story_id"])].reset_index(drop=True)
