"""The learned evaluator's evaluation side by side (dots: computed with 95 % CI; diamonds: published)."""

import pandas as pd

from storyeval.io import log_to, read_table
from storyeval.learned.evaluate import EVALUATION_COLUMNS
from storyeval.learned.figure import evaluation_figure

log = log_to(snakemake.log[0])
table = read_table(snakemake.input.table, EVALUATION_COLUMNS)
labels = pd.concat([read_table(path, ["slug", "label"]) for path in snakemake.input.registries])
table["method"] = table["method"].replace(dict(zip(labels["slug"], labels["label"])))  # display labels
evaluation_figure(table, snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
log.info("%d rows drawn", len(table))
