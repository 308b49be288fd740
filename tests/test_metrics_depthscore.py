"""DepthScore against the authors' `dr_distance` transcribed as a loop over directions (with its global seeding),
the IRW depth against a brute-force rank count, and the identity story = reference."""

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import normalize
from test_metrics_baryscore import synthetic_cache, synthetic_texts

from storyeval.errors import InputError
from storyeval.metrics import depthscore


def library_dr_distance(X, Y, n_alpha, n_dirs, eps_min, p, seed):
    """The library's `dr_distance(..., data_depth="irw")` with its `ai_irw(AI=False)` and `sampled_sphere`,
    written as loops over directions and levels, seeding the global generator as it does."""
    def sampled_sphere():
        return normalize(np.random.multivariate_normal(np.zeros(X.shape[1]), np.identity(X.shape[1]), size=n_dirs))

    def irw(Z):
        np.random.seed(seed)
        U = sampled_sphere()
        depth = np.zeros((len(Z), n_dirs))
        for k in range(n_dirs):
            depth[np.argsort(Z @ U[k]), k] = np.arange(1, len(Z) + 1)
        depth /= len(Z)
        return np.minimum(depth, 1 - depth).mean(axis=1)

    np.random.seed(seed)
    depth_X, depth_Y = irw(X), irw(Y)
    U = sampled_sphere()
    total = 0.0
    for alpha in np.linspace(int(eps_min * 100), 100, n_alpha):
        region_X, region_Y = X[depth_X >= np.percentile(depth_X, alpha)], Y[depth_Y >= np.percentile(depth_Y, alpha)]
        total += max(((region_X @ u).max() - (region_Y @ u).max()) ** p for u in U)
    return (total / n_alpha) ** (1 / p)


def settings(n_directions=300, seed=0):
    return depthscore.Settings(p=5.0, eps=0.3, n_alpha=5, n_directions=n_directions, seed=seed)


@pytest.mark.parametrize("seed", [0, 7])
def test_score_equals_the_library_loop(seed):
    rng = np.random.default_rng(seed)
    X, Y = normalize(rng.normal(size=(14, 6))), normalize(rng.normal(size=(11, 6)) + 0.3)
    ours = depthscore.score(depthscore.support_functions(X, settings(seed=seed)),
                            depthscore.support_functions(Y, settings(seed=seed)), 5.0)
    assert ours == pytest.approx(library_dr_distance(X, Y, 5, 300, 0.3, 5, seed), abs=1e-12)
    assert ours > 0


@pytest.mark.parametrize("n", [1, 2, 9, 512, 513])  # index bits 1, 1, 4, 9, 10 in the sort keys
def test_irw_depth_equals_a_rank_count(n):
    rng = np.random.default_rng(3)
    points, directions = rng.normal(size=(n, 4)), normalize(rng.normal(size=(50, 4)))
    projections = points @ directions.T
    ranks = (projections[None, :, :] <= projections[:, None, :]).sum(axis=1)  # rank of point i on direction k
    expected = np.minimum(ranks / n, 1 - ranks / n).mean(axis=1)
    np.testing.assert_allclose(depthscore.irw_depth(points, directions), expected, atol=1e-15)


def test_metric_equals_the_library_loop_per_pair_and_is_zero_on_the_human_row():
    texts = synthetic_texts()
    cache = synthetic_cache(depthscore.required_texts(texts), dim=6)
    scores = depthscore.compute(texts, cache=cache, layer=4, n_directions=200)
    for row in texts.itertuples():
        X, Y = (depthscore.unit_points(cache.get(text).layers[4]) for text in (row.reference, row.story))
        assert scores.loc[row.story_id, "depthscore"] == pytest.approx(
            library_dr_distance(X, Y, 5, 200, 0.3, 5, 0), abs=1e-12)
    human = (texts["system"] == "Human").to_numpy()
    assert (scores["depthscore"].to_numpy()[human] == 0).all() and (scores["depthscore"].to_numpy()[~human] > 0).all()


def test_deterministic_seeded_and_the_same_over_worker_processes():
    texts = synthetic_texts(prompts=2)
    cache = synthetic_cache(depthscore.required_texts(texts))
    first = depthscore.compute(texts, cache=cache, n_directions=100)
    pd.testing.assert_frame_equal(first, depthscore.compute(texts, cache=cache, n_directions=100, processes=2))
    other = depthscore.compute(texts, cache=cache, n_directions=100, seed=1)
    assert not np.allclose(first["depthscore"], other["depthscore"])
    assert list(first.columns) == ["depthscore"] and first.index.name == "story_id"


def test_default_layer_is_the_last_and_bad_options_are_refused():
    texts = synthetic_texts(prompts=2)
    cache = synthetic_cache(depthscore.required_texts(texts), layers=(1, 2))
    assert depthscore.signature(cache=cache)["parameters"]["layer"] == 2
    with pytest.raises(InputError, match="layer 9"):
        depthscore.compute(texts, cache=cache, layer=9)
    with pytest.raises(InputError, match="eps"):
        depthscore.compute(texts, cache=cache, eps=1.5)
    with pytest.raises(InputError, match="positive"):
        depthscore.compute(texts, cache=cache, n_directions=0)
