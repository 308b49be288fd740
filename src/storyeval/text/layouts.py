"""The layouts users' rating files come in, checked and brought to one row per story (and rater), a column per
criterion: what `storyeval.text.datasets.load_table` reads.

- wide: one row per story, or per story and rater (`columns.rater`), a column per criterion.
- long: one row per story, rater, criterion and score, as crowdsourcing platforms export (`columns.criterion`,
  `columns.score`); `columns.criteria` lists the criteria to keep (values of the criterion column).
- per-rater columns (wide, no rater column): a criterion maps to a list of columns, one per rater
  (`criteria: {Flow: [r1_flow, r2_flow]}`); the k-th column of every criterion is rater k.

Every rating is a finite number, inside the declared `scale` [min, max] (and an integer where `integer`), and
no rater rates a story on a criterion twice; each failure is one line naming the file, the data row and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError

LAYOUTS = ("wide", "long")
RATER = "_rater"  # the rater column of a reshaped frame (long layout, per-rater columns)


def criterion_columns(columns: Mapping) -> dict[str, str | list[str]]:
    """{criterion: column, or list of per-rater columns} of a columns map, whose `criteria` is a list of columns
    or a {name: column(s)} map."""
    criteria = columns.get("criteria") or {}
    return dict(criteria) if isinstance(criteria, Mapping) else {name: name for name in criteria}


def check_ratings(frame: pd.DataFrame, cells: Sequence[str], label: str, scale: Sequence[float] | None,
                  integer: bool) -> pd.DataFrame:
    """The rating columns `cells` of `frame` as numbers, each finite, on the scale and integer where declared."""
    values = pd.DataFrame({column: pd.to_numeric(frame[column], errors="coerce") for column in cells},
                          index=frame.index)
    for column in cells:
        numbers = values[column].to_numpy(dtype=float)
        problems = [
            (~np.isfinite(numbers), "is not a number", "rate every story on every criterion"),
            (np.isfinite(numbers) & (numbers % 1 != 0) if integer else None, "is not an integer",
             "correct it, or drop integer: true from the dataset entry"),
            ((numbers < scale[0]) | (numbers > scale[1]) if scale else None,
             f"is outside the scale [{scale[0]:g}, {scale[1]:g}]" if scale else "",
             "correct the rating, or widen the dataset's scale: [min, max]"),
        ]
        for bad, what, fix in problems:
            rows = np.flatnonzero(bad) if bad is not None else []
            if len(rows):
                raise InputError(f"{label}: {frame[column].iloc[rows[0]]!r} in column {column!r}, data row "
                                 f"{rows[0] + 1}, {what} ({len(rows)} such cells); fix: {fix}")
    return values


def refuse_repeats(frame: pd.DataFrame, keys: list[str], label: str, what: str) -> None:
    """No two rows share `keys` (a rater rating one story twice): one line with both data rows."""
    repeated = frame.duplicated(keys, keep=False)
    if repeated.any():
        rows = np.flatnonzero(repeated)
        first = frame.iloc[rows[0]]
        second = next(row for row in rows[1:] if (frame.iloc[row][keys] == first[keys]).all())
        same = frame.iloc[second].equals(first)
        raise InputError(
            f"{label}: data rows {rows[0] + 1} and {second + 1} {'repeat' if same else 'disagree on'} {what} "
            f"({', '.join(f'{key} {first[key]!r}' for key in keys)}); fix: keep one row per {what}"
        )


def long_to_wide(frame: pd.DataFrame, mapped: Mapping[str, str], criteria: Mapping[str, str], label: str,
                 scale, integer: bool) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rows of (story, rater, criterion, score) -> a row per story and rater, a column per kept criterion."""
    kind, score = mapped["criterion"], mapped["score"]
    wanted = {str(value): name for name, value in criteria.items()}
    names = frame[kind].astype(str)
    if not wanted:
        raise InputError(f"{label}: layout long needs the criteria to keep; fix: list values of column {kind!r} under "
                         f"columns.criteria (found: {', '.join(sorted(set(names))[:12])})")
    missing = sorted(set(wanted) - set(names))
    if missing:
        raise InputError(f"{label}: no row has {missing[0]!r} in column {kind!r}; fix: list only criteria it holds "
                         f"under columns.criteria: {', '.join(sorted(set(names))[:12])}")
    kept = frame[names.isin(wanted)]
    refuse_repeats(kept, [mapped["story_id"], *([mapped["rater"]] if "rater" in mapped else []), kind], label,
                   "story, rater and criterion")
    check_ratings(kept, [score], label, scale, integer)
    keys = [column for key, column in mapped.items() if key not in ("criterion", "score")]
    wide = kept.assign(**{kind: names[names.isin(wanted)].map(wanted)}).pivot(index=keys, columns=kind, values=score)
    wide = wide.loc[kept.set_index(keys).index.unique()]  # the file's order: systems in order of first appearance
    gaps = wide.isna()
    if gaps.any(axis=None):
        row = np.flatnonzero(gaps.any(axis=1))[0]
        raise InputError(f"{label}: story {wide.index[row][0]!r} has no {gaps.columns[gaps.iloc[row]][0]!r} row"
                         f"{' for rater ' + repr(wide.index[row][-1]) if 'rater' in mapped else ''}; fix: rate every "
                         "story on every listed criterion, or list fewer criteria")
    return wide.reset_index(), {name: name for name in criteria}


def per_rater_to_wide(frame: pd.DataFrame, mapped: Mapping[str, str], criteria: Mapping[str, list[str]],
                      label: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rows of a story with a column per rater and criterion -> a row per story and rater (rater k = position k)."""
    counts = {len(columns) for columns in criteria.values()}
    if len(counts) != 1:
        raise InputError(f"{label}: the per-rater column lists have different lengths ({sorted(counts)}); fix: list "
                         "one column per rater for every criterion, in the same rater order")
    refuse_repeats(frame, [mapped["story_id"]], label, "story (per-rater columns)")
    keys = list(dict.fromkeys(mapped.values()))
    parts = [frame[keys].assign(**{RATER: f"rater{k + 1}"}, **{name: frame[columns[k]] for name, columns in
                                                                  criteria.items()})
             for k in range(counts.pop())]
    return pd.concat(parts, ignore_index=True), {name: name for name in criteria}
