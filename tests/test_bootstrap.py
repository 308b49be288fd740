from fractions import Fraction
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score

from storyeval.errors import InputError
from storyeval.stats.bootstrap import (
    bootstrap_f1,
    bootstrap_labels,
    label_table,
    pairwise_labels,
    system_pairs,
)
from storyeval.stats.resampling import prompt_resamples, resample_counts

HANNA = Path("/work/shared/data/hanna/hanna_metric_scores.csv")


def brute_force_labels(values: np.ndarray, n_resamples: int, seed: int, confidence: float) -> np.ndarray:
    """Koehn's loop: one resample at a time, same RNG draws, exact rational sums (k/3 ratings tie exactly)."""
    n_prompts, n_systems, n_columns = values.shape
    exact = np.vectorize(lambda x: Fraction(x).limit_denominator(10**9), otypes=[object])(values)
    indices = np.random.default_rng(seed).integers(0, n_prompts, size=(n_resamples, n_prompts))
    labels = np.zeros((n_systems * (n_systems - 1) // 2, n_columns), dtype=int)
    for k in range(n_columns):
        for pair, (s1, s2) in enumerate(combinations(range(n_systems), 2)):
            wins1 = wins2 = 0
            for index in indices:
                m1, m2 = sum(exact[index, s1, k]), sum(exact[index, s2, k])
                wins1 += m1 > m2
                wins2 += m2 > m1
            labels[pair, k] = 1 if wins1 >= confidence * n_resamples else 2 if wins2 >= confidence * n_resamples else 0
    return labels


def test_pairs_and_counts():
    first, second = system_pairs(10)
    assert len(first) == 45 and list(zip(first, second)) == list(combinations(range(10), 2))
    counts = resample_counts(prompt_resamples(7, 50, seed=3), 7)
    indices = np.random.default_rng(3).integers(0, 7, size=(50, 7))
    assert counts.shape == (50, 7) and (counts.sum(axis=1) == 7).all()
    assert np.array_equal(counts[4], np.bincount(indices[4], minlength=7))


def test_matches_brute_force_loop():
    rng = np.random.default_rng(5)
    values = rng.normal(size=(12, 5, 3)) + np.array([0.0, 0.3, 0.6, 0.9, 1.2])[None, :, None]
    values[..., 2] = rng.integers(1, 6, size=(12, 5)) / 3  # Likert-like: exact ties, float sums off in the last bits
    # seed 5 draws a resample where two different rating sets tie exactly: strict float '>' would call a win there
    labels = pairwise_labels(values, n_resamples=200, seed=5, confidence=0.9)
    assert np.array_equal(labels, brute_force_labels(values, 200, 5, 0.9))
    assert set(np.unique(labels[:, :2])) == {0, 2}  # later systems are better; some pairs are too close to call


def test_planted_dominance():
    rng = np.random.default_rng(0)
    values = rng.normal(scale=0.1, size=(30, 3, 1))
    values[:, 0] += 5.0  # system 0 beats everyone on every prompt
    labels = pairwise_labels(values, n_resamples=300, seed=1)
    assert labels[:2, 0].tolist() == [1, 1]
    flipped = pairwise_labels(values[:, ::-1], n_resamples=300, seed=1)
    assert flipped[1:, 0].tolist() == [2, 2]  # pairs (0,2), (1,2) with the dominant system second


def test_orient_flips_a_distance_metric():
    rng = np.random.default_rng(1)
    quality = np.linspace(0, 3, 4)[None, :] + rng.normal(scale=0.2, size=(40, 4))
    human = quality[..., None]
    distance = -quality[..., None] + rng.normal(scale=0.05, size=(40, 4, 1))  # lower = better
    _, oriented = bootstrap_labels(human, distance, ["lower"], 200, seed=2, orient=True)
    _, raw = bootstrap_labels(human, distance, ["lower"], 200, seed=2, orient=False)
    assert (oriented[:, 0] == 2).all() and (raw[:, 0] == 1).all()
    table = bootstrap_f1(human, distance, ["lower"], ["distance"], ["quality"], 200, seed=2, orient=True)
    assert table.f1.tolist() == [1.0]
    assert bootstrap_f1(
        human, distance, ["lower"], ["distance"], ["quality"], 200, seed=2, orient=False
    ).f1.tolist() == [0.0]


def test_f1_against_sklearn_and_labels_view():
    rng = np.random.default_rng(4)
    human = rng.normal(size=(20, 6, 2)) + rng.normal(size=(1, 6, 2))
    metrics = human[..., [0, 1, 0]] + rng.normal(scale=0.8, size=(20, 6, 3))
    table = bootstrap_f1(human, metrics, ["higher"] * 3, ["a", "b", "c"], ["x", "y"], 100, seed=9)
    truth, predicted = bootstrap_labels(human, metrics, ["higher"] * 3, 100, seed=9)
    expected = f1_score(truth[:, 1], predicted[:, 2], average="weighted", zero_division=0)
    assert table.set_index(["metric", "criterion"]).f1[("c", "y")] == pytest.approx(expected)
    assert list(table.columns) == ["metric", "criterion", "f1", "missing"] and len(table) == 6
    view = label_table(truth, [f"s{i}" for i in range(6)], ["x", "y"])
    assert len(view) == 30 and view.iloc[16][["system_1", "system_2", "variable"]].tolist() == ["s0", "s2", "y"]
    assert view.iloc[16].label == truth[1, 1]


def test_same_seed_identical_different_seed_may_differ():
    values = np.random.default_rng(8).normal(size=(25, 6, 2)) * 0.3 + np.arange(6)[None, :, None] * 0.05
    a = pairwise_labels(values, 300, seed=4)
    assert a.tobytes() == pairwise_labels(values, 300, seed=4).tobytes()
    assert np.array_equal(
        resample_counts(prompt_resamples(25, 300, 4), 25), resample_counts(prompt_resamples(25, 300, 4), 25)
    )
    assert not np.array_equal(
        resample_counts(prompt_resamples(25, 300, 4), 25), resample_counts(prompt_resamples(25, 300, 5), 25)
    )


def test_bad_input():
    values = np.zeros((5, 3, 2))
    with pytest.raises(InputError, match="confidence"):
        pairwise_labels(values, 10, 0, confidence=0.4)
    values[0, 0, 0] = np.inf  # a missing value (NaN) is dropped (test_missing_cells.py); an infinite one refused
    with pytest.raises(InputError, match="infinite"):
        pairwise_labels(values, 10, 0)
    with pytest.raises(InputError, match="direction"):
        bootstrap_labels(np.zeros((5, 3, 1)), np.zeros((5, 3, 2)), ["higher", "worse"])


@pytest.mark.skipif(not HANNA.exists(), reason="released HANNA scores not available")
def test_real_hanna():
    from storyeval.criteria import CRITERIA
    from storyeval.data.hanna import read_released_scores
    from storyeval.data.scoreset import analysed_systems, build_cube

    released = read_released_scores(HANNA)
    systems = analysed_systems(released.stories, "Human")
    human = build_cube(released.stories, released.human_scores, "criterion", "score", CRITERIA, systems, "hanna")
    metrics = build_cube(
        released.stories, released.scores, "metric", "value", list(released.registry.slug), systems, "hanna"
    )
    table = bootstrap_f1(
        human.values, metrics.values, list(released.registry.direction), metrics.names, CRITERIA, 1000, seed=0
    )
    assert len(table) == 72 * 6 and table.f1.between(0, 1).all()
    assert table.groupby("criterion").f1.max().gt(0.5).all()  # some metric agrees with each criterion beyond chance
    truth, _ = bootstrap_labels(human.values, metrics.values, list(released.registry.direction), 1000, seed=0)
    assert truth.shape == (45, 6) and (truth > 0).mean() > 0.5  # most system pairs are separable by humans
