"""Tab. 3: ICC2k (the paper's form) and ICC1k with 95 % CIs, per criterion and rater layout."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.icc import icc_table, rater_judges

log = log_to(snakemake.log[0])
level, layout = snakemake.params.confidence, snakemake.params.layout
ratings = read_table(snakemake.input.positions, ["story_id", "criterion", "rater", "rating"])
if layout == "rater":  # raters may differ by criterion and story: judge slots per criterion, said in the log
    ratings, notes = rater_judges(ratings)
    for note in notes:
        log.info("%s", note)
tables = [icc_table(ratings, layout, level=level)]
if "workers" in snakemake.input.keys():
    tables.insert(
        0,
        icc_table(
            read_table(snakemake.input.workers, ["story_id", "criterion", "rater", "rating"]), "worker", level=level
        ),
    )
elif layout == "position":
    log.info("no raw annotation file: ICC from the released rater positions only (labelled as such)")
table = pd.concat(tables, ignore_index=True)
write_csv(table, snakemake.output[0])
log.info("%s", table.to_string())
