import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, wilcoxon

from storyeval.criteria import CRITERIA
from storyeval.errors import InputError
from storyeval.stats.reanalysis import (
    HOUAIRI_THIOUNN_METRICS,
    coefficient_agreement,
    sum_of_ranks,
    top_k_by_coefficient,
)


@pytest.fixture(scope="module")
def correlations(hanna_correlations) -> pd.DataFrame:
    return hanna_correlations


def long(values: dict[tuple[str, str], list[float]], metrics: list[str], level="system") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "kind": "metric_criterion",
                "level": level,
                "coefficient": coefficient,
                "x": metric,
                "y": criterion,
                "r": r,
                "n": 10,
            }
            for (coefficient, criterion), rs in values.items()
            for metric, r in zip(metrics, rs)
        ]
    )


def test_sum_of_ranks_hand_computed():
    # A: |r| .9 .5 .1 -> ranks 1 2 3; B: |r| .2 .8 .8 -> 3 1.5 1.5; sums 4 3.5 4.5
    table = long({("pearson", "A"): [0.9, -0.5, 0.1], ("pearson", "B"): [-0.2, 0.8, -0.8]}, ["m1", "m2", "m3"])
    result, missing = sum_of_ranks(table, ["m1", "m2", "m3", "m9"], criteria=["A", "B"])
    assert missing == ["m9"]
    assert list(result["metric"]) == ["m2", "m1", "m3"]
    assert list(result["rank_sum"]) == [3.5, 4.0, 4.5] and list(result["rank"]) == [1, 2, 3]
    assert list(result["B"]) == [1.5, 3.0, 1.5]
    assert list(result.columns) == ["level", "coefficient", "metric", "rank_sum", "rank", "A", "B"]


def test_sum_of_ranks_on_hanna_matches_pandas_ranks(correlations):
    table, missing = sum_of_ranks(correlations, HOUAIRI_THIOUNN_METRICS)
    assert missing == [] and len(table) == 2 * 3 * 12
    rows = correlations[(correlations["kind"] == "metric_criterion") & correlations["x"].isin(HOUAIRI_THIOUNN_METRICS)]
    for (level, coefficient), block in rows.groupby(["level", "coefficient"]):
        ranks = block.pivot(index="x", columns="y", values="r").abs().rank(ascending=False, method="average")
        expected = ranks.sum(axis=1)
        got = table[(table["level"] == level) & (table["coefficient"] == coefficient)].set_index("metric")
        assert got["rank_sum"].to_dict() == pytest.approx(expected.to_dict())
        assert got["rank"].to_dict() == expected.rank(method="min").astype(int).to_dict()
        assert got.loc[expected.idxmin(), "rank"] == 1
    with pytest.raises(InputError, match="metrics"):
        sum_of_ranks(correlations, ["bleu", "nope"])


def test_coefficient_agreement_hand_computed():
    # |d| ranks 1..5 with signs + - + + +: W+ = 13, W- = 2; exact two-sided p = 2 * 3/32; same order: tau = 1
    pearson = [-0.5, 0.3, 0.6, 0.7, -0.8]
    spearman = [0.49, 0.32, -0.57, 0.66, 0.75]
    metrics = ["a", "b", "c", "d", "e"]
    table = long({("pearson", "Relevance"): pearson, ("spearman", "Relevance"): spearman}, metrics)
    result = coefficient_agreement(table, pairs=(("pearson", "spearman"),)).iloc[0]
    assert result["n_metrics"] == 5
    assert result["wilcoxon_statistic"] == 2.0 and result["wilcoxon_p"] == pytest.approx(0.1875)
    assert result["kendall_tau"] == pytest.approx(1.0) and result["kendall_p"] == pytest.approx(2 / 120)


def test_coefficient_agreement_matches_scipy(correlations):
    result = coefficient_agreement(correlations)
    assert len(result) == 2 * 6 * 3 and set(result["n_metrics"]) == {72}
    assert list(result["criterion"].unique()) == CRITERIA
    rows = correlations[correlations["kind"] == "metric_criterion"]
    cell = (
        rows[(rows["level"] == "system") & (rows["y"] == "Surprise")]
        .pivot(index="x", columns="coefficient", values="r")
        .abs()
    )
    got = result[
        (result["level"] == "system")
        & (result["criterion"] == "Surprise")
        & (result["coefficient_a"] == "kendall")
        & (result["coefficient_b"] == "pearson")
    ].iloc[0]
    expected_w, expected_tau = wilcoxon(cell["kendall"], cell["pearson"]), kendalltau(cell["kendall"], cell["pearson"])
    assert got["wilcoxon_statistic"] == pytest.approx(expected_w.statistic)
    assert got["wilcoxon_p"] == pytest.approx(expected_w.pvalue)
    assert got["kendall_tau"] == pytest.approx(expected_tau.statistic)
    assert got["kendall_p"] == pytest.approx(expected_tau.pvalue)


def test_top_k_by_coefficient(correlations):
    top = top_k_by_coefficient(correlations, k=5)
    assert set(top["criterion"]) == {"Relevance", "Coherence", "Surprise"} and set(top["level"]) == {"system"}
    assert len(top) >= 3 * 3 * 5
    rows = correlations[(correlations["kind"] == "metric_criterion") & (correlations["level"] == "system")]
    for (coefficient, criterion), block in top.groupby(["coefficient", "criterion"]):
        column = np.sort(rows[(rows["coefficient"] == coefficient) & (rows["y"] == criterion)]["r"].abs())[::-1]
        # the top 5, and every metric tied with the 5th (a tie at the cut is kept whole)
        assert np.allclose(block["abs_r"], column[:len(block)]) and len(block) == np.sum(column >= column[4] - 1e-12)
