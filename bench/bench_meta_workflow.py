"""Benchmark: the meta-evaluation jobs of the workflow on HANNA's released scores and LLM judges.

Copies a working tree (default: this one; --tree: another checkout, e.g. an older commit's `git archive`) into a
scratch directory, builds what the meta rules read (scores, registry, human ratings: not timed), then times
Snakemake for meta_targets("hanna", "released") at the config's defaults (72 metrics + 140 judge columns, 6
criteria, groupings none, item and system, 1,000 permutations and resamples): the wall time, the CPU seconds of
Snakemake and all its jobs, and each job's wall and CPU seconds from its benchmark: file.
Usage: python bench/bench_meta_workflow.py [--cores 2] [--tree DIR] [--keep DIR]
Goal: under 60 s wall on 2 cores. A busy machine inflates the wall time; the CPU
seconds are the steadier measure.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_workflow_analysis import REPO, SKIP, job_times

PREREQUISITES = [
    "results/hanna/released/scores.parquet",
    "results/hanna/released/metrics.csv",
    "results/hanna/data/human_scores.csv",
    "results/hanna/data/stories.csv",
]
TARGET_RULE = """include: "Snakefile"


rule bench_meta:
    input:
        workflow_meta.targets(RUN, "hanna", "released"),
"""


def snakemake(work: Path, cores: int, *targets: str) -> None:
    command = [str(Path(sys.executable).with_name("snakemake")), *targets, "-s", "bench.smk", "--cores", str(cores),
               "--workflow-profile", "none", "--quiet", "all"]
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(work / "src"))  # the copy's package, not the install's
    subprocess.run(command, cwd=work, check=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--tree", type=Path, default=REPO, help="working tree to benchmark (default: this one)")
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    args = parser.parse_args()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="bench_meta_"))
    work = scratch / "repo"
    tree = args.tree.resolve()
    shutil.copytree(tree, work, ignore=lambda folder, names: SKIP & set(names) if Path(folder) == tree else set())
    (work / "bench.smk").write_text(TARGET_RULE)
    (scratch / "shared").symlink_to(REPO.parent / "shared")  # config.yaml's mirrors: ../shared/data
    snakemake(work, args.cores, *PREREQUISITES)
    shutil.rmtree(work / "benchmarks", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    snakemake(work, args.cores, "bench_meta")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    jobs = job_times(work)
    print(jobs.to_string(index=False))
    print(f"meta jobs with benchmark files: {jobs['wall_s'].sum():.1f} job-wall s, {jobs['cpu_s'].sum():.1f} CPU-s")
    print(f"all (Snakemake and every job, --cores {args.cores}): {wall:.1f} s wall, {cpu:.1f} CPU-s")
    print(f"outputs: {work / 'results/hanna/released'}")
    if not args.keep:
        print(f"(scratch {scratch} kept for cmp; remove it when done)")


if __name__ == "__main__":
    main()
