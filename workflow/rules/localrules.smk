# Light jobs that stay on the submit host under a cluster executor (profiles/slurm):
# queueing them would cost more than running them. Everything else is submitted.


localrules:
    fetch,
    merge_scores,
    computation_times,
    tab3_icc,
    tab4_system_means,
    tab5_top3_pearson,
    tab6_borda,
    tab8_top5_story,
    tab9_top5_system,
    reanalysis_tables,
    kemeny_table,
    fig_criteria_heatmap,
    fig_metric_criteria_heatmap,
    fig_metric_metric_heatmap,
    fig09_rating_violins,
    fig_williams_pvalues,
    fig07_fig26_bootstrap_f1,
    fig08_topk_systems,
