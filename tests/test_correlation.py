import numpy as np
import pytest
from scipy import stats

from storyeval.stats.correlation import correlate, story_level, system_level

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_matches_scipy_with_ties(coefficient):
    rng = np.random.default_rng(0)
    x = rng.integers(1, 5, size=(12, 3)).astype(float)  # many ties, as with Likert ratings
    y = rng.normal(size=(12, 2))
    r = correlate(x, y, coefficient)
    for a in range(3):
        for b in range(2):
            assert r[a, b] == pytest.approx(SCIPY[coefficient](x[:, a], y[:, b])[0], abs=1e-12)


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_constant_vector_gives_nan_like_scipy(coefficient):
    x = np.array([[1.0], [1.0], [1.0], [1.0]])
    y = np.array([[1.0], [2.0], [3.0], [5.0]])
    assert np.isnan(correlate(x, y, coefficient)[0, 0])


def test_story_level_is_mean_of_per_prompt_correlations_skipping_nan():
    # prompt 0: perfect agreement; prompt 1: perfect disagreement; prompt 2: constant metric (NaN, skipped)
    x = np.array([[[1.0], [2.0], [3.0]], [[1.0], [2.0], [3.0]], [[2.0], [2.0], [2.0]]])
    y = np.array([[[1.0], [2.0], [4.0]], [[3.0], [2.0], [1.0]], [[1.0], [2.0], [3.0]]])
    r, used = story_level(x, y, "kendall")
    assert r[0, 0] == pytest.approx((1.0 + -1.0) / 2)
    assert used[0, 0] == 2


def test_system_level_correlates_system_means():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 4, 2))
    y = rng.normal(size=(5, 4, 1))
    r, n = system_level(x, y, "pearson")
    expected = stats.pearsonr(x.mean(axis=0)[:, 1], y.mean(axis=0)[:, 0])[0]
    assert r[1, 0] == pytest.approx(expected, abs=1e-12)
    assert n[1, 0] == 4


def test_released_story_level_kendall_matches_scipy_loop(hanna_cubes):
    human, metrics = hanna_cubes
    chrf = metrics.names.index("chrf")
    values = [stats.kendalltau(metrics.values[p, :, chrf], human.values[p, :, 0])[0] for p in range(len(human.prompts))]
    expected = np.nanmean(values)
    r, _ = story_level(metrics.values, human.values, "kendall")
    assert r[chrf, 0] == pytest.approx(expected, abs=1e-12)


def test_system_level_sees_real_ties_of_averaged_ratings():
    # true means 0.15 and 0.15; float summation gives 0.15000000000000002 for the first
    a, b, c = np.array([0.1, 0.2]), np.array([0.3, 0.0]), np.array([0.0, 0.0])
    assert a.mean() != b.mean()  # the noise that would otherwise order a tie
    x = np.stack([a, b, c], axis=1)[:, :, None]
    y = np.array([[[1.0], [2.0], [0.0]]] * 2)
    r, _ = system_level(x, y, "kendall")
    assert r[0, 0] == pytest.approx(stats.kendalltau([0.15, 0.15, 0.0], [1.0, 2.0, 0.0])[0])
    assert r[0, 0] != pytest.approx(stats.kendalltau([a.mean(), b.mean(), 0.0], [1.0, 2.0, 0.0])[0])
