"""Split a dataset's text table into shards of consecutive stories (storyeval.neural.shards.split_rows)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

from storyeval.io import log_to, read_parquet, write_parquet
from storyeval.neural.shards import split_rows

log = log_to(snakemake.log[0])
shards = split_rows(read_parquet(snakemake.input.texts), snakemake.params.stories)
folder = Path(snakemake.output[0])
folder.mkdir(parents=True, exist_ok=True)
for index, shard in enumerate(shards):
    write_parquet(shard, folder / f"{index:04d}.parquet")
log.info("%d shards of at most %d stories", len(shards), snakemake.params.stories)
