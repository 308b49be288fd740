"""Benchmark: the sharded neural jobs at 1x, 2x and 4x a dataset's size: wall time and peak memory per job, and the
cost per story of each cache-based metric (not a test; README, "Large datasets", reports its numbers).

The corpus is synthetic, built from hanna-llm's texts by seeded recombination: each synthetic prompt takes one of
hanna-llm's 96 prompts, and each of its 7 stories (6 LLMs and the human one) and its reference is that prompt's
story with its sentences shuffled, so lengths and vocabulary are real and every text is distinct. Each size runs
the real workflow (kind `table`, shards of --shard stories, the five cache-based metrics) in its own directory;
per job, Snakemake's benchmark files give wall seconds and peak RSS (max_rss, MB, worker processes included); their
CPU seconds (cpu_time) are a lower bound: Snakemake samples a job every 0.5 s for 15 s, then every 30 s (the same
for max_rss). Per size, the whole run's CPU seconds are exact (getrusage of the waited-for processes).
The peak allocation of a shard's dataset-wide idf (`idf_memory`) is measured after each size's run.
Usage: python bench/bench_shards_scaling.py --base 5000 --shard 1000 [--sizes 1 2 4] [--cores 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
MIRROR = REPO.parent / "shared" / "data"
METRICS = ["bertscore", "moverscore", "baryscore", "depthscore", "supert"]
ENCODER = "all-minilm-l6-v2"


def shuffled(text: str, rng: np.random.Generator) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(sentences[index] for index in rng.permutation(len(sentences)))


def synthetic_corpus(n_stories: int, seed: int) -> pd.DataFrame:
    """n_stories (rounded up to whole prompts of 7 stories) recombined from hanna-llm."""
    sys.path.insert(0, str(REPO / "src"))
    from storyeval.text.datasets import load_hanna_llm

    source = load_hanna_llm(MIRROR / "hanna" / "hanna_llm_stories.csv").texts
    rng = np.random.default_rng(seed)
    prompts = source["prompt_id"].unique()
    rows = []
    for number in range(-(-n_stories // 7)):
        stories = source[source["prompt_id"] == rng.choice(prompts)]
        reference = shuffled(stories["reference"].iloc[0], rng)
        for system, story in zip(stories["system"], stories["story"]):
            rows.append({"id": f"p{number:05d}-{system}", "prompt_id": f"p{number:05d}",
                         "prompt": stories["prompt"].iloc[0], "system": system,
                         "story": reference if system == "Human" else shuffled(story, rng), "reference": reference})
    return pd.DataFrame(rows)


def run_size(folder: Path, stories: pd.DataFrame, shard: int, cores: int) -> dict:
    """Run the workflow on `stories`: wall seconds, and the CPU seconds and largest process's peak RSS of the
    whole run (getrusage of the waited-for processes: exact, where the per-job rows are sampled)."""
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / "stories.csv"
    stories.to_csv(table, index=False)
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["data"].update(mirrors={"hanna": [str(MIRROR / "hanna")], "storyer": [str(MIRROR / "storyer")],
                                   "s3": [str(MIRROR / "s3")]}, allow_download=False)
    config["hanna"]["annotations"] = "skip"
    config["storyer_evaluator"]["reasons"]["datasets"] = []
    config["shards"] = {"stories": shard}
    columns = {key: key for key in ("prompt_id", "prompt", "system", "story", "reference")} | {"story_id": "id"}
    config["datasets"] = {"synthetic": {"kind": "table", "path": str(table), "columns": columns, "metrics": METRICS,
                                        "sha256": hashlib.sha256(table.read_bytes()).hexdigest()}}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    targets = [f"results/synthetic/computed/scores/{metric}@{ENCODER}.parquet" for metric in METRICS]
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(Path(sys.executable).with_name("snakemake")), "-s", str(REPO / "Snakefile"), "--directory",
                    str(folder), "--workflow-profile", "none", "--cores", str(cores), *targets], check=True,
                   cwd=folder, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": round(time.perf_counter() - start, 1),
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "largest_process_rss_mb": round(after.ru_maxrss / 1024)}


def job_rows(folder: Path, size: int, n_stories: int) -> list[dict]:
    """One row per shard job: kind (embed or the metric), wall seconds, peak RSS."""
    rows = []
    for path in sorted((folder / "benchmarks").rglob("*.tsv")):
        if path.parent.name == "synthetic":
            continue  # the gathered rows (sums): the shards are counted one by one
        kind = "embed" if path.parts[-4] == "embed" else path.parent.name.split("@")[0]
        bench = pd.read_csv(path, sep="\t").iloc[-1]
        rows.append({"size": size, "stories": n_stories, "job": kind, "shard": path.stem,
                     "seconds": float(bench["s"]), "cpu_s": float(bench["cpu_time"]),
                     "max_rss_mb": float(bench["max_rss"])})
    return rows


def idf_memory(folder: Path, size: int, repeat: int = 1) -> dict:
    """Peak Python/numpy allocation (tracemalloc) of the first shard's dataset-wide idf (BaryScore's default: its
    stories then its references, every shard's cache read), streamed (`idf_weights` on the shard's IdfScope)
    against holding every document's token ids in a list first (the count before streaming). `repeat` > 1 counts
    the dataset's table that many times over (the same texts, found in the same caches): the idf's memory at
    that many times the rows without embedding them."""
    import tracemalloc

    from storyeval.neural.embeddings import idf_weights, load_cache
    from storyeval.neural.shards import IdfScope, idf_texts, text_ids

    data = folder / "results" / "synthetic"
    caches = sorted((data / "computed" / "embeddings" / ENCODER).glob("*.safetensors"))
    shard = pd.read_parquet(data / "data" / "shards" / "0000.parquet")
    cache = load_cache(caches[0])
    dataset = pd.concat([idf_texts(data / "data" / "texts.parquet")] * repeat, ignore_index=True)
    documents = [*shard["story"], *shard["reference"]]
    peaks = {}
    for way in ("streamed", "listed"):
        tracemalloc.start()  # the scope opens the shards' caches (one at a time) inside the measure
        cache.idf_scope = IdfScope(shard, dataset, text_ids(caches))
        if way == "streamed":
            idf_weights(cache, documents)
        else:  # the count before streaming: every document's unique ids concatenated, then counted
            listed = list(cache.idf_scope.documents(documents))
            np.unique(np.concatenate([np.unique(ids) for ids in listed]), return_counts=True)
        peaks[f"idf_{way}_peak_kb"] = round(tracemalloc.get_traced_memory()[1] / 1024)
        tracemalloc.stop()
    return {"size": size, "shards": len(caches), "idf_rows": len(dataset)} | peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=5000, help="stories at size 1x")
    parser.add_argument("--shard", type=int, default=1000, help="stories per shard")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--idf-repeat", type=int, default=50, help="idf's memory also at this many times the rows")
    parser.add_argument("--out", type=Path, default=Path("bench-shards"))
    args = parser.parse_args()
    jobs, runs, idf = [], [], []
    for size in args.sizes:
        stories = synthetic_corpus(args.base * size, args.seed)
        run = run_size(args.out / f"x{size}", stories, args.shard, args.cores)
        runs.append({"size": size, "stories": len(stories)} | run)
        jobs += job_rows(args.out / f"x{size}", size, len(stories))
        idf += [idf_memory(args.out / f"x{size}", size, repeat) for repeat in (1, args.idf_repeat)]
        print(f"{size}x: {len(stories)} stories, {run}", flush=True)
    jobs = pd.DataFrame(jobs)
    jobs.to_csv(args.out / "jobs.csv", index=False)
    summary = jobs.groupby(["size", "stories", "job"]).agg(
        jobs=("seconds", "size"), seconds_total=("seconds", "sum"), seconds_max=("seconds", "max"),
        cpu_s_total=("cpu_s", "sum"), peak_rss_mb=("max_rss_mb", "max")).reset_index()
    summary["ms_per_story"] = (1000 * summary["seconds_total"] / summary["stories"]).round(1)
    summary["cpu_ms_per_story"] = (1000 * summary["cpu_s_total"] / summary["stories"]).round(1)
    summary.to_csv(args.out / "summary.csv", index=False)
    pd.DataFrame(idf).to_csv(args.out / "idf_memory.csv", index=False)
    pd.DataFrame(runs).to_csv(args.out / "runs.csv", index=False)
    print(pd.DataFrame(runs).to_string(index=False))
    print(pd.DataFrame(idf).to_string(index=False))
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
