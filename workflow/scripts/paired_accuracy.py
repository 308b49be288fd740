"""Which story of each prompt wins, per humans and per metric: pairwise accuracy with ties and its bootstrap
interval over prompts (storyeval.stats.paired)."""

import pandas as pd

from storyeval.analysis import missing_note, with_labels
from storyeval.data.load import load_cubes
from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots.pages import caption_html, note_html, paired_view, write_table_page
from storyeval.stats.paired import COLUMNS, paired_accuracy

log = log_to(snakemake.log[0])
out, params = snakemake.output, snakemake.params
human, metrics = load_cubes(snakemake.input, params.reference_system, grid=True)
registry = read_table(snakemake.input.registry, ["slug", "label", "direction", "degenerate_release"])
lower = registry.set_index("slug").reindex(metrics.names)["direction"].eq("lower").to_numpy()
if len(metrics.systems) >= 2:
    table = paired_accuracy(metrics.values, human.values, metrics.names, human.names, lower, params.seed,
                            params.n_resamples, params.confidence)
else:  # the other system is the human reference, which the analysis leaves out (hanna.reference_system)
    log.warning("paired accuracy: no pairs, the systems besides the reference %r are %s", params.reference_system,
                metrics.systems)
    table = pd.DataFrame(columns=COLUMNS)
table = with_labels(table, registry)
write_csv(table, out.csv)
title = (f"{snakemake.wildcards.dataset}: paired accuracy over {len(metrics.prompts)} prompts of "
         f"{len(metrics.systems)} systems (which story wins; {params.confidence:.0%} bootstrap CI over prompts)")
shown = paired_view(table)
write_markdown(shown, out.md, title)
caption = caption_html(snakemake.input.caption, snakemake.wildcards)
note = missing_note(table, registry, count="dropped")
if note:
    log.info("%s", note)
caption += note_html(note)
write_table_page(out.page, shown, title, [out.csv, out.md], caption, ["Criterion"])
best = table.sort_values("calibrated", ascending=False, kind="stable").groupby("criterion", sort=False).head(1)
log.info("best tie-calibrated accuracy per criterion: %s",
         ", ".join(f"{row.criterion} {row.label} {row.calibrated:.3f}" for row in best.itertuples()))
