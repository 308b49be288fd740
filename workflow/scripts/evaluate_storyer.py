"""The learned evaluator beside every reference-free metric: held-out pair accuracy, correlations with the human
scores of the StoryER datasets (bootstrap CIs), StoryER's published rows."""

import storyeval.workflow.handoff_torch  # noqa: F401 (first: the job runs in the run's torch job server)

import torch

from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.learned import evaluate
from storyeval.learned.data import first_prompts, load_pairs
from storyeval.learned.model import read_model
from storyeval.metrics import catalog, storyer
from storyeval.neural.paths import resolve_model_path
from storyeval.tables import rounded

log = log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
params, stats = snakemake.params, snakemake.params.stats
bootstrap = {"n_resamples": stats["n_resamples"], "seed": stats["seed"], "confidence": params.confidence}

heldout_prompts = read_model(snakemake.input.model)[1]["heldout_prompts"]
pairs = first_prompts(load_pairs(snakemake.input.pairs), params.max_prompts)
heldout = pairs[pairs["prompt"].isin(set(heldout_prompts))].reset_index(drop=True)
texts = evaluate.heldout_pair_texts(pairs, heldout_prompts)
scores = storyer.compute(texts, model_file=snakemake.input.model, encoder_path=resolve_model_path(params.encoder),
                         device=params.device)
for name in params.pair_metrics:  # the model-free reference-free metrics, on the same stories
    scores = scores.join(catalog.load(name).compute(texts, **params.metric_options.get(name, {})))
high, low = evaluate.split_pair_scores(scores, heldout)
parts = [evaluate.pair_accuracy(high, low, heldout["prompt"], **bootstrap)]

for dataset, scores_path, registry_path, human_path in zip(params.datasets, snakemake.input.scores,
                                                            snakemake.input.registries, snakemake.input.human):
    long = read_table(scores_path, ["story_id", "metric", "value"])
    free = evaluate.reference_free_scores(long, read_table(registry_path, ["slug", "reference"]), dataset)
    human = read_table(human_path, ["story_id", "criterion", "score"], round_trip=True)
    human = evaluate.single_criterion(human, dataset)
    parts.append(evaluate.correlation_rows(free, human, dataset, **bootstrap))

table = evaluate.evaluation_table(parts)
write_csv(table, snakemake.output.csv)
write_markdown(rounded(table), snakemake.output.md,
               f"Learned evaluator ({snakemake.wildcards.model}) and reference-free metrics: held-out pair accuracy, "
               f"Spearman and Kendall with human scores, {params.confidence:.0%} bootstrap CIs "
               f"({stats['n_resamples']} resamples); source published = StoryER Tab. 3, reported, not recomputed")
log.info("%d held-out pairs over %d prompts; %d rows", len(heldout), heldout["prompt"].nunique(), len(table))
