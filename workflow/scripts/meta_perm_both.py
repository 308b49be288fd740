"""PERM-BOTH tests with BH-adjusted p-values and WMT significance clusters, one grouping."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, write_csv
from storyeval.stats.meta import load_meta, one_blas_thread, perm_both_table

log = log_to(snakemake.log[0])
one_blas_thread()
meta = load_meta(snakemake.input, snakemake.params.reference_system)
p, grouping = snakemake.params.meta, snakemake.wildcards.grouping
early = p["early_stop"] and (p["early_stop"]["below"], p["early_stop"]["above"])
best_k = None if grouping in p["all_pairs"] else p["best_k"]
block = p["early_stop"]["block"] if p["early_stop"] else p["n_permutations"]
tests, clusters = perm_both_table(
    meta, grouping, p["coefficient"], p["n_permutations"], p["seed"], early, best_k, p["alpha"], block,
    p["system_perm"],
)
if early:
    log.info(
        "early stop: after each block of %d permutations a pair stops once its p leaves [min(%s, alpha / tests), %s] "
        "(below: only where BH rejects it whatever the other tests give, storyeval.stats.meta.bh_safe_stop); "
        "p = (k + 1) / (n + 1) (column p_min: the smallest p its permutations can give); %d of %d tests stopped "
        "early", block, *early, (tests["permutations"] < p["n_permutations"]).sum(), len(tests),
    )
write_csv(tests, snakemake.output.tests)
write_csv(clusters, snakemake.output.clusters)
log.info(
    "%s: %d tests (%s pairs), %d with p_bh <= %s",
    grouping,
    len(tests),
    "all" if best_k is None else f"best {best_k}",
    (tests["p_bh"] <= p["alpha"]).sum(),
    p["alpha"],
)
