"""Kind pds (Harel-Canada et al. 2024) on the real mirrored release: the loader, the released judges, the
authors' recipes."""

import csv
from statistics import mean

import numpy as np
import pytest
from scipy import stats

from storyeval.datasets import describe, pds
from storyeval.errors import InputError

from conftest import SHARED, mirror_or_skip

MIRROR = SHARED / "data" / "pds"
FILES = {key: MIRROR / entry["local"] for key, entry in pds.SOURCE["files"].items()}
# The authors' recipe run with their own dependency, the `agreement` package (0.1.x: krippendorffs_alpha with
# ordinal_kernel on pivot_table_frequency's count table), on human_annotations.csv by the research notes of this
# reproduction; rounded to 4 decimals there.
AGREEMENT_PACKAGE = {"authenticity": 0.0526, "empathy": 0.1876, "engagement": 0.1485, "emotion_provoking": 0.1011,
                     "narrative_complexity": 0.1678, "human_likeness": 0.1033, pds.MEAN_ITEM: 0.1315}


@pytest.fixture(scope="module")
def data():
    mirror_or_skip("pds", FILES["stories"].name, "PDS")
    return pds.load([FILES["stories"], FILES["human"]], "pds")


def raw_rows(key, encoding="utf-8"):
    with open(FILES[key], encoding=encoding, newline="") as handle:
        return list(csv.DictReader(handle))


def test_counts_systems_raters_and_criteria(data):
    texts = data.texts
    assert len(texts) == 97 and texts["prompt"].nunique() == 15
    assert texts["prompt_id"].isna().all() and texts["reference"].isna().all()  # one group, no references
    assert sorted(texts["system"].unique()) == ["GPT-4", "Human-Advanced", "Human-Intermediate", "Human-Novice",
                                                "Llama-2-13B", "Llama-2-70B", "Llama-2-7B", "Vicuna-33B"]
    assert data.ratings["worker"].nunique() == 5 and len(data.ratings) == 97 * 5 * 6
    assert tuple(data.human_scores["criterion"].unique()) == tuple(sorted(pds.CRITERIA))
    assert data.ratings.groupby(["story_id", "criterion"]).size().eq(5).all()  # no gap, no duplicate
    described = describe({"kind": "pds"}, "pds")
    assert not described.grouped and described.levels == ["story"] and described.reference_system is None


def test_no_grid_two_stories_share_a_premise_and_writer(data):
    cells = data.texts.groupby(["prompt", "system"]).size()
    assert cells.max() == 2 and (cells == 2).sum() == 16  # why the stories form one group


def test_windows_1252_text_and_ids(data):
    with pytest.raises(UnicodeDecodeError):
        FILES["stories"].read_bytes().decode("utf-8")
    story = data.texts.set_index("story_id").loc["s00-vicuna-33b", "story"]
    assert story.startswith("Susan Johnson looked around in awe")
    assert any("\u2019" in text for text in data.texts["story"])  # byte 0x92, a right single quote
    humans = data.texts[data.texts["system"].str.startswith("Human")]
    assert len(humans) == 10 and "s10-human-novice" in set(humans["story_id"])  # Reddit id j5eqypx, study_id 10


def test_human_scores_are_rater_means(data):
    rows = [row for row in raw_rows("human") if row["study_id"] == "52"]
    expected = mean(float(row["empathy_score"]) for row in rows)
    scores = data.human_scores.set_index(["story_id", "criterion"])["score"]
    assert scores["s52-human-advanced", "empathy"] == pytest.approx(expected)


def test_released_judges_are_persona_means(data):
    paths = [FILES["stories"], FILES["gpt-3.5"], FILES["gpt-4"]]
    scores, registry = pds.released(paths, "pds", data.texts)
    assert len(registry) == 12 and set(registry["family"]) == {"llm-judge"} and set(registry["personas"]) == {3}
    assert set(scores["story_id"]) == set(data.texts["story_id"]) and len(scores) == 97 * 12
    rows = [row for row in raw_rows("gpt-4") if row["story_id"] == "0"]
    expected = mean(float(row["narrative_complexity_score"]) for row in rows)
    value = scores.set_index(["story_id", "metric"])["value"]["s00-vicuna-33b", "gpt-4-mop-narrative-complexity"]
    assert len(rows) == 3 and value == pytest.approx(expected)


def test_recipes_match_the_agreement_package_and_a_spearman_by_hand(data):
    table = pds.recipes([FILES["stories"], FILES["human"], FILES["gpt-3.5"], FILES["gpt-4"]], "pds")
    values = table.set_index("item")["value"]
    for criterion, expected in AGREEMENT_PACKAGE.items():
        assert values[f"{pds.ALPHA_ITEM}: {criterion}"] == pytest.approx(expected, abs=5e-5)
    humans, judge = {}, {}
    for row in raw_rows("human"):
        humans.setdefault(row["study_id"], []).append(float(row["empathy_score"]))
    for row in raw_rows("gpt-3.5"):
        judge.setdefault(row["story_id"], []).append(float(row["empathy_score"]))
    shared = sorted(humans, key=int)  # the judges' extra stories (70, 71, 83) have no human ratings
    expected = stats.spearmanr([round(mean(humans[s]), 2) for s in shared], [round(mean(judge[s]), 2) for s in shared])
    assert values["Spearman GPT-3.5 MoP: empathy"] == pytest.approx(expected.statistic, abs=1e-12)
    assert np.isclose(values[f"Spearman GPT-4 MoP: {pds.MEAN_ITEM}"],
                      mean(values[f"Spearman GPT-4 MoP: {name}"] for name in pds.COMPONENTS))


def test_a_human_row_of_another_story_is_refused(data, tmp_path):
    text = FILES["human"].read_text()
    bad = tmp_path / "human_annotations.csv"
    bad.write_text(text.replace("\n2,0,2,2,1,2,1,1,0,10,Vicuna-33B,", "\n2,0,2,2,1,2,1,1,0,10,GPT-4,", 1))
    with pytest.raises(InputError, match=r"human_annotations.csv row 2 \(study_id 0\) names .*another"):
        pds.load([FILES["stories"], bad], "pds")


def test_a_judge_naming_another_writer_is_refused(data, tmp_path):
    bad = tmp_path / "gpt-4_annotations.csv"
    bad.write_text(FILES["gpt-4"].read_text().replace("Human-Low", "Llama-2-7B", 1))
    with pytest.raises(InputError, match="names story 10 as written by Llama-2-7B, study_stories.csv by Human-Novice"):
        pds.released([FILES["stories"], FILES["gpt-3.5"], bad], "pds", data.texts)


def test_each_premise_one_prompt_text_despite_the_human_rows_variants(data):
    raw = raw_rows("stories", "cp1252")
    assert len({row["premise"] for row in raw}) == 17  # premises 7 and 14 spelt twice
    mojibake = next(row["premise"] for row in raw if row["study_id"] == "10")
    assert mojibake.endswith("'rent'''''\u00ef??\u00ef")
    prompt = data.texts.set_index("story_id").loc["s10-human-novice", "prompt"]
    assert prompt.endswith("\u201crent\u201d. This year things are different. The new queens are politely requesting "
                           "that you invest some money to improve the hives.")
