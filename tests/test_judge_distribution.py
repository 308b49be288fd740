"""The judges' distribution over the ratings (mode expected: p1..p5 in the details and the answer cache) and its
1-Wasserstein distance to the raters' histograms beside the raters' leave-one-out ceiling
(storyeval.stats.distribution), in the package and in the workflow."""

import hashlib
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from test_judges_workflow import own_stories

from storyeval.judges.cache import DISTRIBUTION
from storyeval.stats.distribution import (
    COLUMNS,
    NONE_SHARED,
    OFF_SCALE,
    distance,
    distribution_agreement,
    histogram,
    raters_loo_distance,
)

from tiny_models import CORPUS, one_thread, tiny_judge
from workflow_helpers import make_workdir, run_snakemake

CRITERIA = {"Plot": "how good the plot is", "Flow": "how smoothly it reads"}
thread = pytest.fixture(one_thread)


def ratings_table(rated: dict) -> pd.DataFrame:
    """{(story, criterion): [ratings]} as one row per rater."""
    return pd.DataFrame([{"story_id": story, "criterion": criterion, "rater": f"r{k}", "rating": rating}
                         for (story, criterion), ratings in rated.items() for k, rating in enumerate(ratings)])


def judged_table(distributions: dict) -> pd.DataFrame:
    """{(story, criterion): p(1..5)} as a judge job's details."""
    return pd.DataFrame([{"story_id": story, "criterion": criterion, **dict(zip(DISTRIBUTION, p))}
                         for (story, criterion), p in distributions.items()])


def point(rating: int) -> np.ndarray:
    return histogram([rating])


def test_hand_computed_distances():
    assert list(histogram([2, 2, 4])) == pytest.approx([0, 2 / 3, 0, 1 / 3, 0])
    assert distance(point(2), histogram([1, 3])) == pytest.approx(1.0)  # half the mass moves 1 each way
    assert distance(point(1), point(5)) == pytest.approx(4.0)
    assert raters_loo_distance([1, 3]) == pytest.approx(2.0)  # each rater 2 points from the other
    assert raters_loo_distance([2, 2, 4]) == pytest.approx((1 + 1 + 2) / 3)  # 2 vs {2, 4}: 1; 4 vs {2, 2}: 2
    assert raters_loo_distance([3, 3, 3]) == 0


def test_planted_judges():
    """A judge whose distribution is the raters' histogram scores 0; a point mass at the far end scores most."""
    rated = {("a", "Plot"): [1, 1, 2], ("b", "Plot"): [1, 2, 2]}
    ratings = ratings_table(rated)
    exact = distribution_agreement(ratings, judged_table({key: histogram(r) for key, r in rated.items()}))
    far = distribution_agreement(ratings, judged_table({key: point(5) for key in rated}))
    spread = distribution_agreement(ratings, judged_table({key: np.full(5, 0.2) for key in rated}))
    assert exact.loc[0, "distance"] == pytest.approx(0, abs=1e-12)
    assert far.loc[0, "distance"] == pytest.approx(((4 + 4 + 3) / 3 + (4 + 3 + 3) / 3) / 2)
    assert far.loc[0, "distance"] > spread.loc[0, "distance"] > exact.loc[0, "distance"]
    # ceiling: story a 1 vs {1, 2}: 0.5 twice, 2 vs {1, 1}: 1; story b mirrored
    assert list(far["raters_loo_distance"]) == pytest.approx([2 / 3])
    assert list(far["stories"]) == [2]


def test_stories_without_two_ratings_or_a_distribution_are_left_out():
    ratings = ratings_table({("a", "Plot"): [1, 3], ("b", "Plot"): [4], ("c", "Plot"): [2, 2],
                             ("a", "Flow"): [7, 1]})
    judged = judged_table({("a", "Plot"): point(2), ("b", "Plot"): point(1), ("c", "Plot"): [np.nan] * 5,
                           ("a", "Flow"): point(1)})
    table = distribution_agreement(ratings, judged).set_index("criterion")
    assert table.loc["Plot", ["stories", "distance", "raters_loo_distance", "note"]].tolist() == [1, 1.0, 2.0, ""]
    assert table.loc["Flow", "stories"] == 0 and table.loc["Flow", "note"] == OFF_SCALE
    assert np.isnan(table.loc["Flow", "distance"])
    # details of mode generate, or written before distributions were kept: no story to compare
    older = distribution_agreement(ratings, judged.drop(columns=list(DISTRIBUTION)))
    assert list(older["note"]) == [NONE_SHARED, OFF_SCALE] and list(older["stories"]) == [0, 0]


def test_a_served_distribution_is_the_rating_tokens_renormalised():
    from storyeval.judges.http import distribution_from_top, read_choice

    p, mass = distribution_from_top({" 4": np.log(0.3), "4": np.log(0.1), " 2": np.log(0.4), "the": np.log(0.2)})
    assert list(p) == pytest.approx([0, 0.5, 0, 0.5, 0]) and mass == pytest.approx(0.8)
    value, _, _, failure, p = read_choice({"logprobs": {"top_logprobs": [{"the": -0.1}]}}, generate=False)
    assert np.isnan(value) and np.isnan(p).all() and failure


