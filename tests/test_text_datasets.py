import pandas as pd
import pytest

from storyeval.criteria import CRITERIA
from storyeval.errors import InputError
from storyeval.text.datasets import ANNOTATION_COLUMNS, TEXT_COLUMNS, load_hanna_annotations, load_hanna_llm


@pytest.fixture(scope="module")
def hanna_llm(hanna_mirror):
    return load_hanna_llm(hanna_mirror / "hanna_llm_stories.csv")


def test_hanna_llm_table(hanna_llm, hanna_mirror, released):
    texts = hanna_llm.texts
    raw = pd.read_csv(hanna_mirror / "hanna_llm_stories.csv")
    assert list(texts.columns) == TEXT_COLUMNS and texts.attrs["dataset"] == "hanna-llm"
    assert len(texts) == 96 + len(raw) == 672
    assert texts["system"].value_counts().to_dict() == {"Human": 96, **raw["Model"].value_counts().to_dict()}
    human = texts[texts["system"] == "Human"]
    assert (human["story"] == human["reference"]).all() and human["prompt_id"].tolist() == list(range(96))
    # prompt i = i-th distinct prompt; human story ids are those of HANNA's released Human row
    assert human["prompt"].tolist() == list(pd.unique(raw["Prompt"]))
    assert set(human["story_id"]) == set(released.stories.loc[released.stories["system"] == "Human", "story_id"])
    assert human["story"].iloc[0].startswith("3,000 years have I been fighting.")
    generated = texts[texts["system"] != "Human"].set_index("story_id")
    first = raw.iloc[0]
    row = generated.loc["p000-llama-7b"]
    assert row["reference"] == first["Human"] and row["story"] == " ".join(first["Story"].split())


def test_non_utf8_bytes_name_the_line(tmp_path):
    path = tmp_path / "stories.csv"
    path.write_bytes(b"Prompt,Human,Story,Model\nA prompt,A human story,ok,m\nP,H,caf\xe9,m\n")
    with pytest.raises(InputError, match=r"dataset hanna-llm: .*line 3 .*not UTF-8"):
        load_hanna_llm(path)


def test_empty_story_names_the_story(tmp_path):
    path = tmp_path / "stories.csv"
    pd.DataFrame({"Prompt": ["P1", "P1"], "Human": ["H1", "H1"], "Story": ["fine", " <newline> "],
                  "Model": ["a", "b"]}).to_csv(path, index=False)
    with pytest.raises(InputError, match="story 'p000-b' has an empty story"):
        load_hanna_llm(path)


def test_missing_columns(tmp_path):
    path = tmp_path / "stories.csv"
    pd.DataFrame({"Prompt": ["P"], "Story": ["S"]}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"lacks columns \['Human', 'Model'\]"):
        load_hanna_llm(path)


def synthetic_annotations() -> pd.DataFrame:
    """2 prompts x (Human, GPT), 3 raters per story, in the released layout (Story ID grouped by system)."""
    rows = []
    for story_number, (system, prompt) in enumerate([("Human", 0), ("Human", 1), ("GPT", 0), ("GPT", 1)]):
        for rater in range(3):
            rows.append(
                {
                    "Story ID": story_number,
                    "Prompt": f"Prompt  {prompt}",
                    "Human": f"Human story {prompt}.",
                    "Story": f"Human story {prompt}." if system == "Human" else f"GPT <newline> story {prompt}.",
                    "Model": system,
                    **{c: 1 + (story_number + rater + k) % 5 for k, c in enumerate(CRITERIA)},
                    "Worker ID": f"W{rater + story_number % 2}",
                    "Assignment ID": "x",
                    "Work time in seconds": 60,
                    "Name": "n",
                }
            )
    return pd.DataFrame(rows)


def test_annotation_loader_on_synthetic_file(tmp_path):
    frame = synthetic_annotations()
    assert set(ANNOTATION_COLUMNS) <= set(frame.columns)
    path = tmp_path / "hanna_stories_annotations.csv"
    frame.to_csv(path, index=False)
    data = load_hanna_annotations(path)
    texts = data.texts.set_index("story_id")
    assert list(texts.index) == ["p000-human", "p001-human", "p000-gpt", "p001-gpt"]
    assert texts.loc["p001-gpt", ["prompt", "story", "reference"]].tolist() == [
        "Prompt 1",
        "GPT story 1.",
        "Human story 1.",
    ]
    assert texts.loc["p000-gpt", "prompt_id"] == 0
    assert len(data.ratings) == 4 * 3 * 6
    # the averaged score is the mean of the three raters' ratings, computed here from the raw frame
    gpt_1 = frame[frame["Story ID"] == 3]
    for criterion in CRITERIA:
        expected = gpt_1[criterion].mean()
        got = data.human_scores.set_index(["story_id", "criterion"]).loc[("p001-gpt", criterion), "score"]
        assert got == pytest.approx(expected)


def test_annotation_loader_rejects_inconsistent_story_ids(tmp_path):
    frame = synthetic_annotations()
    frame.loc[frame["Story ID"] == 2, "Story ID"] = 5  # GPT's prompt-0 story now sits at prompt 1
    path = tmp_path / "a.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError, match="does not identify the prompt"):
        load_hanna_annotations(path)


def test_a_config_entry_describes_its_dataset_and_loads_it(hanna_mirror):
    from storyeval.datasets import describe

    described = describe({"kind": "hanna-llm", "file": "hanna/stories_llm"})
    data = described.load(hanna_mirror / "hanna_llm_stories.csv", "hanna-llm-copy")
    assert data.name == "hanna-llm-copy" and data.texts.attrs["dataset"] == "hanna-llm-copy" and len(data.texts) == 672
    assert described.levels == ["story", "system"] and described.criteria == () and not described.raters
    unknown = "datasets.x.kind: unknown kind 'csv'; fix: use one of .*hanna-annotations, hanna-llm, .*table"
    with pytest.raises(InputError, match=unknown):
        describe({"kind": "csv"}, "x")
