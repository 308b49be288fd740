"""Sharded neural jobs (config shards.stories): the shards of a dataset, what a shard's metric job reads and
what gather_scores joins."""

from __future__ import annotations

from pathlib import Path

SHARD = "results/{dataset}/data/shards/{shard}.parquet"
SCORES = "results/{dataset}/computed/scores/shards/{metric}@{model}/{shard}"
CACHE = "results/{dataset}/computed/embeddings/{encoder}/{shard}.safetensors"


def names(folder: str | Path) -> list[str]:
    """The shards (0000, 0001, ...) that checkpoint shard_texts wrote into `folder`."""
    return sorted(path.stem for path in Path(folder).glob("*.parquet"))


def metric_inputs(dataset: str, model: str, shard: str, shards: list[str]) -> dict:
    """The shard's texts and cache, and for idf the whole dataset's texts and every shard's cache."""
    return {
        "texts": SHARD.format(dataset=dataset, shard=shard),
        "cache": CACHE.format(dataset=dataset, encoder=model, shard=shard),
        "dataset_texts": f"results/{dataset}/data/texts.parquet",
        "shard_caches": [CACHE.format(dataset=dataset, encoder=model, shard=name) for name in shards],
    }


def gather_inputs(dataset: str, metric: str, model: str, shards: list[str]) -> dict:
    """The scores, signatures and benchmarks of a metric's shards."""
    paths = [SCORES.format(dataset=dataset, metric=metric, model=model, shard=shard) for shard in shards]
    return {
        "scores": [f"{path}.parquet" for path in paths],
        "signatures": [f"{path}.signature.json" for path in paths],
        "benchmarks": [f"benchmarks/metrics/{dataset}/{metric}@{model}/{Path(path).name}.tsv" for path in paths],
    }
