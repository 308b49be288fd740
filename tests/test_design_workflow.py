"""The shipped examples of two designs that are not HANNA's, run through the workflow as a user runs them: the
design is stated at start-up and on the pages, and the answer uses the statistic the design calls for."""

import pandas as pd
import pytest
import yaml

from conftest import REPO
from workflow_helpers import make_workdir, run_snakemake

pytestmark = pytest.mark.slow


def run_example(tmp_path, name: str):
    entry = yaml.safe_load((REPO / f"config/examples/{name}.yaml").read_text())["datasets"][name]
    workdir = make_workdir(tmp_path / name, **{f"datasets.{name}": {**entry, "path": str(REPO / entry["path"])}})
    result = run_snakemake(workdir, "--cores", "2", f"dataset_{name}")
    assert result.returncode == 0, result.stderr[-3000:]
    base = workdir / "results" / name / "computed"
    return result.stderr, pd.read_csv(base / "answer_summary.csv"), pd.read_csv(base / "answer.csv"), base


def test_writers_on_one_prompt_in_rater_groups(tmp_path):
    said, summary, rows, base = run_example(tmp_path, "groups")
    line = "13 writers x 5 stories on 1 prompt; 10 raters in 5 groups of 2"
    assert f"storyeval: dataset groups: design {line}" in said
    assert line in (base / "report/about.rst").read_text() and line in (base / "report/answer.rst").read_text()
    story, system = (summary[summary["level"] == level].iloc[0] for level in ("story", "system"))
    assert story["statistic"] == "item" and "rater group" in story["statistic_words"]
    assert "the 5 groups" in story["resampled"]
    assert system["statistic"] == "system" and system["writers"] == 13
    assert system["ceiling"] > story["ceiling"] > 0  # writers' means: a like-for-like, higher ceiling
    # length is planted as a writer-level trait: it leads, but knowing the writer does better within groups
    assert story["best"] == "Text length" and story["writer_baseline"] > story["best_r"]
    assert "does not beat knowing which writer" in story["verdict"]
    stories = pd.read_csv(base.parent / "data/stories.csv")
    assert set(stories["given_prompt"]) == {"plan 7"}  # the prompt as given


def test_annotator_slots_and_a_metric_against_its_direction(tmp_path):
    said, summary, rows, base = run_example(tmp_path, "slots")
    assert "design 483 stories in one group (no writers or prompts named); 2-5 ratings a story in 5 per-story " \
           "positions (not persons)" in said
    cell = summary.iloc[0]
    assert len(summary) == 1 and cell["statistic"] == "pooled" and cell["ceiling"] > 0
    assert cell["verdict"].startswith("no metric agrees")
    assert "Repetition-1 +0." in cell["against_direction"]
    flagged = rows.set_index("metric")
    assert flagged.at["repetition-1", "against_direction"] and flagged.at["repetition-1", "rank"] > 1
    landing = (base / "report/answer.rst").read_text()
    assert "Against the declared direction" in landing and "Repetition-1 +0." in landing
