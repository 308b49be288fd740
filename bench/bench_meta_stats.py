"""Benchmark: the meta-evaluation statistics of storyeval.stats on HANNA's released scores and LLM judges.

72 metrics + 140 judge columns (5 judges x 4 tasks x 7), 6 criteria, the three
groupings (none, item, system), 1,000 permutations and resamples:

- correlations: Pearson, Spearman, Kendall tau-b, tau-c and tie-calibrated acc23 of all 212 columns;
- pairwise accuracy and soft pairwise accuracy (1,000 permutations);
- PERM-BOTH (Pearson) for every ordered pair of the 112 columns that meet a criterion (72 metrics,
  the 20 judge columns of that criterion and the 20 judge averages), then BH and WMT clusters;
- BOOT-BOTH 95 % intervals of all 212 x 6 correlations: Pearson in every grouping, Kendall tau-b
  at item and system level (at "none", 460k story pairs per resample: see the README, "Which statistic, when").

Usage: python bench/bench_meta_stats.py [--mirror DIR] [--no-early-stop] [--groupings none item system]
Goal: everything under 60 s on 2 cores. Wall and CPU seconds are printed per step;
on a shared machine the CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from storyeval.criteria import CRITERIA
from storyeval.data.hanna import read_released_scores
from storyeval.data.hanna_judges import judges_for, read_judge_scores
from storyeval.data.scoreset import Cube, analysed_systems, build_cube
from storyeval.stats import fdr, grouping, pairwise, permutation
from storyeval.stats.bootstrap import oriented

DEFAULT_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "data" / "hanna"
SEED = 0
B = 1000


def run(mirror: Path, groupings: list[str], early_stop: tuple[float, float] | None) -> list[tuple[str, float, float]]:
    timings = []
    wall, cpu = time.perf_counter(), time.process_time()

    def lap(name):
        nonlocal wall, cpu
        timings.append((name, time.perf_counter() - wall, time.process_time() - cpu))
        wall, cpu = time.perf_counter(), time.process_time()

    released = read_released_scores(mirror / "hanna_metric_scores.csv")
    judges = read_judge_scores(mirror / "hanna_metric_scores_llm.csv")
    lap("parse metric and judge files")
    systems = analysed_systems(released.stories, "Human")
    registry = pd.concat([released.registry, judges.registry], ignore_index=True)
    scores = pd.concat([released.scores, judges.scores], ignore_index=True)
    human = build_cube(released.stories, released.human_scores, "criterion", "score", CRITERIA, systems, "bench")
    raw = build_cube(released.stories, scores, "metric", "value", list(registry.slug), systems, "bench")
    metrics = Cube(oriented(raw.values, list(registry.direction)), raw.prompts, raw.systems, raw.names)
    lap("build cubes (212 columns)")
    for coefficient in ["pearson", "spearman", "kendall", "tau_c", "acc23"]:
        grouping.grouped_table(human, metrics, groupings, [coefficient])
        lap(f"correlations {coefficient}")
    pairwise.pairwise_table(human, metrics, B, SEED)
    lap("pairwise accuracy + SPA")
    index = {slug: k for k, slug in enumerate(metrics.names)}
    for group in groupings:
        tests = []
        for c, criterion in enumerate(CRITERIA):
            columns = list(released.registry.slug) + judges_for(judges.registry, criterion)
            table = permutation.perm_both(
                human.values[..., c],
                metrics.values[..., [index[s] for s in columns]],
                columns,
                group,
                "pearson",
                B,
                SEED,
                early_stop=early_stop,
            )
            table.insert(0, "criterion", criterion)
            tests.append(table)
        tests = fdr.with_bh(pd.concat(tests, ignore_index=True), "p", ["criterion"])
        for _, family in tests.groupby("criterion"):
            permutation.significance_clusters(family)
        lap(f"PERM-BOTH + BH + clusters, {group}")
    for group in groupings:
        for coefficient in ["pearson"] + (["kendall"] if group != "none" else []):
            permutation.boot_both(human.values, metrics.values, metrics.names, human.names, group, coefficient, B, SEED)
            lap(f"BOOT-BOTH {coefficient}, {group}")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--groupings", nargs="+", default=list(grouping.GROUPINGS))
    parser.add_argument("--no-early-stop", action="store_true", help="run all 1,000 permutations for every pair")
    args = parser.parse_args()
    timings = run(args.mirror, args.groupings, None if args.no_early_stop else (0.02, 0.5))
    print("| step | wall s | CPU s |\n|---|---|---|")
    for name, wall, cpu in timings:
        print(f"| {name} | {wall:.1f} | {cpu:.1f} |")
    print(f"| total | {sum(t[1] for t in timings):.1f} | {sum(t[2] for t in timings):.1f} |")


if __name__ == "__main__":
    main()
