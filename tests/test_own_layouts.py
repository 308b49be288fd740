"""The layouts, scales and degenerate shapes of a user's rated stories, read without the workflow."""

import hashlib
import re

import pandas as pd
import pytest
import yaml

from storyeval.datasets import describe
from storyeval.errors import InputError
from storyeval.examples import (
    CROWD_TASKS,
    SHARED_WORKER,
    crowd_tasks,
    long_layout,
    per_rater_layout,
    rated_stories,
    write_crowd,
    write_designs,
    write_examples,
)
from storyeval.text.fit import fit_to_data, fitted_description

from conftest import REPO, SHARED

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
    for name, path in write_crowd(tmp_path / "crowd").items():
        assert path.read_bytes() == (EXAMPLES / "crowd" / name).read_bytes(), name
    for layout in ("wide", "long", "per_rater"):
        entry = yaml.safe_load((EXAMPLES / f"{layout}.yaml").read_text())["datasets"]["example"]
        assert hashlib.sha256((REPO / entry["path"]).read_bytes()).hexdigest() == entry["sha256"], layout
    for part in yaml.safe_load((EXAMPLES / "crowd.yaml").read_text())["datasets"]["crowd"]["files"]:
        assert hashlib.sha256((REPO / part["path"]).read_bytes()).hexdigest() == part["sha256"], part["path"]
    for name, path in write_designs(tmp_path).items():
        assert path.read_bytes() == (EXAMPLES / name).read_bytes(), name
        entry = yaml.safe_load((EXAMPLES / name.replace(".csv", ".yaml")).read_text())["datasets"][path.stem]
        assert hashlib.sha256((REPO / entry["path"]).read_bytes()).hexdigest() == entry["sha256"], name


def crowd_entry():
    return yaml.safe_load((EXAMPLES / "crowd.yaml").read_text())["datasets"]["crowd"]


def test_a_crowd_export_of_one_file_per_criterion_is_one_dataset():
    """Three task files, each with its own workers (one in all three) and its own rating column: one table of
    100 stories on 50 prompts x 2 systems, 3 ratings per story and criterion, every worker kept by id."""
    entry = crowd_entry()
    dataset = describe(entry, "crowd")
    assert dataset.criteria == ("Coherence", "Fluency", "Interestingness") and dataset.raters
    data = dataset.load([REPO / part["path"] for part in entry["files"]], "crowd")
    tasks = crowd_tasks()
    assert len(data.texts) == 100 and data.texts["prompt_id"].nunique() == 50
    assert list(data.texts["system"].unique()) == ["longform", "brief"] and data.texts["prompt"].isna().all()
    assert set(data.ratings.groupby(["story_id", "criterion"]).size()) == {3}
    workers = data.ratings.groupby("criterion")["worker"].unique()
    assert all(9 <= len(workers[name]) <= 11 for name in tasks)
    assert set.intersection(*(set(workers[name]) for name in tasks)) == {SHARED_WORKER}
    for criterion, task in tasks.items():  # each story's score: the mean of its task's three ratings
        score = task.groupby("Input.story_id")[task.columns[-1]].mean()
        mine = data.human_scores.query("criterion == @criterion").set_index("story_id")["score"]
        assert (mine.sort_index() == score.sort_index()).all(), criterion
    fitted, notes = fit_to_data(data)
    assert fitted.ratings is not None and notes[0].startswith("50 prompts, 2 systems ('longform', 'brief')")
    assert "paired_accuracy" in notes[0]


def test_the_crowd_example_plants_a_system_confound():
    """Pooled over both systems, text length tracks every criterion; within each system it does not."""
    tasks = crowd_tasks()
    for criterion, task in tasks.items():
        scores = task.groupby(["Input.story_id", "Input.model", "Input.story"])[task.columns[-1]].mean().reset_index()
        length = scores["Input.story"].str.split().str.len()
        rating = scores[task.columns[-1]]
        assert length.corr(rating) > 0.4, criterion
        for _, rows in scores.groupby("Input.model"):
            assert abs(length[rows.index].corr(rating[rows.index])) < 0.3, criterion


