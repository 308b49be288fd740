"""Compute one metric on one text dataset: scores keyed by story id, plus the signature."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.io import log_to
from storyeval.metrics import catalog
from storyeval.metrics.run import score_and_write

log = log_to(snakemake.log[0])
name, dataset = snakemake.wildcards.metric, snakemake.wildcards.dataset
texts = pd.read_parquet(snakemake.input.texts)
texts.attrs["dataset"] = dataset
scores = score_and_write(catalog.load(name), texts, dict(snakemake.params.options), snakemake.output.scores,
                         snakemake.output.signature, {"dataset": dataset}, log)
log.info("%s on %s: %d stories x %d columns", name, dataset, *scores.shape)
