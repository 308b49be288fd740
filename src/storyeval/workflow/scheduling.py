"""Snakemake's job submission rate limit, lifted for local runs (the Snakefile's `onstart`).

Snakemake limits job submissions to 100 a second by default (`--max-jobs-per-timespan`), which protects a cluster's
queue; a local run's jobs are already bounded by `--cores`. While that limiter exists, every scheduling round with
jobs left waiting starts a timer that runs one more round a second later, and each finished job starts a round of
its own: the rounds a second grow with the jobs finished since the waiting list last emptied (snakemake/snakemake
pull request 3744). Each round stats the inputs of every waiting job. In the default run, whose wide DAG keeps
hundreds of jobs waiting for 2 cores, that was about half of Snakemake's own CPU time (docs/performance.md).
"""

from __future__ import annotations

# Snakemake's default (snakemake/cli.py): a run given it explicitly is a run given the default
DEFAULT_LIMIT = (100, 1)  # jobs, seconds


def lift_default_rate_limit(workflow) -> bool:
    """Remove the default submission rate limit of a local run whose scheduler has not started yet: each round
    then follows an event (a job finished or failed), as Snakemake's rounds do without a limit. A limit the user
    chose, and cluster runs, keep theirs. Whether it was lifted."""
    limit = getattr(workflow.scheduling_settings, "max_jobs_per_timespan", None)
    scheduler = getattr(workflow, "scheduler", None)
    if not workflow.local_exec or limit is None or getattr(scheduler, "job_rate_limiter", None) is None:
        return False
    if (limit.max_jobs, limit.timespan) != DEFAULT_LIMIT:
        return False
    scheduler.job_rate_limiter = None
    return True
