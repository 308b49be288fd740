"""Train the learned StoryER-style evaluator on StoryER's released samples: model file, signature, loss history."""

import storyeval.workflow.handoff_torch  # noqa: F401 (first: the job runs in the run's torch job server)

import json
from pathlib import Path

import torch

from storyeval.io import log_to, write_csv
from storyeval.learned.data import first_prompts, load_pairs, load_ratings
from storyeval.learned.train import TrainConfig, signature, train
from storyeval.neural.paths import resolve_model_path

log = log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
params = snakemake.params
pairs = first_prompts(load_pairs(snakemake.input.pairs), params.max_prompts)
ratings = first_prompts(load_ratings(snakemake.input.ratings), params.max_prompts)
config = TrainConfig.from_mapping(params.training)
trained = train(pairs, ratings, resolve_model_path(params.encoder), config, device=params.device)
trained.save(snakemake.output.model)
write_csv(trained.history, snakemake.output.history)
inputs = {"pairs": snakemake.input.pairs, "ratings": snakemake.input.ratings}
record = signature(trained, inputs, snakemake.output.model) | {"max_prompts": params.max_prompts}
Path(snakemake.output.signature).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
log.info("trained on %d pairs and %d comments; final losses %s", record["n_train_pairs"], record["n_train_comments"],
         record["final_losses"])
