"""Benchmark: the analysis of HANNA's released scores, end to end, on this machine.

Parses the released files, builds every correlation (3 kinds x 2 levels x 3
coefficients), Tab. 4 means, top metrics, Borda counts and the paper's tables.
Usage: python bench/bench_analysis.py [--mirror DIR] [--repeat N]
Goals: under 30 s on 2 cores for the correlations and tables ("analyses"), and
under 30 s more for the significance tests, resampling (1,000 resamples),
consensus rankings and reanalyses ("statistics").
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from storyeval import tables
from storyeval.analysis import BORDA_LEVELS, correlation_table, metric_criterion_table, system_means
from storyeval.criteria import CRITERIA
from storyeval.data.hanna import read_rater_ratings, read_released_scores
from storyeval.data.scoreset import analysed_systems, build_cube
from storyeval.stats.bootstrap import bootstrap_f1
from storyeval.stats.correlation_ci import correlation_intervals
from storyeval.stats.icc import icc_table
from storyeval.stats.kemeny import kemeny_table
from storyeval.stats.ranking import borda, top_metrics
from storyeval.stats.reanalysis import (
    HOUAIRI_THIOUNN_METRICS,
    coefficient_agreement,
    sum_of_ranks,
    top_k_by_coefficient,
)
from storyeval.stats.topk import topk_table
from storyeval.stats.williams import williams_inputs, williams_table

ANALYSES = [
    "parse released files",
    "build cubes",
    "all correlations",
    "Tab. 4 system means",
    "top metrics and Borda",
    "tables",
]

DEFAULT_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "data" / "hanna"


def run(mirror: Path) -> dict[str, float]:
    timings = {}
    clock = time.perf_counter()

    def lap(name):
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now

    released = read_released_scores(mirror / "hanna_metric_scores.csv")
    ratings = read_rater_ratings(mirror / "hanna_metric_scores_llm.csv", released.human_scores)
    lap("parse released files")
    systems = analysed_systems(released.stories, "Human")
    human = build_cube(released.stories, released.human_scores, "criterion", "score", CRITERIA, systems, "bench")
    metrics = build_cube(
        released.stories, released.scores, "metric", "value", list(released.registry.slug), systems, "bench"
    )
    lap("build cubes")
    correlations = correlation_table(human, metrics, ["story", "system"], ["pearson", "spearman", "kendall"])
    lap("all correlations")
    means = system_means(released.stories, ratings)
    lap("Tab. 4 system means")
    table = metric_criterion_table(correlations, released.registry)
    top = top_metrics(table, 5).merge(released.registry[["slug", "label"]], left_on="metric", right_on="slug")
    counts = borda(table, BORDA_LEVELS).merge(released.registry[["slug", "label"]], left_on="metric", right_on="slug")
    lap("top metrics and Borda")
    tables.tab4_system_means(means), tables.tab5_top_pearson(top), tables.tab6_borda(counts)
    tables.tab89_top_by_coefficient(top, "story"), tables.tab89_top_by_coefficient(top, "system")
    lap("tables")
    directions = released.registry.set_index("slug").loc[metrics.names, "direction"].tolist()
    for level in ["story", "system"]:
        r_mc, r_mm, n = williams_inputs(human.values, metrics.values, level, "pooled")
        williams_table(r_mc, r_mm, n, metrics.names, human.names, level, directions)
    lap("Williams, both levels")
    bootstrap_f1(human.values, metrics.values, directions, metrics.names, human.names, 1000, 0)
    lap("paired bootstrap F1 (1,000)")
    correlation_intervals(human, metrics, ["story", "system"], ["pearson", "spearman", "kendall"], 1000, 0)
    lap("correlation CIs (1,000)")
    topk_table(human.values, metrics.values, metrics.names, human.names, human.systems)
    lap("top-k systems")
    icc_table(ratings, "position")
    lap("ICC")
    kemeny_table(table, BORDA_LEVELS)
    lap("Kemeny consensus")
    sum_of_ranks(correlations, HOUAIRI_THIOUNN_METRICS)
    top_k_by_coefficient(correlations)
    coefficient_agreement(correlations)
    lap("reanalyses")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [run(args.mirror) for _ in range(args.repeat)]
    best = {name: min(timings[name] for timings in runs) for name in runs[0]}
    for name, seconds in best.items():
        print(f"{name:30s} {seconds:7.3f} s")
    analyses = [sum(timings[name] for name in ANALYSES) for timings in runs]
    statistics = [sum(seconds for name, seconds in timings.items() if name not in ANALYSES) for timings in runs]
    print(f"{f'total analyses (best of {args.repeat})':30s} {min(analyses):7.3f} s")
    print(f"{f'total statistics (best of {args.repeat})':30s} {min(statistics):7.3f} s")
    # The median of whole runs: the statistic bench_workflow_analysis.py compares with its median workflow run.
    both = float(np.median([a + s for a, s in zip(analyses, statistics)]))
    print(f"{f'median analyses + statistics ({args.repeat} runs)':30s} {both:7.3f} s")


if __name__ == "__main__":
    main()
