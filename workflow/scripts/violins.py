"""Fig. 9: rating distributions per system and criterion."""

from storyeval.criteria import CRITERIA
from storyeval.io import log_to, read_table
from storyeval.plots import rating_violins, save_figure

log = log_to(snakemake.log[0])
stories = read_table(snakemake.input.stories, ["story_id", "system"])
human = read_table(snakemake.input.human, ["story_id", "criterion", "score"])
frame = human.merge(stories[["story_id", "system"]], on="story_id")
systems = list(dict.fromkeys(stories["system"]))
figure = rating_violins(frame[["system", "criterion", "score"]], systems, CRITERIA)
save_figure(figure, snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
log.info("%d ratings of %d systems", len(frame), len(systems))
