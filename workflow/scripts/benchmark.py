"""The cross-dataset benchmark: every rated score set's meta-evaluation side by side (storyeval.benchmark)."""

from pathlib import Path

import pandas as pd

from storyeval import benchmark
from storyeval.io import _atomic, log_to, read_table, write_csv, write_markdown
from storyeval.plots import save_figure
from storyeval.plots.heatmaps import benchmark_heatmap
from storyeval.plots.pages import caption_html, for_reading, note_html, write_figure_page, write_table_page

log = log_to(snakemake.log[0])
out, p = snakemake.output, snakemake.params
terms = pd.DataFrame(p.terms, columns=["dataset", "criterion", "term", "term_source"])
sets = [
    benchmark.ScoreSetResults(
        found["dataset"], found["scoreset"], found["grouping"],
        read_table(found["intervals"], ["grouping", "coefficient", "metric", "label", "family", "criterion", "r",
                                        "ci_low", "ci_high"]),
        read_table(found["clusters"], ["grouping", "coefficient", "criterion", "metric", "rank"]),
        pd.concat([read_table(path, ["slug", "label", "family"]) for path in found["registries"]], ignore_index=True),
        read_table(found["confounds"], ["coefficient", "metric", "criterion", "system", "length", "confound"]),
        found["agreement"] and read_table(found["agreement"], ["criterion", "level", "coefficient", "ceiling"]),
        terms[terms["dataset"] == found["dataset"]],
        found["alt_test"] and read_table(found["alt_test"],
                                         ["metric", "criterion", "omega", "passed", "chance_passes"]),
    )
    for found in p.sets
]
table = benchmark.benchmark_table(sets)
ranked = benchmark.summary(table)
answer = benchmark.answer(table, ranked)
note = benchmark.ceiling_note(sets)
if note:
    log.info(note)
for frame, csv, md, title in ((table, out.table_csv, out.table_md, p.title), (ranked, out.summary_csv,
                                                                             out.summary_md, p.summary_title)):
    write_csv(frame, csv)
    write_markdown(for_reading(frame, 3), md, title)
_atomic(out.landing, lambda tmp: Path(tmp).write_text(answer, encoding="utf-8"))
caption = caption_html(snakemake.input.caption, {}, {**p.facts, "answer": answer}) + note_html(note)
r, top = benchmark.heatmap_matrix(table, ranked, p.rows)
pixels = save_figure(benchmark_heatmap(r, top, p.title, p.dpi), out.pdf, out.png, p.dpi)
write_figure_page(out.figure_page, out.png, out.pdf, p.title, p.dpi, pixels, caption)
write_table_page(out.page, for_reading(ranked, 3), p.summary_title, [out.summary_csv, out.table_csv, out.summary_md],
                 caption)
log.info("%d rows, %d metrics and judges, %d score sets; %s", len(table), len(ranked), len(sets), answer.strip())
