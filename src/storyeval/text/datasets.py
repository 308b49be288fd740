"""Text datasets normalised to one table: story_id, prompt_id, system, prompt, story, reference.

Every loader cleans prompts, stories and references with `storyeval.text.clean`
(the same cleaning for every metric), refuses empty texts, and returns a
TextDataset whose `texts.attrs["dataset"]` names the dataset for error messages.
Story ids follow `storyeval.data.hanna.story_id` (`p007-human`) where a story has
a prompt and a system, so computed scores line up with HANNA's released ones.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.criteria import CRITERIA
from storyeval.data.csvfile import decode_utf8, read_csv_strings
from storyeval.data.hanna import story_id
from storyeval.errors import InputError, quoted
from storyeval.limits import check_cells, check_lines, check_text
from storyeval.names import check_labels
from storyeval.pickles import brief, load_restricted
from storyeval.text import folder, layouts, records, sheets, sniff
from storyeval.text.clean import clean_text
from storyeval.text.layouts import TABLE_FORMATS, TEXT_COLUMNS

HUMAN = "Human"
LLM_COLUMNS = ["Prompt", "Human", "Story", "Model"]
# hanna_stories_annotations.csv, one row per (story, rater); README of dig-team/hanna-benchmark-asg.
ANNOTATION_COLUMNS = ["Story ID", "Prompt", "Human", "Story", "Model", *CRITERIA, "Worker ID"]
NAME_COLUMNS = ["Model", "Story ID", "Worker ID"]  # part of story ids or output rows: at most limits.MAX_NAME
STORYER_CRITERION = "Overall"  # StoryER's averaged human preference score in [0, 1] (8 raters)


@dataclass(frozen=True)
class TextDataset:
    name: str
    texts: pd.DataFrame  # TEXT_COLUMNS
    human_scores: pd.DataFrame | None = None  # story_id, criterion, score (rater mean)
    ratings: pd.DataFrame | None = None  # story_id, criterion, worker, rating
    notes: tuple[str, ...] = ()  # what start-up says of the data: phrases of the dataset's line
    warning: str | None = None  # a start-up line of its own (storyeval.text.layouts.unscaled)
    gaps: str | None = None  # the ratings nobody gave, counted per criterion (storyeval.text.layouts.gaps)


def read_utf8_csv(path: str | Path, name: str) -> pd.DataFrame:
    """Read a CSV of strings; an empty, non-UTF-8, damaged or header-only file is one InputError."""
    return read_csv_strings(path, f"dataset {name}: {path}", names=NAME_COLUMNS)


def require_columns(frame: pd.DataFrame, columns: list[str], name: str, path: str | Path) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise InputError(f"dataset {name}: {path} lacks columns {missing}; fix: use the released file")


KEPT_COLUMNS = ("prompt_label",)  # a user's prompt ids as given, where the analyses number them


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
                f"dataset {name}: story {quoted(first)} has an empty {column} after cleaning ({int(empty.sum())} such "
                "rows); fix: remove the story or restore its text"
            )
    if texts["story_id"].duplicated().any():
        raise InputError(
            f"dataset {name}: story id {quoted(texts['story_id'][texts['story_id'].duplicated()].iloc[0])} repeats; "
            "fix: one id per story"
        )
    texts = texts[TEXT_COLUMNS + [column for column in KEPT_COLUMNS if column in texts]].reset_index(drop=True)
    texts.attrs["dataset"] = name
    return texts


def given_prompt_ids(prompts: pd.Series) -> pd.Series:
    """A user's prompt ids as given where they are whole numbers (prompt 7 stays 7 on every page), else numbered
    by first appearance (`prompt_ids`): the analyses need integer ids."""
    numbers = pd.to_numeric(prompts, errors="coerce")
    if numbers.notna().all() and (numbers % 1 == 0).all() and (numbers >= 0).all():
        return numbers.astype("int64")
    return prompt_ids(prompts)


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
    check_labels(pd.unique(frame["Model"]), "system", "column 'Model'", source=f"dataset {name}: {path}",
                 into="story ids")
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
    check_labels(pd.unique(frame["Model"]), "system", "column 'Model'", source=f"dataset {name}: {path}",
                 into="story ids")
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
            raise InputError(f"dataset {name}: {path} item {index} is not a (story, score) pair: {brief(item)}; "
                             "fix: use the released file")
    for index, (story, _) in enumerate(items):
        check_text(story, f"dataset {name}: {path} item {index}", "use the released file")
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
    """One of TABLE_FORMATS' values: what the file's first bytes say where they name a binary format (a workbook
    or Parquet file named .csv is read as what it is, sniff.container), else `file_format` when given, else the
    file's suffix."""
    if Path(path).is_file():
        with open(path, "rb") as handle:
            found = sniff.container(path, handle.read(512))
        if found in ("xlsx", "ods", "parquet"):
            return found
        if found:  # compressed or archived: parse_table_file names it
            return file_format or "csv"
    chosen = file_format or TABLE_FORMATS.get(Path(path).suffix.lower())
    if chosen not in TABLE_FORMATS.values():
        raise InputError(
            f"{path}: not a {', '.join(TABLE_FORMATS)} file; fix: rename it or set format: to one of "
            f"{', '.join(TABLE_FORMATS.values())}"
        )
    return chosen


