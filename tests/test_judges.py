"""LLM judges on tiny random causal LMs: G-Eval's expected rating by hand, the answer parser on real-looking
answers, prompts and chat templates, the Python entry point, the config checks and the released-judge comparison."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tiny_models import CORPUS, one_thread, tiny_judge

thread = pytest.fixture(autouse=True)(one_thread)
PROMPTS = ["Write about a dragon.", "Write about a knight.", "Write about a letter."]
STORIES = CORPUS[:3]


@pytest.fixture(scope="module")
def judge_folder(tmp_path_factory):
    return tiny_judge(tmp_path_factory.mktemp("judge") / "tiny", chat=True)


@pytest.fixture(scope="module")
def plain_folder(tmp_path_factory):
    return tiny_judge(tmp_path_factory.mktemp("plain") / "tiny", seed=1)


def test_expected_rating_is_the_probability_weighted_mean():
    from storyeval.judges.rate import expected_rating

    probabilities = np.array([[0.5, 0.25, 0.125, 0.0625, 0.0625], [0.2] * 5])
    assert expected_rating(np.log(probabilities) + 7.0) == pytest.approx([1.9375, 3.0], abs=1e-12)


def test_expected_mode_reads_the_rating_tokens_at_the_answer_position(tmp_path):
    """A GPT-2 whose last layer norm outputs a constant one-hot vector: every position's logits are column 0 of
    the (tied) embedding matrix, set by hand, so the expected rating is known: 1(.5) + 2(.25) + 3(.125) + ... ."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import storyeval
    from storyeval.judges.rate import load_judge

    folder = tiny_judge(tmp_path / "known")
    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    ratings = [tokenizer(f" {r}")["input_ids"][-1] for r in range(1, 6)]
    with torch.no_grad():
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.zero_()
        model.transformer.ln_f.bias[0] = 1.0
        model.transformer.wte.weight[:, 0] = -5.0
        model.transformer.wte.weight[ratings, 0] = torch.log(torch.tensor([0.5, 0.25, 0.125, 0.0625, 0.0625]))
    model.save_pretrained(folder)
    load_judge.cache_clear()
    scores = storyeval.judge(STORIES, criteria=["Coherence", "Surprise"], model=str(folder), prompts=PROMPTS,
                             device="cpu")
    assert scores.shape == (3, 2)
    assert np.allclose(scores.to_numpy(), 1.9375, atol=1e-6)


ANSWERS = {
    " 4": 4,
    " 3\n\nThe story is coherent but the ending is rushed.": 3,
    "Rating: 4": 4,
    "**Rating:** 4/5\n\n**Explanation:** The plot follows the prompt closely.": 4,
    "Rating: 5/5 - a moving story.": 5,
    "I would rate this story a 3 out of 5.": 3,
    "I'd give it a four.": 4,
    "Score: 2\nExplanation: the characters' emotions are barely described.": 2,
    "My rating is 1 because the story makes no sense.": 1,
    "On a scale of 1 to 5, I rate it 4.": 4,
    "The story deserves 4 out of 5 stars.": 4,
    "4. The story follows the prompt.": 4,
    "Rating: Four": 4,
    "Rating:\n\n2\n\nThe plot is hard to follow.": 2,
    "8/10": None,
    "Rating: 0": None,
    "Rating: 6": None,
    "Rating: 3-4": None,
    "3.5": None,
    "I cannot rate this story.": None,
    "The story was written in 1999.": None,
    "": None,
}


@pytest.mark.parametrize("answer", ANSWERS)
def test_the_parser_reads_real_looking_answers(answer):
    from storyeval.judges.parse import parse_rating

    assert parse_rating(answer) == ANSWERS[answer]


