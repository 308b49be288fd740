"""The dataset's pairwise judges (storyeval.judges.pairwise): one row per judge, template and criterion with their
position bias, ties and pairwise accuracy against the humans' pairs, and its report page."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.io import log_to, read_parquet, read_table, write_csv
from storyeval.judges.pairwise import bias_line, verdict_table
from storyeval.plots.pages import caption_html, for_reading, write_table_page

log = log_to(snakemake.log[0])
human = read_table(snakemake.input.human, ["story_id", "criterion", "score"])
jobs = zip(snakemake.params.jobs, snakemake.input.details)
ties = snakemake.params.ties
table = pd.concat([verdict_table(read_parquet(path), human, ties).assign(judge=judge, template=template)
                   for (judge, template), path in jobs], ignore_index=True)
table["position"] = [bias_line(row) for _, row in table.iterrows()]
table = table[["judge", "template", *table.columns[:-3], "position"]]
write_csv(table, snakemake.output.csv)
title = f"Pairwise LLM judges of {snakemake.wildcards.textset}: position bias and agreement with the humans' pairs"
caption = caption_html(snakemake.input.caption, snakemake.wildcards)
write_table_page(snakemake.output.page, for_reading(table, 3), title, [snakemake.output.csv], caption)
log.info("\n%s", table.to_string())
