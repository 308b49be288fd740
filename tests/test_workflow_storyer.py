"""End-to-end: the learned StoryER-style evaluator in the workflow, on a tiny configuration (the first 10 prompts
of StoryER's samples, 2 epochs, 64-piece window): trained, scored as metric storyer on WP200, merged and
correlated like any metric, evaluated, explained; training byte-reproducible; module edits retrain; bad
settings refused before any job."""

import copy
import dataclasses
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from storyeval.learned.config import TrainConfig
from storyeval.learned.data import ASPECTS
from storyeval.learned.evaluate import PAIRS_DATASET, PUBLISHED
from storyeval.metrics import storyer

from conftest import REPO, STORYER_MIRROR
from workflow_helpers import comment_appended, copy_checkout, make_workdir, run_snakemake

MODEL = "all-minilm-l6-v2"
TINY = {
    "hanna.annotations": "skip",
    "datasets": {"wp200": {"kind": "storyer", "file": "storyer/wp200", "metrics": ["textstats", "storyer"]}},
    "storyer_evaluator.max_prompts": 10,
    "storyer_evaluator.training": {"epochs": 2, "max_length": 64, "policy": "truncate"},
    "stats.n_resamples": 200,
}
MODEL_DIR = f"results/storyer-model/{MODEL}"
EVALUATION = f"results/storyer-evaluation/{MODEL}/evaluation"
REASONS = f"results/wp200/storyer/reasons-retrieved@{MODEL}.csv"
TARGETS = [f"{MODEL_DIR}/model.safetensors", f"{EVALUATION}.csv", f"{EVALUATION}.md", f"{EVALUATION}.png",
           "results/wp200/computed/correlations.csv", REASONS]
COLUMNS = [storyer.PREFERENCE, *[storyer.aspect_column(k) for k in range(1, len(ASPECTS) + 1)]]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def storyer_mirror(hanna_mirror):
    if not (STORYER_MIRROR / "train_rank_data_small.pkl").is_file():
        pytest.skip(f"the StoryER mirror {STORYER_MIRROR} is absent (it lies beside the repository in CI)")
    return STORYER_MIRROR


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, storyer_mirror):
    workdir = make_workdir(tmp_path_factory.mktemp("storyer"), **TINY)
    result = run_snakemake(workdir, "--cores", "2", *TARGETS)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


def test_model_signature_and_losses(tiny_run):
    base = tiny_run / MODEL_DIR
    signature = json.loads((base / "train.signature.json").read_text())
    assert signature["model_sha256"] == sha256(base / "model.safetensors")
    assert signature["config"]["epochs"] == TINY["storyer_evaluator.training"]["epochs"]
    assert signature["max_prompts"] == TINY["storyer_evaluator.max_prompts"]
    history = pd.read_csv(base / "loss_history.csv")
    assert list(history["epoch"]) == [1, 2] and history[["ranking_loss", "rating_loss"]].gt(0).all().all()


def test_evaluation_table(tiny_run):
    table = pd.read_csv(tiny_run / f"{EVALUATION}.csv")
    published = table[table["source"] == "published"]
    assert set(published[["dataset", "method", "metric"]].itertuples(index=False, name=None)) == \
        {(dataset, method, metric) for dataset, method, metric, _ in PUBLISHED}
    assert published["ci_low"].isna().all()
    computed = table[table["source"] == "computed"]
    assert (computed["ci_low"] <= computed["value"]).all() and (computed["value"] <= computed["ci_high"]).all()
    accuracy = computed[computed["dataset"] == PAIRS_DATASET]
    assert set(accuracy["metric"]) == {"accuracy"} and accuracy["value"].between(0, 1).all()
    assert set(COLUMNS) | {"text-length"} <= set(accuracy["method"])  # the evaluator beside textstats
    registry = pd.read_csv(tiny_run / "results/wp200/computed/metrics.csv")
    wp200 = computed[computed["dataset"] == "wp200"]
    assert set(wp200["method"]) == set(registry.loc[registry["reference"] == "free", "slug"])  # every free metric
    assert set(wp200["metric"]) == {"spearman", "kendall"} and wp200["n"].eq(200).all()
    assert (tiny_run / f"{EVALUATION}.md").read_text().count("published") >= len(PUBLISHED)
    assert (tiny_run / f"{EVALUATION}.png").stat().st_size > 10_000


