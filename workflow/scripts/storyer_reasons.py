"""Reasons for the learned evaluator's scores on one dataset: a comment per top aspect, named by its method
(retrieved: a human comment on a similar training story; generated: a seq2seq model's text)."""

import storyeval.workflow.handoff_torch  # noqa: F401 (first: the job runs in the run's torch job server)

import torch

from storyeval.io import log_to, read_parquet, write_csv
from storyeval.learned.reasons import explain
from storyeval.learned.scorer import Evaluator
from storyeval.neural.paths import resolve_model_path

log = log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
params = snakemake.params
evaluator = Evaluator(snakemake.input.model, encoder_path=resolve_model_path(params.encoder), device=params.device)
texts = read_parquet(snakemake.input.texts)
seq2seq = resolve_model_path(params.seq2seq) if params.seq2seq else None
reasons = explain(evaluator, texts, top_k=params.top_k, method=params.method, seq2seq_path=seq2seq,
                  cache_path=snakemake.input.get("vectors"), max_new_tokens=params.max_new_tokens)
write_csv(reasons, snakemake.output[0])
log.info("%s reasons for %d stories of %s", params.method, texts.shape[0], snakemake.wildcards.textset)
