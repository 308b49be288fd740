"""Snakemake's default submission rate limit, lifted for local runs (storyeval.workflow.scheduling)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake.settings.types import MaxJobsPerTimespan

from storyeval.workflow.scheduling import lift_default_rate_limit

from workflow_helpers import SNAKEMAKE

JOBS = 12


def workflow_with(limit: str | None, local: bool = True) -> SimpleNamespace:
    timespan = MaxJobsPerTimespan.parse_choice(limit) if limit else None
    scheduler = SimpleNamespace(job_rate_limiter=object() if timespan else None)
    return SimpleNamespace(local_exec=local, scheduler=scheduler,
                           scheduling_settings=SimpleNamespace(max_jobs_per_timespan=timespan))


@pytest.mark.parametrize(("limit", "local", "lifted"), [
    ("100/1s", True, True),  # Snakemake's default, given or not
    ("10/1s", True, False),  # the user's own limit
    ("100/1m", True, False),
    ("100/1s", False, False),  # a cluster's queue
    (None, True, False),  # no limiter: nothing to lift
])
def test_only_the_default_limit_of_a_local_run_is_lifted(limit, local, lifted):
    workflow = workflow_with(limit, local)
    limiter = workflow.scheduler.job_rate_limiter
    assert lift_default_rate_limit(workflow) is lifted
    assert workflow.scheduler.job_rate_limiter is (None if lifted else limiter)


def rounds(tmp_path: Path, onstart: str) -> int:
    """Scheduling rounds (Snakemake's "Ready jobs" debug line) of JOBS short jobs on 2 cores."""
    tmp_path.mkdir()
    (tmp_path / "Snakefile").write_text(f"""
from storyeval.workflow import scheduling

onstart:
    {onstart}

rule all:
    input: expand("out/{{i}}.txt", i=range({JOBS}))

rule one:
    output: "out/{{i}}.txt"
    shell: "sleep 0.6; touch {{output}}"
""")
    result = subprocess.run([SNAKEMAKE, "--cores", "2", "--verbose", "--workflow-profile", "none"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(list((tmp_path / "out").iterdir())) == JOBS
    return result.stderr.count("Ready jobs")


def test_a_local_run_schedules_once_per_finished_job(tmp_path):
    """With the limiter, each round leaves a timer that runs another a second later, and the rounds a second grow
    with the jobs finished; without it, a round follows each job's end (and the first one)."""
    lifted = rounds(tmp_path / "lifted", "scheduling.lift_default_rate_limit(workflow)")
    kept = rounds(tmp_path / "kept", "pass")
    assert lifted <= JOBS + 1 < kept
