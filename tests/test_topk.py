import numpy as np
import pytest
from scipy import stats

from storyeval.errors import InputError
from storyeval.stats.topk import rank_systems, topk_table

SYSTEMS = ["A", "B", "C", "D", "E"]


def small_case() -> tuple[np.ndarray, np.ndarray]:
    # 2 prompts x 5 systems. Criterion means: A 3.0, B 4.001, C 2.0, D 4.004, E 1.0
    # -> rounded to 2 decimals B and D tie at 4.00 (input order keeps B first), unrounded D leads.
    human = np.array([[3.0, 4.002, 2.0, 4.008, 1.0], [3.0, 4.0, 2.0, 4.0, 1.0]])[..., None]
    metric_means = np.array([[0.2, 0.9, 0.4, 0.5, 0.1], [5.0, 1.0, 3.0, 2.0, 4.0]]).T  # [S, M]
    metrics = np.stack([metric_means - 0.1, metric_means + 0.1])  # prompt means equal metric_means
    return human, metrics


def test_rank_systems_tie_rule():
    means = np.array([3.0, 4.001, 2.0, 4.004, 1.0])
    assert rank_systems(means).tolist() == [1, 3, 0, 2, 4]
    assert rank_systems(means, decimals=None).tolist() == [3, 1, 0, 2, 4]


@pytest.mark.parametrize("coefficient, scipy_function", [
    ("spearman", stats.spearmanr), ("pearson", stats.pearsonr), ("kendall", stats.kendalltau),
])
def test_against_scipy(coefficient, scipy_function):
    human, metrics = small_case()
    table = topk_table(human, metrics, ["m1", "m2"], ["crit"], SYSTEMS, [5, 4, 3], coefficient)
    assert list(table.columns) == ["criterion", "k", "metric", "r", "abs_r", "systems", "missing"]
    assert table.k.tolist() == [5, 5, 4, 4, 3, 3]
    assert table.systems.iloc[2] == "B;D;A;C" and table.systems.iloc[4] == "B;D;A"
    human_means = human[..., 0].mean(axis=0)
    metric_means = metrics.mean(axis=0)
    for row in table.itertuples():
        kept = [SYSTEMS.index(name) for name in row.systems.split(";")]
        m = int(row.metric[1]) - 1
        expected = scipy_function(metric_means[kept, m], human_means[kept])[0]
        assert row.r == pytest.approx(expected) and row.abs_r == pytest.approx(abs(expected))


def test_hand_values():
    human, metrics = small_case()
    table = topk_table(human, metrics, ["m1", "m2"], ["crit"], SYSTEMS, [5, 3], "spearman").set_index(["k", "metric"])
    # k=5, m2 ranks systems exactly opposite to the criterion except B/D: rho = 1 - 6*sum(d^2)/(n(n^2-1))
    # criterion ranks (high=5): B 4, D 5, A 3, C 2, E 1; m2 ranks: A 5, E 4, C 3, D 2, B 1
    d = np.array([3 - 5, 4 - 1, 2 - 3, 5 - 2, 1 - 4])
    assert table.r[(5, "m2")] == pytest.approx(1 - 6 * (d**2).sum() / (5 * 24))
    # k=3 keeps B, D, A: m1 = 0.9, 0.5, 0.2 vs criterion 4.001, 4.004, 3.0 -> ranks (3,2,1) vs (2,3,1)
    assert table.r[(3, "m1")] == pytest.approx(0.5)


def test_bad_input():
    human, metrics = small_case()
    with pytest.raises(InputError, match="k values"):
        topk_table(human, metrics, ["m1", "m2"], ["crit"], SYSTEMS, [6, 1])
    with pytest.raises(InputError, match="coefficient"):
        topk_table(human, metrics, ["m1", "m2"], ["crit"], SYSTEMS, [5], "cosine")
    with pytest.raises(InputError, match="names"):
        topk_table(human, metrics, ["m1"], ["crit"], SYSTEMS, [5])
