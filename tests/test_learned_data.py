import json
import math
import pickle

import numpy as np
import pytest

from storyeval.errors import InputError
from storyeval.learned.data import ASPECTS, HELDOUT, TRAIN, fold_of, load_pairs, load_ratings, prompt_folds

from conftest import mirror_or_skip


@pytest.fixture(scope="module")
def mirror():
    return mirror_or_skip("storyer", "train_rank_data_small.pkl", "StoryER")


def test_released_pairs_load(mirror):
    pairs = load_pairs(mirror / "train_rank_data_small.pkl")
    assert len(pairs) == 1000
    assert pairs["prompt"].nunique() == 118
    assert (pairs["high"] != pairs["low"]).all()
    assert not pairs["high"].str.contains("newline").any()  # line-break markers cleaned away


def test_released_ratings_keep_storyers_comments(mirror):
    path = mirror / "train_rate_reason_data_small.json"
    ratings = load_ratings(path)
    raw = json.loads(path.read_text())
    # StoryER dataset.py's own filter, written out independently.
    kept = [(a, r) for d in raw for (a, r, c) in d["comments"] if type(a) is int and type(c) is not float and a != -1]
    assert len(ratings) == len(kept) == 303
    assert ratings["story_index"].nunique() == 100
    assert sorted(ratings["aspect"].unique()) == list(range(1, len(ASPECTS) + 1))
    assert ratings["rating"].between(1, 5).all()
    assert (
        np.bincount(ratings["aspect"], minlength=11)[1:].tolist()
        == np.bincount([a for a, _ in kept], minlength=11)[1:].tolist()
    )


def test_target_minus_one_swaps_the_stories(tmp_path):
    path = tmp_path / "pairs.pkl"
    path.write_bytes(pickle.dumps([["p", "good<newline>story", "bad story", 1, 1], ["p", "worse", "better", -1, 1]]))
    pairs = load_pairs(path)
    assert pairs[["high", "low"]].values.tolist() == [["good story", "bad story"], ["better", "worse"]]


@pytest.mark.parametrize(
    "item", [["p", "a", "b", 0, 1], ["p", "a", 1, 1], ["p", "a", "b", True, 1], ["p", " ", "b", 1, 1]]
)
def test_malformed_pairs_are_refused(tmp_path, item):
    path = tmp_path / "bad.pkl"
    path.write_bytes(pickle.dumps([item]))
    with pytest.raises(InputError, match="bad.pkl: item 0"):
        load_pairs(path)


def test_rating_slots_are_filtered(tmp_path):
    path = tmp_path / "rate.json"
    comments = [
        [4, 4, "good characters"],
        [-1, -1, math.nan],
        [11, 3, "no such aspect"],
        [2, 0, "rating off scale"],
        [3, 2.0, "weak ending"],
    ]
    path.write_text(json.dumps([{"story": "s", "prompt": "p", "score": 1.0, "comments": comments}]))
    ratings = load_ratings(path)
    assert ratings[["aspect", "rating", "comment"]].values.tolist() == [
        [4, 4.0, "good characters"],
        [3, 2.0, "weak ending"],
    ]
    path.write_text(json.dumps([{"story": "s", "prompt": "p", "comments": [[-1, -1, math.nan]]}]))
    with pytest.raises(InputError, match="no comment"):
        load_ratings(path)


def test_folds_never_share_a_prompt():
    prompts = [f"prompt {i % 23}" for i in range(200)]
    folds = prompt_folds(prompts, 0.25, seed=3)
    assert (folds == HELDOUT).sum() == round(0.25 * 23) == 6
    frame = __import__("pandas").DataFrame({"prompt": prompts})
    fold = fold_of(frame, folds)
    assert not set(frame["prompt"][fold == TRAIN]) & set(frame["prompt"][fold == HELDOUT])
    assert set(frame["prompt"][fold == HELDOUT]) == set(folds.index[folds == HELDOUT])
    # seeded: the same seed gives the same folds, another seed other folds; order of input does not matter
    assert prompt_folds(prompts[::-1], 0.25, seed=3).equals(folds)
    assert not prompt_folds(prompts, 0.25, seed=4).equals(folds)
    assert (prompt_folds(prompts, 0.0, seed=3) == TRAIN).all()


@pytest.mark.parametrize("share", [1.0, -0.1, 0.01, "0.2"])
def test_bad_heldout_share(share):
    with pytest.raises(InputError, match="heldout_share"):
        prompt_folds([f"p{i}" for i in range(10)], share, seed=0)
