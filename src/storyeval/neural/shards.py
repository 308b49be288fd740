"""Sharded neural jobs: a dataset's stories split into shards of a fixed size, the embedding pass and each
cache-based metric run per shard, and a gather that joins the shards' scores into the unsharded run's bytes.

Why the result equals one job's: every cache-based metric scores a story from its own texts only (its story,
its reference, its sentences), the embedding pass gives a text the same vectors whatever texts share its pass
(`storyeval.neural.embeddings.batches`), and the one dataset-wide statistic, idf, is counted over the whole
dataset's rows in every shard (`IdfScope`). Shards are consecutive rows of the text table, so concatenating
their scores in shard order restores its row order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.io import damaged, read_parquet

IDF_COLUMNS = ("story", "reference")
# Signature entries that count a shard's own texts: summed over the shards; any other entry must agree.
COUNTS = ("stories", "n_texts", "n_long_texts", "n_truncated", "n_tokens", "cache_bytes",
          "forward_passes", "prompt_tokens", "parse_failures")


def shard_count(n_stories: int, size: int | None) -> int:
    """How many shards of `size` stories hold `n_stories` (one when size is None)."""
    if size is None:
        return 1
    if int(size) < 1:
        raise InputError(f"shards: stories per shard {size} must be at least 1; fix: set shards.stories to e.g. 2000")
    return max(1, -(-int(n_stories) // int(size)))


def split_rows(texts: pd.DataFrame, size: int | None) -> list[pd.DataFrame]:
    """Consecutive runs of `size` rows (the last one shorter); one shard when size is None."""
    count = shard_count(len(texts), size)
    step = len(texts) if size is None else int(size)
    return [texts.iloc[index * step : (index + 1) * step].reset_index(drop=True) for index in range(count)]


def gather_scores(shards: Sequence[pd.DataFrame], names: Sequence[str] = ()) -> pd.DataFrame:
    """The shards' score tables, in shard order, as one table; their columns must agree and ids not repeat."""
    if not shards:
        raise InputError("gather: no shard scores to join; fix: run the shard jobs first")
    labels = list(names) or [f"shard {index}" for index in range(len(shards))]
    for label, frame in zip(labels, shards):
        if list(frame.columns) != list(shards[0].columns):
            raise InputError(f"gather: {label} has columns {list(frame.columns)}, {labels[0]} "
                             f"{list(shards[0].columns)}; fix: rerun the shards with one configuration")
    joined = pd.concat(shards)
    repeated = joined.index[joined.index.duplicated()]
    if len(repeated):
        raise InputError(f"gather: story id {repeated[0]} is in two shards; fix: rebuild the shards")
    return joined


def gather_signatures(signatures: Sequence[dict]) -> dict:
    """One signature for the joined scores: counts (`COUNTS`) summed over the shards, every other entry equal in
    all of them (a shard computed with other settings is an error), and `shards`: how many."""

    def merge(values: list, where: str):
        first = values[0]
        if all(isinstance(value, dict) for value in values):
            keys = list(dict.fromkeys(key for value in values for key in value))
            return {key: merge([value.get(key) for value in values], f"{where}.{key}") for key in keys}
        if where.rsplit(".", 1)[-1] in COUNTS:
            return sum(values)
        if where.endswith(".bytes_per_text"):
            return first  # recomputed below
        if any(value != first for value in values):
            raise InputError(f"gather: the shards' signatures differ at {where.lstrip('.')} "
                             f"({first!r} vs {next(v for v in values if v != first)!r}); "
                             "fix: rerun the shards with one configuration")
        return first

    joined = merge(list(signatures), "") | {"shards": len(signatures)}
    encoder = joined.get("encoder", {})
    if "bytes_per_text" in encoder:  # the shards' mean, not the first shard's
        encoder["bytes_per_text"] = round(encoder["cache_bytes"] / encoder["n_texts"])
    return joined


def text_ids(cache_paths: Sequence[str]) -> Callable[[str], np.ndarray]:
    """The token ids of a text, looked up in the caches at `cache_paths` with one cache open (memory-mapped) at a
    time: the dataset's texts come in shard order, so each cache opens about once per column counted, and memory
    is one shard's whatever the number of shards. A shard's metric job whose metric counts no idf opens none."""
    from storyeval.neural.embeddings import load_cache

    paths = list(cache_paths)
    current: dict[int, object] = {}  # position in `paths` -> its open cache (one entry at most)

    def ids(text: str) -> np.ndarray:
        start = next(iter(current), 0)
        for position in [*range(start, len(paths)), *range(start)]:
            if position not in current:  # close the open cache before the next opens
                current.clear()
                current[position] = load_cache(paths[position])
            if text in current[position]:
                return current[position].ids(text)
        raise InputError(f"idf in a shard: {text[:60]!r} is in no shard's embedding cache; fix: rebuild the shards")

    return ids


