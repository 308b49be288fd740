"""Render one of the paper's tables as CSV and Markdown."""

from storyeval import tables
from storyeval.io import log_to, read_table, write_csv, write_markdown

log = log_to(snakemake.log[0])
name = snakemake.params.table
frame = read_table(snakemake.input[0], [])
builders = {
    "tab4": (lambda: tables.tab4_system_means(frame), "Tab. 4: mean rating per system (95 % CI); ** best, * CI overlaps the best"),
    "tab5": (lambda: tables.tab5_top_pearson(frame, snakemake.params.k), "Tab. 5: top metrics per criterion by |Pearson| (%)"),
    "tab6": (lambda: tables.tab6_borda(frame, snakemake.params.k), "Tab. 6: top metrics by Borda count (ties: average ranks)"),
    "tab8": (lambda: tables.tab89_top_by_coefficient(frame, "story", snakemake.params.k), "Tab. 8: top metrics per criterion, story level (|r| %)"),
    "tab9": (lambda: tables.tab89_top_by_coefficient(frame, "system", snakemake.params.k), "Tab. 9: top metrics per criterion, system level (|r| %)"),
}
build, title = builders[name]
table = build()
write_csv(table, snakemake.output.csv)
if table.astype(str).apply(lambda column: column.str.contains("†")).any().any():
    title += "; † released values degenerate (plain Sinkhorn underflow, 1e-56..1e-9): numerical noise"
write_markdown(table, snakemake.output.md, title)
log.info("%s: %d rows", name, len(table))
