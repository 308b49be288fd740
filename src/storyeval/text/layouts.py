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
Every rating given is a finite number within storyeval.limits.ABSURD in size, inside the declared `scale`
[min, max] (and an integer where `integer`); each failure is one line naming the file, the data row and the fix.
Without a declared scale, start-up states each criterion's range and warns on a rating far outside the bulk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError, quoted
from storyeval.limits import ABSURD

# Every text dataset's one table (storyeval.text.datasets), and the file types of the user's own.
TEXT_COLUMNS = ["story_id", "prompt_id", "system", "prompt", "story", "reference"]
TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet"}

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


NON_FINITE = ("nan", "inf", "infinity")  # what float() reads as NaN or an infinity, signs aside
DECIMAL_COMMA = r"\s*[+-]?\d*,\d+\s*"  # 4,5: a rating written with a decimal comma
OUTLIER = 1000  # interquartile ranges beyond the quartiles: a rating this far from the bulk is a typo or a sentinel


def check_ratings(frame: pd.DataFrame, cells: Sequence[str], label: str, scale: Sequence[float] | None,
                  integer: bool) -> pd.DataFrame:
    """The rating columns `cells` of `frame` as numbers (NaN where a cell is empty: no rating), each one given a
    number, finite, within storyeval.limits.ABSURD in size, on the scale and integer where declared."""
    values = pd.DataFrame({column: pd.to_numeric(frame[column], errors="coerce") for column in cells},
                          index=frame.index)
    for column in cells:
        numbers = values[column].to_numpy(dtype=float)
        finite = np.isfinite(numbers)
        text = frame[column].astype(str).str.strip()
        given = ~blank(frame[column])
        words = text.str.lower().str.lstrip("+-").isin(NON_FINITE).to_numpy()
        unread = given & ~finite & ~np.isinf(numbers) & ~words
        comma = unread & text.str.fullmatch(DECIMAL_COMMA).to_numpy()
        whole = np.where(finite, numbers, 0)
        problems = [
            (comma, "has a decimal comma", 'add decimal: "," to the dataset\'s entry, or re-export the file with '
             "decimal points"),
            (unread, "is not a number", "correct it, or leave the cell empty where no rating was given"),
            (given & ~finite, "is non-finite, which no rating is", "give the rating, or leave the cell empty "
             "where no rating was given"),
            (np.abs(whole) > ABSURD, f"is beyond {ABSURD:g} in size, which no rating is",
             "correct it (declare scale: [min, max] in the dataset's entry to have every rating checked)"),
            ((whole % 1 != 0) & finite if integer else None, "is not an integer",
             "correct it, or drop integer: true from the dataset entry"),
            ((whole < scale[0]) | (whole > scale[1]) if scale else None,
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


def unscaled(rated: pd.DataFrame, files: Sequence[str], name: str) -> tuple[str, str | None]:
    """What start-up says of ratings whose entry declares no scale: their range per criterion (a phrase of the
    dataset's line), and one warning line on ratings far outside their criterion's bulk (beyond OUTLIER
    interquartile ranges from the quartiles; where the quartiles meet, |median| or 1 stands for the range), or
    None. `rated`: `part_ratings`' rows with `_file`, the index into `files`."""
    ranges = rated.groupby("criterion", sort=False)["rating"].agg(["min", "max"])
    stated = ", ".join(f"{criterion} {low:g} to {high:g}" for criterion, (low, high) in ranges.iterrows())
    phrase = (f"ratings with no declared scale: {stated}"
              f" (declare datasets.{name}.scale: [min, max] to have every rating checked)")
    far = []
    for criterion, group in rated.groupby("criterion", sort=False):
        low, median, high = np.percentile(group["rating"].to_numpy(dtype=float), [25, 50, 75])
        spread = (high - low) or abs(median) or 1.0
        outside = group[(group["rating"] > high + OUTLIER * spread) | (group["rating"] < low - OUTLIER * spread)]
        far += [(row, criterion, low, high) for _, row in outside.iterrows()]
    if not far:
        return phrase, None
    row, criterion, low, high = min(far, key=lambda found: (found[0]["_file"], found[0]["_row"]))
    return phrase, (f"warning: dataset {name}: {files[row['_file']]} data row {row['_row']}: rating "
                    f"{row['rating']:g} on {quoted(criterion)} lies over {OUTLIER:,} interquartile ranges outside "
                    f"the bulk of its ratings (quartiles {low:g} and {high:g}; {len(far)} such ratings): "
                    "correlations and means include it; fix: correct it, or declare "
                    f"datasets.{name}.scale: [min, max] to have ratings outside it refused")


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
