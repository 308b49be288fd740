"""profiles/slurm against a real SLURM 22.05 on localhost (tests/slurm/run_e2e.sh), and a dry run of the profile.

The end-to-end script needs root (it installs slurm-wlm and munge from Debian and starts munged,
slurmctld and slurmd); elsewhere it is skipped with the reason. Runs under `timeout -s KILL`.
"""

import filecmp
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from workflow_helpers import make_workdir

SCRIPT = REPO / "tests/slurm/run_e2e.sh"
BUDGET_S = 1800  # the script's own bound on its steps (E2E_BUDGET); its cleanup takes < 3 min
PROFILE = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
BASE = "results/hanna/released"
# The small configuration's rules that are not localrules: each must have been one sbatch job. Tab. 4, 6, 8
# and 9 come from three table families; the common one also renders the Kemeny table.
# design_answer reads HANNA's released judges (judge_scores) beside the released scores.
SUBMITTED_RULES = {"normalise_hanna", "normalise_texts", "correlations", "confounds", "system_means", "rankings",
                   "metric", "kemeny", "design_answer", "judge_scores"}
LOCAL_RULES = {"fetch", "merge_scores", "tables_common", "tables_system", "tables_systems_raters"}


def run_e2e(out: Path, sharded: bool) -> Path:
    if os.geteuid() != 0:
        pytest.skip("SLURM end-to-end test needs root (installs slurm-wlm/munge, starts munged, slurmctld, slurmd)")
    if shutil.which("timeout") is None:
        pytest.skip("SLURM end-to-end test needs coreutils `timeout` to bound it")
    env = dict(os.environ, E2E_BUDGET=str(BUDGET_S), E2E_SHARDED=str(int(sharded)))
    result = subprocess.run(["timeout", "-s", "KILL", str(BUDGET_S + 300), "bash", str(SCRIPT), str(out)],
                            capture_output=True, text=True, env=env)
    if result.returncode == 77:
        pytest.skip(next(line for line in result.stdout.splitlines() if line.startswith("SKIP")))
    assert result.returncode == 0, f"rc={result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    print(result.stdout)
    return out


@pytest.fixture(scope="module")
def e2e(tmp_path_factory, hanna_mirror):
    return run_e2e(tmp_path_factory.mktemp("slurm-e2e"), sharded=False)


@pytest.fixture(scope="module")
def e2e_sharded(tmp_path_factory, hanna_mirror):
    """The script's sharded step alone (two workflow runs: minutes); the module's other fixture runs the rest."""
    return run_e2e(tmp_path_factory.mktemp("slurm-e2e-sharded"), sharded=True)


def result_files(workdir: Path) -> list[str]:
    return sorted(str(path.relative_to(workdir)) for ext in ("csv", "parquet", "md")
                  for path in (workdir / "results").rglob(f"*.{ext}"))


def assert_identical(left: Path, right: Path) -> None:
    files = result_files(left)
    assert files == result_files(right)
    match, mismatch, errors = filecmp.cmpfiles(left, right, files, shallow=False)
    assert (mismatch, errors) == ([], []) and len(match) == len(files)


def jobs(listing: Path, workdir: Path) -> list[dict]:
    """`scontrol show jobs -o` lines of the jobs that ran in workdir, as key -> value."""
    parsed = [dict(re.findall(r"(\w[\w/:]*)=(\S*)", line)) for line in listing.read_text().splitlines()]
    return [job for job in parsed if job.get("WorkDir") == str(workdir)]


def rule_of(job: dict) -> str:
    return re.match(r"rule_(\w+?)(_wildcards_.*)?$", job["Comment"]).group(1)


def planned_rules(log: Path) -> set[str]:
    """Rules in the 'Job stats' table a run prints before it starts."""
    table = log.read_text().split("Job stats:", 1)[1].split("total", 1)[0]
    return {line.split()[0] for line in table.splitlines()[3:] if line.strip()}