@pytest.mark.parametrize("folder", ["judge_folder", "plain_folder"])
def test_the_prompt_ends_at_the_answer_position(folder, request):
    from transformers import AutoTokenizer

    from storyeval.judges.prompts import hanna_criteria, load_template, prompt_text
    from storyeval.judges.rate import answer_position

    tokenizer = AutoTokenizer.from_pretrained(request.getfixturevalue(folder))
    row = {"prompt": PROMPTS[0], "story": STORIES[0], "reference": STORIES[1]}
    text, special = prompt_text(tokenizer, load_template("tacl-4"), row, "Empathy", hanna_criteria())
    chat = text.startswith("<|endoftext|>user: ") and text.endswith("assistant: Rating:")
    assert chat == (folder == "judge_folder")
    assert "how well the reader understood" in text and STORIES[1] in text
    ids, ratings = answer_position(tokenizer, text, special)
    assert [tokenizer.decode([token]).strip() for token in ratings] == ["1", "2", "3", "4", "5"]
    assert tokenizer.decode(ids + [ratings[3]]).endswith("Rating: 4")


def test_modes_batches_and_parse_failures(judge_folder):
    """Batching does not change a story's rating beyond float rounding; mode generate reports what it could not
    parse as NaN (a random model answers gibberish)."""
    import storyeval
    from storyeval.judges.prompts import hanna_criteria, load_template
    from storyeval.judges.rate import Settings, rate

    one = storyeval.judge(STORIES, criteria={"Plot": "how good the plot is"}, model=str(judge_folder),
                          prompts=PROMPTS, batch_size=1, device="cpu")
    many = storyeval.judge(STORIES, criteria={"Plot": "how good the plot is"}, model=str(judge_folder),
                           prompts=PROMPTS, batch_size=8, device="cpu")
    assert ((one >= 1) & (one <= 5)).all().all()
    np.testing.assert_allclose(one.to_numpy(), many.to_numpy(), rtol=1e-5)
    texts = storyeval.api.texts_table(STORIES, prompts=PROMPTS)
    scores, details, run = rate(texts, hanna_criteria(), load_template("tacl-2"), judge_folder,
                                Settings(mode="generate", max_new_tokens=4), device="cpu")
    assert run["forward_passes"] == 18 and run["prompt_tokens"] == details["prompt_tokens"].sum()
    assert run["parse_failures"] == details["value"].isna().sum() == scores.isna().sum().sum()
    assert details["answer"].map(type).eq(str).all()


def test_bad_input_is_one_line(judge_folder):
    import storyeval
    from storyeval.errors import InputError

    with pytest.raises(InputError, match="criterion 'Plot'.*fix: pass criteria as"):
        storyeval.judge(STORIES, criteria=["Plot"], model=str(judge_folder))
    with pytest.raises(InputError, match="tacl-1: it reads the prompt.*fix: use a template that does not"):
        storyeval.judge(STORIES, criteria=["Coherence"], model=str(judge_folder), template="tacl-1")
    with pytest.raises(InputError, match="no template 'tacl-9'; fix: use one of geval, pairwise, pairwise-stories, "
                                         "tacl-1"):
        storyeval.judge(STORIES, criteria=["Coherence"], model=str(judge_folder), template="tacl-9")
    with pytest.raises(InputError, match="judge: cannot load"):
        storyeval.judge(STORIES, criteria=["Coherence"], model=str(Path(judge_folder).parent))


def test_the_config_check_names_the_key():
    import yaml

    from storyeval.errors import InputError
    from storyeval.judges.config import check_judges, jobs

    from conftest import REPO

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["judges"] |= {"models": {"tiny": {"path": "x"}}, "batch_size": 8, "batch_tokens": 8192,
                         "max_new_tokens": 4, "dtype": "auto"}
    check_judges(config)
    assert jobs(config, "hanna-llm") == [("tiny", "tacl-1")] and jobs(config, "wp200") == []
    config["datasets"]["mine"] = {"kind": "table", "columns": {"story_id": "id", "story": "text"}, "metrics": []}
    config["judges"]["datasets"]["mine"] = {}
    with pytest.raises(InputError, match=r"judges.datasets.mine.criteria: missing; fix: give each criterion"):
        check_judges(config)
    config["judges"]["datasets"]["mine"] = {"criteria": {"Flow": "how the story flows"}}
    with pytest.raises(InputError, match="template tacl-1 reads the prompt of each story, which dataset mine lacks"):
        check_judges(config)
    config["judges"]["datasets"]["mine"]["templates"] = ["geval"]
    check_judges(config)
    config["judges"]["datasets"]["nope"] = {}
    with pytest.raises(InputError, match="judges.datasets.nope: no dataset 'nope' under datasets; fix: add it"):
        check_judges(config)


