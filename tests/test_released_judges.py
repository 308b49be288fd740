"""The LLM judges released with HANNA, PDS and TTCW measured as the judges storyeval runs (storyeval.judges.released):
the real files' gaps counted, planted gaps counted exactly, the personas' histogram against the raters' by hand,
and the table in the default targets."""

import json
from pathlib import Path

import pandas as pd
import pytest

from storyeval.data.scoreset import MIN_CELLS
from storyeval.datasets import ttcw as ttcw_kind
from storyeval.errors import InputError
from storyeval.judges.gaps import NO_RATING
from storyeval.judges.released import ABSENT, COLUMNS, NO_VERDICT, OFF_SCALE, released_judges
from storyeval.stats.distribution import histogram_agreement

from conftest import SHARED, mirror_or_skip

PDS = ("study_stories.csv", "human_annotations.csv", "gpt-3.5_annotations.csv", "gpt-4_annotations.csv")


def pds_files() -> list[Path]:
    mirror = mirror_or_skip("pds", "gpt-4_annotations.csv", "PDS")
    return [mirror / name for name in PDS]


def ttcw_files() -> list[Path]:
    mirror = mirror_or_skip("ttcw", "annotations_gpt4.jsonl", "TTCW")
    return [mirror / "ttcw_short_stories.json", mirror / "ttcw_annotations.json",
            *(mirror / f"annotations_{judge}.jsonl" for judge in ttcw_kind.JUDGES)]


def long(rated: dict) -> pd.DataFrame:
    """{(story, criterion): [ratings]} as one row per rating."""
    return pd.DataFrame([{"story_id": story, "criterion": criterion, "rating": rating}
                         for (story, criterion), ratings in rated.items() for rating in ratings])


def test_a_judge_whose_personas_rate_as_the_raters_do_is_at_distance_zero():
    raters = long({("a", "X"): [2, 2, 4, 4, 4, 4], ("b", "X"): [3, 4]})
    same = histogram_agreement(raters, long({("a", "X"): [2, 4, 4], ("b", "X"): [3, 4]}))
    # b's personas both say 3.5, half a point from each rater: 0.5; a's histogram is the raters' (1/3 on 2): 0
    halves = histogram_agreement(raters, long({("a", "X"): [2, 4, 4], ("b", "X"): [3.5, 3.5]}))
    assert same.loc[0, "distance"] == pytest.approx(0, abs=1e-12)
    assert halves.loc[0, "distance"] == pytest.approx(0.25)
    # raters' ceiling: a, a 2 against {2, 4, 4, 4, 4}: 4/5 x 2 = 1.6, twice; a 4 against {2, 2, 4, 4, 4}: 0.8,
    # four times; b: 1 twice
    assert same.loc[0, "raters_loo_distance"] == pytest.approx(((2 * 1.6 + 4 * 0.8) / 6 + 1) / 2)
    assert same.loc[0, "stories"] == 2


def test_one_judge_rating_a_story_is_no_histogram():
    raters = long({("a", "X"): [1, 5], ("b", "X"): [2, 2]})
    table = histogram_agreement(raters, long({("a", "X"): [3], ("b", "X"): [2, 2, 9]}))  # 9: off the scale
    assert table.loc[0, "stories"] == 1 and table.loc[0, "distance"] == pytest.approx(0)


def test_planted_gaps_in_a_persona_file_are_counted_exactly(tmp_path):
    files = pds_files()
    judge = pd.read_csv(files[2], dtype=str, keep_default_na=False)
    judge = judge.drop(index=[0, 1])  # two (story, persona) rows absent
    prose = "I would rate the empathy of this story quite highly, though not perfectly, as its ending rushes."
    judge.iloc[0, judge.columns.get_loc("empathy_score")] = prose
    judge.iloc[1, judge.columns.get_loc("engagement_score")] = "7"
    planted = tmp_path / "gpt-3.5_annotations.csv"
    judge.to_csv(planted, index=False)
    table = released_judges("pds", [files[0], files[1], planted, files[3]])
    assert list(table.columns) == COLUMNS
    table = table.set_index(["judge", "criterion"])
    empathy, engagement = table.loc[("GPT-3.5", "empathy")], table.loc[("GPT-3.5", "engagement")]
    assert empathy[["expected", "present", "missing", "absent", "off_scale", "unparsable"]].tolist() == [
        291, 288, 3, 2, 0, 1]
    assert empathy["reason"] == f"2 {ABSENT}; 1 {NO_RATING}"
    assert json.loads(f"[{empathy['answers']}]") == [prose[:77] + "..."]  # at most 80 characters, as computed judges
    assert engagement[["missing", "absent", "off_scale"]].tolist() == [3, 2, 1] and engagement["answers"] == '"7"'
    assert engagement["reason"] == f"2 {ABSENT}; 1 {OFF_SCALE}"
    assert table.loc[("GPT-4", "empathy"), "missing"] == 0  # the other judge untouched


