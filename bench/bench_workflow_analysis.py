"""Benchmark: the workflow's analysis of HANNA's released scores, against the same computation in the package.

Copies the working tree (no results) into a scratch directory, runs Snakemake there for the outputs of
analysis_targets("hanna", "released") (statistics, tables, figures and their report pages), and prints the wall
time, the CPU seconds of Snakemake and all its jobs, each job's time from its benchmark: file, and the ratio of
the wall time to bench_analysis.py's in-package computation (parse, correlations, tables, statistics).
Usage: python bench/bench_workflow_analysis.py [--cores 2] [--repeat 3] [--keep DIR] [--package-seconds S]
    [--without-figures]
A busy machine inflates the wall time; the CPU seconds are the steadier measure. Both this machine's runs and the
package's vary by 10-25 % from run to run, so each workflow run is followed by the package's runs (the same load)
and the ratio reported is the median over the runs of a run's wall time over its package time.
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

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SKIP = {".venv", ".git", ".snakemake", "results", "logs", "benchmarks", "resources", "report.html"}
TARGET_RULE = """include: "Snakefile"


rule bench_released:
    input:
        [path for path in workflow_targets.analysis_targets(RUN, "hanna", "released") if {keep}],
"""
# --without-figures: the statistics and tables alone, the computations bench_analysis.py times in the package
# (the figure jobs draw and encode 100 image files and 50 report images, which the package's timing does not).
NOT_A_FIGURE = "'/figures/' not in path and '/report/fig' not in path and '/report/meta_best' not in path"


def scratch_copy(work: Path, figures: bool = True) -> None:
    """The working tree as it is (edits included), beside a link to the shared data mirrors it reads."""
    shutil.copytree(REPO, work, ignore=lambda folder, names: SKIP & set(names) if Path(folder) == REPO else set())
    (work / "bench.smk").write_text(TARGET_RULE.format(keep="True" if figures else NOT_A_FIGURE))
    shared = work.parent / "shared"
    if not shared.exists():
        shared.symlink_to(REPO.parent / "shared")


def scratch_workspace(keep: Path | None, prefix: str, figures: bool = True) -> tuple[Path, Path]:
    """(root, work): `keep` or a new temporary folder, and in it a fresh scratch copy of the working tree."""
    root = keep or Path(tempfile.mkdtemp(prefix=prefix))
    work = root / "ws"
    shutil.rmtree(work, ignore_errors=True)
    scratch_copy(work, figures)
    return root, work


def package_seconds(repeat: int) -> dict[str, float]:
    """bench_analysis.py's totals: best of `repeat` runs of the analyses and of the statistics, and the median
    of whole runs."""
    output = subprocess.run([sys.executable, str(REPO / "bench/bench_analysis.py"), "--repeat", str(repeat)],
                            capture_output=True, text=True, check=True).stdout
    return {line.split(" (")[0]: float(line.split()[-2]) for line in output.splitlines()
            if line.startswith(("total", "median"))}


def job_times(work: Path) -> pd.DataFrame:
    """One row per job with a benchmark file under work/benchmarks: wall s, CPU s, peak RSS MB (its last repeat)."""
    rows = []
    for path in sorted((work / "benchmarks").rglob("*.tsv")):
        last = pd.read_csv(path, sep="\t").iloc[-1]
        rows.append({"job": str(path.relative_to(work / "benchmarks").with_suffix("")), "wall_s": last["s"],
                     "cpu_s": last["cpu_time"], "peak_rss_mb": last["max_rss"]})
    return pd.DataFrame(rows)


def run_workflow(work: Path, cores: int, *options: str) -> tuple[float, float]:
    """One run from nothing (outputs, logs and Snakemake's records removed): wall and CPU seconds of Snakemake and
    all its jobs. `options`: more of Snakemake's (a --configfile)."""
    for name in ("results", "logs", "benchmarks", ".snakemake"):
        shutil.rmtree(work / name, ignore_errors=True)
    snakemake = Path(sys.executable).with_name("snakemake")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([str(snakemake), "-s", "bench.smk", "--cores", str(cores), "bench_released", *options],
                            cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        sys.exit(f"snakemake failed:\n{result.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="workflow runs (default 3); the ratio uses medians")
    parser.add_argument("--keep", type=Path, help="scratch directory to use and keep (default: a temporary one)")
    parser.add_argument("--package-seconds", type=float, help="skip bench_analysis.py: the in-package time to use")
    parser.add_argument("--without-figures", action="store_true", help="the statistics and tables alone")
    args = parser.parse_args()
    root, work = scratch_workspace(args.keep, "bench_workflow_", figures=not args.without_figures)
    # Each workflow run is followed by the package's runs, so that both see the same load on a shared machine.
    runs, packages = [], []
    for _ in range(args.repeat):
        runs.append(run_workflow(work, args.cores))
        packages.append({"given": args.package_seconds} if args.package_seconds else package_seconds(3))
    jobs = job_times(work)
    print(jobs.sort_values("cpu_s", ascending=False).to_string(index=False))
    print(f"jobs with a benchmark file (last run): {len(jobs)}, their CPU {jobs['cpu_s'].sum():.1f} s")
    key = "given" if args.package_seconds else "median analyses + statistics"
    ratios = []
    for (wall, cpu), package in zip(runs, packages):
        ratios.append(wall / package[key])
        print(f"workflow wall {wall:.1f} s, CPU {cpu:.1f} s (Snakemake and all jobs) at --cores {args.cores}; "
              + ", ".join(f"package {name} {seconds:.2f} s" for name, seconds in package.items())
              + f"; wall / package {ratios[-1]:.1f}x")
    wall, cpu = (float(np.median(values)) for values in zip(*runs))
    print(f"median of {len(runs)} runs: wall {wall:.1f} s, CPU {cpu:.1f} s, package {key} "
          f"{np.median([package[key] for package in packages]):.2f} s; median ratio of a run's wall to its "
          f"package time {np.median(ratios):.1f}x (runs: {', '.join(f'{ratio:.1f}x' for ratio in ratios)})")
    if not args.keep:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
