"""Tab. 2 analogue: wall time of each metric job (and LLM-judge job), in total and per story."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

import pandas as pd

from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots.pages import caption_html, for_reading, write_table_page

log = log_to(snakemake.log[0])
stories = len(read_table(snakemake.input.texts, ["story_id"]))
rows = []
for path in snakemake.input.benchmarks:
    bench = pd.read_csv(path, sep="\t")
    seconds = float(bench["s"].iloc[-1])
    name = f"judge {Path(path).stem}" if Path(path).parent.parent.name == "judges" else Path(path).stem
    rows.append({"metric": name, "seconds": round(seconds, 2), "stories": stories,
                 "ms_per_story": round(1000 * seconds / stories, 1), "max_rss_mb": bench["max_rss"].iloc[-1]})
table = pd.DataFrame(rows)
write_csv(table, snakemake.output.csv)
title = f"Computation time per metric on {snakemake.wildcards.dataset} (one Snakemake job each, loading included)"
shown = for_reading(table, digits=2)  # headers in words; the CSV keeps the column names
write_markdown(shown, snakemake.output.md, title)
caption = caption_html(snakemake.input.caption, snakemake.wildcards, snakemake.params.facts)
write_table_page(snakemake.output.page, shown, title, [snakemake.output.csv, snakemake.output.md], caption)
log.info("\n%s", table.to_string())