def test_storyer_is_a_metric_of_wp200(tiny_run):
    scores = pd.read_parquet(tiny_run / "results/wp200/computed/scores.parquet")
    assert set(COLUMNS) <= set(scores["metric"])
    assert scores[scores["metric"].isin(COLUMNS)].groupby("metric")["story_id"].nunique().eq(200).all()
    registry = pd.read_csv(tiny_run / "results/wp200/computed/metrics.csv").set_index("slug")
    assert registry.loc[COLUMNS, "reference"].eq("free").all()
    correlations = pd.read_csv(tiny_run / "results/wp200/computed/correlations.csv")
    assert set(COLUMNS) <= set(correlations.loc[correlations["kind"] == "metric_criterion", "x"])


def test_reasons_are_labelled_retrieved(tiny_run):
    reasons = pd.read_csv(tiny_run / REASONS)
    assert set(reasons["method"]) == {"retrieved"}
    assert reasons.groupby("story_id").size().eq(yaml.safe_load((REPO / "config.yaml").read_text())
                                                  ["storyer_evaluator"]["reasons"]["top_k"]).all()
    assert reasons["story_id"].nunique() == 200 and reasons["comment"].str.len().gt(0).all()
    log = (tiny_run / f"logs/storyer/reasons-wp200-retrieved@{MODEL}.log").read_text()
    assert "encoding" not in log  # the story vectors of the storyer job on wp200 are read, not computed again


def test_training_is_byte_reproducible(tiny_run, tmp_path):
    again = make_workdir(tmp_path / "again", **TINY)
    result = run_snakemake(again, "--cores", "1", f"{MODEL_DIR}/model.safetensors")
    assert result.returncode == 0, result.stderr[-2000:]
    assert sha256(again / MODEL_DIR / "model.safetensors") == sha256(tiny_run / MODEL_DIR / "model.safetensors")


def test_editing_the_training_module_retrains(tiny_run, tmp_path):
    checkout = copy_checkout(tmp_path / "repo")  # edited alone: other tests' runs (pytest -n) read the shared one
    with comment_appended(checkout / "src/storyeval/learned/train.py"):
        dry = run_snakemake(tiny_run, *TARGETS, "-n", "--quiet", "rules", repository=checkout)
    assert dry.returncode == 0, dry.stderr[-2000:]
    counts = [line.split() for line in dry.stdout.splitlines()]
    planned = {words[0] for words in counts if len(words) == 2 and words[1].isdigit()}
    assert {"train_storyer", "storyer_metric", "evaluate_storyer", "storyer_reasons"} <= planned
    assert "metric" not in planned  # textstats does not depend on the evaluator


@pytest.mark.parametrize(
    "override, phrase",
    [
        ({"storyer_evaluator.training.use_prompt": True}, "no prompt text (storyer_evaluator.training.use_prompt"),
        ({"storyer_evaluator.training.heldout_share": 0}, "no held-out pairs"),
        ({"storyer_evaluator.training.epoch": 3}, "config rejected"),
        ({"storyer_evaluator.reasons.method": "generated"}, "no seq2seq model is set"),
    ],
)
def test_bad_settings_are_refused_before_any_job(tmp_path, storyer_mirror, override, phrase):
    workdir = make_workdir(tmp_path, **copy.deepcopy({**TINY, **override}))  # make_workdir keeps the objects
    result = run_snakemake(workdir, "-n", *TARGETS)
    assert result.returncode != 0 and phrase in result.stdout + result.stderr, result.stderr[-2000:]


def test_schema_defaults_are_the_training_defaults():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    training = schema["properties"]["storyer_evaluator"]["properties"]["training"]["properties"]
    assert {name: spec["default"] for name, spec in training.items()} == dataclasses.asdict(TrainConfig())
