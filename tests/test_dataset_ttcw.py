"""Kind ttcw on the real mirrored release of Chakrabarty et al. (CHI 2024), salesforce/creativity_eval@fced0ab."""

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from storyeval.datasets import describe, ttcw
from storyeval.errors import InputError

from conftest import mirror_or_skip

JUDGE_FILES = [f"annotations_{judge}.jsonl" for judge in ttcw.JUDGES]


@pytest.fixture(scope="module")
def mirror():
    return mirror_or_skip("ttcw", "ttcw_annotations.json", "TTCW")


@pytest.fixture(scope="module")
def data(mirror):
    return ttcw.load([mirror / "ttcw_short_stories.json", mirror / "ttcw_annotations.json"])


@pytest.fixture(scope="module")
def raw(mirror):
    return json.loads((mirror / "ttcw_annotations.json").read_text())


def yes_count(raw, story, expert, tests=range(1, 15)):
    return sum(row["binary_verdict"] == "Yes" for row in raw
               if row["story_id"] == story and row["expert_idx"] == expert and row["ttcw_idx"] in tests)


def test_declaration_is_a_grouped_rated_set():
    declared = describe({"kind": "ttcw"}, "ttcw")
    assert declared.grouped and declared.levels == ["story", "system"] and declared.raters
    assert declared.criteria == ("Tests passed", "Fluency", "Flexibility", "Originality", "Elaboration")
    assert declared.reference_system is None and "reference" not in declared.texts
    assert sorted(test for tests in ttcw.DIMENSIONS.values() for test in tests) == list(range(1, 15))


def test_loader_keeps_the_36_llm_stories_on_a_plot_grid(data, mirror):
    texts = data.texts
    assert len(texts) == 36 and texts["prompt_id"].nunique() == 12
    assert texts["system"].value_counts().to_dict() == {"Claude": 12, "GPT3.5": 12, "GPT4": 12}
    assert texts.groupby(["prompt_id", "system"]).size().eq(1).all() and texts["reference"].isna().all()
    stories = {story["story_id"]: story for story in json.loads((mirror / "ttcw_short_stories.json").read_text())}
    # quirk: the New Yorker stories are links, not texts; they are said, not loaded
    assert all(story["content"].startswith("https://www.newyorker.com/") for key, story in stories.items()
               if key.endswith("_NewYorker"))
    assert "12 stories of NewYorker left out" in data.notes[0] and "504 expert verdicts" in data.notes[0]
    row = texts.set_index("story_id").loc["p007-gpt3.5"]
    assert row["prompt"] == stories["7_GPT3.5"]["plot"]
    assert row["story"][:60] == " ".join(stories["7_GPT3.5"]["content"].split())[:60]


def test_each_expert_rates_tests_passed_and_each_dimension(data, raw):
    ratings, scores = data.ratings, data.human_scores
    assert len(ratings) == 36 * 3 * 5 and ratings.groupby(["story_id", "criterion"])["worker"].nunique().eq(3).all()
    # quirk: 11 expert ids (0-10) in the release, where the paper speaks of 10 writers
    assert ratings["worker"].nunique() == len({row["expert_idx"] for row in raw}) == 11
    wide = ratings.pivot_table(index=["story_id", "worker"], columns="criterion", values="rating")
    assert (wide[list(ttcw.DIMENSIONS)].sum(axis=1) == wide["Tests passed"]).all()
    experts = sorted({row["expert_idx"] for row in raw if row["story_id"] == "4_Claude"})
    expected = np.mean([yes_count(raw, "4_Claude", expert) for expert in experts])
    fluency = np.mean([yes_count(raw, "4_Claude", expert, range(1, 6)) for expert in experts])
    score = scores.set_index(["story_id", "criterion"])["score"]
    assert score["p004-claude", "Tests passed"] == pytest.approx(expected)
    assert score["p004-claude", "Fluency"] == pytest.approx(fluency)


@pytest.fixture(scope="module")
def judged(data, mirror):
    return ttcw.released([mirror / name for name in JUDGE_FILES], "ttcw", data.texts)


def test_released_judges_rate_each_criterion_on_the_texts_ids(judged, data):
    scores, registry = judged
    assert len(registry) == 7 * 5 and set(registry["family"]) == {"llm-judge"}
    assert all(tuple(criteria) == ttcw.CRITERIA for criteria in registry.groupby("judge")["criterion"].agg(list))
    assert set(scores["story_id"]) == set(data.texts["story_id"]) and set(scores["metric"]) == set(registry["slug"])


def test_a_judge_score_counts_its_yes_answers(judged, mirror):
    scores, _ = judged
    value = scores.set_index(["story_id", "metric"])["value"]
    answers = [json.loads(line) for line in (mirror / "annotations_gpt4.jsonl").read_text().splitlines()]
    yes = sum(row["response"].lower().startswith("yes") for row in answers if row["id"].startswith("story_3_GPT4_"))
    assert value["p003-gpt4", "gpt-4-tests-passed"] == yes


