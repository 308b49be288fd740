import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

from storyeval.errors import InputError
from storyeval.stats.ranking import borda, borda_points, top_metrics


def test_borda_points_count_metrics_below_and_average_ties():
    points = borda_points(np.array([0.9, 0.1, 0.5, 0.5, np.nan]))
    # NaN lowest (0); 0.1 next (1); the tied 0.5s share ranks 2 and 3 -> 2.5; 0.9 best (4)
    assert points.tolist() == [4.0, 1.0, 2.5, 2.5, 0.0]


def test_borda_points_are_scipy_average_ranks():
    # pandas' rank, not scipy's rankdata: the jobs that rank skip importing scipy.stats; the same numbers.
    rng = np.random.default_rng(7)
    for size in (1, 2, 9, 72):
        values = rng.integers(0, 5, size) / 4.0  # many ties
        assert np.array_equal(borda_points(values), rankdata(values, method="average") - 1.0)


def _table(rows):
    return pd.DataFrame(rows, columns=["level", "coefficient", "y", "x", "r"]).assign(
        order=lambda f: f["x"].map({"a": 0, "b": 1, "c": 2})
    )


def test_borda_sums_points_over_rankings_by_hand():
    table = _table(
        [
            ("story", "kendall", "RE", "a", 0.9),
            ("story", "kendall", "RE", "b", -0.5),
            ("story", "kendall", "RE", "c", 0.1),
            ("story", "pearson", "RE", "a", 0.2),
            ("story", "pearson", "RE", "b", 0.3),
            ("story", "pearson", "RE", "c", -0.8),
        ]
    )
    result = borda(table, {"story": ["story"]}, orientation="absolute").set_index("metric")
    # by |r|: a: 2 + 0, b: 1 + 1, c: 0 + 2 -> all tie at 2: every metric gets rank 1
    assert result["borda"].to_dict() == {"a": 2.0, "b": 2.0, "c": 2.0}
    assert set(result["rank"]) == {1}
    assert (result["rankings"] == 2).all()
    # by r after orientation, b lower-is-better (-r: 0.5, -0.3), so c's -0.8 is now last: a 2 + 2, b 1 + 1, c 0 + 0
    oriented = borda(table.assign(direction=["higher", "lower", "higher"] * 2), {"story": ["story"]})
    assert oriented.set_index("metric")["borda"].to_dict() == {"a": 4.0, "b": 2.0, "c": 0.0}
    with pytest.raises(InputError, match="direction"):
        borda(table, {"story": ["story"]})  # oriented ranks need the registry's direction


def test_released_story_borda_top_three_matches_paper(released, hanna_cubes):
    from storyeval.analysis import BORDA_LEVELS, correlation_table, metric_criterion_table

    human, metrics = hanna_cubes
    table = metric_criterion_table(
        correlation_table(human, metrics, ["story", "system"], ["pearson", "spearman", "kendall"]), released.registry
    )
    counts = borda(table, BORDA_LEVELS, orientation="absolute")  # HANNA ranked by |r|
    story = counts[counts["level"] == "story"].head(3)
    # HANNA Tab. 6, story level: chrF 1237, S3-Pyramid 1198, ROUGE-1 Recall 1186
    assert story["metric"].tolist() == ["chrf", "s3-pyramid", "rouge-1-recall"]
    assert story["borda"].tolist() == pytest.approx([1237, 1198, 1186])
    assert counts.groupby("level")["rankings"].first().to_dict() == {"global": 36, "story": 18, "system": 18}


def test_top_metrics_sorted_by_ranked_r_with_registry_tie_break():
    table = _table(
        [
            ("system", "pearson", "RE", "a", 0.5),
            ("system", "pearson", "RE", "b", -0.5),
            ("system", "pearson", "RE", "c", 0.7),
        ]
    )
    top = top_metrics(table, 2, "absolute")  # |r| of a and b tie at the cut: both kept, b after a by registry order
    assert top["metric"].tolist() == ["c", "a", "b"]
    assert top["ranked_r"].tolist() == pytest.approx([0.7, 0.5, 0.5])
    assert top["rank"].tolist() == [1, 2, 3] and top["tied_rank"].tolist() == [1, 2, 2]
    assert top_metrics(table, 1, "absolute")["metric"].tolist() == ["c"]  # no tie at the cut: k stays
    # b lower-is-better: its r -0.5 is agreement (0.5 after orientation), tied with a and behind it in registry order;
    # c lower-is-better: its r 0.7 is disagreement and ranks last
    oriented = top_metrics(table.assign(direction=["higher", "lower", "lower"]), 3)
    assert oriented["metric"].tolist() == ["a", "b", "c"]
    assert oriented["ranked_r"].tolist() == pytest.approx([0.5, 0.5, -0.7])
