"""Stories longer than a judge's window (storyeval.judges.window) and what a judge could not rate
(storyeval.judges.gaps), on a tiny random judge whose window is set with max_length."""

import numpy as np
import pandas as pd
import pytest

from tiny_models import CORPUS, one_thread, tiny_judge

thread = pytest.fixture(autouse=True)(one_thread)
STORIES = [CORPUS[0], " ".join(CORPUS * 3), " ".join(CORPUS[:2])]  # the second is longer than the others together
CRITERIA = {"Plot": "how good the plot is"}


@pytest.fixture(scope="module")
def judge_folder(tmp_path_factory):
    return tiny_judge(tmp_path_factory.mktemp("window") / "tiny", chat=True)


@pytest.fixture(scope="module")
def whole(judge_folder):
    """The unlimited run (the model's 2048-token window holds every prompt): (details, window between the two
    shorter prompts and the long one)."""
    from storyeval.api import texts_table
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import Settings, rate

    _, details, run = rate(texts_table(STORIES), CRITERIA, load_template("geval"), judge_folder, Settings(),
                           device="cpu")
    assert run["past_window"] == run["truncated"] == 0
    lengths = details["prompt_tokens"].to_numpy()
    return details, int(np.sort(lengths)[1] + (lengths.max() - np.sort(lengths)[1]) // 2)


def rated(judge_folder, truncate, limit, texts=None):
    from storyeval.api import texts_table
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import Settings, rate

    return rate(texts_table(STORIES) if texts is None else texts, CRITERIA, load_template("geval"), judge_folder,
                Settings(truncate=truncate, max_length=limit), device="cpu")


def test_none_leaves_the_long_story_out_and_counts_it(judge_folder, whole, caplog):
    details, limit = whole
    with caplog.at_level("WARNING"):
        scores, cut, run = rated(judge_folder, "none", limit)
    long = int(details["prompt_tokens"].idxmax())
    assert run["past_window"] == 1 and run["parse_failures"] == 0 and run["forward_passes"] == 2
    assert cut.loc[long, "failure"] == "past the window" and np.isnan(scores.iloc[long, 0])
    kept = cut.index != long
    np.testing.assert_allclose(cut.loc[kept, "value"], details.loc[kept, "value"], rtol=1e-5)
    lines = [r.getMessage() for r in caplog.records if "without a rating" in r.getMessage()]
    assert lines == ["judge: 1 of 3 prompts without a rating (NaN, not imputed): 1 past the window; per criterion: "
                     "Plot 1"]


@pytest.mark.parametrize("policy", ["head", "middle"])
def test_head_and_middle_cut_the_story_to_fit(judge_folder, whole, policy):
    """The cut prompt fills the window at most; its rating is the rating of the story cut as the policy says
    (head: its first tokens; middle: its first and last, joined by MARK), rated without a window."""
    from storyeval.api import texts_table
    from storyeval.judges.window import MARK, cut_story

    details, limit = whole
    scores, cut, run = rated(judge_folder, policy, limit)
    long = int(details["prompt_tokens"].idxmax())
    assert run["past_window"] == 0 and run["truncated"] == 1 and cut["prompt_tokens"].max() <= limit
    removed = int(cut.loc[long, "truncated"])
    assert removed >= details.loc[long, "prompt_tokens"] - limit
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(judge_folder)
    total = len(tokenizer(STORIES[long], add_special_tokens=False)["input_ids"])
    story = cut_story(tokenizer, STORIES[long], total - removed, policy)
    assert (MARK in story) == (policy == "middle") and story.startswith(STORIES[long][:20])
    if policy == "middle":
        assert story.endswith(STORIES[long][-20:])
    by_hand = rated(judge_folder, "none", None, texts_table([story]))[0].iloc[0, 0]
    assert scores.iloc[long, 0] == pytest.approx(by_hand, rel=1e-5)


def test_a_window_past_the_models_and_a_template_past_the_window(judge_folder):
    from storyeval.errors import InputError

    with pytest.raises(InputError, match=r"judge: max_length 4096 is past the model's 2048-token window; fix: set "
                                         "max_length to at most 2048"):
        rated(judge_folder, "head", 4096)
    scores, details, run = rated(judge_folder, "head", 64)  # the template alone needs more: nothing to cut
    assert run["past_window"] == 3 and scores.isna().all().all()


def test_the_window_settings_are_config_and_api_keys(judge_folder):
    """judges.truncate / max_length and a judge's own; storyeval.judge takes both."""
    import storyeval
    from storyeval.judges.config import settings

    config = {"judges": {"models": {"a": {"path": "x", "truncate": "middle"}, "b": {"path": "x"}}, "mode": "expected",
                         "truncate": "head", "max_length": 512, "batch_size": 8, "batch_tokens": 8192,
                         "max_new_tokens": 4, "dtype": "auto", "top_logprobs": 20}}
    assert settings(config, "a")["truncate"] == "middle" and settings(config, "b")["truncate"] == "head"
    assert settings(config, "a")["max_length"] == 512
    ratings = storyeval.judge(STORIES, criteria=CRITERIA, model=str(judge_folder), max_length=300, device="cpu")
    assert ratings.attrs["past_window"] == 3 and ratings.isna().all().all()  # geval's prompt alone is over 300


def test_a_column_without_enough_ratings_is_left_out_with_its_answers_and_fix():
    """gaps.left_out: a column with fewer than MIN_CELLS ratings, its reason the commonest failure of its prompts,
    three raw answers (the reason where no answer came)."""
    from storyeval.data.scoreset import MIN_CELLS
    from storyeval.judges.gaps import FIXES, NO_RATING, PAST_WINDOW, left_out, left_out_note

    stories = [f"s{k}" for k in range(6)]
    values = {"judge-a-t-x": [1.0] * MIN_CELLS + [np.nan] * (6 - MIN_CELLS), "judge-a-t-y": [2.0] + [np.nan] * 5}
    scores = pd.DataFrame({"story_id": stories, **values})
    failure = {"x": [""] * MIN_CELLS + [NO_RATING] * 3, "y": [""] + [PAST_WINDOW] * 4 + [NO_RATING]}
    details = pd.DataFrame([{"story_id": s, "criterion": c, "value": values[f"judge-a-t-{c}"][k],
                             "failure": failure[c][k], "answer": "" if failure[c][k] != NO_RATING else f"blah {k}"}
                            for c in ("x", "y") for k, s in enumerate(stories)])
    registry = pd.DataFrame({"slug": list(values), "label": ["a x (t)", "a y (t)"], "criterion": ["x", "y"]})
    table = left_out(scores, details, registry)
    assert list(table["slug"]) == ["judge-a-t-y"] and table.loc[0, "rated"] == 1
    assert table.loc[0, "reason"] == PAST_WINDOW and table.loc[0, "fix"] == FIXES[PAST_WINDOW]
    assert table.loc[0, "answers"] == '"past the window", "past the window", "past the window"'
    note = left_out_note(table)
    assert note.startswith("Judge columns left out of every statistic") and "a y (t): 1 of 6 stories rated" in note
    assert left_out_note(table.iloc[:0]) == ""
