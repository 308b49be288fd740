"""Compute one neural metric on one dataset with the configured model or the shared embedding cache."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, read_parquet
from storyeval.metrics import catalog
from storyeval.metrics.run import score_and_write
from storyeval.neural.embeddings import load_cache
from storyeval.neural.paths import resolve_model_path
from storyeval.neural.shards import IdfScope, text_ids


def main() -> None:
    log = log_to(snakemake.log[0])
    name = snakemake.wildcards.metric
    module = catalog.load(name)
    texts = read_parquet(snakemake.input.texts)
    texts.attrs["dataset"] = snakemake.wildcards.dataset
    resource = snakemake.params.resource
    options = dict(snakemake.params.options)
    options |= {keyword: snakemake.input[keyword] for keyword in catalog.entry(name).pinned}  # e.g. S3's models
    if "processes" in options:  # worker processes share the job's cores (the same scores from any number)
        options["processes"] = min(options["processes"], snakemake.threads)
    if resource["keyword"] == "cache":
        options["cache"] = load_cache(snakemake.input.cache)
        if "dataset_texts" in snakemake.input.keys():  # a shard (rules/shards.smk): idf over the dataset's rows
            options["cache"].idf_scope = IdfScope(texts, snakemake.input.dataset_texts,
                                                  text_ids(snakemake.input.shard_caches))
    else:
        options[resource["keyword"]] = resolve_model_path(resource["path"])
    if resource["keyword"] == "model":  # a model the metric loads itself (a word-vector file has no device)
        options["revision"] = resource["revision"]
        if snakemake.params.device != "auto":
            options["device"] = snakemake.params.device
    scores = score_and_write(module, texts, options, snakemake.output.scores, snakemake.output.signature,
                             {"dataset": snakemake.wildcards.dataset, "model_name": snakemake.wildcards.model}, log)
    log.info(
        "%s (%s) on %s: %d stories x %d columns",
        name,
        snakemake.wildcards.model,
        snakemake.wildcards.dataset,
        *scores.shape,
    )


# Metrics that spread work over processes (BaryScore, DepthScore) start them with
# "spawn", which re-runs this file: only the real run may compute.
if __name__ == "__main__":
    main()
