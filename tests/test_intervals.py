import numpy as np
import pandas as pd
import pytest
from scipy import stats

from storyeval.analysis import system_means
from storyeval.stats.intervals import t_interval


def test_t_interval_by_hand():
    # values 1..5: mean 3, sd sqrt(2.5), sem sqrt(2.5/5)=0.7071, t(0.975, 4)=2.776445
    mean, low, high = t_interval(np.array([1, 2, 3, 4, 5]))
    assert mean == pytest.approx(3.0)
    assert high - mean == pytest.approx(2.776445 * np.sqrt(0.5), rel=1e-6)
    assert mean - low == pytest.approx(high - mean)


def test_t_interval_equals_scipy_stats():
    rng = np.random.default_rng(3)
    for size in (2, 3, 96, 1000):
        values = rng.normal(3.0, 1.0, size)
        half = stats.sem(values) * stats.t.ppf(0.975, size - 1)
        assert t_interval(values) == (values.mean(), values.mean() - half, values.mean() + half)


def test_system_means_best_and_overlap():
    stories = pd.DataFrame({"story_id": ["s1", "s2", "s3", "s4", "s5", "s6"], "system": ["A", "A", "B", "B", "C", "C"]})
    rows = []
    values = {"A": [5, 4, 5, 4], "B": [4, 5, 4, 3], "C": [1, 2, 1, 1]}
    for system, ratings in values.items():
        ids = stories.loc[stories.system == system, "story_id"].tolist()
        for index, rating in enumerate(ratings):
            for criterion in ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]:
                rows.append((ids[index // 2], criterion, index % 2 + 1, rating))
    ratings = pd.DataFrame(rows, columns=["story_id", "criterion", "rater", "rating"])
    means = system_means(stories, ratings).set_index(["criterion", "system"])
    assert means.loc[("Relevance", "A"), "mean"] == pytest.approx(4.5)
    assert bool(means.loc[("Relevance", "A"), "best"]) and not bool(means.loc[("Relevance", "B"), "best"])
    assert bool(means.loc[("Relevance", "B"), "within_ci"])  # 4.0 +- wide CI overlaps A's
    assert not bool(means.loc[("Relevance", "C"), "within_ci"])
    assert means.loc[("Average", "C"), "mean"] == pytest.approx(1.25)
    assert means.loc[("Relevance", "A"), "n"] == 2  # two stories (of two ratings each): the default unit
    assert system_means(stories, ratings, unit="rating").set_index(["criterion", "system"]).loc[
        ("Relevance", "A"), "n"] == 4


def test_released_tab4_human_best(hanna_mirror, released):
    from storyeval.data.hanna import read_rater_ratings

    ratings = read_rater_ratings(hanna_mirror / "hanna_metric_scores_llm.csv", released.human_scores)
    means = system_means(released.stories, ratings)
    assert (means.loc[means.best, "system"] == "Human").all()
    assert (means["n"] == 96).all() and (means["unit"] == "story").all()  # the interval over 96 story means
    ratings_unit = system_means(released.stories, ratings, unit="rating")
    assert (ratings_unit["n"] == 288).all()  # 96 stories x 3 raters, HANNA's Tab. 4
    assert np.allclose(ratings_unit["mean"], means["mean"], rtol=0, atol=1e-12)  # three raters a story: same means
    human = means[(means.system == "Human") & (means.criterion == "Relevance")].iloc[0]
    direct = ratings.merge(released.stories, on="story_id").query("system == 'Human' and criterion == 'Relevance'")[
        "rating"
    ]
    assert human["mean"] == pytest.approx(direct.mean())