def test_interval_alpha_by_hand():
    from storyeval.judges.validation import interval_alpha

    # Raters 1,2,3 and 1,2,4: n = 6 pairable values; D_o = (1/n) sum over units of both ordered pairs' squared
    # differences = 2/6; D_e = the mean squared difference over all ordered pairs of the six values, 82/30.
    values = [1, 2, 3, 1, 2, 4]
    assert sum((a - b) ** 2 for a in values for b in values) / 30 == pytest.approx(82 / 30)
    assert interval_alpha(np.array([1.0, 2, 3]), np.array([1.0, 2, 4])) == pytest.approx(1 - (2 / 6) / (82 / 30))
    assert interval_alpha(np.array([1.0, 2, 3]), np.array([1.0, 2, 3])) == 1.0


def test_validation_table_pairs_each_column_with_its_released_judge():
    from storyeval.data.hanna_judges import judge_registry as released_registry
    from storyeval.judges import judge_registry
    from storyeval.judges.prompts import load_template
    from storyeval.judges.validation import validation_table

    stories = [f"p{k:03d}-human" for k in range(6)]
    released = released_registry(["Mistral-7B CH 1", "Mistral-7B CH 2", "ChatGPT CH 1"])
    theirs = [1.0, 2, 3, 4, 5, 0]  # the last one off the scale, kept as released
    released_scores = pd.DataFrame({"story_id": stories * 3, "metric": np.repeat(released["slug"], 6),
                                    "value": theirs + [3.0] * 6 + [2.0] * 6})
    ours = [1.2, 2.4, 2.6, 4.4, 4.6, 1.0]
    registry = judge_registry("mistral", load_template("tacl-1"), ["Coherence"], "expected")
    computed = pd.DataFrame({"story_id": stories + ["p999-x"], "metric": registry["slug"][0], "value": ours + [9.0]})
    table = validation_table(computed, registry, released_scores, released, {"mistral": "Mistral-7B"})
    row = table.iloc[0]
    assert len(table) == 1 and row["released_slug"] == "mistral-7b-ch-t1" and row["n"] == 6
    assert row["share_exact"] == pytest.approx(5 / 6) and row["released_off_scale"] == 1
    assert row["pearson_r"] == pytest.approx(np.corrcoef(ours, theirs)[0, 1])
    assert row["mean_abs_diff"] == pytest.approx(np.mean(np.abs(np.subtract(ours, theirs))))


def test_a_pinned_judge_is_the_commit_its_folder_records(judge_folder, tmp_path):
    import shutil

    from storyeval.errors import InputError
    from storyeval.judges.rate import load_judge

    folder = shutil.copytree(judge_folder, tmp_path / "pinned")
    (folder / ".revision").write_text("a" * 40 + "\n")
    assert load_judge("judges.models.tiny", str(folder), "cpu", "a" * 40)[0].training is False
    with pytest.raises(InputError, match=f"judges.models.tiny {folder}: revision {'b' * 40} pinned, {'a' * 40} found"):
        load_judge("judges.models.tiny", str(folder), "cpu", "b" * 40)


