"""Fig. 8 data: system-level correlation on each criterion's top-k systems."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.load import load_cubes
from storyeval.data.registry import present_metrics, resolve_metrics
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.topk import topk_table

log = log_to(snakemake.log[0])
topk = snakemake.params.topk
human, metrics = load_cubes(snakemake.input, snakemake.params.reference_system)
registry = read_table(snakemake.input.registry, ["slug", "label"])
held, skipped = present_metrics(topk["metrics"], registry)
if skipped:
    log.info("stats.topk.metrics: not in this score set, skipped: %s", skipped)
chosen = resolve_metrics(held, registry, "config.yaml stats.topk.metrics")
columns = [metrics.names.index(slug) for slug in chosen]
systems = len(human.systems)
k_values = range(min(topk["k_max"], systems), min(topk["k_min"], systems) - 1, -1)
if systems < topk["k_min"]:
    log.warning("%d systems, fewer than stats.topk.k_min (%d): k = %d only", systems, topk["k_min"], systems)
table = topk_table(
    human.values, metrics.values[..., columns], chosen, human.names, human.systems, k_values, topk["coefficient"]
)
write_csv(table, snakemake.output[0])
log.info("%d rows, k = %s", len(table), list(k_values))
