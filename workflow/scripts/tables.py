"""Render one of the papers' tables as CSV and Markdown."""

from storyeval import tables
from storyeval.io import log_to, read_table, write_csv, write_markdown

log = log_to(snakemake.log[0])
name = snakemake.params.table
params = snakemake.params


def first():
    return read_table(snakemake.input[0], [])


BUILDERS = {
    "tab3": (lambda: tables.tab3_icc(first()), "Tab. 3: intraclass correlation per criterion (95 % CI), by rater layout"),
    "tab4": (lambda: tables.tab4_system_means(first()), "Tab. 4: mean rating per system (95 % CI); ** best, * CI overlaps the best"),
    "tab5": (lambda: tables.tab5_top_pearson(first(), params.k), "Tab. 5: top metrics per criterion by |Pearson| (%)"),
    "tab6": (lambda: tables.tab6_borda(first(), params.k), "Tab. 6: top metrics by Borda count (ties: average ranks)"),
    "tab8": (lambda: tables.tab89_top_by_coefficient(first(), "story", params.k), "Tab. 8: top metrics per criterion, story level (|r| %)"),
    "tab9": (lambda: tables.tab89_top_by_coefficient(first(), "system", params.k), "Tab. 9: top metrics per criterion, system level (|r| %)"),
    "kemeny": (
        lambda: tables.kemeny_consensus(read_table(snakemake.input.consensus, []), read_table(snakemake.input.summary, []), params.k),
        "Kemeny consensus vs Borda (Kemeny score: lower is better)",
    ),
    "reanalysis1_sum_of_ranks": (lambda: tables.rounded(first()), "Reanalysis 1 (Houairi & Thiounn): sum-of-ranks rankings"),
    "reanalysis2_top_k": (lambda: tables.rounded(first()), "Reanalysis 2 (Mendras & Nietge): top metrics per coefficient"),
    "reanalysis2_coefficient_agreement": (
        lambda: tables.rounded(first()),
        "Reanalysis 2: do rankings depend on the coefficient? Wilcoxon signed-rank on paired |r|, Kendall tau between rankings",
    ),
}
build, title = BUILDERS[name]
table = build()
write_csv(table, snakemake.output.csv)
if table.astype(str).apply(lambda column: column.str.contains("†")).any().any():
    title += "; † released values degenerate (plain Sinkhorn underflow, 1e-56..1e-9): numerical noise"
write_markdown(table, snakemake.output.md, title)
log.info("%s: %d rows", name, len(table))
