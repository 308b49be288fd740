"""Nested JSON read by declared paths: a .json file (a list of records, or an object keyed by story id) or a
.jsonl file (a record a line), each column of the entry's `columns:` a dotted path into a record
(`HolisticData.scores`); `@key` is the key a record is filed under in an object keyed by id.

A criterion's path may lead to one rating, or to an object of rater -> rating (or a list: raters 1, 2, ...
by position), as releases with several annotators a story keep them; the raters then become rows, one per story
and rater (a null rating is a gap). A path a record lacks is one line naming the record and the path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pandas as pd

from storyeval.errors import InputError, quoted
from storyeval.text.sheets import RATER_COLUMN

KEY = "@key"  # the path of a record's key in a JSON object keyed by story id
MISSING = object()


def parse(text: str, file_format: str, label: str) -> list[tuple[str, object]]:
    """(record name, record) of a .json or .jsonl file's text; the name says where it is: `record 'id'` (an
    object keyed by id), `record N` (a list) or `line N` (JSONL)."""
    lines = enumerate(text.splitlines(), 1) if file_format == "jsonl" else [(0, text)]
    parsed = []
    for number, line in filter(lambda numbered: numbered[1].strip(), lines):
        try:
            parsed.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as error:
            where = f"line {number}" if number else f"line {error.lineno}, column {error.colno}"
            raise InputError(f"{label}: {where} is not JSON ({error.msg}); fix: repair or re-export the "
                             "file") from error
    if file_format == "jsonl":
        return parsed
    data = parsed[0][1] if parsed else []
    if isinstance(data, Mapping):
        return [(f"record {quoted(key)}", (key, value)) for key, value in data.items()]
    if isinstance(data, list):
        return [(f"record {number}", value) for number, value in enumerate(data, 1)]
    raise InputError(f"{label}: the file holds a {type(data).__name__}, not a list of records or an object of "
                     "records keyed by story id; fix: export the records as one of those")


def lookup(record, path: str):
    """The value at the dotted `path` of `record` (a key holding a dot is found whole first), else MISSING."""
    if isinstance(record, Mapping) and path in record:
        return record[path]
    head, _, rest = path.partition(".")
    if isinstance(record, Mapping) and head in record:
        found = record[head]
    elif isinstance(record, list) and head.isdigit() and int(head) < len(record):
        found = record[int(head)]
    else:
        return MISSING
    return lookup(found, rest) if rest else found


def value(named: tuple[str, object], path: str, label: str, key: str):
    """The value at `path` in a parsed record; a miss is one line naming the record, the path and the fix."""
    name, record = named
    if isinstance(record, tuple):  # (key, record) of an object keyed by id
        if path == KEY:
            return record[0]
        record = record[1]
    elif path == KEY:
        raise InputError(f"{label}: {name}: {KEY} is the key of a record in an object keyed by story id, and this "
                         f"file lists its records; fix: map {key} to the path of the record's id")
    found = lookup(record, path) if isinstance(record, (Mapping, list)) else MISSING
    if found is MISSING:
        held = ", ".join(map(quoted, list(record)[:8])) if isinstance(record, Mapping) else type(record).__name__
        raise InputError(f"{label}: {name} has no {quoted(path)} ({key}; the record holds {held}); fix: correct the "
                         "path (dots between the keys of nested objects), or give the record that value")
    return found


def read_records(text: str, file_format: str, label: str, key: str, text_columns: Mapping[str, str],
                 rating_columns: Sequence[str]) -> pd.DataFrame:
    """One row per record (or per record and rater where a rating path leads to per-rater ratings), a column per
    path: `text_columns` {key: path} as strings, `rating_columns` as the file holds them, and RATER_COLUMN
    where raters became rows. `frame.attrs`: "rows" (the record's number) and "address" (record and path)."""
    records = parse(text, file_format, label)
    rows, origin = [], []
    for number, named in enumerate(records, 1):
        texts = {}
        for column_key, path in text_columns.items():
            found = value(named, path, label, f"{key}.columns.{column_key}")
            if isinstance(found, (Mapping, list)):
                raise InputError(f"{label}: {named[0]}: {quoted(path)} ({key}.columns.{column_key}) holds a "
                                 f"{type(found).__name__}, not a value; fix: map the path to the value inside it")
            texts[path] = "" if found is None else str(found)
        ratings = {path: value(named, path, label, f"{key}.columns.criteria") for path in rating_columns}
        nested = {path: found for path, found in ratings.items() if isinstance(found, (Mapping, list))}
        if nested and len(nested) < len(ratings):
            flat = next(path for path in ratings if path not in nested)
            raise InputError(f"{label}: {named[0]}: {quoted(flat)} holds one rating and {quoted(next(iter(nested)))} "
                             "ratings by rater; fix: map every criterion to ratings by rater, or every one to a "
                             "single rating")
        if not nested:
            rows.append({**texts, **ratings})
            origin.append((number, named[0], None))
            continue
        by_rater = {path: dict(found) if isinstance(found, Mapping) else {f"rater{k + 1}": v for k, v in
                                                                            enumerate(found)}
                    for path, found in nested.items()}
        for rater in dict.fromkeys(rater for found in by_rater.values() for rater in found):
            rows.append({**texts, **{path: found.get(rater) for path, found in by_rater.items()},
                         RATER_COLUMN: str(rater)})
            origin.append((number, named[0], rater))
    frame = pd.DataFrame(rows, columns=list(dict.fromkeys([*text_columns.values(), *rating_columns])) +
                         ([RATER_COLUMN] if any(rater is not None for *_, rater in origin) else []))
    if RATER_COLUMN in frame and frame[RATER_COLUMN].isna().any():
        first = origin[int(frame[RATER_COLUMN].isna().to_numpy().argmax())][1]
        raise InputError(f"{label}: {first} holds single ratings where others hold ratings by rater; fix: give "
                         "every record its ratings in the same shape")
    frame.attrs["rows"] = pd.Series([number for number, *_ in origin])
    frame.attrs["address"] = lambda index, path: (
        f"{origin[index][1]}, {quoted(path)}" + (f".{origin[index][2]}" if origin[index][2] is not None and
                                                 path in rating_columns else ""))
    return frame
