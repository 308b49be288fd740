"""Benchmark: the workflow's analysis of HANNA's released scores, against the same computation in the package.

Copies the working tree (no results) into a scratch directory, runs Snakemake there for the outputs of
analysis_targets("hanna", "released") (statistics, tables, figures and their report pages), and prints the wall
time, the CPU seconds of Snakemake and all its jobs, each job's time from its benchmark: file, and the ratio of
the wall time to bench_analysis.py's in-package computation (parse, correlations, tables, statistics).
Usage: python bench/bench_workflow_analysis.py [--cores 2] [--keep DIR] [--package-seconds S]
A busy machine inflates the wall time; the CPU seconds are the steadier measure.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SKIP = {".venv", ".git", ".snakemake", "results", "logs", "benchmarks", "resources", "report.html"}
TARGET_RULE = """include: "Snakefile"


rule bench_released:
    input:
        analysis_targets("hanna", "released"),
"""


def scratch_copy(work: Path) -> None:
    """The working tree as it is (edits included), beside a link to the shared data mirrors it reads."""
    shutil.copytree(REPO, work, ignore=lambda folder, names: SKIP & set(names) if Path(folder) == REPO else set())
    (work / "bench.smk").write_text(TARGET_RULE)
    shared = work.parent / "shared"
    if not shared.exists():
        shared.symlink_to(REPO.parent / "shared")


def package_seconds() -> dict[str, float]:
    """bench_analysis.py's times, best of 3: the analyses and the statistics."""
    output = subprocess.run([sys.executable, str(REPO / "bench/bench_analysis.py")],
                            capture_output=True, text=True, check=True).stdout
    return {line.split(" (")[0]: float(line.split()[-2]) for line in output.splitlines() if line.startswith("total")}


def job_times(work: Path) -> pd.DataFrame:
    rows = []
    for path in sorted((work / "benchmarks").rglob("*.tsv")):
        last = pd.read_csv(path, sep="\t").iloc[-1]
        rows.append({"job": str(path.relative_to(work / "benchmarks").with_suffix("")), "wall_s": last["s"],
                     "cpu_s": last["cpu_time"]})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="scratch directory to use and keep (default: a temporary one)")
    parser.add_argument("--package-seconds", type=float, help="skip bench_analysis.py: the in-package time to use")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench_workflow_"))
    work = root / "ws"
    shutil.rmtree(work, ignore_errors=True)
    scratch_copy(work)
    snakemake = Path(sys.executable).with_name("snakemake")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        [str(snakemake), "-s", "bench.smk", "--cores", str(args.cores), "bench_released"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        sys.exit(f"snakemake failed:\n{result.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    jobs = job_times(work)
    print(jobs.sort_values("cpu_s", ascending=False).to_string(index=False))
    print(f"jobs with a benchmark file: {len(jobs)}, their CPU {jobs['cpu_s'].sum():.1f} s")
    print(f"workflow wall {wall:.1f} s, CPU {cpu:.1f} s (Snakemake and all jobs) at --cores {args.cores}")
    package = {"given": args.package_seconds} if args.package_seconds else package_seconds()
    if len(package) > 1:
        package["analyses + statistics"] = sum(package.values())
    for name, seconds in package.items():
        print(
            f"package {name}: {seconds:.2f} s; workflow wall / package {wall / seconds:.1f}x, "
            f"CPU / package {cpu / seconds:.1f}x"
        )
    if not args.keep:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
