"""The layouts, scales and degenerate shapes of a user's rated stories, read without the workflow."""

import hashlib

import pandas as pd
import pytest
import yaml

from storyeval.datasets import describe
from storyeval.errors import InputError
from storyeval.examples import long_layout, per_rater_layout, rated_stories, write_examples
from storyeval.text.fit import fit_to_data

from conftest import REPO

EXAMPLES = REPO / "config/examples"
WIDE = {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text", "reference": "human_story",
        "rater": "annotator", "criteria": {"Fluency": "fluency", "Plot": "plot_score", "Delight": "delight"}}
LONG = {**WIDE, "criterion": "criterion", "score": "score"}


def load(frame, tmp_path, name="mine.csv", **entry):
    frame.to_csv(tmp_path / name, index=False)
    return describe({"kind": "table", "columns": WIDE, **entry}, "mine").load(tmp_path / name, "mine")


def test_the_shipped_examples_are_what_the_generator_writes(tmp_path):
    for name, path in write_examples(tmp_path).items():
        assert path.read_bytes() == (EXAMPLES / name).read_bytes(), name
    for layout in ("wide", "long", "per_rater"):
        entry = yaml.safe_load((EXAMPLES / f"{layout}.yaml").read_text())["datasets"]["example"]
        assert hashlib.sha256((REPO / entry["path"]).read_bytes()).hexdigest() == entry["sha256"], layout


def test_three_layouts_give_one_dataset():
    loaded = {}
    for layout in ("wide", "long", "per_rater"):
        entry = yaml.safe_load((EXAMPLES / f"{layout}.yaml").read_text())["datasets"]["example"]
        loaded[layout] = describe(entry, "example").load(REPO / entry["path"], "example")
    for layout in ("long", "per_rater"):
        pd.testing.assert_frame_equal(loaded[layout].texts, loaded["wide"].texts)
        pd.testing.assert_frame_equal(loaded[layout].human_scores, loaded["wide"].human_scores)
    assert list(loaded["wide"].texts["system"].unique()) == ["alpha", "beta", "gamma", "delta"]  # file order
    per_rater = loaded["per_rater"].ratings
    assert len(per_rater) == len(loaded["wide"].ratings) == 24 * 3 * 3
    assert set(per_rater["worker"]) == {"rater1", "rater2", "rater3"}


def test_a_rating_off_the_scale_or_not_whole_stops_with_file_row_and_fix(tmp_path):
    frame = rated_stories(prompts=2)
    frame.loc[7, "plot_score"] = 42
    with pytest.raises(InputError, match=r"mine.csv: '42' in column 'plot_score', data row 8, is outside the scale "
                                         r"\[1, 5\] \(1 such cells\); fix: correct the rating"):
        load(frame, tmp_path, scale=[1, 5])
    load(frame, tmp_path)  # no scale declared: any number
    frame["plot_score"] = frame["plot_score"].astype(float)
    frame.loc[7, "plot_score"] = 2.5
    with pytest.raises(InputError, match=r"'2.5' in column 'plot_score', data row 8, is not an integer"):
        load(frame, tmp_path, scale=[1, 5], integer=True)


def test_a_rater_rating_a_story_twice_stops(tmp_path):
    frame = rated_stories(prompts=2)
    twice = pd.concat([frame, frame.iloc[[4]]], ignore_index=True)
    with pytest.raises(InputError, match=r"mine.csv: data rows 5 and 31 repeat story and rater \(id 'p00-beta', "
                                         r"annotator 'rater1'\); fix: keep one row per story and rater"):
        load(twice, tmp_path)
    other = twice.copy()
    other.loc[30, "fluency"] = 1 if other.loc[4, "fluency"] != 1 else 2
    with pytest.raises(InputError, match=r"data rows 5 and 31 disagree on story and rater"):
        load(other, tmp_path)
    long = long_layout(frame)
    with pytest.raises(InputError, match=r"repeat story, rater and criterion"):
        load(pd.concat([long, long.iloc[[0]]]), tmp_path, layout="long", columns=LONG)


def test_long_layout_errors_name_the_column_and_the_values(tmp_path):
    long = long_layout(rated_stories(prompts=2))
    with pytest.raises(InputError, match=r"no row has 'Surprise' in column 'criterion'; fix: list only criteria it "
                                         r"holds under columns.criteria: delight, fluency, plot_score"):
        load(long, tmp_path, layout="long", columns={**LONG, "criteria": ["Surprise"]})
    with pytest.raises(InputError, match=r"story 'p00-alpha' has no 'fluency' row for rater"):
        load(long.drop(index=long.index[long["criterion"] == "fluency"][0]), tmp_path, layout="long",
             columns={**LONG, "criteria": ["fluency", "delight"]})
    with pytest.raises(InputError, match=r"datasets.mine.columns: layout long needs criterion and score"):
        describe({"kind": "table", "layout": "long", "columns": WIDE}, "mine")


def test_per_rater_lists_must_align(tmp_path):
    frame = per_rater_layout(rated_stories(prompts=2))
    criteria = {"Fluency": ["r1_fluency", "r2_fluency", "r3_fluency"], "Plot": ["r1_plot_score", "r2_plot_score"]}
    columns = {key: value for key, value in WIDE.items() if key != "rater"}
    with pytest.raises(InputError, match=r"per-rater column lists have different lengths \(\[2, 3\]\)"):
        load(frame, tmp_path, columns={**columns, "criteria": criteria})


