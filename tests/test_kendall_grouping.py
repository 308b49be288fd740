"""Kendall variants, tie calibration and groupings, each against an independent computation (scipy, pair loops)."""

import itertools

import numpy as np
import pytest
from scipy import stats

from storyeval.errors import InputError
from storyeval.stats import grouping, kendall

pytestmark = pytest.mark.filterwarnings("ignore:An input array is constant")


def _tied(rng, shape, levels):
    return rng.integers(0, levels, shape).astype(float)


def _pair_loop(m, h, epsilon=0.0):
    """Concordant, discordant, metric-only, human-only and joint ties by a loop over pairs."""
    con = dis = tm = th = tb = 0
    for i, j in itertools.combinations(range(len(m)), 2):
        metric_tie, human_tie = abs(m[i] - m[j]) <= epsilon, h[i] == h[j]
        if metric_tie and human_tie:
            tb += 1
        elif metric_tie:
            tm += 1
        elif human_tie:
            th += 1
        elif (m[i] - m[j]) * (h[i] - h[j]) > 0:
            con += 1
        else:
            dis += 1
    return con, dis, tm, th, tb


def _loop_variant(m, h, variant, epsilon=0.0):
    con, dis, tm, th, tb = _pair_loop(m, h, epsilon)
    pairs = con + dis + tm + th + tb
    return {"tau_23": (con + tb - dis - tm - th) / pairs, "acc23": (con + tb) / pairs}[variant]


@pytest.mark.parametrize("variant, scipy_variant", [("tau_b", "b"), ("tau_c", "c")])
def test_tau_b_and_c_match_scipy_with_ties(variant, scipy_variant):
    rng = np.random.default_rng(1)
    x, y = _tied(rng, (40, 4), 5), _tied(rng, (40, 3), 4)
    x[:, 3] = 2.0  # a constant metric: NaN, as scipy
    ours = kendall.kendall(x, y, variant)
    with np.errstate(invalid="ignore"):
        expected = np.array(
            [[stats.kendalltau(x[:, a], y[:, b], variant=scipy_variant).statistic for b in range(3)] for a in range(4)]
        )
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)
    assert np.isnan(ours[3]).all()


@pytest.mark.parametrize("n", [kendall.SORT_FROM, 97])
def test_sorted_counts_equal_a_pair_loop_and_the_pair_matrices(n):
    """The O(n log n) counts of long vectors (sorted_counts) are the same integers as the loop over pairs and as
    all_pair_counts, batched over groups; tau-b and tau-c from them match scipy's."""
    rng = np.random.default_rng(n)
    x, y = _tied(rng, (2, n, 4), 6), _tied(rng, (2, n, 2), 3)
    x[0, :, 1] = rng.normal(size=n)  # no ties
    x[1, :, 2] = 1.0  # constant
    fast, slow = kendall.sorted_counts(x, y), kendall.all_pair_counts(x, y, np.asarray(0.0))
    for field in ("s", "ties_both", "ties_metric", "ties_human"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(slow, field))
    for g, a, b in itertools.product(range(2), range(4), range(2)):
        con, dis, tm, th, tb = _pair_loop(x[g, :, a], y[g, :, b])
        assert (fast.s[g, a, b], fast.ties_both[g, a, b]) == (con - dis, tb)
        assert (fast.ties_metric[g, a, 0], fast.ties_human[g, 0, b]) == (tm + tb, th + tb)
    with np.errstate(invalid="ignore"):
        for variant in ("b", "c"):
            expected = stats.kendalltau(x[0, :, 0], y[0, :, 1], variant=variant).statistic
            assert kendall.kendall(x, y, f"tau_{variant}")[0, 0, 1] == pytest.approx(expected, abs=1e-12)
    x[0, 3, 0] = np.nan  # a missing value: the pair matrices, over the items both columns have (scipy's omit)
    kept = np.arange(n) != 3
    for variant in ("b", "c"):
        expected = stats.kendalltau(x[0, kept, 0], y[0, kept, 1], variant=variant).statistic
        assert kendall.kendall(x, y, f"tau_{variant}")[0, 0, 1] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("variant", kendall.CALIBRATED)
def test_tau_23_and_acc23_match_a_pair_loop_at_any_epsilon(variant):
    rng = np.random.default_rng(2)
    x, y = np.round(rng.normal(size=(25, 3)), 1), _tied(rng, (25, 2), 3)
    for epsilon in (0.0, 0.15, 0.6):
        ours = kendall.kendall(x, y, variant, epsilon)
        expected = [[_loop_variant(x[:, a], y[:, b], variant, epsilon) for b in range(2)] for a in range(3)]
        np.testing.assert_allclose(ours, expected, atol=1e-12)


@pytest.mark.parametrize("variant", kendall.CALIBRATED)
def test_calibration_finds_the_best_epsilon_of_a_brute_force_search(variant):
    rng = np.random.default_rng(3)
    human = _tied(rng, (6, 7, 2), 3)
    metric = human[..., :1] + np.round(rng.normal(scale=0.8, size=(6, 7, 3)), 2)
    value, epsilon = kendall.calibrate(metric, human, variant)
    for a, b in itertools.product(range(3), range(2)):
        # every |difference| of a pair in any group, and 0: the statistic only changes there
        candidates = sorted(
            {0.0} | {abs(g[i, a] - g[j, a]) for g in metric for i, j in itertools.combinations(range(7), 2)}
        )
        scores = [
            np.mean([_loop_variant(metric[k, :, a], human[k, :, b], variant, e) for k in range(6)]) for e in candidates
        ]
        best = int(np.argmax(np.round(scores, 12)))
        assert value[a, b] == pytest.approx(scores[best], abs=1e-12)
        assert epsilon[a, b] == candidates[best]


