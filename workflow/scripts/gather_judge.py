"""Join one judge job's shards into the files one job writes; the shards' job times summed."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import json
from pathlib import Path

import pandas as pd

from storyeval.errors import InputError
from storyeval.io import log_to, read_parquet, write_csv, write_parquet
from storyeval.neural.shards import gather_benchmarks, gather_scores, gather_signatures

log = log_to(snakemake.log[0])
scores = gather_scores([read_parquet(path).set_index("story_id") for path in snakemake.input.scores],
                       snakemake.input.scores)
write_parquet(scores.reset_index(), snakemake.output.scores)
write_parquet(pd.concat([read_parquet(path) for path in snakemake.input.details], ignore_index=True),
              snakemake.output.details)
registries = [Path(path).read_text() for path in snakemake.input.registries]
if len(set(registries)) > 1:
    raise InputError(f"gather: the shards' registries differ ({snakemake.input.registries[0]}); fix: rerun the shards")
Path(snakemake.output.registry).write_text(registries[0])
signature = gather_signatures([json.loads(Path(path).read_text()) for path in snakemake.input.signatures])
Path(snakemake.output.signature).write_text(json.dumps(signature, indent=2, sort_keys=True, default=str) + "\n")
write_csv(gather_benchmarks([pd.read_csv(path, sep="\t") for path in snakemake.input.benchmarks]),
          snakemake.output.benchmark, sep="\t")
log.info("%s@%s: %d shards, %d stories x %d columns", snakemake.wildcards.judge, snakemake.wildcards.template,
         len(snakemake.input.scores), *scores.shape)