ENCODING_FIX = ("declare the file's encoding in its dataset entry, e.g. encoding: cp1252 (Windows-1252, as Excel "
                "writes CSV), or re-save the file as UTF-8")
TABLE_TEXT_KEYS = ("story_id", "prompt_id", "prompt", "system", "story", "reference")


def read_table_file(path: str | Path, file_format: str, label: str, encoding: str | None = None,
                    names: Sequence[str] = (), delimiter: str | None = None, key: str = "the dataset's entry"
                    ) -> pd.DataFrame:
    """A user's CSV, TSV, JSONL or Parquet file as a frame; an empty or unreadable file, a CSV or TSV whose header
    another delimiter splits into more columns, or a line or cell over its size limit (storyeval.limits;
    `names`: columns whose cells are names), is one InputError naming the fix (`key`: the config key of the
    file's entry)."""
    frame = parse_table_file(path, file_format, label, encoding, delimiter, key)
    check_cells(frame, label, names)
    return frame


def decode_table(raw: bytes, label: str, encoding: str | None) -> str:
    """A user's text file as text: UTF-8 (a byte-order mark, as Excel writes, dropped) unless its entry declares
    another `encoding`; a byte that the encoding has no character for is one line naming it and the fix."""
    try:
        utf8 = encoding is None or codecs.lookup(encoding).name == "utf-8"
    except LookupError as error:
        raise InputError(f"{label}: encoding {encoding!r} is not a codec Python knows; fix: name one, e.g. cp1252, "
                         "latin-1 or utf-16") from error
    marked = sniff.bom_encoding(raw)
    if marked:  # the file declares its encoding itself
        return decode_declared(raw, label, marked)
    unmarked = sniff.utf16_without_bom(raw)
    if unmarked and not (encoding or "").lower().replace("_", "-").startswith("utf-16"):
        raise InputError(f"{label}: the file is UTF-16 without a byte-order mark (every other byte of its start is "
                         f"0); fix: add encoding: {unmarked} to its dataset entry, or re-save it as UTF-8")
    if utf8 or not raw.strip():
        return decode_utf8(raw, label, ENCODING_FIX).removeprefix("\ufeff")
    return decode_declared(raw, label, encoding)


