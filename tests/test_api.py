"""storyeval.api: every metric and the correlation table from Python, as the workflow computes them."""

import doctest
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import storyeval.api
import storyeval.metrics.base
from storyeval.api import correlations, score, texts_table
from storyeval.errors import InputError
from storyeval.metrics import catalog

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("module", [storyeval.api, storyeval.metrics.base])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and not result.failed


def test_score_cleans_and_uses_the_workflow_defaults(hanna_llm_texts):
    """On real stories: the call equals compute() on the loader's cleaned table, with the same columns;
    text with line-break markers scores as the workflow's cleaned text."""
    texts = hanna_llm_texts[hanna_llm_texts["prompt_id"] < 2]
    marked = texts["story"].str.replace(". ", ".<newline><newline>", n=1, regex=False)
    for metric in ["bleu", "rouge", "chrf", "cider", "datastats", "textstats"]:
        expected = catalog.load(metric).compute(texts)
        got = score(metric, marked, references=texts["reference"], prompts=texts["prompt"], story_ids=texts["story_id"])
        pd.testing.assert_frame_equal(got, expected)
        assert list(got.columns) == list(catalog.entry(metric).columns)


def test_score_refuses_what_a_metric_cannot_read():
    with pytest.raises(InputError, match="no reference .*fix:"):
        score("chrf", ["A story."])
    with pytest.raises(InputError, match="reads a model .*fix: pass model="):
        score("bertscore", ["A story."], references=["A reference."])
    with pytest.raises(InputError, match="reads no model; fix"):
        score("bleu", ["A story."], references=["A reference."], model="bundled")
    with pytest.raises(InputError, match="2 references for 1 stories; fix"):
        texts_table(["A story."], references=["One.", "Two."])
    with pytest.raises(InputError, match="unknown text metric 'bleurt'"):
        score("bleurt", ["A story."])


def test_neural_metric_from_a_model_path(minilm):
    stories = ["The knight met the dragon.<newline>They talked.", "Rain fell on the town."]
    references = ["A knight met a dragon, and they talked.", "It rained on the town all night."]
    scores = score("bertscore", stories, references=references, model=str(minilm))
    assert list(scores.columns) == list(catalog.entry("bertscore").columns)
    assert ((scores > 0) & (scores <= 1)).all().all()
    assert scores.loc["0", "bertscore-f1"] > scores.loc["1", "bertscore-f1"]
    same = score("bertscore", stories, references=references, model="bundled")
    pd.testing.assert_frame_equal(scores, same, atol=1e-6, rtol=0)


def test_correlations_equal_the_workflow_table(released, hanna_correlations):
    stories = released.stories[released.stories["system"] != "Human"].set_index("story_id")
    wide = {name: frame.pivot(index="story_id", columns=key, values=value).loc[stories.index]
            for name, frame, key, value in [("scores", released.scores, "metric", "value"),
                                            ("human", released.human_scores, "criterion", "score")]}
    table = correlations(wide["scores"][list(released.registry["slug"])], wide["human"],
                         prompts=stories["prompt_id"], systems=stories["system"])
    keys = ["kind", "level", "coefficient", "x", "y"]
    merged = table.merge(hanna_correlations, on=keys, suffixes=("", "_workflow"))
    assert len(merged) == len(table) == len(hanna_correlations)
    np.testing.assert_allclose(merged["r"], merged["r_workflow"], rtol=0, atol=1e-12, equal_nan=True)
    assert (merged["n"] == merged["n_workflow"]).all()


def test_correlations_at_the_levels_the_data_allow():
    human = pd.DataFrame({"Overall": [1.0, 3.0, 2.0, 5.0, 4.0]}, index=list("abcde"))
    scores = pd.DataFrame({"m": [2.0, 6.0, 4.0, 10.0, 8.0]}, index=human.index)
    table = correlations(scores, human, coefficients=["pearson"])
    assert set(table["level"]) == {"story"}  # no systems: one group over all stories
    assert table.query("kind == 'metric_criterion'")["r"].iloc[0] == pytest.approx(1.0)
    by_system = correlations(scores, human, systems=["x", "x", "y", "y", "z"], coefficients=["pearson"])
    assert set(by_system["level"]) == {"story", "system"}
    assert by_system.query("kind == 'metric_criterion' and level == 'system'")["n"].iloc[0] == 3
    with pytest.raises(InputError, match="levels \\['system'\\], but these data allow \\['story'\\]; fix"):
        correlations(scores, human, levels=["system"])


def test_library_and_workflow_defaults_agree():
    """Williams' story mode: the library's default is the workflow's (README 'Williams test')."""
    import inspect

    from storyeval.stats.williams import williams_inputs

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    default = inspect.signature(williams_inputs).parameters["story_mode"].default
    assert default == "pooled" == config["stats"]["williams_story_mode"]
    assert schema["properties"]["stats"]["properties"]["williams_story_mode"]["default"] == default
