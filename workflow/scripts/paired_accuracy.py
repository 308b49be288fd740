"""Which story of each prompt wins, per humans and per metric: pairwise accuracy with ties and its bootstrap
interval over prompts, beside the chance and better-system baselines (storyeval.stats.paired)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.analysis import missing_note, with_labels
from storyeval.data.load import load_cubes
from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots.pages import caption_html, note_html, paired_view, write_table_page
from storyeval.stats.paired import BASELINES, COLUMNS, baselines, paired_accuracy

log = log_to(snakemake.log[0])
out, params = snakemake.output, snakemake.params
human, metrics = load_cubes(snakemake.input, params.reference_system, grid=True)
registry = read_table(snakemake.input.registry, ["slug", "label", "direction", "degenerate_release"])
lower = registry.set_index("slug").reindex(metrics.names)["direction"].eq("lower").to_numpy()
if len(metrics.systems) >= 2:
    table = paired_accuracy(metrics.values, human.values, metrics.names, human.names, lower, params.seed,
                            params.n_resamples, params.confidence)
    reference = baselines(human.values, human.names, params.seed, params.n_resamples, params.confidence)
else:  # the other system is the human reference, which the analysis leaves out (hanna.reference_system)
    log.warning("paired accuracy: no pairs, the systems besides the reference %r are %s", params.reference_system,
                metrics.systems)
    table, reference = pd.DataFrame(columns=COLUMNS), pd.DataFrame(columns=COLUMNS)
table = with_labels(table, registry)
note = missing_note(table, registry, count="dropped")
reference.insert(1, "label", reference["metric"].map(BASELINES))
table = pd.concat([table, reference], ignore_index=True)
write_csv(table, out.csv)
title = (f"{snakemake.wildcards.dataset}: paired accuracy over {len(metrics.prompts)} prompts of "
         f"{len(metrics.systems)} systems (which story wins; {params.confidence:.0%} bootstrap CI over prompts)")
shown = paired_view(table)
keep = table.loc[shown.index, "metric"].isin(BASELINES).to_numpy()
write_markdown(shown, out.md, title)
caption = caption_html(snakemake.input.caption, snakemake.wildcards)
if note:
    log.info("%s", note)
caption += note_html(note)
write_table_page(out.page, shown, title, [out.csv, out.md], caption, ["Criterion"], keep, "the baselines")
measured = table[~table["metric"].isin(BASELINES)]
best = measured.sort_values("calibrated", ascending=False, kind="stable").groupby("criterion", sort=False).head(1)
log.info("best tie-calibrated accuracy per criterion: %s",
         ", ".join(f"{row.criterion} {row.label} {row.calibrated:.3f}" for row in best.itertuples()))
idle = measured[measured["beats_chance"].astype(bool) & ~measured["beats_system"].astype(bool)]
log.info("above chance, not above the better system (adds nothing beyond which system wrote the story): %d of %d "
         "rows%s",
         len(idle), len(measured), "".join(f"; {row.criterion} {row.label} {row.accuracy:.3f} [{row.accuracy_low:.3f}, "
                                           f"{row.accuracy_high:.3f}] vs {row.system_accuracy:.3f}"
                                           for row in idle.itertuples()))
