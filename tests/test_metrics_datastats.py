"""Data statistics: Newsroom's literal fragment loop, hand examples, and HANNA's released Human values."""

import numpy as np
import pandas as pd
import pytest

from storyeval.errors import InputError
from storyeval.metrics import datastats


def newsroom_match(a, b):
    """Fragments._match from lil-lab/newsroom, transcribed loop for loop (lengths only)."""
    matches, a_start, b_start = [], 0, 0
    while a_start < len(a):
        best_match_length = 0
        while b_start < len(b):
            if a[a_start] == b[b_start]:
                a_end, b_end = a_start, b_start
                while a_end < len(a) and b_end < len(b) and b[b_end] == a[a_end]:
                    b_end += 1
                    a_end += 1
                best_match_length = max(best_match_length, a_end - a_start)
                b_start = b_end
            else:
                b_start += 1
        b_start = 0
        if best_match_length:
            matches.append(best_match_length)
            a_start += best_match_length
        else:
            a_start += 1
    return matches


def test_greedy_fragments_equal_newsroom_loop():
    rng = np.random.default_rng(3)
    for _ in range(300):
        a = list(rng.choice(list("abcd"), size=rng.integers(0, 25)))
        b = list(rng.choice(list("abcde"), size=rng.integers(0, 15)))
        assert datastats.greedy_fragments(a, b) == newsroom_match(a, b)


def test_greedy_fragments_hand_example():
    # "a b c" is found at text position 1 (longest of the candidates), then "d" alone
    assert datastats.greedy_fragments(list("abcd"), list("xabcycd")) == [3, 1]
    # the scan resumes after a candidate match: the better match "b b c" starting inside "b b b" is skipped
    assert datastats.greedy_fragments(list("bbc"), list("bbbc")) == [2, 1]


def test_statistics_by_hand():
    texts = pd.DataFrame({"story_id": ["s"], "prompt_id": [0], "system": ["x"], "prompt": ["The cat sat"],
                          "story": ["the cat ran, the cat sat"], "reference": [np.nan]})
    scores = datastats.compute(texts, summeval_newline=False).iloc[0]
    # story tokens: the cat ran , the cat sat (7); prompt: The cat sat (3)
    # fragments (lowercased): "the cat" (2), "the cat sat" (3)
    assert scores["text-length"] == 7
    assert scores["coverage"] == pytest.approx(5 / 7)
    assert scores["density"] == pytest.approx((4 + 9) / 7)
    assert scores["compression"] == pytest.approx(3 / 7)
    # case kept in n-grams: "the" is not "The"; distinct unigrams the cat ran , sat -> novel: the ran ,
    assert scores["novelty-1"] == pytest.approx(3 / 5)
    assert scores["repetition-1"] == pytest.approx(2 / 5)  # the, cat
    # bigrams: (the cat) x2, (cat ran) (ran ,) (, the) (cat sat): 5 distinct, 1 repeated, (cat sat) in the prompt
    assert scores["novelty-2"] == pytest.approx(4 / 5)
    assert scores["repetition-2"] == pytest.approx(1 / 5)
    lowered = datastats.compute(texts, summeval_newline=False, lowercase_ngrams=True).iloc[0]
    assert lowered["novelty-1"] == pytest.approx(2 / 5)


def test_too_short_story_gives_nan_with_a_warning():
    texts = pd.DataFrame({"story_id": ["s", "t"], "prompt_id": [0, 0], "system": ["x", "x"], "prompt": ["a b", "a b"],
                          "story": ["Hi", "one two three"], "reference": [np.nan, np.nan]})
    with pytest.warns(UserWarning, match="1 of 2 stories are shorter than 3 tokens"):
        scores = datastats.compute(texts, summeval_newline=False)
    assert np.isnan(scores.loc["s", "novelty-2"]) and scores.loc["t", "novelty-3"] == 1.0


def test_missing_prompt_is_refused():
    texts = pd.DataFrame({"story_id": ["wp200-000"], "prompt": [np.nan], "story": ["A story."], "reference": [np.nan]})
    texts.attrs["dataset"] = "wp200"
    with pytest.raises(InputError, match="dataset wp200, metric datastats: story wp200-000 has no prompt"):
        datastats.compute(texts)


def test_reproduces_hanna_released_statistics(hanna_mirror, released):
    """HANNA's released reference-free statistics for the 96 human stories: all identical."""
    from storyeval.text.datasets import load_hanna_llm

    texts = load_hanna_llm(hanna_mirror / "hanna_llm_stories.csv").texts
    human = texts[texts["system"] == "Human"]
    ours = datastats.compute(human)
    theirs = released.scores.pivot(index="story_id", columns="metric", values="value").loc[ours.index, ours.columns]
    assert theirs.loc["p000-human", "text-length"] == 248
    exact = pd.DataFrame(np.isclose(ours, theirs, rtol=1e-9, atol=0), index=ours.index, columns=ours.columns)
    share = exact.mean()
    assert share.min() >= 0.95, share.to_dict()
    assert share.min() == 1.0, f"stories differing: {exact.index[~exact.all(axis=1)].tolist()}"
    # without SummEval's line-break token every story is one token short
    plain = datastats.compute(human, summeval_newline=False)
    assert (theirs["text-length"] - plain["text-length"] == 1).all()
