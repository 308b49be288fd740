"""Each metric x criterion correlation over all stories beside its within-system one and the metric's correlation
with Text length, flagged where they tell another story (storyeval.stats.confounds)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.load import load_cubes
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.confounds import confound_table, warnings_of

log = log_to(snakemake.log[0])
params = snakemake.params
human, metrics = load_cubes(snakemake.input, params.reference_system, grid=True)
stories = metrics.values.shape[0] * metrics.values.shape[1]
written = read_table(snakemake.input.stories, ["story_id"])
writers = dict(zip(written["story_id"], written["writer"])) if "writer" in written else {}  # one group: story ids
systems = [writers.get(system, system) for _ in metrics.prompts for system in metrics.systems]  # [prompt, system]
table = confound_table(metrics.values.reshape(stories, -1), human.values.reshape(stories, -1), systems,
                       metrics.names, human.names, params.coefficients, params.margin, params.length_limit)
write_csv(table, snakemake.output[0])
for line in warnings_of(table):
    log.warning("%s", line)
log.info("%d of %d metric x criterion correlations over %d stories flagged (system: pooled and within-system "
         "differ by more than %g or in sign; length: |r| with Text length above %g)",
         int((table["confound"] != "").sum()), len(table), stories, params.margin, params.length_limit)