def decode_declared(raw: bytes, label: str, encoding: str) -> str:
    """`raw` in `encoding`; a byte it has no character for is one line naming its line, offset and value."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputError(f"{label}: line {line} (byte {error.start}) is not {encoding} ({error.reason}): "
                         f"0x{raw[error.start]:02x}; fix: declare the file's own encoding under encoding:, or re-save "
                         "it as UTF-8") from error


DELIMITERS = (",", ";", "\t", "|")  # what spreadsheets export between cells (";" where the decimal mark is ",")


def check_delimiter(text: str, delimiter: str, label: str, key: str) -> None:
    """Refuse a CSV or TSV file whose header another of DELIMITERS splits into more columns than `delimiter`."""
    header = text.split("\n", 1)[0]
    columns = {candidate: len(next(csv.reader([header], delimiter=candidate))) for candidate in DELIMITERS}
    found = max(DELIMITERS, key=columns.get)
    if columns[found] > columns[delimiter]:
        shown = {"\t": "\\t"}
        raise InputError(f"{label}: the delimiter is {found!r}, not {delimiter!r} (line 1, the header, has "
                         f"{columns[found]} columns at {found!r} and {columns[delimiter]} at {delimiter!r}); fix: add "
                         f'delimiter: "{shown.get(found, found)}" to {key}, or re-export the file with '
                         f"{delimiter!r} between cells")


def parse_table_file(path: str | Path, file_format: str, label: str, encoding: str | None = None,
                     delimiter: str | None = None, key: str = "the dataset's entry") -> pd.DataFrame:
    if Path(path).is_file() and not Path(path).stat().st_size:
        raise InputError(f"{label}: the file is empty (0 bytes); fix: export the rated stories into it, a header "
                         f"row first, or correct {key}.path")
    try:
        if file_format == "parquet":
            return pd.read_parquet(path)
        raw = Path(path).read_bytes()
        packed = sniff.container(path, raw[:512])
        if packed in ("gzip", "zip"):
            unpack = "gunzip -k" if packed == "gzip" else "unzip"
            raise InputError(f"{label}: the file is {sniff.WHAT[packed]}, not a plain table; fix: "
                             f"unpack it ({unpack} {Path(path).name}) and give the unpacked file's path: and sha256: "
                             f"in {key}")
        if packed:
            raise InputError(f"{label}: the file is {sniff.WHAT[packed]}, not a {file_format} file; fix: set format: "
                             f"{packed} in {key}, or name the file .{packed}")
        check_lines(raw, label)
        text = decode_table(raw, label, encoding)
        del raw
        if file_format == "jsonl":
            return pd.read_json(StringIO(text), lines=True, dtype=False)
        delimiter = delimiter or ("\t" if file_format == "tsv" else ",")
        check_delimiter(text, delimiter, label, key)
        return pd.read_csv(StringIO(text), sep=delimiter, dtype=str, keep_default_na=False)
    except pd.errors.ParserError as error:
        raise InputError(
            f"{label}: not a well-formed {file_format.upper()} file ({' '.join(str(error).split())}); "
            "fix: repair or re-export the file"
        ) from error
    except (ValueError, OSError) as error:
        if isinstance(error, InputError):
            raise
        raise InputError(
            f"{label}: not a readable {file_format} file ({' '.join(str(error).split())[:200]}); "
            "fix: repair or re-export the file"
        ) from error


def load_table(
    path: str | Path | Sequence[str | Path],
    name: str,
    *,
    columns: Mapping,
    parts: Sequence[Mapping] | None = None,
    file_format: str | None = None,
    encoding: str | None = None,
    layout: str = "wide",
    scale: Sequence[float] | None = None,
    integer: bool = False,
    delimiter: str | None = None,
    decimal: str = ".",
    sheet: str | int | None = None,
    cells: str | None = None,
    raters: Mapping[str, str] | None = None,
    text_folder: Mapping | None = None,
) -> TextDataset:
    """The user's own rated stories, in one file or several (`parts`, the entry's `files:`, one path each), each
    in one of `storyeval.text.layouts`' layouts.

    `columns` maps story_id, story and optionally prompt_id, prompt, system, reference and rater (and, layout
    long, criterion and score) to the file's column names, and `criteria` each human criterion to its numeric
    column (a list of per-rater columns, or layout long the criterion column's value; layout long keeps every
    value when it lists none). A part may override that map (its `columns:`), its format and encoding, and rate
    one criterion throughout (`criterion:`, its ratings in column `score`). The parts are read as one table: a
    story's texts must agree across them, no rater rates a story on a criterion twice, and every story has some
    rating on every criterion; a story's score is the mean of the ratings it has. Ratings are checked against
    `scale` [min, max] and `integer`; without a scale, start-up states each criterion's range and warns on a
    rating far outside the bulk (`layouts.unscaled`). A CSV's `delimiter` (default ","; TSV a tab) and the
    ratings' `decimal` mark ("." or ",") may be set for the entry or a part. Prompt ids are numbered by first
    appearance (integer ids are kept as given). A prompt x system cell may hold any number of stories
    (storyeval.text.fit decides what the analyses make of them). Where story_id and story name one
    column, the stories are numbered story-1, story-2... (zero-padded to one width) in order of first appearance
    (a text is no name: outputs repeat ids).

    A spreadsheet (.xlsx, .ods) is read by `storyeval.text.sheets` (`sheet`, `cells` its range, `raters` its
    blocks of columns per rater), JSON and JSONL by `storyeval.text.records` (columns as paths); `text_folder` (a
    folder, one file a story: `storyeval.text.folder`) gives the stories' texts where no column does. Gaps (empty,
    null, NA, NaN ratings) are counted per criterion in the dataset's notes.
    """
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    parts = list(parts or [{}])
    if len(paths) != len(parts):
        raise InputError(f"dataset {name}: {len(paths)} files for the {len(parts)} parts of datasets.{name}.files; "
                         "fix: pass one path a part, in their order")
    read = [read_part(file, name, index if parts != [{}] else None, {**columns, **(part.get("columns") or {})},
                      layout, part.get("criterion"), part.get("format", file_format), part.get("encoding", encoding),
                      scale, integer, part.get("delimiter", delimiter), part.get("decimal", decimal),
                      {"sheet": part.get("sheet", sheet), "cells": part.get("range", cells),
                       "raters": part.get("raters", raters)})
            for index, (file, part) in enumerate(zip(paths, parts))]
    found = [note for *_, notes in read for note in notes]
    files = [str(file) for file in paths]
    keys = [sorted(set(mapped) & {*TABLE_TEXT_KEYS, "rater"}) for _, _, mapped, *_ in read]
    if any(other != keys[0] for other in keys):
        index = next(index for index, other in enumerate(keys) if other != keys[0])
        raise InputError(f"dataset {name}: {files[0]} maps {', '.join(keys[0])} and {files[index]} maps "
                         f"{', '.join(keys[index])} (datasets.{name}.files); fix: map the same columns in every file")
    text = pd.concat([part.assign(_file=index) for index, (part, *_) in enumerate(read)], ignore_index=True)
    rated = pd.concat([part.assign(_file=index) for index, (_, part, *_) in enumerate(read)], ignore_index=True)
    shared = [index for index, (_, _, mapped, *_) in enumerate(read) if mapped["story_id"] == mapped.get("story")]
    if shared:  # the story is its own id: number the stories instead
        rows = text["_file"].isin(shared)
        stories = pd.unique(text.loc[rows, "story"])
        numbered = dict(zip(stories, (f"story-{k + 1:0{len(str(len(stories)))}d}" for k in range(len(stories)))))
        text.loc[rows, "story_id"] = text.loc[rows, "story"].map(numbered)
        rated.loc[rated["_file"].isin(shared), "story_id"] = rated.loc[rated["_file"].isin(shared), "story_id"].map(
            numbered)
    mapped = dict(read[0][2])
    if text_folder:
        stories, notes = folder.read_folder(text_folder, name)
        text = folder.join_texts(text, stories, files, name)
        mapped.update({key: key for key in stories if key in TABLE_TEXT_KEYS})
        found += notes
    refuse_disagreeing_texts(text, files, name)
    gaps = layouts.gaps(rated)
    rated = rated[rated["rating"].notna()].reset_index(drop=True)
    refuse_duplicates(rated, files, name)
    per_story = text.drop_duplicates("story_id")
    absent = pd.Series(np.nan, index=per_story.index, dtype="str")
    group_key = next((key for key in ("prompt_id", "prompt") if key in mapped), None)
    grouping = per_story[group_key] if group_key else None
    texts = pd.DataFrame(
        {
            "story_id": per_story["story_id"],
            "prompt_id": given_prompt_ids(grouping) if grouping is not None else pd.array([pd.NA] * len(per_story),
                                                                                          "Int64"),
            **{key: per_story[key] if key in mapped else absent for key in ("system", "prompt", "story", "reference")},
        }
    )
    if group_key == "prompt_id":  # ids that are not whole numbers are numbered; the given one stays beside
        texts["prompt_label"] = grouping.astype(str).to_numpy()
    label = f"dataset {name}: {files[0] if len(files) == 1 else ', '.join(files)}"
    criteria = list(dict.fromkeys([name for *_, declared, _ in read for name in declared]
                                  + list(pd.unique(rated["criterion"]))))
    if not criteria:
        return TextDataset(name, finish(name, texts), notes=tuple(found))
    check_labels(criteria, "criterion", f"datasets.{name}.columns.criteria", source=label)
    refuse_unrated(texts["story_id"], criteria, rated, label)
    phrase, warning = layouts.unscaled(rated, files, name) if scale is None else (None, None)
    notes = {"notes": tuple(filter(None, [*found, gaps, phrase])), "warning": warning, "gaps": gaps}
    scores = rated.groupby(["story_id", "criterion"], sort=True)["rating"].mean().rename("score").reset_index()
    if rated["rater"].isna().any():
        return TextDataset(name, finish(name, texts), scores, **notes)
    long = rated.rename(columns={"rater": "worker"})[["story_id", "criterion", "worker", "rating"]]
    return TextDataset(name, finish(name, texts), scores,
                       long.sort_values(["story_id", "criterion", "worker"]).reset_index(drop=True), **notes)


def read_part(path: str | Path, name: str, index: int | None, columns: Mapping, layout: str, constant: str | None,
              file_format: str | None, encoding: str | None, scale, integer: bool, delimiter: str | None = None,
              decimal: str = ".", settings: Mapping | None = None):
    """One file of a table dataset: its text columns by key with each data row's number `_row`, its ratings
    (`layouts.part_ratings`), its columns map by key, the criteria its entry names, and the notes start-up says
    of it; `settings`: a spreadsheet's sheet, cells (range) and raters (`read_frame`)."""
    label = f"dataset {name}: {path}"
    rating_keys = ("score",) if constant else ("criterion", "score") if layout == "long" else ()
    keys = (*TABLE_TEXT_KEYS, "rater", *rating_keys)
    mapped = {key: columns[key] for key in keys if columns.get(key)}
    criteria = {} if constant else layouts.criterion_columns(columns)
    names = [column for key, column in mapped.items()
             if key in ("system", "rater") or (key == "story_id" and column != mapped.get("story"))]
    where = f"datasets.{name}" + ("" if index is None else f".files[{index}]")
    frame, notes, mapped = read_frame(path, table_format(path, file_format), label, where, mapped, criteria, encoding,
                                      names, delimiter, settings or {})
    if frame.empty:
        raise InputError(f"{label}: no data rows; fix: export the rated stories into the file")
    by_criterion = [] if constant or layout == "long" else [
        (f"criteria.{criterion}", column) for criterion, value in criteria.items() for column in layouts.as_list(value)]
    for key, column in [*mapped.items(), *by_criterion]:
        if column not in frame.columns:
            raise InputError(
                f"{label} has no column {quoted(column)} ({where}.columns.{key}); fix: name one of its columns "
                f"there: {', '.join(map(str, frame.columns[:12]))}"
            )
    if decimal == ",":  # 4,5 is 4.5
        for column in [mapped["score"]] if "score" in mapped else [column for _, column in by_criterion]:
            frame[column] = frame[column].map(lambda cell: cell.replace(",", ".") if isinstance(cell, str) else cell)
    per_rater = any(isinstance(value, list) for value in criteria.values())
    if per_rater and "rater" in mapped and layout == "wide":
        raise InputError(f"{label}: per-rater criteria columns and a rater column ({where}.columns.rater) are two "
                         "ways to name raters; fix: use one of them")
    ratings = layouts.part_ratings(frame, mapped, criteria, layout, label, scale, integer, constant)
    text = pd.DataFrame({key: frame[mapped[key]].astype(str) for key in TABLE_TEXT_KEYS if key in mapped})
    text["_row"] = frame.attrs.get("rows", np.arange(1, len(frame) + 1))
    if "rater" not in mapped and not per_rater and layout == "wide" and constant is None:
        repeated = np.flatnonzero(text["story_id"].duplicated().to_numpy())
        if repeated.size:
            story = text["story_id"].iloc[repeated[0]]
            first = int(np.flatnonzero((text["story_id"] == story).to_numpy())[0]) + 1
            raise InputError(f"{label}: story id {quoted(story)} is on data rows {first} and {repeated[0] + 1}; fix: "
                             f"one row per story, or name the rater column under {where}.columns.rater")
    declared = [constant] if constant else [] if layout == "long" else list(criteria)
    return text, ratings, mapped, declared, notes


