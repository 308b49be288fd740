"""What a score set holds, from its data: the paragraph of the report's landing page and a page of its own."""

from pathlib import Path

from storyeval.io import log_to, read_table
from storyeval.plots.pages import about_text, write_about_page
from storyeval.stats.design import infer_design

log = log_to(snakemake.log[0])
out, wildcards = snakemake.output, snakemake.wildcards
text = about_text(
    wildcards.dataset,
    wildcards.scoreset,
    read_table(snakemake.input.stories, ["story_id", "prompt_id", "system"]),
    read_table(snakemake.input.human, []),
    read_table(snakemake.input.ratings, []),
    read_table(snakemake.input.registry, ["slug", "label"]),
    snakemake.params.reference_system,
    snakemake.params.facts["levels"],
)
ratings = read_table(snakemake.input.ratings, [])
design = infer_design(read_table(snakemake.input.stories, ["story_id", "prompt_id", "system"]),
                      ratings if "rater" in ratings else None, snakemake.params.layout, snakemake.params.groups,
                      snakemake.params.reference_system)
text = text.rstrip("\n") + f" Design: {design.describe()}.\n"
Path(out.text).write_text(text, encoding="utf-8")
write_about_page(out.page, out.text, f"{wildcards.dataset}, {wildcards.scoreset} scores: the data")
log.info("%s", text.strip())
