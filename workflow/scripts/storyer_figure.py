"""The learned evaluator's evaluation side by side (dots: computed with 95 % CI; diamonds: published)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.io import log_to, read_table
from storyeval.learned.evaluate import EVALUATION_COLUMNS
from storyeval.learned.figure import evaluation_figure
from storyeval.plots.pages import TABLES, caption_html, write_figure_page, write_table_page

log = log_to(snakemake.log[0])
table = read_table(snakemake.input.table, EVALUATION_COLUMNS)
labels = pd.concat([read_table(path, ["slug", "label"]) for path in snakemake.input.registries])
table["method"] = table["method"].replace(dict(zip(labels["slug"], labels["label"])))  # display labels
evaluation_figure(table, snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
output = snakemake.output
title = TABLES["storyer_evaluation_table"][1]
caption = caption_html(snakemake.input.evaluation_caption, snakemake.wildcards)
write_figure_page(output.page, output.png, output.pdf, title, snakemake.params.dpi, caption=caption)
write_table_page(output.table_page, table, title, [snakemake.input.table], caption)
write_table_page(output.history_page, read_table(snakemake.input.history, []), TABLES["storyer_loss_history"][1],
                 [snakemake.input.history], caption_html(snakemake.input.training_caption, snakemake.wildcards))
log.info("%d rows drawn", len(table))
