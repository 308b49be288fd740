# Every localrule, in one place: light jobs that stay on the submit host under a cluster executor
# (profiles/slurm), where queueing them would cost more than running them. Everything else is submitted.


localrules:
    fetch,
    merge_scores,
    computation_times,
    storyer_figure,
    audit,
    benchmark_table,
    agreement_pages,


# The figure and table families of figures.smk, one rule each (fig_*, tables_*), named from the configured datasets.
workflow.localrules(*FIGURE_RULES, *TABLE_RULES)