def test_files_must_agree_on_their_stories(tmp_path):
    """A story's text, system or prompt differing between two files, or one rating given in two files: one line
    naming the story and both files."""
    entry = crowd_entry()
    tasks = crowd_tasks(prompts=4)
    for criterion, task in tasks.items():
        task.to_csv(tmp_path / CROWD_TASKS[criterion], index=False)
    paths = [tmp_path / CROWD_TASKS[criterion] for criterion in tasks]
    dataset = describe(entry, "crowd")
    assert len(dataset.load(paths, "crowd").texts) == 8
    edited = tasks["Fluency"].copy()
    edited.loc[edited["Input.story_id"] == "q01-brief", "Input.story"] = "Another text."
    edited.to_csv(paths[1], index=False)
    with pytest.raises(InputError, match=rf"dataset crowd: story 'q01-brief' has two different story values, '.*' in "
                                         rf"{paths[0]} data row \d+ and 'Another text.' in {paths[1]} data row \d+ "
                                         r"\(they differ from character 1\); fix: one story per story id$"):
        dataset.load(paths, "crowd")
    tasks["Coherence"].to_csv(paths[1], index=False)  # the coherence task exported twice
    twice = describe({**entry, "files": [entry["files"][0], {**entry["files"][1], "criterion": "Coherence"},
                                         entry["files"][2]]}, "crowd")
    with pytest.raises(InputError, match=rf"dataset crowd: {paths[0]} data row 1 and {paths[1]} data row 1 are "
                                         r"duplicates: both rate story 'q00-longform' by rater '\S+' on 'Coherence'"):
        twice.load(paths, "crowd")
    with pytest.raises(InputError, match=r"dataset crowd: 2 files for the 3 parts of datasets.crowd.files"):
        dataset.load(paths[:2], "crowd")
    with pytest.raises(InputError, match=r"datasets.crowd.columns: files\[0\] rates one criterion, so it needs "
                                         r"score; fix"):
        describe({**entry, "columns": {**entry["columns"], "score": None}}, "crowd")


def test_a_story_missing_from_one_task_file_is_refused(tmp_path):
    entry = crowd_entry()
    tasks = crowd_tasks(prompts=4)
    tasks["Fluency"] = tasks["Fluency"][tasks["Fluency"]["Input.story_id"] != "q02-brief"]
    for criterion, task in tasks.items():
        task.to_csv(tmp_path / CROWD_TASKS[criterion], index=False)
    with pytest.raises(InputError, match=r"story 'q02-brief' has no rating on 'Fluency' \(1 such story and "
                                         r"criterion pairs\); fix"):
        describe(entry, "crowd").load([tmp_path / CROWD_TASKS[criterion] for criterion in tasks], "crowd")


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


def test_a_rater_rating_a_story_twice_is_a_duplicate(tmp_path):
    frame = rated_stories(prompts=2)
    twice = pd.concat([frame, frame.iloc[[4]]], ignore_index=True)
    with pytest.raises(InputError, match=r"mine.csv: data rows 5 and 31 are duplicates: both rate story 'p00-beta' by "
                                         r"rater 'rater1' on 'Fluency' \(ratings \d and \d\); fix: keep one row per "
                                         r"story, rater and criterion$"):
        load(twice, tmp_path)
    other = twice.copy()
    other.loc[30, "fluency"] = 1 if other.loc[4, "fluency"] != 1 else 2
    with pytest.raises(InputError, match=r"data rows 5 and 31 are duplicates: both rate story"):
        load(other, tmp_path)
    long = long_layout(frame)
    with pytest.raises(InputError, match=r"data rows 1 and 91 are duplicates: both rate story 'p00-alpha' by rater "
                                         r"'rater0' on 'Fluency'"):
        load(pd.concat([long, long.iloc[[0]]]), tmp_path, layout="long", columns=LONG)


def test_a_message_quotes_a_story_in_at_most_80_characters(tmp_path):
    frame = rated_stories(prompts=2).assign(text=lambda f: f["text"] + " and on" * 80)
    frame.loc[1, "text"] = "Another story " * 40
    with pytest.raises(InputError) as error:
        load(frame, tmp_path)
    said = str(error.value)
    assert said.count("\n") == 0 and "story 'p00-alpha' has two different story values, " in said
    assert "mine.csv data row 1 and " in said
    assert "mine.csv data row 2 (they differ from character 1); fix: one story per story id" in said
    quotes = re.findall(r"'[^']*'", said)
    assert max(map(len, quotes)) == 80 and said.count("...'") == 2


def test_names_over_200_characters_are_refused(tmp_path):
    """docs/bad-input.md: a story id, a system or a rater of one's own table is a name, at most 200 characters."""
    for column in ("id", "model", "annotator"):
        frame = rated_stories(prompts=2)
        frame.loc[3, column] = "x" * 201
        with pytest.raises(InputError, match=rf"mine.csv: 201 characters in column '{column}', data row 4, over the "
                                             r"limit of 200 for a name; fix: repair or re-export the file"):
            load(frame, tmp_path)
    frame = rated_stories(prompts=2).assign(text=lambda f: f["text"] + "y" * 300)
    assert len(load(frame, tmp_path, columns={**WIDE, "story_id": "text"}).texts) == 10  # a text is no name


