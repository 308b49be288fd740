"""The LLM judges of HANNA's TACL 2024 release as a score set: long scores and their registry (family llm-judge)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.hanna_judges import read_judge_scores
from storyeval.io import log_to, write_csv, write_parquet

log = log_to(snakemake.log[0])
judges = read_judge_scores(snakemake.input[0])
write_parquet(judges.scores, snakemake.output.scores)
write_csv(judges.registry, snakemake.output.registry)
log.info(
    "%d judge columns (%s), %d values below or above the 1-5 scale",
    len(judges.registry),
    ", ".join(judges.registry["judge"].unique()),
    judges.registry["off_scale"].sum(),
)
