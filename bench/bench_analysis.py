"""Benchmark: the analysis of HANNA's released scores, end to end, on this machine.

Parses the released files, builds every correlation (3 kinds x 2 levels x 3
coefficients), Tab. 4 means, top metrics, Borda counts and the paper's tables.
Usage: python bench/bench_analysis.py [--mirror DIR] [--repeat N]
Goal (issue 2): under 30 s of wall time on 2 cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from storyeval import tables
from storyeval.analysis import BORDA_LEVELS, correlation_table, metric_criterion_table, system_means
from storyeval.criteria import CRITERIA
from storyeval.data.hanna import read_rater_ratings, read_released_scores
from storyeval.data.scoreset import analysed_systems, build_cube
from storyeval.stats.ranking import borda, top_metrics

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
    metrics = build_cube(released.stories, released.scores, "metric", "value", list(released.registry.slug), systems, "bench")
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
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    totals = []
    for attempt in range(args.repeat):
        timings = run(args.mirror)
        totals.append(sum(timings.values()))
        if attempt == 0:
            for name, seconds in timings.items():
                print(f"{name:28s} {seconds:7.3f} s")
    print(f"{'total (best of %d)' % args.repeat:28s} {min(totals):7.3f} s")


if __name__ == "__main__":
    main()
