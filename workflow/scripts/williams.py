"""Williams tests (one-sided, Pearson) for every ordered metric pair and criterion, per level."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import numpy as np
import pandas as pd

from storyeval.data.load import load_cubes
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.williams import williams_inputs, williams_table

log = log_to(snakemake.log[0])
human, metrics = load_cubes(snakemake.input, snakemake.params.reference_system)
registry = read_table(snakemake.input.registry, ["slug", "direction"]).set_index("slug")
directions, orientation = list(registry.loc[metrics.names, "direction"]), snakemake.params.orientation
tables = []
for level in snakemake.params.levels:
    r_mc, r_mm, n = williams_inputs(human.values, metrics.values, level, snakemake.params.story_mode)
    tables.append(williams_table(r_mc, r_mm, n, metrics.names, human.names, level, directions, orientation))
    n = int(np.min(n))  # per test where cells are missing (storyeval.stats.williams): the smallest
    log.info("%s level, %s r: n >= %d, %d tests, %d with p < 0.05", level, orientation, n, len(tables[-1]),
             (tables[-1]["p"] < 0.05).sum())
    if n <= 3:
        log.warning("%s level: n = %d, too few for Williams' test (n - 3 degrees of freedom): t, p NaN", level, n)
write_csv(pd.concat(tables, ignore_index=True), snakemake.output[0])
