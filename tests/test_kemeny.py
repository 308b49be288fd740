from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, rankdata

from storyeval.errors import InputError
from storyeval.stats.kemeny import (
    dynamic_programming,
    integer_program,
    kemeny,
    kemeny_score,
    kemeny_table,
    kendall_distance,
    local_search,
    preference_costs,
)


def loop_score(order, scores: np.ndarray) -> float:
    """Kemeny score by definition: per ranking and candidate pair, 1 if reversed, 0.5 if tied (NaN lowest)."""
    filled = np.where(np.isnan(scores), -np.inf, scores)
    total = 0.0
    for ranking in filled:
        for p, u in enumerate(order):
            for v in order[p + 1:]:
                total += 1.0 if ranking[u] < ranking[v] else 0.5 if ranking[u] == ranking[v] else 0.0
    return total


def random_rankings(seed: int, n_rankings: int, n_items: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, size=(n_rankings, n_items)).astype(float)  # few levels: many ties
    scores[rng.random(scores.shape) < 0.1] = np.nan
    return scores


def test_hand_computed_score():
    # rankings a>b>c, b>a>c, a~b>c; candidate a, b, c pays 0 + 1 + 0.5
    scores = np.array([[3, 2, 1], [2, 3, 1], [2, 2, 1]], float)
    assert kemeny_score([0, 1, 2], preference_costs(scores)) == 1.5
    assert kemeny_score([2, 1, 0], preference_costs(scores)) == 3 + 2 + 2.5  # c, b, a pays 3, 2 and 2.5


@pytest.mark.parametrize("seed", range(12))
def test_exact_solvers_match_brute_force(seed):
    n_items = 3 + seed % 5
    scores = random_rankings(seed, 5 + seed % 4, n_items)
    costs = preference_costs(scores)
    best = min(loop_score(list(order), scores) for order in permutations(range(n_items)))
    initial = np.arange(n_items)
    for order in (dynamic_programming(costs), integer_program(costs, 30.0),
                  kemeny(costs, initial)[0], kemeny(costs, initial, dp_limit=0)[0]):
        assert sorted(order) == list(range(n_items))
        assert loop_score(list(order), scores) == best
        assert kemeny_score(order, costs) == best


def test_condorcet_order_is_returned():
    rng = np.random.default_rng(7)
    truth = rng.permutation(9)
    consistent = np.tile(-np.argsort(truth).astype(float), (3, 1))  # truth[0] scores highest
    scores = np.vstack([consistent, rng.random((2, 9))])  # a 3-of-5 majority agrees with truth on every pair
    order, method = kemeny(preference_costs(scores), rng.permutation(9))
    assert method == "exact" and list(order) == list(truth)


def test_kendall_distance_matches_scipy():
    rng = np.random.default_rng(2)
    a, b = rng.permutation(20), rng.permutation(20)
    tau = kendalltau(np.argsort(a), np.argsort(b)).statistic
    assert kendall_distance(a, b) == pytest.approx((1 - tau) * 20 * 19 / 4)
    assert kendall_distance(a, a) == 0 and kendall_distance(a, a[::-1]) == 190


def test_preference_costs_rank_as_scipy_with_ties_and_nan():
    scores = np.random.default_rng(5).integers(0, 4, (6, 9)).astype(float)
    scores[2, 3] = np.nan  # ranks last
    ranks = rankdata(np.where(np.isnan(scores), -np.inf, scores), axis=1)
    expected = ((1 - np.sign(ranks[:, :, None] - ranks[:, None, :])) / 2).sum(axis=0)
    np.fill_diagonal(expected, 0.0)
    assert np.array_equal(preference_costs(scores), expected)


@pytest.fixture(scope="module")
def metric_criterion(hanna_correlations) -> pd.DataFrame:
    return hanna_correlations[hanna_correlations["kind"] == "metric_criterion"]


def test_kemeny_table_on_hanna(metric_criterion):
    consensus, summary = kemeny_table(metric_criterion, orientation="absolute")  # HANNA's |r|: Tab. 6's Borda
    assert list(summary["level"]) == ["story", "system", "global"]
    assert list(summary["n_rankings"]) == [18, 18, 36] and set(summary["n_metrics"]) == {72}
    assert (summary["method"] == "exact").all()
    assert (summary["kemeny_score"] <= summary["borda_score"]).all()
    story = consensus[consensus["level"] == "story"]
    wide = metric_criterion[metric_criterion["level"] == "story"].pivot(
        index=["coefficient", "y"], columns="x", values="r").abs()
    names = list(wide.columns)
    order = [names.index(metric) for metric in story["metric"]]
    assert loop_score(order, wide.to_numpy()) == summary.loc[0, "kemeny_score"]
    assert story.iloc[0]["metric"] == "chrf" and story.iloc[0]["borda_rank"] == 1  # Tab. 6: chrF tops Borda
    again = kemeny_table(metric_criterion, orientation="absolute")
    pd.testing.assert_frame_equal(again[0], consensus)


def test_local_search_never_worse_than_borda(metric_criterion):
    _, summary = kemeny_table(metric_criterion, dp_limit=0, ilp_time_limit=0, orientation="absolute")
    assert (summary["method"] == "local-search").all()
    assert (summary["kemeny_score"] <= summary["borda_score"]).all()
    for seed in range(5):
        scores = random_rankings(seed, 9, 15)
        costs = preference_costs(scores)
        start = np.random.default_rng(seed).permutation(15)
        assert kemeny_score(local_search(costs, start), costs) <= kemeny_score(start, costs)


def test_incomplete_rankings_raise(metric_criterion):
    with pytest.raises(InputError, match="does not rank each"):
        kemeny_table(metric_criterion.iloc[1:])