def hours_minutes(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


def test_slurm_run_equals_local_run_byte_for_byte(e2e):
    files = result_files(e2e / "local")
    assert {f"{BASE}/correlations.csv", f"{BASE}/tables/tab6_borda.csv", "results/wp200/computed/scores.parquet",
            "results/wp200/computed/scores/textstats.parquet"} <= set(files)
    assert_identical(e2e / "local", e2e / "slurm")
    times = dict(line.split("\t") for line in (e2e / "times.tsv").read_text().splitlines())
    assert set(times) == {"slurm", "local", "resumed"}
    assert all(float(value) > 0 for value in times.values())


def test_heavy_rules_were_slurm_jobs_and_light_rules_stayed_local(e2e):
    submitted = jobs(e2e / "slurm_jobs.txt", e2e / "slurm")
    assert sorted(rule_of(job) for job in submitted) == sorted(SUBMITTED_RULES)
    assert all(job["JobState"] == "COMPLETED" and job["ExitCode"] == "0:0" for job in submitted)
    executed = re.findall(r"^(rule|localrule) (\w+):$", (e2e / "slurm.log").read_text(), re.M)
    assert {name for kind, name in executed if kind == "localrule"} == LOCAL_RULES
    assert {name for kind, name in executed if kind == "rule"} == SUBMITTED_RULES
    defaults = PROFILE["default-resources"]
    for job in submitted:
        if rule_of(job) != "metric":  # the metric rule asks for more itself
            assert job["MinMemoryNode"] == f"{defaults['mem_mb']}M"
            assert job["TimeLimit"] == hours_minutes(defaults["runtime"])
            assert job["Partition"] == "debug"  # no partition given: the cluster's default


def test_killed_run_resumes_to_identical_results(e2e):
    killed = (e2e / "killed.txt").read_text()
    assert int(re.search(r"targets missing: (\d+) of 6", killed).group(1)) > 0
    assert f"{BASE}/scores.parquet" in killed  # the first wave had finished
    assert "cannot be locked" in (e2e / "locked.log").read_text()
    interrupted = re.search(r"killed during SLURM job \d+ rule_(\w+?)(_wildcards_\S*)? \(", killed).group(1)
    rerun = planned_rules(e2e / "resumed.log")
    assert interrupted in rerun and "normalise_hanna" not in rerun  # redid the interrupted job, kept the done ones
    assert_identical(e2e / "local", e2e / "resumed")


def test_gpu_resources_reach_sbatch_without_a_gpu(e2e):
    wanted = PROFILE["set-resources"]["embed_texts"]
    job = (e2e / "gpu_job.txt").read_text()
    assert "Comment=rule_embed_texts_" in job and "JobState=PENDING" in job
    assert f"TresPerJob=gres:gpu:{wanted['gpu']}" in job
    assert f"CpusPerTres=gres:gpu:{wanted['cpus_per_gpu']}" in job
    assert f"MinMemoryNode={wanted['mem_mb']}M" in job
    assert f"TimeLimit={hours_minutes(wanted['runtime'])}" in job
    assert "Partition=gpu " in job
    sbatch = (e2e / "gpu_sbatch.txt").read_text()
    assert f"--gpus={wanted['gpu']}" in sbatch and f"--cpus-per-gpu={wanted['cpus_per_gpu']}" in sbatch


@pytest.mark.slow
def test_sharded_run_spreads_one_metric_over_jobs_running_together(e2e_sharded):
    """shards.stories: 5 on 14 stories: 3 embedding and 3 BaryScore jobs; two BaryScore shards overlap in time;
    the gathered scores equal the local run's byte for byte."""
    e2e = e2e_sharded
    assert_identical(e2e / "sharded-local", e2e / "sharded-slurm")
    assert "results/mini/computed/scores/baryscore@all-minilm-l6-v2.parquet" in result_files(e2e / "sharded-slurm")
    submitted = jobs(e2e / "sharded-slurm_jobs.txt", e2e / "sharded-slurm")
    assert all(job["JobState"] == "COMPLETED" and job["ExitCode"] == "0:0" for job in submitted)
    assert sorted(rule_of(job) for job in submitted if "shard" in rule_of(job)) == [
        *["embed_shard"] * 3, *["neural_metric_shard"] * 3]
    spans = sorted((datetime.fromisoformat(job["StartTime"]), datetime.fromisoformat(job["EndTime"]))
                   for job in submitted if rule_of(job) == "neural_metric_shard")
    assert any(start < end for (_, end), (start, _) in zip(spans, spans[1:])), spans


def test_every_daemon_stopped_and_state_removed(e2e):
    started = dict(line.split(" ", 1) for line in (e2e / "daemons.txt").read_text().splitlines())
    assert not Path(started.pop("state")).exists()
    for name, pid in started.items():
        proc = Path(f"/proc/{pid}/cmdline")
        assert not proc.exists() or name not in proc.read_text(), f"{name} (PID {pid}) still runs"


def test_profile_places_rules_in_a_dry_run(tmp_path, hanna_mirror):
    """Without SLURM: the profile parses and its resources for the GPU rule apply."""
    workdir = make_workdir(tmp_path, **{"hanna.annotations": "skip", "data.allow_download": False,
                                        "datasets": {"wp200": {"kind": "storyer", "file": "storyer/wp200",
                                                               "metrics": ["textstats"]}}})
    targets = [f"{BASE}/tables/tab6_borda.csv", "results/wp200/computed/scores.parquet",
               "results/wp200/computed/embeddings/all-minilm-l6-v2.safetensors"]
    command = [str(Path(sys.executable).with_name("snakemake")), "-s", str(REPO / "Snakefile"), "--directory",
               str(workdir), "--workflow-profile", str(REPO / "profiles/slurm"), "-n", *targets]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    embed = re.search(r"^rule embed_texts:\n(.*?)^\[", result.stdout, re.S | re.M).group(1)
    wanted = PROFILE["set-resources"]["embed_texts"]
    for key in ("gpu", "cpus_per_gpu", "mem_mb", "runtime"):
        assert f"{key}={wanted[key]}" in embed
