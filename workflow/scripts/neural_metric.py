"""Compute one neural metric on one dataset with the configured model or the shared embedding cache."""

import json
import warnings
from pathlib import Path

import pandas as pd

from storyeval.io import log_to, write_parquet
from storyeval.metrics import catalog
from storyeval.neural.embeddings import load_cache
from storyeval.neural.paths import resolve_model_path


def main() -> None:
    log = log_to(snakemake.log[0])
    name = snakemake.wildcards.metric
    module = catalog.load(name)
    texts = pd.read_parquet(snakemake.input.texts)
    texts.attrs["dataset"] = snakemake.wildcards.dataset
    resource = snakemake.params.resource
    options = dict(snakemake.params.options)
    if resource["keyword"] == "cache":
        options["cache"] = load_cache(snakemake.input.cache)
    else:
        options[resource["keyword"]] = resolve_model_path(resource["path"])
        if snakemake.params.device != "auto":
            options["device"] = snakemake.params.device
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = module.compute(texts, **options)
    for warning in caught:
        log.warning("%s", warning.message)
    write_parquet(scores.reset_index(), snakemake.output.scores)
    signature = module.signature(**options) | {"dataset": snakemake.wildcards.dataset, "stories": len(texts),
                                                "model": snakemake.wildcards.model}
    Path(snakemake.output.signature).write_text(json.dumps(signature, indent=2, sort_keys=True, default=str) + "\n")
    log.info("%s (%s) on %s: %d stories x %d columns", name, snakemake.wildcards.model, snakemake.wildcards.dataset, *scores.shape)


# Metrics that spread work over processes (BaryScore, DepthScore) start them with
# "spawn", which re-runs this file: only the real run may compute.
if __name__ == "__main__":
    main()
