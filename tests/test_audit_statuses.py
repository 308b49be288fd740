"""The datasets' audit statuses say what was compared: exact, within (rounding or a printed range), explained only
with evidence that reproduces the printed value, not reproduced, not computed; and each row's reference."""

import numpy as np
import pandas as pd

from storyeval.audit_datasets import STATUSES, audit, counts
from storyeval.datasets.base import Printed

RECIPES = pd.DataFrame({"item": ["ratio claude", "ratio gpt", "alpha ours", "alpha their recipe", "kappa"],
                        "value": [2.83, 12.4, 0.1312, 0.7204, np.nan]})


def number(item, value, **fields):
    return Printed(paper="P", table=fields.pop("table", "abstract"), item=item, value=value,
                   result="paper_recipes.csv", where={"item": item}, **fields)


def graded(*numbers):
    return audit({"d": numbers}, lambda path: RECIPES).set_index("item")


def test_a_range_is_within_range_not_exact():
    """The abstract's "3-10X": 2.83 rounds to 3 at the printed precision, so it lies within the range, and is not
    graded exact against the range's end; 12.4 lies outside it."""
    table = graded(number("ratio claude", 3, printed_range=(3, 10)), number("ratio gpt", 10, printed_range=(3, 10)))
    assert table.loc["ratio claude", "status"] == "within" and table.loc["ratio claude", "paper_value"] == "3-10"
    assert "range 3-10" in table.loc["ratio claude", "explanation"]
    assert table.loc["ratio gpt", "status"] == "not reproduced"
    assert graded(number("ratio claude", 3)).loc["ratio claude", "status"] == "exact"  # what a point value gave


def test_explained_needs_evidence_that_reproduces_the_printed_value():
    note = "Not reproduced: the released file gives 0.13."
    words = graded(number("alpha ours", 0.72, note=note)).loc["alpha ours"]
    assert words["status"] == "not reproduced" and words["explanation"] == note
    shown = graded(number("alpha ours", 0.72, note="their recipe on the count table",
                          evidence={"item": "alpha their recipe"})).loc["alpha ours"]
    assert shown["status"] == "explained" and "alpha their recipe gives 0.7204" in shown["explanation"]
    wrong = graded(number("alpha ours", 0.72, evidence={"item": "ratio gpt"})).loc["alpha ours"]
    assert wrong["status"] == "not reproduced"  # evidence that does not give the printed value explains nothing


def test_not_computed_is_its_own_status_and_references_are_named():
    table = graded(number("kappa", 0.4, note="the paper's kappa per test could not be computed"),
                   number("missing", 0.4), number("alpha ours", 0.13, reference="notebook", table="Tab. 2"),
                   number("ratio claude", 2.83, reference="code", table="Tab. 2"))
    assert table.loc["kappa", "status"] == table.loc["missing", "status"] == "not computed"
    assert table.loc["kappa", "explanation"].startswith("the paper's kappa")
    assert table["reference"].tolist() == ["printed paper", "printed paper", "authors' notebook output",
                                           "authors' code output"]
    per_table = counts(table.reset_index(), ("dataset", "table", "reference")).set_index(["table", "reference"])
    assert per_table.loc[("abstract", "printed paper"), "not computed"] == 2
    assert per_table.loc[("Tab. 2", "authors' notebook output"), "exact"] == 1
    assert list(per_table.columns[-5:]) == list(STATUSES) and per_table["numbers"].sum() == 4
