"""The datasets' papers audit (storyeval.audit_datasets): a printed number found in a result table and graded at
its printed precision; a note alone explains no deviation (storyeval.audit_datasets)."""

import pandas as pd
import pytest

from storyeval.audit_datasets import audit, counts, landing_text
from storyeval.datasets.base import Printed

CORRELATIONS = pd.DataFrame({"kind": ["metric_criterion"] * 3, "level": ["story"] * 3,
                             "coefficient": ["pearson", "spearman", "pearson"], "x": ["bleu", "bleu", "union"],
                             "y": ["Reasonable"] * 3, "r": [0.02994, 0.0320, 0.36874]})


def printed(value, metric="bleu", coefficient="pearson", note="", places=None, scale=1.0):
    return Printed(paper="P", table="Tab. 5, p. 9", item=f"{metric} {coefficient}", value=value,
                   result="released/correlations.csv", column="r",
                   where={"x": metric, "coefficient": coefficient, "level": "story"},
                   note=note, places=places, scale=scale)


@pytest.mark.parametrize(("number", "status"), [
    (printed(0.0299), "exact"),
    (printed(0.03), "exact"),  # two decimals: 0.02994 rounds to 0.03
    (printed(0.0300, places=4), "not reproduced"),  # 0.0299 at the four printed decimals
    (printed(36.87, metric="union", scale=100), "exact"),  # printed in percent
    (printed(0.31, metric="union", note="the released file gives 0.369"), "not reproduced"),  # words, no evidence
    (printed(0.5, metric="meteor"), "not computed"),  # no such row
])
def test_a_printed_number_is_graded_at_its_precision(number, status):
    table = audit({"union-roc": (number,)}, lambda path: CORRELATIONS)
    assert table.loc[0, "status"] == status, table.to_dict("records")
    assert table.loc[0, "result"] == "results/union-roc/released/correlations.csv"


def test_an_unmatched_row_says_so_and_counts_per_dataset():
    numbers = {"a": (printed(0.0299), printed(0.5, metric="meteor")), "b": (printed(0.37, metric="union"),)}
    read = []
    table = audit(numbers, lambda path: read.append(path) or CORRELATIONS)
    assert read == ["results/a/released/correlations.csv", "results/b/released/correlations.csv"]  # once a file
    assert table.loc[1, "explanation"] == "no row of the result holds it."
    tally = counts(table).set_index("dataset")
    assert tally.loc["a", "numbers"] == 2 and tally.loc["a", "exact"] == 1 and tally.loc["a", "not computed"] == 1
    assert tally.loc["b", "exact"] == 1
    assert "a 1/0/0/0/1 of 2; b 1/0/0/0/0 of 1" in landing_text(table)
