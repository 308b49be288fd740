"""A text dataset (config kind + pinned file) -> the cleaned text table and its human scores."""

from storyeval.io import log_to, write_csv, write_parquet
from storyeval.text.datasets import load_dataset, subset_prompts

log = log_to(snakemake.log[0])
dataset = load_dataset(snakemake.params.kind, snakemake.input[0], snakemake.wildcards.textset)
texts, human = subset_prompts(dataset.texts, dataset.human_scores, snakemake.params.max_prompts)
write_parquet(texts, snakemake.output.texts)
write_csv(human if human is not None else texts.iloc[:0, :0].assign(story_id=[], criterion=[], score=[]),
          snakemake.output.text_human)
log.info("%s: %d stories, %d human scores", snakemake.wildcards.textset, len(texts), 0 if human is None else len(human))
