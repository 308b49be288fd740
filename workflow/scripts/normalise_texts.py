"""A text dataset (config kind + pinned file) -> the cleaned text table and its human scores."""

from storyeval.io import log_to, write_csv, write_parquet
from storyeval.text.datasets import load_dataset

log = log_to(snakemake.log[0])
dataset = load_dataset(snakemake.params.kind, snakemake.input[0], snakemake.wildcards.textset)
write_parquet(dataset.texts, snakemake.output.texts)
human = dataset.human_scores
write_csv(human if human is not None else dataset.texts.iloc[:0, :0].assign(story_id=[], criterion=[], score=[]),
          snakemake.output.text_human)
log.info("%s: %d stories, %d human scores", snakemake.wildcards.textset, len(dataset.texts), 0 if human is None else len(human))