def idf_columns(path: str | Path) -> list[str]:
    """The idf columns (`IDF_COLUMNS`) of the text table at `path` (parquet), read from its schema alone."""
    import pyarrow.parquet as pq

    present = set(pq.read_schema(path).names)
    return [column for column in IDF_COLUMNS if column in present]


def idf_texts(path: str | Path) -> pd.DataFrame:
    """The dataset's text table at `path` (parquet), its idf columns only: what `IdfScope` reads."""
    try:
        columns = idf_columns(path)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid: a damaged file
        raise damaged(path, "workflow file", error) from error
    return read_parquet(path, columns=columns)


class IdfScope:
    """Idf in a shard counts the whole dataset's rows, as the unsharded run does.

    A metric asks `idf_weights(cache, texts)` for one or two text columns of the table it scores (one document
    per row: its references; its stories then its references). In a shard that table is the shard's rows; the
    scope finds which columns the list is and answers the same columns of the whole dataset, whose texts'
    token ids it reads from every shard's cache (`load_ids(text)`). The dataset's table is a frame or the path of
    its parquet, read (`idf_texts`) at the first idf asked: a job whose metric counts none never holds it."""

    def __init__(self, shard: pd.DataFrame, dataset: pd.DataFrame | str | Path,
                 load_ids: Callable[[str], np.ndarray]):
        self.load_ids = load_ids
        self.source = dataset
        self.lists: dict[tuple[str, ...], list[tuple[str, tuple[str, ...]]]] = {}
        whole = dataset.columns if isinstance(dataset, pd.DataFrame) else idf_columns(dataset)
        present = [column for column in IDF_COLUMNS if column in shard.columns and column in whole]
        for length in (1, 2):
            for columns in permutations(present, length):
                key = tuple(text for column in columns for text in shard[column])
                self.lists.setdefault(key, []).append((" + ".join(columns), columns))

    @cached_property
    def dataset(self) -> pd.DataFrame:
        return self.source if isinstance(self.source, pd.DataFrame) else idf_texts(self.source)

    def alike(self, columns: tuple[str, ...], other: tuple[str, ...]) -> bool:
        """The dataset's `columns` and `other` hold the same texts row by row (columns alike in a shard must be
        alike in the dataset too); compared column by column, without a copy of the texts."""
        return all(self.dataset[mine].equals(self.dataset[theirs]) for mine, theirs in zip(columns, other))

    def documents(self, texts: Sequence[str]) -> Iterator[np.ndarray]:
        """The token ids of the dataset rows' documents that `texts` (a shard's column or columns) stand for, one
        document at a time (`idf_weights` counts them as they come: the dataset's token ids are never all held)."""
        found = self.lists.get(tuple(texts), [])
        columns = found[0][1] if found else ()
        if not found or not all(self.alike(columns, other) for _, other in found[1:]):
            what = "no column of the shard" if not found else f"{' or '.join(name for name, _ in found)} alike"
            raise InputError(f"idf in a shard: the documents are {what}, so the dataset's idf is unknown; "
                             "fix: set shards.stories to null (one job) for this metric's parameters")
        return (self.load_ids(text) for column in columns for text in self.dataset[column])


def gather_benchmarks(shards: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """One Snakemake benchmark row for a sharded job: times and I/O summed over the shards, memory (max_*) the
    largest shard's, mean_load the mean: what one job's row says, for the computation-times table."""
    rows = pd.concat([frame.tail(1) for frame in shards], ignore_index=True)
    joined = {}
    for column in rows.columns:
        values = pd.to_numeric(rows[column], errors="coerce")
        if column == "h:m:s":
            seconds = int(rows["s"].sum())
            joined[column] = f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        elif column.startswith("max_"):
            joined[column] = values.max()
        elif column == "mean_load":
            joined[column] = values.mean()
        else:
            joined[column] = values.sum()
    return pd.DataFrame([joined], columns=rows.columns)
