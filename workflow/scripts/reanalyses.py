"""Houairi & Thiounn sum-of-ranks rankings; Mendras & Nietge top-k and coefficient agreement."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.analysis import system_variant, with_labels
from storyeval.criteria import ordered_criteria
from storyeval.data.load import load_cubes, needs_exact_means
from storyeval.data.registry import present_metrics, resolve_metrics
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.reanalysis import mendras_nietge, sum_of_ranks

log = log_to(snakemake.log[0])
settings, params = snakemake.params.reanalysis, snakemake.params
correlations = read_table(
    snakemake.input.correlations, ["kind", "level", "coefficient", "x", "y", "r"], round_trip=True
)
registry = read_table(snakemake.input.registry, ["slug", "label"])
wanted, skipped = present_metrics(settings["sum_of_ranks_metrics"], registry)
ranks, missing = sum_of_ranks(correlations, resolve_metrics(wanted, registry, "reanalysis.sum_of_ranks_metrics"))
if skipped or missing:
    log.info("sum of ranks: metrics not in this score set, skipped: %s", skipped + missing)
write_csv(with_labels(ranks, registry), snakemake.output.sum_of_ranks)
if "human" in snakemake.input.keys():  # the rule passes the cubes when Mendras & Nietge's system means differ
    human, metrics = load_cubes(
        snakemake.input, params.reference_system, needs_exact_means(settings["system_ties"], params.system_coefficients)
    )
    correlations = system_variant(
        correlations, human, metrics, params.coefficients, settings["system_ties"], params.system_coefficients
    )
    log.info(
        "system level recomputed: system_ties %s, %s coefficients", settings["system_ties"], params.system_coefficients
    )
rated = ordered_criteria(correlations.loc[correlations["kind"] == "metric_criterion", "y"])
criteria = [name for name in settings["top_k_criteria"] if name in rated]
if not criteria:
    log.info("reanalysis.top_k_criteria: none rated in this dataset, its criteria used: %s", rated)
subset = settings["top_k_metrics"]
top, agreement = mendras_nietge(
    correlations,
    tuple(criteria or rated),
    settings["top_k"],
    None if subset is None else resolve_metrics(subset, registry, "reanalysis.top_k_metrics"),
)
write_csv(with_labels(top, registry), snakemake.output.top_k)
write_csv(agreement, snakemake.output.agreement)
