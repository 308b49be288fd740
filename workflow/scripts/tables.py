"""Render a family of the papers' tables (figures.smk): each as CSV, Markdown and its report page."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval import tables
from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots.pages import (
    DEGENERATE,
    ORIENTATION_NOTES,
    TABLE_CAPTIONS,
    TABLES,
    caption_html,
    for_reading,
    has_degenerate,
    note_html,
    write_table_page,
)

log = log_to(snakemake.log[0])
params = snakemake.params


def read(key):
    return read_table(snakemake.input[key], [])


BUILDERS = {
    "tab3_icc": lambda: tables.tab3_icc(read("icc")),
    "tab4_system_means": lambda: tables.tab4_system_means(read("system_means"), params.reference_system),
    "tab5_top3_pearson": lambda: tables.tab5_top_pearson(read("top_metrics"), params.tab5_top_k),
    "tab6_borda": lambda: tables.tab6_borda(read("borda"), params.top_k),
    "tab8_top5_story": lambda: tables.tab89_top_by_coefficient(read("top_metrics"), "story", params.top_k),
    "tab9_top5_system": lambda: tables.tab89_top_by_coefficient(read("top_metrics"), "system", params.top_k),
    "kemeny_consensus": lambda: tables.kemeny_consensus(read("kemeny"), read("kemeny_summary"), params.top_k),
    "reanalysis1_sum_of_ranks": lambda: tables.rounded(read("reanalysis1_sum_of_ranks")),
    "reanalysis2_top_k": lambda: tables.rounded(read("reanalysis2_top_k")),
    "reanalysis2_coefficient_agreement": lambda: tables.rounded(read("reanalysis2_coefficient_agreement")),
}
for name in params.tables:
    table = BUILDERS[name]()
    title, ties = TABLES[name][1], table.attrs.get("note", "")  # a top-k table's ties at the cut (kept_ties)
    if "orientation" in params.keys() and TABLE_CAPTIONS[name] in ("top_metrics", "borda", "kemeny"):
        title = f"{title}; {ORIENTATION_NOTES[params.orientation]}"
    if name == "tab4_system_means":  # the unit of its intervals, its order, its mean over the criteria
        title += tables.tab4_note(read("system_means"))
    csv, md = snakemake.output[f"{name}_csv"], snakemake.output[f"{name}_md"]
    write_csv(table, csv)
    table = for_reading(table)  # the page and the Markdown for people: headers as words, no slugs, p-values read
    written = f"{title}; {ties}" if ties else title
    write_markdown(table, md, f"{written}; {DEGENERATE}" if has_degenerate(table) else written)
    caption = caption_html(snakemake.input[f"caption_{TABLE_CAPTIONS[name]}"], snakemake.wildcards,
                           snakemake.params.facts) + note_html(f"{ties}." if ties else "")
    write_table_page(snakemake.output[f"{name}_page"], table, title, [csv, md], caption)
    log.info("%s: %d rows", name, len(table))
