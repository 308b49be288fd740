"""Borda counts and Kemeny consensus of the metrics and LLM judges over the meta correlations; the best of each
family as a table for people."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.data.registry import marked
from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots.pages import KEPT, caption_html, meta_headers, readable, write_table_page
from storyeval.stats.meta import best_consensus, consensus_tables

log = log_to(snakemake.log[0])
out, p = snakemake.output, snakemake.params
correlations = read_table(snakemake.input.correlations, ["grouping", "coefficient", "metric", "criterion", "r"])
registry = marked(read_table(snakemake.input.registry, ["slug", "label", "family"]))
if "judge_registry" in snakemake.input.keys():
    judges = read_table(snakemake.input.judge_registry, ["slug", "label", "family", "judge", "criterion", "task"])
    registry = pd.concat([registry, judges], ignore_index=True)
answer = read_table(snakemake.input.answer, ["level", "criterion", "metric", "r"])  # oriented, as the correlations
consensus, summary = consensus_tables(
    correlations, registry, p.coefficients, p.kemeny["dp_limit"], p.kemeny["ilp_time_limit"], answer
)
write_csv(consensus, out.consensus)
write_csv(summary, out.summary)
table = best_consensus(consensus, p.top)
write_csv(table, out.csv)
headers, groups = meta_headers("meta_consensus_table", snakemake.params.facts)
shown = readable(table, headers)  # for people: labels, no constant columns; the CSVs keep every column
write_markdown(shown, out.md, p.title)
caption = caption_html(snakemake.input.caption, snakemake.wildcards, snakemake.params.facts)
write_table_page(out.table_page, shown, p.title, [out.csv, out.md, out.consensus], caption, groups,
                 table["kind_best"].to_numpy(), KEPT)
log.info("%s", summary.to_string())
