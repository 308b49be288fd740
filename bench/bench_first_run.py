"""Benchmark report of a finished workflow run: the per-rule table of `benchmarks/` and how busy the cores were.

Reads a run directory (a clone where `make reproduce` or `snakemake --cores N` ran): its `benchmarks/**/*.tsv`
(Snakemake's `benchmark:` files: wall s, CPU s, peak RSS per job) and its newest `.snakemake/log/*.log`, whose
job start and finish lines give how many jobs ran at each second. Prints the slowest jobs, the sums, and the
seconds with 1, 2, ... jobs running; with a second directory, the two runs side by side. Usage:
    python bench/bench_first_run.py RUN_DIR [BEFORE_DIR] [--rows 16]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

import pandas as pd
from bench_workflow_analysis import job_times

STAMP = re.compile(r"\[(\w{3} \w{3}\s+\d+ [\d:]+ \d{4})\]")
RULE = re.compile(r"(?:local)?rule (\w+):")
JOB = re.compile(r"\s+jobid: (\d+)")
FINISHED = re.compile(r"Finished jobid: (\d+)")


def job_spans(run: Path) -> list[tuple[str, float, float]]:
    """(rule, start s, end s) of every finished job of the newest Snakemake log that ran jobs (a later
    `make report` or dry run leaves a log without any), seconds from the first start."""
    for log in sorted((run / ".snakemake" / "log").glob("*.log"), reverse=True):
        stamp, rule, started, ended = None, None, {}, {}
        for line in log.read_text().splitlines():
            if match := STAMP.match(line):
                stamp = datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
            elif match := RULE.match(line):
                rule = match.group(1)
            elif (match := JOB.match(line)) and rule:
                started[int(match.group(1))] = (rule, stamp)
                rule = None
            elif match := FINISHED.match(line):
                ended[int(match.group(1))] = stamp
        if ended:
            origin = min(stamp for _, stamp in started.values())
            return [(rule, (start - origin).total_seconds(), (ended[job] - origin).total_seconds())
                    for job, (rule, start) in started.items() if job in ended]
    raise SystemExit(f"{run}: no Snakemake log with a finished job under .snakemake/log")


def busy_seconds(spans: list[tuple[str, float, float]]) -> Counter:
    """{jobs running: seconds} over the run (Snakemake's log stamps have one-second resolution)."""
    end = int(max(stop for _, _, stop in spans))
    return Counter(sum(start <= second < stop for _, start, stop in spans) for second in range(end))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("before", type=Path, nargs="?")
    parser.add_argument("--rows", type=int, default=16)
    args = parser.parse_args()
    runs = {"after": args.run, "before": args.before} if args.before else {"run": args.run}
    tables = {name: job_times(path).set_index("job").astype(float) for name, path in runs.items()}
    joined = pd.concat(tables, axis=1).sort_values((next(iter(runs)), "wall_s"), ascending=False)
    print(joined.head(args.rows).round(1).to_string())
    for name, path in runs.items():
        spans = job_spans(path)
        busy = busy_seconds(spans)
        print(f"{name}: {len(spans)} jobs, span {max(stop for _, _, stop in spans):.0f} s; benchmarked jobs: "
              f"{tables[name]['wall_s'].sum():.0f} wall s, {tables[name]['cpu_s'].sum():.0f} CPU s; "
              "seconds with n jobs running: " + ", ".join(f"{n}: {s}" for n, s in sorted(busy.items())))


if __name__ == "__main__":
    main()
