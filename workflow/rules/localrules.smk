# Light jobs that stay on the submit host under a cluster executor (profiles/slurm):
# queueing them would cost more than running them. Everything else is submitted. The figure and table
# families (fig_*, tables_*: figures.smk, one rule per family) say `localrule: True` themselves.


localrules:
    fetch,
    merge_scores,
    computation_times,
