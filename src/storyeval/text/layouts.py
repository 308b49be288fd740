"""The layouts users' rating files come in, checked and brought to one rating a row: what
`storyeval.text.datasets.load_table` reads, file by file.

- wide: one row per story, or per story and rater (`columns.rater`), a column per criterion.
- long: one row per story, rater, criterion and score, as crowdsourcing platforms export (`columns.criterion`,
  `columns.score`); `columns.criteria` lists the criteria to keep (values of the criterion column), by default
  every value the column holds.
- per-rater columns (wide, no rater column): a criterion maps to a list of columns, one per rater
  (`criteria: {Flow: [r1_flow, r2_flow]}`); the k-th column of every criterion is rater k.
- one criterion a file (a file part's `criterion: Name`): every row rates that criterion, in column
  `columns.score`; crowdsourcing tasks export one such file per criterion.

An empty cell is a rating nobody gave: raters may differ from criterion to criterion and from story to story.
Every rating given is a finite number, inside the declared `scale` [min, max] (and an integer where
`integer`); each failure is one line naming the file, the data row and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError, quoted

LAYOUTS = ("wide", "long")
RATING_COLUMNS = ["_row", "story_id", "rater", "criterion", "rating"]  # what `part_ratings` returns


def criterion_columns(columns: Mapping) -> dict[str, str | list[str]]:
    """{criterion: column, or list of per-rater columns} of a columns map, whose `criteria` is a list of columns
    or a {name: column(s)} map."""
    criteria = columns.get("criteria") or {}
    return dict(criteria) if isinstance(criteria, Mapping) else {name: name for name in criteria}


def blank(values: pd.Series) -> np.ndarray:
    """Cells that hold no rating: empty (CSV) or null (JSONL, Parquet)."""
    return (values.isna() | (values.astype(str).str.strip() == "")).to_numpy()


def check_ratings(frame: pd.DataFrame, cells: Sequence[str], label: str, scale: Sequence[float] | None,
                  integer: bool) -> pd.DataFrame:
    """The rating columns `cells` of `frame` as numbers (NaN where a cell is empty: no rating), each given one
    finite, on the scale and integer where declared."""
    values = pd.DataFrame({column: pd.to_numeric(frame[column], errors="coerce") for column in cells},
                          index=frame.index)
    for column in cells:
        numbers = values[column].to_numpy(dtype=float)
        given = ~blank(frame[column])
        problems = [
            (given & ~np.isfinite(numbers), "is not a number",
             "correct it, or leave the cell empty where no rating was given"),
            (np.isfinite(numbers) & (numbers % 1 != 0) if integer else None, "is not an integer",
             "correct it, or drop integer: true from the dataset entry"),
            ((numbers < scale[0]) | (numbers > scale[1]) if scale else None,
             f"is outside the scale [{scale[0]:g}, {scale[1]:g}]" if scale else "",
             "correct the rating, or widen the dataset's scale: [min, max]"),
        ]
        for bad, what, fix in problems:
            rows = np.flatnonzero(bad) if bad is not None else []
            if len(rows):
                raise InputError(f"{label}: {quoted(frame[column].iloc[rows[0]])} in column {column!r}, data row "
                                 f"{rows[0] + 1}, {what} ({len(rows)} such cells); fix: {fix}")
    values[~np.isfinite(values.to_numpy(dtype=float))] = np.nan
    return values


def long_criteria(frame: pd.DataFrame, kind: str, criteria: Mapping[str, str], label: str) -> dict[str, str]:
    """{value of the criterion column: criterion name}: those `criteria` lists, or every value the column holds
    (in order of first appearance) when it lists none."""
    names = frame[kind].astype(str)
    if not criteria:
        return {value: value for value in pd.unique(names)}
    wanted = {str(value): name for name, value in criteria.items()}
    missing = sorted(set(wanted) - set(names))
    if missing:
        raise InputError(f"{label}: no row has {quoted(missing[0])} in column {kind!r}; fix: list only criteria it "
                         f"holds under columns.criteria: {', '.join(sorted(set(names))[:12])}")
    return wanted


def part_ratings(frame: pd.DataFrame, mapped: Mapping[str, str], criteria: Mapping[str, str | list[str]],
                 layout: str, label: str, scale, integer: bool, constant: str | None = None) -> pd.DataFrame:
    """One file's ratings, one a row (RATING_COLUMNS: data row, story id, rater or None, criterion name,
    rating); empty cells, ratings nobody gave, are left out."""
    ids = frame[mapped["story_id"]].astype(str)
    raters = frame[mapped["rater"]].astype(str) if "rater" in mapped else pd.Series(None, frame.index, object)
    rows = pd.Series(np.arange(1, len(frame) + 1), index=frame.index)

    def rated(values: pd.Series, criterion, rater: pd.Series = raters) -> pd.DataFrame:
        return pd.DataFrame({"_row": rows, "story_id": ids, "rater": rater, "criterion": criterion,
                             "rating": values})

    if constant is not None:
        parts = [rated(check_ratings(frame, [mapped["score"]], label, scale, integer)[mapped["score"]], constant)]
    elif layout == "long":
        kind, score = mapped["criterion"], mapped["score"]
        wanted = long_criteria(frame, kind, criteria, label)
        kept = frame[kind].astype(str).isin(wanted)
        values = check_ratings(frame[kept], [score], label, scale, integer)[score]
        parts = [rated(values, frame.loc[kept, kind].astype(str).map(wanted)).loc[kept[kept].index]]
    elif any(isinstance(value, list) for value in criteria.values()):
        counts = {len(as_list(columns)) for columns in criteria.values()}
        if len(counts) != 1:
            raise InputError(f"{label}: the per-rater column lists have different lengths ({sorted(counts)}); fix: "
                             "list one column per rater for every criterion, in the same rater order")
        values = check_ratings(frame, [c for columns in criteria.values() for c in as_list(columns)], label, scale,
                               integer)
        parts = [rated(values[as_list(columns)[k]], name, pd.Series(f"rater{k + 1}", frame.index))
                 for k in range(counts.pop()) for name, columns in criteria.items()]
    else:
        values = check_ratings(frame, list(criteria.values()), label, scale, integer)
        parts = [rated(values[column], name) for name, column in criteria.items()]
    if not parts:
        return pd.DataFrame(columns=RATING_COLUMNS)
    ratings = pd.concat(parts, ignore_index=True).sort_values("_row", kind="stable")
    return ratings[ratings["rating"].notna()].reset_index(drop=True)


def as_list(value: str | list[str]) -> list[str]:
    return list(value) if isinstance(value, list) else [value]