def read_frame(path: str | Path, file_format: str, label: str, where: str, mapped: Mapping, criteria: Mapping,
               encoding: str | None, names: Sequence[str], delimiter: str | None, settings: Mapping
               ) -> tuple[pd.DataFrame, list[str], dict]:
    """A table file as a frame with the columns `mapped` and `criteria` name, the notes its reader says, and the
    columns map with `rater` where the reader made the raters rows (a spreadsheet's rater blocks, JSON's ratings
    by rater): CSV, TSV and Parquet through `read_table_file`, a spreadsheet through `sheets.read_sheet`, JSON
    and JSONL through `records.read_records` (the columns as paths)."""
    blocks = settings.get("raters")
    if blocks and file_format not in ("xlsx", "ods"):
        raise InputError(f"{label}: {where}.raters declares blocks of spreadsheet columns, and this is a {file_format} "
                         "file; fix: list each criterion's per-rater columns under columns.criteria ({Plot: [r1_plot, "
                         "r2_plot]}), or name a rater column")
    if file_format not in ("xlsx", "ods", "json", "jsonl"):
        return read_table_file(path, file_format, label, encoding, names, delimiter, where), [], dict(mapped)
    rating = [mapped["score"]] if "score" in mapped else [
        column for value in criteria.values() for column in layouts.as_list(value)]
    text_columns = {key: column for key, column in mapped.items() if key != "score"}
    notes = []
    if file_format in ("json", "jsonl"):
        raw = Path(path).read_bytes()
        check_lines(raw, label)
        frame = records.read_records(decode_table(raw, label, encoding), file_format, label, where, text_columns,
                                     rating)
    else:
        frame, notes = sheets.read_sheet(path, file_format, label, where, text_columns, rating, settings.get("sheet"),
                                         settings.get("cells"), blocks)
    if sheets.RATER_COLUMN in frame:
        if "rater" in mapped:
            raise InputError(f"{label}: {where}.columns.rater names a rater column, and the "
                             f"{'rater blocks' if blocks else 'ratings by rater'} name the raters too; fix: use one "
                             "of them")
        mapped = {**mapped, "rater": sheets.RATER_COLUMN}
    check_cells(frame, label, names)
    return frame, notes, dict(mapped)


