"""A built-in dataset's released LLM judges measured as storyeval's own (storyeval.judges.released): the table and
its report page."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, write_csv
from storyeval.judges.released import released_judges
from storyeval.plots.pages import caption_html, for_reading, write_table_page

log = log_to(snakemake.log[0])
table = released_judges(snakemake.params.kind, list(snakemake.input.files), snakemake.wildcards.dataset)
write_csv(table, snakemake.output.csv)
title = f"Released LLM judges of {snakemake.wildcards.dataset}, measured as the judges storyeval runs"
caption = caption_html(snakemake.input.caption, snakemake.wildcards)
write_table_page(snakemake.output.page, for_reading(table, 3), title, [snakemake.output.csv], caption)
log.info("%d judge columns; over them all, %d ratings missing of %d; %d left out", len(table), table["missing"].sum(),
         table["expected"].sum(), table["left_out"].sum())
