"""The reproduction audit of the built-in datasets' papers: each number a kind module declares as printed
(`storyeval.datasets.base.Printed`) beside storyeval's value in the dataset's results, graded at the printed
precision as the HANNA audit grades (storyeval.grading.grade_number). Statuses (STATUSES): exact; within (another
rounding rule at the printed precision, or inside a printed range such as an abstract's "3-10X"); explained (a
deviation for which the module names evidence, a result row that reproduces the printed value another way);
not reproduced (a deviation: the module's note says what was tried); not computed (no result row holds it). Each
row says what its reference is: the printed paper, or the authors' code or notebook output standing in for it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import pandas as pd

from storyeval.datasets.base import Printed
from storyeval.grading import decimals, grade_number

STATUSES = ("exact", "within", "explained", "not reproduced", "not computed")
REFERENCES = {"paper": "printed paper", "code": "authors' code output", "notebook": "authors' notebook output"}
COLUMNS = ["dataset", "paper", "table", "reference", "item", "paper_value", "storyeval", "precision", "status",
           "explanation", "result"]


def result_files(dataset: str, printed: tuple[Printed, ...]) -> list[str]:
    """The result files (under results/) that a dataset's printed numbers are compared with."""
    return list(dict.fromkeys(f"results/{dataset}/{number.result}" for number in printed))


def ours(number: Printed, table: pd.DataFrame, where: Mapping[str, str] | None = None) -> float | None:
    """storyeval's value of a printed number: the one row of `table` that `number.where` (or `where`) selects,
    scaled; None where no single row holds a finite value."""
    chosen = pd.Series(True, index=table.index)
    for column, value in (number.where if where is None else where).items():
        if column not in table.columns:
            return None
        chosen &= table[column].astype(str) == str(value)
    found = table.loc[chosen, number.column] if number.column in table.columns else pd.Series(dtype=float)
    value = float(found.iloc[0]) * number.scale if len(found) == 1 else None
    return value if value is not None and math.isfinite(value) else None


def status_of(number: Printed, value: float | None, places: int, table: pd.DataFrame) -> tuple[str, str]:
    """(status, explanation) of one printed number against storyeval's `value` (module docstring)."""
    if value is None:
        return "not computed", number.note or "no row of the result holds it."
    if number.printed_range is not None:
        low, high = number.printed_range
        if low <= round(value, places) <= high:
            return "within", f"inside the printed range {low:g}-{high:g} at the printed precision. {number.note}"
        return "not reproduced", f"outside the printed range {low:g}-{high:g}. {number.note}"
    graded = grade_number(number.value, value, places)
    if graded == "exact":
        return "exact", ""
    if graded == "within":
        return "within", "another rounding rule at the printed precision."
    if number.evidence:
        shown = ours(number, table, number.evidence)
        if shown is not None and grade_number(number.value, shown, places) in ("exact", "within"):
            where = ", ".join(f"{key} {value}" for key, value in number.evidence.items())
            return "explained", f"{number.note} Evidence: {where} gives {shown:.{places + 2}f}."
    return "not reproduced", number.note or "no switch, data limit or recipe accounts for it."


def grade(dataset: str, number: Printed, table: pd.DataFrame) -> dict:
    """One audit row (COLUMNS)."""
    places = number.places if number.places is not None else decimals([number.value])
    value = ours(number, table)
    status, why = status_of(number, value, places, table)
    shown = "" if value is None else f"{value:.{places + 2}f}"  # two decimals more than printed
    printed = (f"{number.printed_range[0]:g}-{number.printed_range[1]:g}" if number.printed_range
               else f"{number.value:.{places}f}")
    return {"dataset": dataset, "paper": number.paper, "table": number.table,
            "reference": REFERENCES[number.reference], "item": number.item, "paper_value": printed,
            "storyeval": shown, "precision": f"{10.0 ** -places:g}", "status": status, "explanation": why.strip(),
            "result": f"results/{dataset}/{number.result}"}


def audit(printed: Mapping[str, tuple[Printed, ...]], read: Callable[[str], pd.DataFrame]) -> pd.DataFrame:
    """Every dataset's printed numbers graded; `read(path)` reads a result file (once each)."""
    tables = {}
    rows = []
    for dataset, numbers in printed.items():
        for number in numbers:
            path = f"results/{dataset}/{number.result}"
            if path not in tables:
                tables[path] = read(path)
            rows.append(grade(dataset, number, tables[path]))
    return pd.DataFrame(rows, columns=COLUMNS)


def counts(table: pd.DataFrame, by: tuple[str, ...] = ("dataset",)) -> pd.DataFrame:
    """Per dataset (or per `by`, e.g. dataset, table and reference: the summary of each paper table): numbers, and
    how many of them each status holds."""
    keys = list(by)
    if table.empty:
        return pd.DataFrame(columns=[*keys, "numbers", *STATUSES])
    tally = pd.crosstab([table[key] for key in keys], table["status"]).reindex(columns=list(STATUSES), fill_value=0)
    order = table[keys].drop_duplicates().apply(tuple, axis=1).tolist()
    tally = tally.reindex(pd.MultiIndex.from_tuples(order, names=keys) if len(keys) > 1 else
                          pd.Index([key[0] for key in order], name=keys[0]))
    return tally.assign(numbers=tally.sum(axis=1))[["numbers", *STATUSES]].reset_index()


def landing_text(table: pd.DataFrame) -> str:
    """The landing page's line on the datasets' papers: per dataset, the count of each status."""
    parts = [f"{row['dataset']} {'/'.join(str(row[status]) for status in STATUSES)} of {row['numbers']}"
             for _, row in counts(table).iterrows()]
    return (f"**The datasets' papers** ({' / '.join(STATUSES)}): " + ("; ".join(parts) if parts else
            "no printed numbers") + ". Each paper table's counts, then every number with its reference and reason: "
            "*Datasets' papers audit*.\n")