def refuse_disagreeing_texts(text: pd.DataFrame, files: list[str], name: str) -> None:
    """Each story id has one text, prompt, system and reference over all rows of all files."""
    for key in ("story", "prompt", "system", "reference", "prompt_id"):
        if key not in text:
            continue
        counts = text.groupby("story_id", sort=False)[key].nunique()
        if (counts > 1).any():
            rows = text[text["story_id"] == counts.index[counts > 1][0]]
            first = rows.iloc[0]
            other = rows[rows[key] != first[key]].iloc[0]
            differ = next((index for index, (a, b) in enumerate(zip(first[key], other[key])) if a != b),
                          min(len(first[key]), len(other[key])))
            raise InputError(
                f"dataset {name}: story {quoted(first['story_id'])} has two different {key} values, "
                f"{quoted(first[key])} in {files[first['_file']]} data row {first['_row']} and {quoted(other[key])} "
                f"in {files[other['_file']]} data row {other['_row']} (they differ from character {differ + 1}); "
                f"fix: one {key} per story id"
            )


def refuse_duplicates(rated: pd.DataFrame, files: list[str], name: str) -> None:
    """No rater rates a story on a criterion twice (without raters: no story has two ratings of a criterion):
    one line naming both rows, the story, the rater and the criterion."""
    keys = ["story_id", "rater", "criterion"]
    later = rated.duplicated(keys)
    if not later.any():
        return
    second = rated[later].iloc[0]
    rater = second["rater"]
    same = (rated["story_id"] == second["story_id"]) & (rated["criterion"] == second["criterion"]) & (
        rated["rater"].isna() if rater is None else rated["rater"] == rater)
    first = rated[same].iloc[0]
    if first["_file"] == second["_file"]:
        where = f"{files[first['_file']]}: data rows {first['_row']} and {second['_row']}"
    else:
        where = (f"{files[first['_file']]} data row {first['_row']} and {files[second['_file']]} data row "
                 f"{second['_row']}")
    by = "" if rater is None else f" by rater {quoted(rater)}"
    fix = ("keep one row per story, rater and criterion" if rater is not None else
           f"keep one rating per story and criterion, or name the rater column under datasets.{name}.columns.rater")
    raise InputError(f"dataset {name}: {where} are duplicates: both rate story {quoted(second['story_id'])}{by} on "
                     f"{quoted(second['criterion'])} (ratings {first['rating']:g} and {second['rating']:g}); "
                     f"fix: {fix}")