def test_pds_personas_against_the_participants():
    table = released_judges("pds", pds_files())
    assert len(table) == 12 and (table["missing"] == 0).all() and (table["distribution_stories"] == 97).all()
    assert (table["expected"] == 97 * 3).all() and not table["left_out"].any()
    # a histogram of three personas may sit nearer the five participants than one participant does: below the
    # raters' own value on every criterion of both judges
    assert (table["distance"] < table["raters_loo_distance"]).all()
    assert table["position"].str.startswith("not measurable").all()


def test_ttcw_real_answers_and_a_judge_left_out(tmp_path):
    files = ttcw_files()
    table = released_judges("ttcw", files).set_index(["judge", "criterion"])
    gemini = table.loc[("Gemini Pro", "Tests passed")]
    assert gemini[["expected", "missing", "unparsable", "absent"]].tolist() == [36 * 14, 32, 32, 0]
    assert gemini["answers"] == '"Content Blocked", "Content Blocked", "Content Blocked"'
    assert table.loc[("Claude v2", "Tests passed"), "reason"] == f"1 {NO_VERDICT}"
    assert table["missing"].groupby(level="criterion").sum()["Tests passed"] == 33
    assert table["distribution_note"].str.contains("off the 1-5 scale").all()
    # a judge that answers two stories' tests only, in prose elsewhere, and lacks a third story: too few stories
    lines = [json.loads(line) for line in files[2].read_text(encoding="utf-8").splitlines()]
    answered, dropped = {"story_0_GPT4", "story_1_GPT4"}, "story_2_Claude"
    planted = [{"id": line["id"], "response": "Yes." if line["id"].rsplit("_", 1)[0] in answered
                else "As an AI, I find this story delightful."} for line in lines
               if line["id"].rsplit("_", 1)[0] != dropped]
    (tmp_path / "gemini.jsonl").write_text("\n".join(map(json.dumps, planted)), encoding="utf-8")
    ours = released_judges("ttcw", [files[0], files[1], tmp_path / "gemini.jsonl", *files[3:]])
    gemini = ours[ours["judge"] == "Gemini Pro"].set_index("criterion")
    assert gemini.loc["Tests passed", ["present", "absent", "unparsable", "rated_stories"]].tolist() == [
        2 * 14, 14, 33 * 14, 2]
    assert gemini.loc["Fluency", ["present", "absent", "unparsable"]].tolist() == [2 * 5, 5, 33 * 5]
    assert gemini["left_out"].all() and 2 < MIN_CELLS
    assert set(gemini.loc["Tests passed", "reason"].split("; ")) == {f"14 {ABSENT}", f"{33 * 14} {NO_VERDICT}"}

def test_hanna_values_off_the_scale():
    path = SHARED / "data" / "hanna" / "hanna_metric_scores_llm.csv"
    if not path.is_file():
        pytest.skip(f"the HANNA mirror {path.parent} is absent")
    table = released_judges("hanna", [path]).set_index(["judge", "setup", "criterion"])
    assert len(table) == 5 * 4 * 7 and (table["stories"] == 1056).all() and (table["absent"] == 0).all()
    assert table.loc[("Mistral-7B", "Eval-Prompt 1: simple rating", "Surprise"), "off_scale"] == 80
    assert table["off_scale"].sum() == 1174 and (table["answers"] == "").all()
    assert table["distance"].isna().all() and not table["left_out"].any()


def test_an_unknown_kind_is_one_line():
    with pytest.raises(InputError, match="no built-in dataset 'union' with released LLM judges"):
        released_judges("union", [])


def test_the_tables_and_pages_are_default_targets():
    from test_workflow_plan import checked

    from storyeval.workflow import targets
    from storyeval.workflow.run import Run

    everything = set(targets.all_targets(Run(checked())))
    for dataset in ("hanna", "pds", "ttcw"):
        assert {f"results/{dataset}/released_judges.csv",
                f"results/{dataset}/report/released_judges.html"} <= everything, dataset
    assert not any(path.startswith("results/union-roc/released_judges") for path in everything)
