"""The shared embedding pass: every distinct text a dataset's (or a shard's) cache-based metrics read, once.

Stories, references and prompts always; the sentences SUPERT encodes one by one
when SUPERT reads this encoder's cache. Layers: the configured ones, else those the metrics read. Each batch's
vectors go to the cache file as soon as they are computed (memory: one batch, not the dataset).
"""

import storyeval.workflow.handoff_torch  # noqa: F401 (first: the job runs in the run's torch job server)

import inspect

import torch

from storyeval.io import log_to, read_parquet
from storyeval.metrics import catalog
from storyeval.neural.embeddings import encode_to_file, encoder_depth, layers_read, storage_dtype
from storyeval.neural.paths import resolve_model_path

log = log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
settings = snakemake.params.embedding
texts = read_parquet(snakemake.input.texts)
corpus = [text for column in ("story", "reference", "prompt") for text in texts[column].dropna()]
for metric in snakemake.params.sentence_metrics:
    required_texts = catalog.load(metric).required_texts  # reads some of the metric's parameters (SUPERT's top_n)
    options = snakemake.params.metric_options.get(metric, {})
    corpus += required_texts(texts, **{key: options[key] for key in inspect.signature(required_texts).parameters
                                       if key in options})
model = snakemake.params.model
path = resolve_model_path(model["path"])
layers = model["layers"] or layers_read(snakemake.params.metrics, encoder_depth(path))
signature = encode_to_file(corpus, snakemake.output[0], path, layers, settings["batch_size"],
                           None if snakemake.params.device == "auto" else snakemake.params.device,
                           settings["max_length"], settings["policy"], settings["stride"], model["revision"],
                           model["role"], storage_dtype(settings["dtype"], snakemake.params.metrics))
log.info("signature: %s", signature)
