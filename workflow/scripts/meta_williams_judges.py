"""Williams tests of each LLM judge against the best metrics, per grouping and criterion, raw and BH-adjusted p."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, write_csv
from storyeval.stats.meta import judge_williams_table, load_meta, one_blas_thread

log = log_to(snakemake.log[0])
one_blas_thread()
meta = load_meta(snakemake.input, snakemake.params.reference_system)
p = snakemake.params.meta
table = judge_williams_table(meta, p["groupings"], p["best_k"])
write_csv(table, snakemake.output[0])
judge_wins = table[(table["family"] == "llm-judge") & (table["p_bh"] <= p["alpha"])]
log.info("%d tests, %d where a judge beats a best metric at p_bh <= %s", len(table), len(judge_wins), p["alpha"])
