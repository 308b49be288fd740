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

import numbers
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError, quoted
from storyeval.limits import ABSURD

# Every text dataset's one table (storyeval.text.datasets), and the file types of the user's own.
TEXT_COLUMNS = ["story_id", "prompt_id", "system", "prompt", "story", "reference"]
TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet", ".json": "json",
                 ".xlsx": "xlsx", ".ods": "ods"}

LAYOUTS = ("wide", "long")
RATING_COLUMNS = ["_row", "story_id", "rater", "criterion", "rating"]  # what `part_ratings` returns


def criterion_columns(columns: Mapping) -> dict[str, str | list[str]]:
    """{criterion: column, or list of per-rater columns} of a columns map, whose `criteria` is a list of columns
    or a {name: column(s)} map."""
    criteria = columns.get("criteria") or {}
    return dict(criteria) if isinstance(criteria, Mapping) else {name: name for name in criteria}


GAPS = ("", "na", "nan", "null", "#n/a")  # written for "no rating" (case aside; #N/A: a spreadsheet's NA()): a gap


def blank(values: pd.Series) -> np.ndarray:
    """Cells that hold no rating: empty (CSV, a spreadsheet), null (JSON, Parquet) or a word for none (GAPS)."""
    return (values.isna() | values.astype(str).str.strip().str.lower().isin(GAPS)).to_numpy()


def place(frame: pd.DataFrame, column: str, position: int) -> str:
    """Where the cell of `frame`'s row at `position` in `column` is in its file: the reader's own address (a
    spreadsheet's cell, a JSON record's path: `frame.attrs["address"]`), else the column and data row."""
    address = frame.attrs.get("address")
    if address is not None:
        return address(frame.index[position], column)
    rows = frame.attrs.get("rows")
    return f"column {column!r}, data row {rows[frame.index[position]] if rows is not None else position + 1}"


def shown(cell) -> str:
    """A cell as a message quotes it: a number as written (7, not np.float64(7.0)), text as it is."""
    return f"{cell:g}" if isinstance(cell, numbers.Real) and not isinstance(cell, bool) else str(cell)


NON_FINITE = ("inf", "infinity")  # what float() reads as an infinity, signs aside (nan is a gap: GAPS)
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
        whole = np.where(finite, numbers, 0)  # masked by `finite` below: a gap is on every scale
        problems = [
            (comma, "has a decimal comma", 'add decimal: "," to the dataset\'s entry, or re-export the file with '
             "decimal points"),
            (unread, "is not a number", "correct it, or leave the cell empty where no rating was given"),
            (given & ~finite, "is non-finite, which no rating is", "give the rating, or leave the cell empty "
             "where no rating was given"),
            (finite & (np.abs(whole) > ABSURD), f"is beyond {ABSURD:g} in size, which no rating is",
             "correct it (declare scale: [min, max] in the dataset's entry to have every rating checked)"),
            (finite & (whole % 1 != 0) if integer else None, "is not an integer",
             "correct it, or drop integer: true from the dataset entry"),
            (finite & ((whole < scale[0]) | (whole > scale[1])) if scale else None,
             f"is outside the scale [{scale[0]:g}, {scale[1]:g}]" if scale else "",
             "correct the rating, leave the cell empty where no rating was given, or widen the dataset's scale: "
             "[min, max] if ratings run beyond it"),
        ]
        for bad, what, fix in problems:
            rows = np.flatnonzero(bad) if bad is not None else []
            if len(rows):
                raise InputError(f"{label}: {quoted(shown(frame[column].iloc[rows[0]]))} in "
                                 f"{place(frame, column, rows[0])}, "
                                 f"{what} ({len(rows)} such cells); fix: {fix}")
    values[~np.isfinite(values.to_numpy(dtype=float))] = np.nan
    return values


def far_out(ratings: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Which of one criterion's `ratings` (NaN: none given) lie over OUTLIER interquartile ranges outside its
    quartiles (where the quartiles meet, |median| or 1 stands for the range), and the two quartiles."""
    low, median, high = np.nanpercentile(ratings, [25, 50, 75])
    spread = (high - low) or abs(median) or 1.0
    return (ratings > high + OUTLIER * spread) | (ratings < low - OUTLIER * spread), low, high


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
        outside, low, high = far_out(group["rating"].to_numpy(dtype=float))
        far += [(row, criterion, low, high) for _, row in group[outside].iterrows()]
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
    rating); empty cells, ratings nobody gave, are rows with a NaN rating (`gaps` counts them). A rating
    with no rater id (an empty cell, a JSON null) is refused: a person's ratings are what per-rater analyses
    compare, and an id-less one would fall out of them unseen."""
    ids = frame[mapped["story_id"]].astype(str)
    raters = pd.Series(None, frame.index, object)
    if "rater" in mapped:
        missing = np.flatnonzero(blank(frame[mapped["rater"]]))
        if missing.size:
            raise InputError(f"{label}: no rater id in {place(frame, mapped['rater'], missing[0])} ({missing.size} "
                             "such rows): a rating needs its rater; fix: give each such row its rater's id (one the "
                             "file names nowhere else, e.g. unknown-1, where the rater is unknown), or remove the row")
        raters = frame[mapped["rater"]].astype(str)
    rows = pd.Series(frame.attrs.get("rows", np.arange(1, len(frame) + 1)), index=frame.index)

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
    return pd.concat(parts, ignore_index=True).sort_values("_row", kind="stable").reset_index(drop=True)


def gaps(rated: pd.DataFrame) -> str | None:
    """The phrase of a dataset's start-up line that counts its gaps (`part_ratings`' rows with a NaN rating)
    per criterion, or None where there are none."""
    counts = rated.groupby("criterion", sort=False)["rating"].agg(lambda values: (values.isna().sum(), len(values)))
    stated = [f"{criterion} {missing} of {cells}" for criterion, (missing, cells) in counts.items() if missing]
    return (f"gaps (empty, null, NA or NaN ratings: no rating given, left out of the means): {', '.join(stated)} "
            "rating cells") if stated else None


def as_list(value: str | list[str]) -> list[str]:
    return list(value) if isinstance(value, list) else [value]
