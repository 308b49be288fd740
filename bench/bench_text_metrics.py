"""Benchmark: the string metrics on hanna-llm (672 stories), each as its own Snakemake job.

Reruns the metric jobs of one dataset with `--forcerun metric` on the given
cores, then prints the wall time of the whole run and each job's time from its
`benchmark:` file (process start, imports and resource loading included).
Usage: python bench/bench_text_metrics.py [--dataset hanna-llm] [--cores 2]
Goal: under 60 s on 2 cores for all string metrics together.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

from storyeval.datasets import metric_names

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="hanna-llm")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    metrics = metric_names(yaml.safe_load((REPO / "config.yaml").read_text())["datasets"][args.dataset], args.dataset)
    targets = [f"results/{args.dataset}/computed/scores/{metric}.parquet" for metric in metrics]
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    subprocess.run(
        [snakemake, "--cores", "1", f"results/{args.dataset}/data/texts.parquet", "-q"], cwd=REPO, check=True
    )
    start = time.perf_counter()
    subprocess.run(
        [snakemake, "--cores", str(args.cores), "--forcerun", "metric", "-q", *targets], cwd=REPO, check=True
    )
    wall = time.perf_counter() - start
    for metric in metrics:
        seconds = pd.read_csv(REPO / f"benchmarks/metrics/{args.dataset}/{metric}.tsv", sep="\t")["s"].iloc[-1]
        print(f"{metric:12s} {seconds:7.2f} s")
    print(f"{'all (wall)':12s} {wall:7.2f} s on {args.cores} cores")


if __name__ == "__main__":
    main()