def test_kendall_refuses_bad_input():
    with pytest.raises(InputError, match="epsilon"):
        kendall.kendall(np.zeros((4, 1)), np.zeros((4, 1)), "acc23", -1.0)
    with pytest.raises(InputError, match="tau-c"):
        kendall.kendall(np.zeros((4, 1)), np.zeros((4, 1)), "tau_c", 0.5)
    with pytest.raises(InputError, match="unknown variant"):
        kendall.kendall(np.zeros((4, 1)), np.zeros((4, 1)), "tau_x")
    with pytest.raises(InputError, match="tie-calibrated"):
        kendall.calibrate(np.zeros((1, 4, 1)), np.zeros((1, 4, 1)), "tau_b")


def _scipy(coefficient, x, y):
    if coefficient == "pearson":
        return stats.pearsonr(x, y).statistic
    if coefficient == "spearman":
        return stats.spearmanr(x, y).statistic
    return stats.kendalltau(x, y, variant="c" if coefficient == "tau_c" else "b").statistic


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall", "tau_b", "tau_c"])
def test_groupings_match_scipy_loops(coefficient):
    rng = np.random.default_rng(4)
    human = _tied(rng, (8, 5, 2), 4) + 1
    metrics = human[..., :1] + rng.normal(size=(8, 5, 3))
    metrics[0, :, 2] = 7.0  # one prompt with a constant metric: skipped by the item mean, as story_level
    with np.errstate(invalid="ignore"):
        for a, b in itertools.product(range(3), range(2)):
            x, y = metrics[..., a], human[..., b]
            per_prompt = [_scipy(coefficient, x[p], y[p]) for p in range(8)]
            expected = {
                "none": _scipy(coefficient, x.ravel(), y.ravel()),
                "item": np.nanmean(per_prompt),
                "system": _scipy(coefficient, x.mean(axis=0), y.mean(axis=0)),
            }
            for name, value in expected.items():
                r, n, epsilon = grouping.grouped_correlation(metrics, human, coefficient, name)
                assert r[a, b] == pytest.approx(value, abs=1e-12), (name, a, b)
                assert epsilon[a, b] == 0
            assert (
                grouping.grouped_correlation(metrics, human, coefficient, "item")[1][a, b]
                == np.isfinite(per_prompt).sum()
            )


def test_system_grouping_sees_the_ties_of_averaged_ratings():
    # Means of 1/3 steps tie across systems only up to rounding; grouping merges them as correlation.system_level.
    human = np.array([[[0.1], [0.2], [0.7]], [[0.2], [0.1], [0.3]]]) * 10 / 3
    metric = np.array([[[1.0], [2.0], [3.0]], [[2.0], [1.0], [4.0]]])
    r = grouping.grouped_correlation(metric, human, "tau_b", "system")[0][0, 0]
    assert r == pytest.approx(stats.kendalltau([1.5, 1.5, 3.5], [1.0, 1.0, 10 / 3]).statistic)


def test_grouped_table_records_grouping_and_epsilon(hanna_cubes):
    human, metrics = hanna_cubes
    from storyeval.data.scoreset import Cube

    few = Cube(metrics.values[..., :3], metrics.prompts, metrics.systems, metrics.names[:3])
    table = grouping.grouped_table(human, few, list(grouping.GROUPINGS), ["kendall", "acc23"])
    assert len(table) == 3 * 2 * 3 * 6
    assert set(table["grouping"]) == set(grouping.GROUPINGS)
    acc = table[table["coefficient"] == "acc23"]
    assert (acc["epsilon"] >= 0).all() and (acc["r"].between(0, 1)).all()
    assert (table.loc[table["coefficient"] == "kendall", "epsilon"] == 0).all()
    item = table[(table["grouping"] == "item") & (table["coefficient"] == "kendall")]
    assert (item["items"] == 10).all() and (item["n"] <= 96).all()


def test_unknown_grouping_and_coefficient_are_refused():
    cube = np.zeros((2, 3, 1))
    with pytest.raises(InputError, match="grouping"):
        grouping.grouped_correlation(cube, cube, "pearson", "prompt")
    with pytest.raises(InputError, match="coefficient"):
        grouping.grouped_correlation(cube, cube, "cosine", "none")
    with pytest.raises(InputError, match="same prompts"):
        grouping.grouped_correlation(cube, np.zeros((3, 3, 1)), "pearson", "none")


def test_pearson_survives_subnormal_deviations():
    # CIDEr's released lists hold values like 5e-304 beside zeros: squaring the deviations must not underflow.
    x = np.array([0.0, 0.0, 5.29e-304, 1.1e-305, 0.0])[:, None]
    y = np.array([1.0, 2.0, 2.0, 3.0, 1.0])[:, None]
    r = grouping.grouped_correlation(x[None], y[None], "pearson", "none")[0][0, 0]
    assert r == pytest.approx(stats.pearsonr(x[:, 0], y[:, 0]).statistic, abs=1e-12)