def test_long_layout_errors_name_the_column_and_the_values(tmp_path):
    long = long_layout(rated_stories(prompts=2))
    with pytest.raises(InputError, match=r"no row has 'Surprise' in column 'criterion'; fix: list only criteria it "
                                         r"holds under columns.criteria: delight, fluency, plot_score"):
        load(long, tmp_path, layout="long", columns={**LONG, "criteria": ["Surprise"]})
    with pytest.raises(InputError, match=r"datasets.mine.columns: layout long needs criterion and score"):
        describe({"kind": "table", "layout": "long", "columns": WIDE}, "mine")


def test_long_layout_keeps_every_criterion_and_takes_the_story_as_its_id(tmp_path):
    """No columns.criteria: every value of the criterion column; story_id and story on one column: the stories
    are numbered in order of first appearance."""
    long = long_layout(rated_stories(prompts=2))
    columns = {**{key: value for key, value in LONG.items() if key != "criteria"}, "story_id": "text"}
    data = load(long, tmp_path, layout="long", columns=columns)
    assert sorted(data.human_scores["criterion"].unique()) == ["delight", "fluency", "plot_score"]
    assert list(data.texts["story_id"][:3]) == ["story-01", "story-02", "story-03"] and len(data.texts) == 10
    listed = load(long, tmp_path, layout="long", columns=LONG)
    scores = listed.human_scores.assign(criterion=lambda f: f["criterion"].str.lower().replace({"plot": "plot_score"}))
    merged = scores.merge(listed.texts[["story_id", "story"]]).merge(
        data.human_scores.merge(data.texts[["story_id", "story"]]), on=["story", "criterion"])
    assert len(merged) == 30 and (merged["score_x"] == merged["score_y"]).all()


def test_gaps_in_the_rater_grid_are_ratings_nobody_gave(tmp_path):
    """Raters differ by criterion and story: an empty cell is no rating; a story's score is the mean of those it
    has; a story with none on a criterion is refused in one line."""
    frame = rated_stories(prompts=2)
    gapped = frame.astype({"fluency": object})
    gapped.loc[[0, 5], "fluency"] = ""
    data = load(gapped, tmp_path)
    first = data.ratings.query("story_id == 'p00-alpha' and criterion == 'Fluency'")
    assert len(first) == 2 and len(data.ratings) == len(frame) * 3 - 2
    assert data.human_scores.set_index(["story_id", "criterion"]).loc[("p00-alpha", "Fluency"), "score"] == (
        first["rating"].mean())
    long = long_layout(frame)
    dropped = long.drop(index=long.index[long["criterion"] == "fluency"][:2])
    assert len(load(dropped, tmp_path, layout="long", columns=LONG).ratings) == len(long) - 2
    unrated = gapped.copy()
    unrated.loc[frame["id"] == "p00-alpha", "fluency"] = ""
    with pytest.raises(InputError, match=r"mine.csv: story 'p00-alpha' has no rating on 'Fluency' \(1 such story and "
                                         r"criterion pairs\); fix: add its ratings"):
        load(unrated, tmp_path)
    with pytest.raises(InputError, match=r"'n/a' in column 'fluency', data row 1, is not a number \(1 such cells\); "
                                         r"fix: correct it, or leave the cell empty where no rating was given"):
        load(gapped.assign(fluency=gapped["fluency"].replace({"": "n/a"}).where(gapped.index == 0, gapped["fluency"])),
             tmp_path)


def test_per_rater_lists_must_align(tmp_path):
    frame = per_rater_layout(rated_stories(prompts=2))
    criteria = {"Fluency": ["r1_fluency", "r2_fluency", "r3_fluency"], "Plot": ["r1_plot_score", "r2_plot_score"]}
    columns = {key: value for key, value in WIDE.items() if key != "rater"}
    with pytest.raises(InputError, match=r"per-rater column lists have different lengths \(\[2, 3\]\)"):
        load(frame, tmp_path, columns={**columns, "criteria": criteria})


