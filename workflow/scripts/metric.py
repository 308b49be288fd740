"""Compute one metric on one text dataset: scores keyed by story id, plus the signature."""

import json
import warnings
from pathlib import Path

import pandas as pd

from storyeval.io import log_to, write_parquet
from storyeval.metrics import catalog

log = log_to(snakemake.log[0])
name = snakemake.wildcards.metric
module = catalog.load(name)
texts = pd.read_parquet(snakemake.input.texts)
texts.attrs["dataset"] = snakemake.wildcards.dataset
options = dict(snakemake.params.options)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    scores = module.compute(texts, **options)
for warning in caught:
    log.warning("%s", warning.message)
write_parquet(scores.reset_index(), snakemake.output.scores)
signature = module.signature(**options) | {"dataset": snakemake.wildcards.dataset, "stories": len(texts)}
Path(snakemake.output.signature).write_text(json.dumps(signature, indent=2, sort_keys=True, default=str) + "\n")
log.info("%s on %s: %d stories x %d columns", name, snakemake.wildcards.dataset, *scores.shape)