def test_degenerate_shapes_get_a_sentence_or_one_line(tmp_path):
    def fitted(frame):
        return fit_to_data(load(frame, tmp_path))

    data, notes = fitted(rated_stories(prompts=4, systems=("solo",)))
    assert data.texts["system"].isna().all() and notes == [
        "1 system ('solo'), fewer than the 3 a correlation needs within a prompt or between system means, so "
        "story-level correlations over all stories and no system level"]
    data, notes = fitted(rated_stories(prompts=2).assign(delight=4))
    assert set(data.human_scores["criterion"]) == {"Fluency", "Plot"} and set(data.ratings["criterion"]) == {
        "Fluency", "Plot"}
    assert notes == ["criterion 'Delight' is 4 on every story, so it is left out (a constant has no correlation)"]
    with pytest.raises(InputError, match=r"dataset mine: no criterion varies .* fix: check the ratings"):
        fitted(rated_stories(prompts=2).assign(delight=4, fluency=4, plot_score=4))
    with pytest.raises(InputError, match=r"dataset mine: 3 stories; its tests need at least 4 .*fix: add stories"):
        fitted(rated_stories(prompts=1, systems=("a", "b", "c")))
    data, notes = fitted(rated_stories(prompts=2, systems=("a", "b", "c")))
    assert data.texts["system"].notna().all()
    assert notes[0].startswith("3 systems, fewer than the 4 Williams' test needs")
    data, notes = fitted(rated_stories(prompts=3, raters=1).assign(annotator="only"))
    assert data.ratings is None and notes == ["one rater, so no ICC (Tab. 3) or system means (Tab. 4)"]
    data, notes = fitted(rated_stories(prompts=1, systems=("a", "b", "c", "d")))
    assert data.texts["system"].isna().all() and notes[0].startswith("one prompt, so one group")


def test_a_constant_metric_is_named():
    import numpy as np

    from storyeval.analysis import constant_columns
    from storyeval.data.scoreset import Cube

    values = np.random.default_rng(0).normal(size=(3, 4, 3))
    values[..., 1] = 0.5
    assert constant_columns(Cube(values, [0, 1, 2], list("abcd"), ["x", "flat", "z"])) == ["flat"]


def test_a_one_group_set_reaches_the_cubes_as_one_correlation_over_its_stories(tmp_path):
    """A set fitted to one group (one prompt: its systems blanked) is correlated over its stories, read from its
    texts (a set without ratings, as hanna-llm on one prompt) or from its stories.csv (a rated set); its stories
    never share one cell of the [prompt, system] grid."""
    import numpy as np
    from scipy.stats import pearsonr

    from storyeval.analysis import correlation_table
    from storyeval.data.load import load_cubes
    from storyeval.data.scoreset import analysis_stories

    data, _ = fit_to_data(load(rated_stories(prompts=1, systems=("a", "b", "c", "d", "e")), tmp_path))
    texts = data.texts
    assert texts["system"].isna().all() and texts["prompt_id"].nunique() == 1
    values = np.random.default_rng(0).normal(size=(len(texts), 2))
    scores = pd.DataFrame(values, columns=["m1", "m2"]).assign(story_id=texts["story_id"].to_numpy())
    scores.melt(id_vars="story_id", var_name="metric").to_parquet(tmp_path / "scores.parquet")
    pd.DataFrame({"slug": ["m1", "m2"], "order": [0, 1]}).to_csv(tmp_path / "metrics.csv", index=False)
    texts.to_parquet(tmp_path / "texts.parquet")
    analysis_stories(texts).to_csv(tmp_path / "stories.csv", index=False)
    for stories in ("texts.parquet", "stories.csv"):
        paths = {"stories": tmp_path / stories, "scores": tmp_path / "scores.parquet",
                 "registry": tmp_path / "metrics.csv"}
        _, metrics = load_cubes(paths, reference_system="Human")
        assert metrics.values.shape == (1, len(texts), 2) and metrics.systems == list(texts["story_id"])
        table = correlation_table(None, metrics, ["story"], ["pearson"]).query("x == 'm1' and y == 'm2'")
        assert table["r"].item() == pytest.approx(pearsonr(values[:, 0], values[:, 1]).statistic, abs=1e-12)


def test_a_cube_refuses_two_values_of_a_cell_naming_them():
    from storyeval.data.scoreset import build_cube

    stories = pd.DataFrame({"story_id": ["s1", "s2", "s3"], "prompt_id": [0, 0, 0], "system": ["a", "a", "b"]})
    long = pd.DataFrame({"story_id": ["s1", "s2", "s3"], "metric": "m", "value": [1.0, 2.0, 3.0]})
    with pytest.raises(InputError, match=r"^scores.parquet: stories s1, s2 are all prompt 0, system a; fix: give "
                                         r"each story of a prompt its own system"):
        build_cube(stories, long, "metric", "value", ["m"], ["a", "b"], "scores.parquet")
    twice = pd.concat([long, long.iloc[[2]]])
    with pytest.raises(InputError, match=r"^scores.parquet: story s3 has two values for metric 'm'; fix: "):
        build_cube(stories.assign(system=["a", "c", "b"]), twice, "metric", "value", ["m"], ["a", "c", "b"],
                   "scores.parquet")
