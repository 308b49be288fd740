"""Benchmark: Snakemake's job selection, greedy against its integer program (ilp: PuLP and CBC), on one workflow.

Runs the same small configuration from nothing once per scheduler and repeat, alternating the order (HANNA's
released analysis with every figure, StoryER's WP200 and Scary200 with text length, a 3-prompt hanna-llm slice
with three string metrics: 116 jobs), each in its own temporary directory, data from the local mirror; prints the
wall time and the CPU seconds of Snakemake and all it started (its children, CBC's included).
Usage: python bench/bench_scheduler.py [--cores 2] [--repeat 2]
The outputs are the same bytes either way (`bench/compare_runs.py` on two kept directories, --keep).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from bench_job_overhead import cpu_of  # noqa: E402

from workflow_helpers import make_workdir  # noqa: E402 (the tests' work directory: the default config, mirrors)

SMALL = {
    "hanna.annotations": "skip",
    "datasets": {
        "wp200": {"kind": "storyer", "file": "storyer/wp200", "metrics": ["textstats"]},
        "scary200": {"kind": "storyer", "file": "storyer/scary200", "metrics": ["textstats"]},
        "mini": {"kind": "hanna-llm", "file": "hanna/stories_llm", "max_prompts": 3,
                 "metrics": ["bleu", "chrf", "rouge"]},
    },
}


def run(scheduler: str, cores: int, folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run from nothing."""
    make_workdir(folder, **SMALL)
    command = [str(Path(sys.executable).with_name("snakemake")), "-s", str(REPO / "Snakefile"), "--directory",
               str(folder), "--workflow-profile", "none", "--cores", str(cores), "--scheduler", scheduler, "--quiet",
               "all"]
    wall = time.perf_counter()
    cpu = cpu_of(command, dict(os.environ, MPLBACKEND="Agg"))
    return time.perf_counter() - wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="folder for the runs' directories (default: temporary ones)")
    args = parser.parse_args()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="bench_scheduler_"))
    print("scheduler\trepeat\twall_s\tcpu_s")
    for repeat in range(args.repeat):
        for scheduler in ("greedy", "ilp")[:: 1 if repeat % 2 == 0 else -1]:
            wall, cpu = run(scheduler, args.cores, scratch / f"{scheduler}-{repeat}")
            print(f"{scheduler}\t{repeat}\t{wall:.1f}\t{cpu:.1f}", flush=True)


if __name__ == "__main__":
    main()
