"""Benchmark: the Alternative Annotator Test's chance control (storyeval.stats.alttest.chance_p), the permutation
p-value of every candidate's rho, on synthetic ratings of given sizes.

A shuffle costs one exact integer comparison per instance, annotator and candidate (no t-test), so the time grows
with instances x annotators x candidates x draws; "auto" draws are max(199, ceil(K / q) - 1): 1,199 for 60
candidates at q 0.05. Rows: PDS-sized (97 stories, 5 raters), TTCW-sized (48 stories, 3 experts), a 1,000-story
own set with 3 raters, and HANNA-sized persons (960 stories, 3 raters; HANNA's release itself is untested: its
raters are positions).

Usage: python bench/bench_alt_test_chance.py [--candidates 60] [--q 0.05]
Goal: a PDS- or TTCW-sized criterion under 5 s, a 1,000-story one under a minute, on 2 cores. Wall and CPU seconds
are printed per row.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from storyeval.stats.alttest import chance_draws, chance_p

SIZES = {"pds-sized": (97, 5), "ttcw-sized": (48, 3), "own 1,000 stories": (1000, 3), "hanna-sized": (960, 3)}


def ratings(rng: np.random.Generator, stories: int, raters: int, candidates: int) -> tuple[np.ndarray, np.ndarray]:
    """Likert ratings around a latent quality and candidates of decreasing signal (half on the 1-5 scale)."""
    quality = rng.normal(size=stories)
    humans = np.clip(np.round(3 + quality[:, None] + rng.normal(scale=0.8, size=(stories, raters))), 1, 5)
    signal = np.linspace(1.0, 0.0, candidates)
    scores = signal * quality[:, None] + rng.normal(size=(stories, candidates))
    scores[:, ::2] = np.clip(np.round(3 + scores[:, ::2]), 1, 5)
    return humans, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=60)
    parser.add_argument("--q", type=float, default=0.05)
    args = parser.parse_args()
    draws = chance_draws(args.candidates, args.q, "auto")
    print(f"{args.candidates} candidates, q {args.q}: {draws} draws (auto)")
    print(f"{'size':<20}{'stories':>8}{'raters':>7}{'wall s':>9}{'cpu s':>9}{'p <= 0.05':>10}")
    for name, (stories, raters) in SIZES.items():
        humans, scores = ratings(np.random.default_rng(0), stories, raters, args.candidates)
        wall, cpu = time.perf_counter(), time.process_time()
        p = chance_p(humans, scores, draws, seed=1)
        print(f"{name:<20}{stories:>8}{raters:>7}{time.perf_counter() - wall:>9.1f}{time.process_time() - cpu:>9.1f}"
              f"{int((p <= 0.05).sum()):>10}")


if __name__ == "__main__":
    main()
