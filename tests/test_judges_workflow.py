"""The LLM-judge jobs in the workflow, on a tiny random causal LM: a user's rated stories and HANNA-LLM's first
prompt are rated; the judges join the score set, the correlations and the meta-evaluation; the numbers equal
storyeval.judge's; start-up says what each job will run; the released-judge comparison is written."""

import hashlib
import json
import time

import numpy as np
import pandas as pd
import pytest
import yaml

from tiny_models import CORPUS, tiny_judge
from workflow_helpers import make_workdir, run_snakemake

SYSTEMS = ["alpha", "beta", "gamma", "delta", "epsilon"]
CRITERIA = {"Flow": "how smoothly the story reads", "Plot": "how interesting the plot is"}
META = ["correlations", "pairwise", "perm_both_none", "clusters_none", "williams_judges", "consensus"]


def own_stories(prompts: int = 4, raters: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for prompt in range(prompts):
        for rank, system in enumerate(SYSTEMS):
            story = " ".join(CORPUS[(prompt + k) % len(CORPUS)] for k in range(rank % 3 + 1))
            for rater in range(raters):
                rows.append({"id": f"p{prompt}-{system}", "prompt": f"Write about topic {prompt}.", "model": system,
                             "text": story, "rater": f"r{rater}", "flow": int(rng.integers(1, 6)),
                             "plot": int(rng.integers(1, 6))})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def judged(tmp_path_factory, hanna_mirror):
    workdir = tmp_path_factory.mktemp("judged")
    own_stories().to_csv(workdir / "mine.csv", index=False)
    folder = tiny_judge(workdir / "tiny-judge", chat=True, n_positions=8192)
    columns = {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text", "rater": "rater",
               "criteria": {"Flow": "flow", "Plot": "plot"}}
    digest = hashlib.sha256((workdir / "mine.csv").read_bytes()).hexdigest()
    mine = {"kind": "table", "path": "mine.csv", "sha256": digest, "columns": columns, "metrics": []}
    make_workdir(workdir, **{
        "datasets.mine": mine, "datasets.hanna-llm.max_prompts": 1, "datasets.hanna-llm.metrics": [],
        "judges": {"models": {"tiny": {"path": str(folder), "released": "Mistral-7B"}}, "templates": ["tacl-1"],
                   "datasets": {"mine": {"criteria": CRITERIA, "templates": ["tacl-1", "geval"]},
                                "hanna-llm": {"criteria": {"Coherence": "how much the story makes sense"}}}},
        "device": "cpu",
    })
    meta = [f"results/mine/computed/meta/{name}.csv" for name in META]
    targets = ["results/mine/computed/correlations.csv", *meta, "results/hanna-llm/computed/scores.parquet",
               "results/hanna-llm/judge_validation.csv"]
    start = time.perf_counter()
    result = run_snakemake(workdir, "--set-threads", "llm_judge=1", "--cores", "2", *targets)
    assert result.returncode == 0, result.stderr[-3000:]
    print(f"tiny-judge workflow: {time.perf_counter() - start:.1f} s")
    return workdir, result.stdout + result.stderr


def test_judges_join_the_score_set_and_the_statistics(judged):
    workdir, _ = judged
    registry = pd.read_csv(workdir / "results/mine/computed/metrics.csv")
    judges = registry[registry["family"] == "llm-judge"]
    assert list(judges["slug"]) == ["judge-tiny-tacl-1-flow", "judge-tiny-tacl-1-plot", "judge-tiny-geval-flow",
                                    "judge-tiny-geval-plot"]
    assert list(judges["criterion"]) == ["Flow", "Plot"] * 2
    correlations = pd.read_csv(workdir / "results/mine/computed/correlations.csv")
    assert set(judges["slug"]) <= set(correlations["x"])
    for name in META[:-1]:  # each judge column against the criterion it rated
        table = pd.read_csv(workdir / f"results/mine/computed/meta/{name}.csv")
        flow = table[table["criterion"] == "Flow"]
        columns = {slug for column in ("metric", "metric_a", "metric_b") if column in flow for slug in flow[column]}
        assert columns == {"judge-tiny-geval-flow", "judge-tiny-tacl-1-flow"}, name
    consensus = pd.read_csv(workdir / "results/mine/computed/meta/consensus.csv")
    assert set(consensus["label"]) == {"tiny (tacl-1)", "tiny (geval)"}  # a judge x template ranks as one item
    scores = pd.read_parquet(workdir / "results/hanna-llm/computed/scores.parquet")
    assert list(scores["metric"].unique()) == ["judge-tiny-tacl-1-coherence"] and len(scores) == 7  # the 1st prompt


def test_the_workflow_job_equals_the_python_entry_point(judged):
    import storyeval

    workdir, _ = judged
    texts = pd.read_parquet(workdir / "results/mine/data/texts.parquet")
    job = pd.read_parquet(workdir / "results/mine/computed/judges/tiny@tacl-1.parquet").set_index("story_id")
    api = storyeval.judge(texts["story"], criteria=CRITERIA, model=str(workdir / "tiny-judge"), prompts=texts["prompt"],
                          story_ids=texts["story_id"], device="cpu")
    np.testing.assert_array_equal(job.to_numpy(), api.to_numpy())
    signature = json.loads((workdir / "results/mine/computed/judges/tiny@tacl-1.signature.json").read_text())
    assert signature["forward_passes"] == len(texts) * 2 and signature["parse_failures"] == 0
    assert (signature["dtype"], signature["device"], signature["settings"]["dtype"]) == ("float32", "cpu", "auto")


def test_startup_says_what_each_judge_job_runs(judged):
    workdir, log = judged
    texts = pd.read_parquet(workdir / "results/mine/data/texts.parquet")
    details = pd.read_parquet(workdir / "results/mine/computed/judges/tiny@geval.details.parquet")
    assert (f"judge tiny with template geval on mine: {len(texts) * 2} forward passes ({len(texts)} stories x 2 "
            f"criteria), {details['prompt_tokens'].sum()} prompt tokens, expected mode") in log
    rerun = run_snakemake(workdir, "--cores", "1", "-n", "--forceall", "results/mine/computed/scores.parquet")
    assert rerun.returncode == 0


def test_the_released_judge_comparison_is_written(judged):
    workdir, _ = judged
    table = pd.read_csv(workdir / "results/hanna-llm/judge_validation.csv")
    assert list(table["criterion"]) == ["Coherence"] and list(table["released_slug"]) == ["mistral-7b-ch-t1"]
    assert list(table["n"]) == [1]  # HANNA's human story of the first prompt


def test_sharded_judge_jobs_are_gathered(judged, tmp_path):
    """With shards.stories, each shard is a judge job of its own (a finished shard is kept when a run stops) and a
    gather job writes the unsharded paths."""
    workdir, _ = judged
    config = workdir / "config.yaml"
    sharded = tmp_path / "sharded.yaml"
    settings = yaml.safe_load(config.read_text())
    settings.setdefault("shards", {})["stories"] = 5
    sharded.write_text(yaml.safe_dump(settings))
    target = "results/mine/computed/scores.parquet"
    dry = run_snakemake(workdir, "-n", "--forceall", target, "--configfile", str(sharded))
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "checkpoint shard_texts" in dry.stdout and "gather_judge" in dry.stdout