def refuse_unrated(stories: pd.Series, criteria: list[str], rated: pd.DataFrame, label: str) -> None:
    """Every story has at least one rating on every criterion (its score is their mean)."""
    grid = pd.MultiIndex.from_product([stories, criteria], names=["story_id", "criterion"])
    missing = grid[~grid.isin(pd.MultiIndex.from_frame(rated[["story_id", "criterion"]]))]
    if len(missing):
        story, criterion = missing[0]
        raise InputError(f"{label}: story {quoted(story)} has no rating on {quoted(criterion)} ({len(missing)} such "
                         "story and criterion pairs); fix: add its ratings, remove the story from every file, or leave "
                         "the criterion out")


def check_grid(texts: pd.DataFrame, label: str, mapped: Mapping[str, str]) -> None:
    """One story per prompt and system, every system on every prompt."""
    counts = texts.groupby(["prompt_id", "system"]).size().unstack(fill_value=0)
    if (counts != 1).any(axis=None):
        prompt, system = counts.stack()[counts.stack() != 1].index[0]
        prompt_value = texts.loc[texts["prompt_id"] == prompt, "prompt"].iloc[0]
        shown = prompt_value if isinstance(prompt_value, str) else f"#{prompt}"
        raise InputError(
            f"{label}: prompt {quoted(shown)} has {counts.at[prompt, system]} stories of system {quoted(system)} "
            f"(columns {mapped.get('prompt_id', mapped.get('prompt'))!r}, {mapped['system']!r}); fix: one "
            "story per prompt and system, or leave system (or the prompt) out of the columns map"
        )


def subset_prompts(texts: pd.DataFrame, human: pd.DataFrame | None, max_prompts: int | None):
    """The stories of the first `max_prompts` prompts (all when None), and their human scores."""
    if max_prompts is None or texts["prompt_id"].isna().all():
        return texts, human
    first = pd.unique(texts["prompt_id"].dropna())[:max_prompts]  # in order of appearance: ids may be as given
    kept = texts[texts["prompt_id"].isin(first)].reset_index(drop=True)
    kept.attrs = dict(texts.attrs)
    return kept, None if human is None else human[human["story_id"].isin(kept["story_id"])].reset_index(drop=True)
