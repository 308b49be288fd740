"""How each computed metric ranks the systems of a text set without human ratings (hanna-llm), with consensus."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.analysis import ranking_matrix, system_ranking
from storyeval.data.load import load_cubes
from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots import rank_heatmap, save_figure
from storyeval.plots.pages import caption_html, figure_heading, write_figure_page, write_table_page

log = log_to(snakemake.log[0])
_, metrics = load_cubes(snakemake.input, snakemake.params.reference_system)
registry = read_table(snakemake.input.registry, ["slug", "label", "family", "direction"])
ranking = system_ranking(metrics, registry)
write_csv(ranking, snakemake.output.csv)
matrix = ranking_matrix(ranking)
prompts = len(metrics.prompts)
title = f"{snakemake.wildcards.dataset}: rank of each system by each metric (1 = best; mean over {prompts} prompts)"
table = matrix.reset_index().rename(columns={"label": "metric"})
write_markdown(table, snakemake.output.md, title)
caption = caption_html(snakemake.input.caption, snakemake.wildcards)
write_table_page(snakemake.output.table_page, table, title, [snakemake.output.csv, snakemake.output.md], caption)
consensus = int((ranking.drop_duplicates("metric")["family"] == "consensus").sum())
figure = rank_heatmap(matrix, f"{snakemake.wildcards.dataset}: system ranks by metric (1 = best)", consensus)
pixels = save_figure(figure, snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
write_figure_page(
    snakemake.output.page,
    snakemake.output.png,
    snakemake.output.pdf,
    figure_heading("system_ranking", snakemake.params.figure),
    snakemake.params.dpi,
    pixels,
    caption,
)
top = ranking[ranking["metric"] == "borda-all"].sort_values("rank")
log.info(
    "%d metrics rank %d systems; Borda consensus: %s",
    len(metrics.names),
    len(metrics.systems),
    ", ".join(f"{row.rank:g} {row.system}" for row in top.itertuples()),
)
