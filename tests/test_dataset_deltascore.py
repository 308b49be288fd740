"""Kind deltascore (Xie et al., Findings of EMNLP 2023) on the real mirrored release: the prompt x system grid of
each corpus, GPT-3 under one name, the rater means, the two rating sets' system-level agreement (scipy against a
by-hand computation on the raw JSON) and the entry's errors."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from storyeval.datasets import describe, paper_recipes
from storyeval.errors import InputError
from storyeval.workflow.sources import Pinned

from conftest import mirror_or_skip

SYSTEMS = {"roc": ["BART", "GPT-3", "HINT", "KGGPT2", "MEGATRON", "PROGEN3"],
           "wp": ["BART", "GPT-3", "HINT", "PROGEN3"]}
CRITERIA = ("Fluency", "Coherence", "Relatedness", "Logicality", "Interestingness")


@pytest.fixture(scope="module")
def mirror():
    return mirror_or_skip("deltascore", "crowdsource_roc.jsonl", "DeltaScore")


def entry(corpus: str, **more) -> dict:
    return {"kind": "deltascore", "corpus": corpus, **more}


def loaded(mirror, corpus: str, ratings: str = "crowdsource"):
    declared = describe(entry(corpus, ratings=ratings), f"deltascore-{corpus}")
    return declared, declared.load([str(mirror / f"{key}.jsonl") for key in declared.inputs], f"deltascore-{corpus}")


def raw(mirror, name: str) -> list[dict]:
    return [json.loads(line) for line in (mirror / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("corpus", ["roc", "wp"])
@pytest.mark.parametrize("ratings", ["crowdsource", "inhouse"])
def test_each_corpus_is_a_grid_of_20_prompts_and_its_systems(mirror, corpus, ratings):
    declared, data = loaded(mirror, corpus, ratings)
    texts = data.texts
    assert declared.grouped and declared.levels == ["story", "system"] and not declared.raters
    assert len(texts) == 20 * len(SYSTEMS[corpus]) and texts["prompt_id"].nunique() == 20
    assert sorted(texts["system"].unique()) == SYSTEMS[corpus]
    assert (texts.groupby("prompt_id")["system"].nunique() == len(SYSTEMS[corpus])).all()
    assert (texts.groupby("prompt_id")["reference"].nunique() == 1).all()  # the human story of the prompt
    assert texts["story_id"].str.fullmatch(r"p0\d\d-[a-z0-9-]+").all()
    assert data.ratings is None  # rater means only
    assert sorted(data.human_scores["criterion"].unique()) == sorted(CRITERIA)
    assert len(data.human_scores) == len(texts) * 5


def test_gpt3_has_one_name_though_the_crowd_wp_file_calls_it_davinci(mirror):
    assert {line["model"] for line in raw(mirror, "crowdsource_wp")} >= {"DAVINCI"}
    assert {line["model"] for line in raw(mirror, "inhouse_wp")} >= {"gpt3"}
    for ratings in ("crowdsource", "inhouse"):
        _, data = loaded(mirror, "wp", ratings)
        assert (data.texts["system"] == "GPT-3").sum() == 20 and "p000-gpt-3" in set(data.texts["story_id"])


def test_scores_are_the_released_means_of_three_raters(mirror):
    lines = raw(mirror, "crowdsource_roc")
    _, data = loaded(mirror, "roc")
    scores = data.human_scores.set_index(["story_id", "criterion"])["score"]
    ids = dict(zip(zip(data.texts["prompt"], data.texts["system"]), data.texts["story_id"]))
    line = lines[7]
    system = "GPT-3" if line["model"] == "gpt3" else line["model"]
    assert scores[ids[line["title"], system], "Logicality"] == line["logicality"]
    # Every mean is k/3 rounded to two decimals: three raters per story.
    assert all(abs(Fraction(value).limit_denominator(3) - Fraction(value)) < 0.01 for value in scores)


def test_the_two_rating_sets_rate_different_stories(mirror):
    for corpus in ("roc", "wp"):
        crowd, inhouse = (loaded(mirror, corpus, ratings)[1].texts for ratings in ("crowdsource", "inhouse"))
        assert not set(crowd["story"]) & set(inhouse["story"]) and not set(crowd["prompt"]) & set(inhouse["prompt"])


def test_agreement_recipe_matches_system_means_by_hand(mirror):
    declared = describe(entry("wp"), "deltascore-wp")
    paths = [str(mirror / f"{key}.jsonl") for key in declared.recipe_inputs]
    table = paper_recipes(entry("wp"), "deltascore-wp", paths)
    assert len(table) == 5 * 3 and table["value"].between(-1, 1).all()

    def means(name):  # by hand on the raw lines: the mean fluency of each system
        rows = pd.DataFrame(raw(mirror, name)).replace({"model": {"DAVINCI": "gpt3"}})
        return rows.groupby("model")["fluency"].mean().sort_index()

    crowd, inhouse = means("crowdsource_wp"), means("inhouse_wp")
    expected = np.corrcoef(crowd.to_numpy(), inhouse.to_numpy())[0, 1]
    got = table.set_index("item").at["Fluency system means, crowdsource vs inhouse, pearson (n=4)", "value"]
    assert got == pytest.approx(expected, abs=1e-12)


def test_a_damaged_rating_is_one_line_naming_file_and_column(mirror, tmp_path):
    lines = raw(mirror, "crowdsource_roc")
    lines[3]["coherence"] = 7
    path = tmp_path / "roc.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    with pytest.raises(InputError, match=r"line 4, column 'coherence': 7 is not a rating in \[1, 5\]"):
        describe(entry("roc"), "d").load(str(path), "d")
    lines[3]["coherence"] = "good"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    with pytest.raises(InputError, match=r"line 4, column 'coherence': 'good' is not a rating"):
        describe(entry("roc"), "d").load(str(path), "d")


@pytest.mark.parametrize(("key", "value"), [("corpus", "hippocorpus"), ("ratings", "experts")])
def test_an_unknown_corpus_or_rating_set_names_the_key_and_choices(key, value):
    with pytest.raises(InputError, match=rf"datasets\.d\.{key}: '{value}'.*fix: use one of"):
        describe({**entry("roc"), key: value}, "d")
    with pytest.raises(InputError, match=r"datasets\.d\.corpus: None"):
        describe({"kind": "deltascore"}, "d")


def test_the_default_config_plans_both_corpora_under_dataset_deltascore():
    from test_workflow_plan import checked

    from storyeval.config import ConfigSources, check_datasets
    from storyeval.workflow import targets
    from storyeval.workflow.run import Run

    run = Run(checked())
    check_datasets(run.config, ConfigSources())  # a built-in release's entry names no file: its kind does
    assert {"deltascore-roc", "deltascore-wp"} <= set(run.recipe_sets) - set(run.released_sets)
    wanted = targets.kind_targets(run)["deltascore"]
    assert {"results/deltascore-roc/paper_recipes.csv", "results/deltascore-wp/computed/correlations.csv"} <= set(
        wanted)
    assert run.structure("deltascore-wp", "computed")["levels"] == ["story", "system"]
    assert Pinned(run.config).text_sources("deltascore-wp") == ["resources/deltascore/crowdsource_wp.jsonl"]
