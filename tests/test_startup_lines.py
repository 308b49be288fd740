"""Start-up speaks of what was asked: notes about datasets or targets outside the run's DAG are not said, a line
that names several datasets names the asked ones, the models `metrics: all` loads are said, and the notes come
once, before the job statistics, in a dry run as in a run."""

import logging
from types import SimpleNamespace

import yaml
from snakemake_interface_logger_plugins.common import LogEvent

from storyeval.workflow.judges import asked
from storyeval.workflow.selection import left_out_line, models_loaded, trained_line
from storyeval.workflow.startup import BeforeJobStats, DatasetNote

from conftest import REPO


def job(rule: str, *output: str, **wildcards):
    return SimpleNamespace(rule=SimpleNamespace(name=rule), output=list(output), wildcards_dict=wildcards)


def test_only_the_asked_datasets_and_targets_are_spoken_of():
    metrics = ["bleu", "rouge"]
    notes = [
        DatasetNote("dataset mine: design 4 writers x 6 prompts", ["mine"]),
        DatasetNote("dataset other: design 2 writers", ["other"]),
        DatasetNote(left_out_line(metrics, ["mine", "other"], "no reference text"), ["mine", "other"],
                    naming=lambda names: left_out_line(metrics, names, "no reference text")),
        DatasetNote("audit left out: no paper values", rules=["all", "released"]),
        "warning: a damaged local copy",  # a plain line is always said
    ]
    mine = [job("normalise_texts", "results/mine/data/texts.parquet", textset="mine"), job("dataset_mine")]
    assert asked(notes, mine) == ["dataset mine: design 4 writers x 6 prompts",
                                  "bleu, rouge left out (mine): no reference text", "warning: a damaged local copy"]
    everything = [*mine, job("correlations", "results/other/computed/correlations.csv", dataset="other"),
                  job("audit", "results/audit/audit.csv"), job("all")]
    assert asked(notes, everything) == [notes[0], notes[1], "bleu, rouge left out (mine, other): no reference text",
                                        notes[3], notes[4]]


def test_metrics_all_says_which_models_it_loads_and_trains():
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    said = models_loaded(config, ["bleu", "bertscore", "moverscore", "supert", "storyer"])
    assert said == ("loads models.encoder (bundled) for bertscore, moverscore; loads models.sentence_encoder "
                    "(bundled) for supert")
    assert models_loaded(config, ["bleu", "textstats", "storyer"]) == ""
    trained = DatasetNote(trained_line(["wp200", "mine"]), ["wp200", "mine"], naming=trained_line)
    assert asked([trained], [job("merge_scores", "results/mine/computed/scores.parquet")]) == [
        "metrics: all trains storyer (StoryER's evaluator) once, before it scores mine"]


def test_the_notes_come_once_before_the_job_statistics():
    said = []
    logger = logging.getLogger("storyeval-test-startup")
    logger.setLevel(logging.INFO)  # as Snakemake sets its logger
    before = BeforeJobStats(lambda: said.append(len(said)))
    logger.addFilter(before)
    try:
        logger.info("Building DAG of jobs...")
        assert said == []
        logger.info("Job stats:", extra={"event": LogEvent.RUN_INFO})
        logger.info("Job stats:", extra={"event": LogEvent.RUN_INFO})  # a dry run logs them twice
        assert said == [0]
    finally:
        logger.removeFilter(before)
