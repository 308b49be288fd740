"""The reproduction audit of the built-in datasets' papers: each number a kind module declares as printed
(`storyeval.datasets.base.Printed`) beside storyeval's value in the dataset's results, graded at the printed
precision as the HANNA audit grades (storyeval.audit.grade_number); a deviation is explained only by the module's
note, which says what was tried and what the released files give."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from storyeval.audit import STATUSES, decimals, grade_number
from storyeval.datasets.base import Printed

COLUMNS = ["dataset", "paper", "table", "item", "paper_value", "storyeval", "precision", "status", "explanation",
           "result"]


def result_files(dataset: str, printed: tuple[Printed, ...]) -> list[str]:
    """The result files (under results/) that a dataset's printed numbers are compared with."""
    return list(dict.fromkeys(f"results/{dataset}/{number.result}" for number in printed))


def ours(number: Printed, table: pd.DataFrame) -> float | None:
    """storyeval's value of a printed number: the one row of `table` that `number.where` selects, scaled."""
    chosen = pd.Series(True, index=table.index)
    for column, value in number.where.items():
        if column not in table.columns:
            return None
        chosen &= table[column].astype(str) == str(value)
    found = table.loc[chosen, number.column] if number.column in table.columns else pd.Series(dtype=float)
    return float(found.iloc[0]) * number.scale if len(found) == 1 else None


def grade(dataset: str, number: Printed, table: pd.DataFrame) -> dict:
    """One audit row: exact or within the printed precision; else explained by the module's note, or
    unexplained."""
    places = number.places if number.places is not None else decimals([number.value])
    value = ours(number, table)
    graded = grade_number(number.value, value, places)
    if graded == "exact":
        status, why = "exact", ""
    elif graded == "within":
        status, why = "within printed precision", "another rounding rule at the printed precision."
    elif number.note:
        status, why = "explained deviation", number.note
    else:
        status, why = "unexplained", ("no row of the result matches" if value is None else
                                      "no switch, data limit or recipe accounts for it") + "."
    shown = "" if value is None else f"{value:.{places + 2}f}"  # two decimals more than printed
    return {"dataset": dataset, "paper": number.paper, "table": number.table, "item": number.item,
            "paper_value": f"{number.value:.{places}f}", "storyeval": shown,
            "precision": f"{10.0 ** -places:g}", "status": status, "explanation": why,
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


def counts(table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: numbers, and how many of them each status holds."""
    tally = pd.crosstab(table["dataset"], table["status"]).reindex(columns=list(STATUSES), fill_value=0)
    return tally.assign(numbers=tally.sum(axis=1))[["numbers", *STATUSES]].reset_index()


def landing_text(table: pd.DataFrame) -> str:
    """The landing page's line on the datasets' papers: per dataset, exact / within / explained / unexplained."""
    parts = [f"{row['dataset']} {'/'.join(str(row[status]) for status in STATUSES)} of {row['numbers']}"
             for _, row in counts(table).iterrows()]
    return ("**The datasets' papers** (exact / within printed precision / explained / unexplained): "
            + ("; ".join(parts) if parts else "no printed numbers") + ". Each number with its source and reason: "
            "*Datasets' papers audit*.\n")
