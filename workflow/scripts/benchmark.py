"""The cross-dataset benchmark: every rated dataset's answer side by side, ranked by quality where measured
(storyeval.benchmark)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

import pandas as pd

from storyeval import benchmark
from storyeval.io import _atomic, log_to, read_table, write_csv, write_markdown
from storyeval.plots import save_figure
from storyeval.plots.heatmaps import benchmark_heatmap
from storyeval.plots.pages import caption_html, for_reading, write_figure_page, write_table_page

log = log_to(snakemake.log[0])
out, p = snakemake.output, snakemake.params
terms = pd.DataFrame(p.terms, columns=["dataset", "criterion", "term", "term_source"])


def alt_tests(paths: dict) -> pd.DataFrame | None:
    found = [read_table(path, ["metric", "criterion", "omega", "passed", "beats_chance"]).assign(scoreset=name)
             for name, path in paths.items()]
    return pd.concat(found, ignore_index=True) if found else None


answers = [
    benchmark.DatasetAnswer(
        found["dataset"], found["study"],
        read_table(found["rows"], ["level", "criterion", "metric", "label", "kind", "r", "ci_low", "ci_high", "top",
                                   "against_direction", "beats_writer", "scoreset", "source_slug", "item",
                                   "item_label"]),
        read_table(found["summary"], ["level", "criterion", "stories", "writers", "top_size", "decided", "ceiling",
                                      "writer_baseline"]),
        terms[terms["dataset"] == found["dataset"]], alt_tests(found["alt_test"]))
    for found in p.sets
]
table = benchmark.benchmark_table(answers)
ranked = benchmark.summary(table, p.min_studies)
answer = benchmark.answer(table, ranked, p.min_studies)
r, top, text = benchmark.matrices(table, ranked)
matrix = text.rename_axis("Metric or judge").reset_index()
for frame, csv, md, title in ((table, out.table_csv, out.table_md, p.title),
                              (ranked, out.summary_csv, out.summary_md, p.summary_title)):
    write_csv(frame, csv)
    write_markdown(for_reading(frame, 3), md, title)
write_csv(matrix, out.matrix_csv)
write_markdown(matrix, out.matrix_md, p.title)
_atomic(out.landing, lambda tmp: Path(tmp).write_text(answer, encoding="utf-8"))
lead = benchmark.answer(table, ranked, p.min_studies, shown=None)  # the pages' own tables follow it
caption = caption_html(snakemake.input.caption, {}, {**p.facts, "answer": lead})
shown = r.head(p.rows), top.head(p.rows)
pixels = save_figure(benchmark_heatmap(*shown, p.title, p.dpi), out.pdf, out.png, p.dpi)
write_figure_page(out.figure_page, out.png, out.pdf, p.title, p.dpi, pixels, caption)
write_table_page(out.page, matrix, p.title, [out.matrix_csv, out.table_csv, out.matrix_md], caption)
write_table_page(out.summary_page, for_reading(ranked, 3), p.summary_title,
                 [out.summary_csv, out.table_csv, out.summary_md], caption)
log.info("%d rows, %d metrics and judges, %d datasets; %s", len(table), len(ranked), len(answers), answer.strip())