def test_a_blocked_answer_is_missing_not_no(judged, mirror):
    scores, registry = judged
    answers = [json.loads(line) for line in (mirror / "annotations_gemini-pro.jsonl").read_text().splitlines()]
    blocked = Counter(row["id"].rsplit("_", 1)[0] for row in answers if row["response"] == "Content Blocked")
    llm = {story: count for story, count in blocked.items() if not story.endswith("_NewYorker")}
    assert sum(llm.values()) == 32 and sum(blocked.values()) == 50  # 18 more on the New Yorker stories
    missing = registry.set_index("slug")["missing"]
    assert missing["gemini-pro-tests-passed"] == 32 and missing["claude-v2-tests-passed"] == 1
    story = max(llm, key=llm.get)  # the story with the most blocked answers
    prefix = f"{story}_test"
    mine = [row for row in answers if row["id"].startswith(prefix) and row["response"] != "Content Blocked"]
    share = np.mean([row["response"].lower().startswith("yes") for row in mine])
    index, author = story.removeprefix("story_").split("_")
    value = scores.set_index(["story_id", "metric"])["value"]
    assert value[f"p{int(index):03d}-{author.lower()}", "gemini-pro-tests-passed"] == pytest.approx(14 * share)


@pytest.fixture(scope="module")
def recipes(mirror):
    table = ttcw.recipes([mirror / "ttcw_annotations.json", *(mirror / name for name in JUDGE_FILES)])
    return table.set_index("item")["value"]


# Oracle: the stored output of the first code cell of section 3.1 of the authors' Art_or_Artifice/
# Evaluating_LLM.ipynb (salesforce/creativity_eval@fced0ab), rounded by them to 2 d.p.: balanced accuracy, Pearson.
NOTEBOOK = {"gemini-pro": (0.46, -0.12, 658), "cgpt": (0.49, -0.02, 672), "claudev2": (0.50, -0.00, 672),
            "claudev21": (0.52, 0.06, 672), "claudev13": (0.53, 0.06, 672), "gpt4": (0.54, 0.10, 672),
            "claude3-opus": (0.58, 0.18, 672)}


def test_recipes_reproduce_the_authors_notebook(recipes):
    for judge, (accuracy, pearson, found) in NOTEBOOK.items():
        assert round(recipes[f"{judge} balanced accuracy"], 2) == accuracy
        assert round(recipes[f"{judge} pearson"], 2) == pytest.approx(pearson)
        assert recipes[f"{judge} answers found"] == found
    for printed in ttcw.PRINTED:
        assert round(recipes[printed.where["item"]], 2 if printed.value % 1 else 0) == pytest.approx(printed.value)


def test_majority_and_fleiss_kappa_by_hand(recipes, raw, mirror):
    majority = {(row["story_id"], row["ttcw_idx"]): row["binary_verdict"]
                for row in json.loads((mirror / "ttcw_majority.json").read_text())}
    table = pd.DataFrame(raw)
    votes = table.groupby(["story_id", "ttcw_idx"])["binary_verdict"].agg(lambda v: Counter(v).most_common(1)[0][0])
    assert votes.to_dict() == majority
    assert recipes["NewYorker pass rate (majority)"] == pytest.approx(np.mean([
        verdict == "Yes" for (story, _), verdict in majority.items() if story.endswith("_NewYorker")]))
    # Fleiss (1971): P_i per story from its Yes count of m = 3, P_e from the pooled Yes share
    counts = table[table["ttcw_idx"] == 12].groupby("story_id")["binary_verdict"].apply(lambda v: (v == "Yes").sum())
    m, p = 3, counts.sum() / (3 * len(counts))
    agreement = ((counts * (counts - 1) + (m - counts) * (m - counts - 1)) / (m * (m - 1))).mean()
    chance = p ** 2 + (1 - p) ** 2
    assert recipes["test 12 Rhetorical Complexity fleiss kappa"] == pytest.approx((agreement - chance) / (1 - chance))


def test_bad_files_are_one_line_naming_the_file(tmp_path, mirror):
    rows = json.loads((mirror / "ttcw_annotations.json").read_text())
    short = tmp_path / "ttcw_annotations.json"
    short.write_text(json.dumps(rows[1:]))
    with pytest.raises(InputError, match=r"ttcw_annotations.json: expert \d+ answers 13 tests of story"):
        ttcw.load([mirror / "ttcw_short_stories.json", short])
    answers = tmp_path / "annotations_gpt4.jsonl"
    answers.write_text(json.dumps({"id": "story_0_GPT4_3", "response": "Yes"}) + "\n")
    with pytest.raises(InputError, match=r"id 'story_0_GPT4_3' is repeated or not 'story_<idx>_<author>_test<k>'"):
        ttcw.judge_answers(answers, "ttcw")
