"""Which LLM judge and which metric agree best with humans, per criterion and grouping: table and figure."""

import pandas as pd

from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots import save_figure
from storyeval.plots.meta import best_agreement
from storyeval.plots.pages import write_figure_page, write_table_page
from storyeval.stats.meta import best_table

log = log_to(snakemake.log[0])
out, p = snakemake.output, snakemake.params
intervals = pd.concat([read_table(path, ["grouping", "metric", "r"]) for path in snakemake.input.intervals])
clusters = pd.concat([read_table(path, ["grouping", "metric", "rank"]) for path in snakemake.input.clusters])
table = best_table(intervals, clusters, p.top)
write_csv(table, out.csv)
write_markdown(table, out.md, p.title)
write_table_page(out.table_page, table, p.title, [out.csv, out.md])
pixels = save_figure(best_agreement(table, p.coefficient), out.pdf, out.png, p.dpi)
write_figure_page(out.figure_page, out.png, out.pdf, p.title, p.dpi, pixels)
log.info("%d rows (%d criteria x %d groupings)", len(table), table["criterion"].nunique(), table["grouping"].nunique())
