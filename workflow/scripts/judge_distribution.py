"""The dataset's judges in mode expected against the raters' histograms (storyeval.stats.distribution): one row
per judge, template and criterion, and its report page."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.io import log_to, read_parquet, read_table, write_csv
from storyeval.plots.pages import caption_html, for_reading, write_table_page
from storyeval.stats.distribution import COLUMNS, distribution_agreement

log = log_to(snakemake.log[0])
ratings = read_table(snakemake.input.ratings, ["story_id", "criterion", "rater", "rating"])
table = pd.concat([distribution_agreement(ratings, read_parquet(path)).assign(judge=judge, template=template)
                   for (judge, template), path in zip(snakemake.params.jobs, snakemake.input.details)],
                  ignore_index=True)
table = table[["judge", "template", *COLUMNS]]
write_csv(table, snakemake.output.csv)
title = f"LLM judges of {snakemake.wildcards.textset} against the raters' histograms"
caption = caption_html(snakemake.input.caption, snakemake.wildcards)
write_table_page(snakemake.output.page, for_reading(table, 3), title, [snakemake.output.csv], caption)
log.info("\n%s", table.to_string())
