"""Which LLM judge and which metric agree best with humans, per criterion and grouping: table and figure."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

import pandas as pd

from storyeval.analysis import missing_note
from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots import save_figure
from storyeval.plots.meta import best_agreement
from storyeval.plots.pages import (
    KEPT,
    best_answer,
    caption_html,
    meta_headers,
    note_html,
    readable,
    write_figure_page,
    write_table_page,
)
from storyeval.stats.confounds import flagged
from storyeval.stats.meta import best_table, design_best

log = log_to(snakemake.log[0])
out, p = snakemake.output, snakemake.params
intervals = pd.concat([read_table(path, ["grouping", "metric", "r"]) for path in snakemake.input.intervals])
clusters = pd.concat([read_table(path, ["grouping", "metric", "rank"]) for path in snakemake.input.clusters])
table = best_table(intervals, clusters, p.top)
confounds = read_table(snakemake.input.confounds, ["coefficient", "metric", "criterion", "length", "confound"])
keys = {"coefficient": "coefficient", "metric": "metric", "criterion": "criterion"}
table = flagged(table, confounds, keys, table["grouping"] == "none")  # grouping none: over all stories, pooled
family = intervals.drop_duplicates("metric").set_index("metric")["family"]
answer = read_table(snakemake.input.answer, ["level", "criterion", "statistic", "metric", "label", "kind", "r",
                                             "ci_low", "ci_high", "rank", "top"])
table = pd.concat([design_best(answer, family, p.top).assign(confound=""), table],  # the design's answer first
                  ignore_index=True)
for row in table[table["confound"].fillna("") != ""].itertuples():
    log.warning("confound: %s x %s, grouping none (%s): %s (results/%s/%s/confounds.csv)", row.metric, row.criterion,
                row.coefficient, row.confound, snakemake.wildcards.dataset, snakemake.wildcards.scoreset)
write_csv(table, out.csv)
headers, groups = meta_headers("meta_best_table", snakemake.params.facts)
shown = readable(table, headers)  # for people: labels, three decimals; the CSV keeps every column
write_markdown(shown, out.md, p.title)
caption = caption_html(snakemake.input.caption, snakemake.wildcards, snakemake.params.facts)
names = intervals.rename(columns={"metric": "slug"})[["slug", "label"]].drop_duplicates("slug")
note = missing_note(intervals, names)  # BOOT-BOTH's count of each column's stories without a value
caption += note_html(note)
write_table_page(out.table_page, shown, p.title, [out.csv, out.md], caption, groups,
                 table["kind_best"].to_numpy(), KEPT)
pixels = save_figure(best_agreement(table, p.coefficient, p.dpi), out.pdf, out.png, p.dpi)
write_figure_page(out.figure_page, out.png, out.pdf, p.title, p.dpi, pixels, caption)
name = f"{snakemake.wildcards.dataset}, {snakemake.wildcards.scoreset} scores"
Path(out.landing).write_text(best_answer(table, name, p.coefficient), encoding="utf-8")
log.info("%d rows (%d criteria x %d groupings)", len(table), table["criterion"].nunique(), table["grouping"].nunique())