def test_degenerate_shapes_get_a_sentence_or_one_line(tmp_path):
    def fitted(frame):
        return fit_to_data(load(frame, tmp_path, scale=[1, 5]))  # declared: no range phrase

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
    data, notes = fitted(rated_stories(prompts=5, systems=("a", "b")))  # two systems keep them: paired
    assert data.texts["system"].notna().all() and notes == [
        "5 prompts, 2 systems ('a', 'b'): fewer than the 3 a correlation needs within a prompt, so story-level "
        "correlations pool all stories, each beside its within-system correlation, each prompt's stories are "
        "compared in pairs (paired_accuracy), and no system level"]
    paired = fitted_description(describe({"kind": "table", "columns": WIDE}, "mine"), data)
    assert paired.paired and not paired.grouped and paired.levels == ["story"]
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


def test_two_systems_without_prompts_are_one_group(tmp_path):
    frame = rated_stories(prompts=4, systems=("a", "b"))
    columns = {key: value for key, value in WIDE.items() if key != "prompt"}
    data, notes = fit_to_data(load(frame, tmp_path, columns=columns))
    assert data.texts["system"].isna().all() and notes[0].startswith("2 systems ('a', 'b'), fewer than the 3")
    assert not fitted_description(describe({"kind": "table", "columns": columns}, "mine"), data).paired


def test_a_windows_1252_file_is_read_with_its_declared_encoding(tmp_path):
    """Excel writes CSV in Windows-1252: without encoding: one line naming the byte and the fix; with it, read."""
    said = " \u201cDon\u2019t,\u201d she said \u2013 caf\u00e9."
    frame = rated_stories(prompts=2).assign(text=lambda f: f["text"] + said)
    path = tmp_path / "excel.csv"
    path.write_bytes(frame.to_csv(index=False).encode("cp1252"))
    entry = {"kind": "table", "columns": WIDE}
    offset = path.read_bytes().index(b"\x93")
    with pytest.raises(InputError, match=rf"dataset mine: {path}: line 2 \(byte {offset}\) is not UTF-8 \(invalid "
                                         r"start byte\): 0x93; fix: declare the file's encoding in its dataset entry, "
                                         r"e.g. encoding: cp1252 \(Windows-1252, as Excel writes CSV\), or re-save"):
        describe(entry, "mine").load(path, "mine")
    data = describe({**entry, "encoding": "cp1252"}, "mine").load(path, "mine")
    assert data.texts["story"].str.endswith(said).all()
    frame.to_csv(tmp_path / "utf8.csv", index=False)
    pd.testing.assert_frame_equal(data.texts, describe(entry, "mine").load(tmp_path / "utf8.csv", "mine").texts)
    cp1252 = path.read_bytes()
    path.write_bytes(cp1252.replace(b"\x93", b"\x81", 1))  # a byte Windows-1252 leaves undefined
    with pytest.raises(InputError, match=r"line 2 \(byte \d+\) is not cp1252 \(character maps to <undefined>\): "
                                         r"0x81; fix: declare the file's own encoding"):
        describe({**entry, "encoding": "cp1252"}, "mine").load(path, "mine")
    with pytest.raises(InputError, match=r"encoding 'windows-9999' is not a codec Python knows; fix: name one"):
        describe({**entry, "encoding": "windows-9999"}, "mine").load(path, "mine")
    path.write_bytes(cp1252)
    part = {"path": str(path), "sha256": "0" * 64, "encoding": "latin-1"}  # a part's own encoding wins
    latin = describe({**entry, "encoding": "cp1252", "files": [part]}, "mine").load([path], "mine")
    assert latin.texts["story"].str.endswith(said.encode("cp1252").decode("latin-1")).all()


def test_the_psychological_depth_study_stories_are_read_as_windows_1252():
    """study_stories.csv of Harel-Canada et al. (2024) is Windows-1252 (SOURCE.md): refused as UTF-8 at its first
    curly apostrophe, read with encoding: cp1252."""
    path = SHARED / "data/pds/study_stories.csv"
    if not path.is_file():
        pytest.skip("no mirror of the Psychological Depth Scale data")
    entry = {"kind": "table", "columns": {"story_id": "story_id", "prompt_id": "premise_id", "prompt": "premise",
                                          "story": "text"}}
    with pytest.raises(InputError, match=r"study_stories.csv: line \d+ \(byte 11168\) is not UTF-8 \(invalid start "
                                         r"byte\): 0x92; fix: declare the file's encoding"):
        describe(entry, "pds").load(path, "pds")
    data = describe({**entry, "encoding": "cp1252"}, "pds").load(path, "pds")
    assert len(data.texts) == 97 and data.texts["prompt_id"].nunique() == 15
    assert data.texts["story"].str.contains("\u2019").any() and data.human_scores is None


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
