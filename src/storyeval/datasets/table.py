"""The user's own rated stories (kind `table`): a file, or files, in `storyeval.text.layouts`' layouts (CSV, TSV,
JSON, JSONL, Parquet, .xlsx, .ods) described by the entry's `columns:` map; what the dataset has follows from
that map."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from storyeval.datasets.base import Dataset
from storyeval.errors import InputError
from storyeval.text import datasets as loaders
from storyeval.text import layouts


def table_parts(entry: Mapping) -> list[Mapping]:
    """The files of a table entry (`files:`), or the one file (`path:`/`url:`) as one part with no settings of
    its own."""
    return list(entry.get("files") or [{}])


def table_criteria(entry: Mapping) -> tuple[str, ...]:
    """The criteria a table entry names: each part's constant `criterion`, or its (merged) columns map's
    criteria; layout long without `columns.criteria` names none (the file's values decide)."""
    columns = entry.get("columns") or {}
    named = [part["criterion"] if part.get("criterion") else
             layouts.criterion_columns({**columns, **(part.get("columns") or {})}) for part in table_parts(entry)]
    return tuple(dict.fromkeys(name for names in named for name in ([names] if isinstance(names, str) else names)))


def table_dataset(entry: Mapping, name: str = "dataset") -> Dataset:
    """The user's own file, or files (CSV, TSV, JSON, JSONL, Parquet, .xlsx, .ods), in `storyeval.text.layouts`'
    layouts as a dataset, its texts in a column or a folder (`texts:`): what it has follows from its columns map."""
    columns = entry.get("columns") or {}
    if not (columns.get("story") or entry.get("texts")):
        raise InputError(f"datasets.{name}.columns.story: missing, and no texts: folder gives the stories; fix: name "
                         "the column that holds each story's text, or declare texts: {path, pattern, sha256}")
    layout = entry.get("layout", "wide")
    if layout not in layouts.LAYOUTS:
        raise InputError(f"datasets.{name}.layout: {layout!r}; fix: use one of {', '.join(layouts.LAYOUTS)}")
    for index, part in enumerate(table_parts(entry)):
        merged = {**columns, **(part.get("columns") or {})}
        needed = ("score",) if part.get("criterion") else ("criterion", "score") if layout == "long" else ()
        missing = [key for key in needed if not merged.get(key)]
        if missing:
            what = (f"files[{index}] rates one criterion, so it" if part.get("criterion") else f"layout {layout}")
            raise InputError(f"datasets.{name}.columns: {what} needs {' and '.join(missing)}; fix: name the columns "
                             f"that hold each row's {' and '.join(missing)}")
    scale = entry.get("scale")
    if scale is not None and not (len(scale) == 2 and scale[0] < scale[1]):
        raise InputError(f"datasets.{name}.scale: {scale!r}; fix: write the rating scale as [min, max], min < max")
    criteria = table_criteria(entry)
    texts = {"story"} | {key for key in ("prompt", "reference") if columns.get(key)}
    load = partial(loaders.load_table, columns=columns, parts=entry.get("files"), file_format=entry.get("format"),
                   encoding=entry.get("encoding"), layout=layout, scale=scale, integer=bool(entry.get("integer")),
                   delimiter=entry.get("delimiter"), decimal=entry.get("decimal", "."), sheet=entry.get("sheet"),
                   cells=entry.get("range"), raters=entry.get("raters"), text_folder=entry.get("texts"))
    per_rater = entry.get("raters") or any(isinstance(value, list) for value in
                                           layouts.criterion_columns(columns).values())
    rated = bool(criteria) or layout == "long"  # layout long: the criterion column's values, read from the file
    raters = (bool(columns.get("rater")) or per_rater) and rated
    layout_of_raters = entry.get("rater_layout", "rater")
    named = (entry.get("texts") or {}).get("pattern", "")  # a folder's file names may give system and prompt
    return Dataset(kind="table", load=load, texts=frozenset(texts), rater_layout=layout_of_raters,
                   prompts=bool(columns.get("prompt_id") or columns.get("prompt") or "{prompt_id}" in named),
                   systems=bool(columns.get("system") or "{system}" in named),
                   raters=raters, criteria=criteria, reference_system=entry.get("reference_system"),
                   criteria_map=entry.get("criteria_map") or {})


KINDS = {"table": table_dataset}