@pytest.mark.parametrize("content, message", [
    ('user: |-\n  Rate the {criterion} of this story.\nanswer: "Rating:"\n',
     "line 1, user has no {story}: every story would get the same prompt and the same rating; fix: place {story}"),
    ('user: "Story: {story}"\nanswer: "Rating:"\n',
     "line 1, user has no {criterion} (nor {description}): every criterion would get the same prompt; fix: place"),
    ('task: null\nuser: |-\n  Rate {criterion}.\n\n  Story: {story}\n  Answer as {"score": 3}.\nanswer: "Rating:"\n',
     "line 6, user has '{\"score\": 3}.', not a field (criterion, description, guidelines, prompt, reference, "
     "story, story_a, story_b); fix: double a literal brace ({{ and }}"),
    ('user: "{story} and {story_b}, {criterion}"\nanswer: "Better:"\n',
     "line 1, user places story, story_b; fix: place {story} to rate one story, or {story_a} and {story_b}"),
    ('user: "{story} {criterion} }"\nanswer: "Rating:"\n', "line 1, user has '}', not a field"),
    ('user: "{story} {criterion}"\nanswer: "{story}:"\n', "line 2, answer has '{story}:', not a field "
                                                          "(criterion, description)"),
    ('user: "{story} {criterion!r}"\nanswer: "Rating:"\n', "line 1, user has '{criterion!r}', not a field"),
    ("user: [a\nanswer: b\n", "line 2, not YAML (while parsing a flow sequence expected ',' or ']', but got ':'); "
                              "fix: correct that line"),
    ("- a\n", "holds a list, not a template; fix: give `user`"),
    ('user: "{story} {criterion}"\n', "answer is missing or not text; fix: give `user`"),
])
def test_a_template_places_the_story_and_the_criterion(tmp_path, content, message):
    """A template that gives every story (or criterion) one prompt, or whose braces str.format cannot fill, is
    refused when read (at start-up: the config check reads every template), naming its file and line."""
    import yaml

    from storyeval.errors import InputError
    from storyeval.judges.config import check_judges
    from storyeval.judges.prompts import load_template

    from conftest import REPO

    path = tmp_path / "mine.yaml"
    path.write_text(content)
    with pytest.raises(InputError) as error:
        load_template(str(path))
    assert str(error.value).startswith(f"{path}: {message}") and "\n" not in str(error.value), str(error.value)
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["judges"]["templates"] = [str(path)]
    with pytest.raises(InputError, match=re.escape(f"{path}: {message}")):
        check_judges(config)


def test_doubled_braces_are_literal_and_the_answer_names_the_criterion(tmp_path):
    from storyeval.judges.prompts import load_template

    path = tmp_path / "json.yaml"
    path.write_text('user: |-\n  Story: {story}\n  Rate {criterion}, answer as {{"score": 3}}.\n'
                    'answer: "{criterion}:"\n')
    message = load_template(str(path)).message({"story": "Once."}, "Plot", {"Plot": "p"})
    assert message == 'Story: Once.\nRate Plot, answer as {"score": 3}.'


def test_judge_settings_are_bounded_before_loading(tmp_path):
    """Settings outside storyeval.parameters.JUDGE stop judge() before a model is read (the path does not exist);
    the config refuses the same values at start-up (schema, same fragments)."""
    import storyeval
    from storyeval.errors import InputError

    for settings, message in [({"max_new_tokens": 10**9}, "judge: max_new_tokens=1000000000: 1000000000 is "
                                                          "greater than the maximum of 4096; fix: pass an integer "
                                                          "from 1 to 4096"),
                              ({"batch_size": "8"}, "judge: batch_size='8': '8' is not of type 'integer'; fix: pass an "
                                                    "integer from 1 to 4096"),
                              ({"mode": "sample"}, "judge: mode='sample': 'sample' is not one of ['expected', "
                                                   "'generate', 'pairwise']; fix: pass one of expected, generate, "
                                                   "pairwise"),
                              ({"pairs": 0}, "judge: pairs=0: 0 is less than the minimum of 1; fix: pass one of "
                                             "auto, all or an integer from 1 to 1000")]:
        with pytest.raises(InputError, match=re.escape(message)):
            storyeval.judge(STORIES, criteria=["Coherence"], model=str(tmp_path / "absent"), **settings)


def test_one_criterion_name_is_one_criterion(judge_folder):
    import storyeval

    scores = storyeval.judge(STORIES, criteria="Coherence", model=str(judge_folder), device="cpu")
    assert list(scores.columns) == ["Coherence"] and len(scores) == 3


def test_the_window_message_tells_the_answer_from_the_prompt(judge_folder):
    """An answer budget (max_new_tokens) that fills the window leaves no prompt room: a settings error, named as
    such (a prompt past the window follows the truncate policy: tests/test_judge_window.py)."""
    from storyeval.api import texts_table
    from storyeval.errors import InputError
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import Settings, rate

    with pytest.raises(InputError, match=r"judge: 4000 answer tokens \(max_new_tokens\) leave no room for a prompt "
                                         r"in the model's 2048-token window; fix: lower max_new_tokens"):
        rate(texts_table(STORIES), {"Plot": "p"}, load_template("geval"), judge_folder,
             Settings(mode="generate", max_new_tokens=4000), device="cpu")
