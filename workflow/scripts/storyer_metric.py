"""Score one dataset with the trained StoryER-style evaluator (metric `storyer`): preference and aspect ratings."""

import storyeval.workflow.handoff_torch  # noqa: F401 (first: the job runs in the run's torch job server)

import torch

from storyeval.io import log_to, read_parquet
from storyeval.metrics import catalog
from storyeval.metrics.run import score_and_write
from storyeval.neural.paths import resolve_model_path

log = log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
dataset, params = snakemake.wildcards.dataset, snakemake.params
texts = read_parquet(snakemake.input.texts)
texts.attrs["dataset"] = dataset
options = dict(params.options) | {
    "model_file": snakemake.input.model,
    "encoder_path": resolve_model_path(params.encoder),
    "device": params.device,
    "cache_path": snakemake.output.vectors,
}
scores = score_and_write(
    catalog.load("storyer"),
    texts,
    options,
    snakemake.output.scores,
    snakemake.output.signature,
    {"dataset": dataset, "model_name": snakemake.wildcards.model},
    log,
)
log.info("storyer (%s) on %s: %d stories x %d columns", snakemake.wildcards.model, dataset, *scores.shape)