@pytest.fixture(scope="module")
def judge_folder(tmp_path_factory):
    return tiny_judge(tmp_path_factory.mktemp("distribution") / "tiny", chat=True)


def test_expected_mode_keeps_the_distribution_and_old_cache_entries_load(judge_folder, thread, tmp_path):
    from storyeval.api import texts_table
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import RATINGS, Settings, rate

    cache = tmp_path / "answers.sqlite"

    def details():
        return rate(texts_table(CORPUS[:2]), CRITERIA, load_template("geval"), judge_folder,
                    Settings(mode="expected"), device="cpu", cache=cache)[1]

    fresh = details()
    p = fresh[list(DISTRIBUTION)].to_numpy()
    assert p.sum(axis=1) == pytest.approx(np.ones(len(fresh))) and (p > 0).all()
    assert fresh["value"].to_numpy() == pytest.approx(p @ RATINGS)
    assert details()[list(DISTRIBUTION)].to_numpy() == pytest.approx(p, rel=1e-5)  # from the cache
    with sqlite3.connect(cache) as connection:  # entries as kept before distributions were
        rows = connection.execute("SELECT key, answer FROM answers").fetchall()
        connection.executemany("UPDATE answers SET answer = ? WHERE key = ?", [
            (json.dumps({k: v for k, v in json.loads(answer).items() if k not in DISTRIBUTION}), key)
            for key, answer in rows])
    older = details()
    assert older["value"].to_numpy() == pytest.approx(fresh["value"].to_numpy(), rel=1e-5)
    assert older[list(DISTRIBUTION)].isna().all().all()


def test_the_workflow_writes_each_expected_judges_distances(tmp_path, hanna_mirror):
    """A rated dataset of two raters a story: the judge in mode expected gets a row per criterion, the one in mode
    generate none; the numbers are the package's on the job's details."""
    stories = own_stories(prompts=2)
    stories.to_csv(tmp_path / "mine.csv", index=False)
    folder = tiny_judge(tmp_path / "tiny-judge", chat=True, n_positions=8192)
    columns = {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text", "rater": "rater",
               "criteria": {"Flow": "flow", "Plot": "plot"}}
    mine = {"kind": "table", "path": "mine.csv", "sha256": hashlib.sha256((tmp_path / "mine.csv").read_bytes())
            .hexdigest(), "columns": columns, "metrics": []}
    make_workdir(tmp_path, **{
        "datasets.mine": mine,
        "judges": {"models": {"tiny": {"path": str(folder)}, "greedy": {"path": str(folder), "mode": "generate"}},
                   "templates": ["geval"], "datasets": {"mine": {"criteria": {"Flow": "how smoothly it reads",
                                                                             "Plot": "how good the plot is"}}}},
        "device": "cpu",
    })
    target = "results/mine/computed/judge_distribution.csv"
    result = run_snakemake(tmp_path, "--set-threads", "llm_judge=1", "--cores", "2", target)
    assert result.returncode == 0, result.stderr[-3000:]
    table = pd.read_csv(tmp_path / target, keep_default_na=False, na_values=[""])
    assert list(table.columns) == ["judge", "template", *COLUMNS]
    assert table[["judge", "template", "criterion"]].values.tolist() == [["tiny", "geval", "Flow"],
                                                                          ["tiny", "geval", "Plot"]]
    ratings = pd.read_csv(tmp_path / "results/mine/data/rater_ratings.csv")
    details = pd.read_parquet(tmp_path / "results/mine/computed/judges/tiny@geval.details.parquet")
    expected = distribution_agreement(ratings, details)
    assert list(table["stories"]) == [len(stories) // 2] * 2
    assert table["distance"].to_numpy() == pytest.approx(expected["distance"].to_numpy())
    assert table["raters_loo_distance"].to_numpy() == pytest.approx(expected["raters_loo_distance"].to_numpy())
    page = (tmp_path / "results/mine/computed/report/judge_distribution.html").read_text(encoding="utf-8")
    assert '<p class="caption">The LLM judges run in mode expected' in page and "Raters loo distance" in page


@pytest.mark.parametrize("raters", [True, False])
def test_a_dataset_with_raters_and_a_judge_in_mode_expected_wants_the_table(raters):
    from test_workflow_plan import checked

    from storyeval.workflow import judges

    class Judged:  # a dataset, per-rater ratings or none, that a judge rates in each mode
        models = {"tiny": {"path": "tiny"}, "greedy": {"path": "tiny", "mode": "generate"}}
        config = checked(**{"judges.models": models})

        def judge_jobs(self, dataset):
            return [("tiny", "geval"), ("greedy", "geval")]

        def structure(self, dataset, scoreset):
            return {"raters": raters}

    assert judges.distribution_jobs(Judged(), "wp200") == [("tiny", "geval")]
    assert judges.targets(Judged(), "wp200") == ["results/wp200/computed/judge_distribution.csv",
                                                 "results/wp200/computed/report/judge_distribution.html"] * raters
