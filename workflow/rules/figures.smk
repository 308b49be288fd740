# One rule per figure or table family; one job per figure. Numbers follow HANNA (Chhun et al. 2022).
# Heatmaps show |round(100 r)|; Kendall, Spearman and Pearson as in the paper's appendix.

CRITERIA_FIGURES = {  # Fig. 1, 2, 10-13: criteria x criteria
    "fig01_criteria_story_kendall": ("story", "kendall"),
    "fig02_criteria_system_kendall": ("system", "kendall"),
    "fig10_criteria_story_spearman": ("story", "spearman"),
    "fig11_criteria_system_spearman": ("system", "spearman"),
    "fig12_criteria_story_pearson": ("story", "pearson"),
    "fig13_criteria_system_pearson": ("system", "pearson"),
}
METRIC_CRITERIA_FIGURES = {  # Fig. 3, 4 (representative subset), 14-19 (all metrics)
    "fig03_metric_criteria_story_kendall_subset": ("story", "kendall", True),
    "fig04_metric_criteria_system_kendall_subset": ("system", "kendall", True),
    "fig14_metric_criteria_story_kendall": ("story", "kendall", False),
    "fig15_metric_criteria_system_kendall": ("system", "kendall", False),
    "fig16_metric_criteria_story_spearman": ("story", "spearman", False),
    "fig17_metric_criteria_system_spearman": ("system", "spearman", False),
    "fig18_metric_criteria_story_pearson": ("story", "pearson", False),
    "fig19_metric_criteria_system_pearson": ("system", "pearson", False),
}
METRIC_METRIC_FIGURES = {  # Fig. 5, 6 (representative subset), 20-25 (all metrics)
    "fig05_metric_metric_story_kendall_subset": ("story", "kendall", True),
    "fig06_metric_metric_system_kendall_subset": ("system", "kendall", True),
    "fig20_metric_metric_story_kendall": ("story", "kendall", False),
    "fig21_metric_metric_system_kendall": ("system", "kendall", False),
    "fig22_metric_metric_story_spearman": ("story", "spearman", False),
    "fig23_metric_metric_system_spearman": ("system", "spearman", False),
    "fig24_metric_metric_story_pearson": ("story", "pearson", False),
    "fig25_metric_metric_system_pearson": ("system", "pearson", False),
}
WILLIAMS_FIGURES = {  # Fig. 27-32 story level, 33-38 system level; each also for the representative subset
    f"fig{27 + 6 * offset + index:02d}_williams_{level}_{criterion.lower()}{suffix}": (level, criterion, suffix == "_subset")
    for offset, level in enumerate(["story", "system"])
    for index, criterion in enumerate(["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"])
    for suffix in ["", "_subset"]
}
STATS_TABLE_RENDERINGS = ["tab3_icc", "kemeny_consensus", "reanalysis1_sum_of_ranks", "reanalysis2_top_k",
                          "reanalysis2_coefficient_agreement"]
TABLES = ["tab4_system_means", "tab5_top3_pearson", "tab6_borda", "tab8_top5_story", "tab9_top5_system"]


HEATMAP_INPUTS = {
    "correlations": "results/{dataset}/{scoreset}/correlations.csv",
    "registry": "results/{dataset}/{scoreset}/metrics.csv",
}
HEATMAP_PARAMS = {"representative": config["figures"]["representative_metrics"], "dpi": config["figures"]["dpi"]}


rule fig_criteria_heatmap:
    input:
        **HEATMAP_INPUTS,
    output:
        **figure_outputs("heatmap"),
    params:
        sources=script_digest("heatmap.py"),
        spec=heatmap_params(CRITERIA_FIGURES),
        kind="criteria",
        **HEATMAP_PARAMS,
    wildcard_constraints:
        fig="|".join(CRITERIA_FIGURES),
    conda:
        CORE_ENV
    log:
        "logs/figures/{dataset}/{scoreset}/{fig}.log",
    script:
        "../scripts/heatmap.py"


rule fig_metric_criteria_heatmap:
    input:
        **HEATMAP_INPUTS,
    output:
        **figure_outputs("heatmap"),
    params:
        sources=script_digest("heatmap.py"),
        spec=heatmap_params(METRIC_CRITERIA_FIGURES),
        kind="metric_criterion",
        **HEATMAP_PARAMS,
    wildcard_constraints:
        fig="|".join(METRIC_CRITERIA_FIGURES),
    conda:
        CORE_ENV
    log:
        "logs/figures/{dataset}/{scoreset}/{fig}.log",
    script:
        "../scripts/heatmap.py"


rule fig_metric_metric_heatmap:
    input:
        **HEATMAP_INPUTS,
    output:
        **figure_outputs("heatmap"),
    params:
        sources=script_digest("heatmap.py"),
        spec=heatmap_params(METRIC_METRIC_FIGURES),
        kind="metric_metric",
        **HEATMAP_PARAMS,
    wildcard_constraints:
        fig="|".join(METRIC_METRIC_FIGURES),
    conda:
        CORE_ENV
    log:
        "logs/figures/{dataset}/{scoreset}/{fig}.log",
    script:
        "../scripts/heatmap.py"


rule fig09_rating_violins:
    input:
        stories="results/{dataset}/data/stories.csv",
        human="results/{dataset}/data/human_scores.csv",
    output:
        **figure_outputs("violins"),
    params:
        sources=script_digest("violins.py"),
        dpi=config["figures"]["dpi"],
    wildcard_constraints:
        fig="fig09_rating_violins",
    conda:
        CORE_ENV
    log:
        "logs/figures/{dataset}/{scoreset}/{fig}.log",
    script:
        "../scripts/violins.py"


rule tab4_system_means:
    input:
        "results/{dataset}/{scoreset}/system_means.csv",
    output:
        **table_outputs("tab4_system_means"),
    params:
        sources=script_digest("table.py"),
        table="tab4",
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/tab4.log",
    script:
        "../scripts/table.py"


rule tab5_top3_pearson:
    input:
        "results/{dataset}/{scoreset}/top_metrics.csv",
    output:
        **table_outputs("tab5_top3_pearson"),
    params:
        sources=script_digest("table.py"),
        table="tab5",
        k=config["analysis"]["tab5_top_k"],
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/tab5.log",
    script:
        "../scripts/table.py"


rule tab6_borda:
    input:
        "results/{dataset}/{scoreset}/borda.csv",
    output:
        **table_outputs("tab6_borda"),
    params:
        sources=script_digest("table.py"),
        table="tab6",
        k=config["analysis"]["top_k"],
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/tab6.log",
    script:
        "../scripts/table.py"


rule tab8_top5_story:
    input:
        "results/{dataset}/{scoreset}/top_metrics.csv",
    output:
        **table_outputs("tab8_top5_story"),
    params:
        sources=script_digest("table.py"),
        table="tab8",
        k=config["analysis"]["top_k"],
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/tab8.log",
    script:
        "../scripts/table.py"


rule tab9_top5_system:
    input:
        "results/{dataset}/{scoreset}/top_metrics.csv",
    output:
        **table_outputs("tab9_top5_system"),
    params:
        sources=script_digest("table.py"),
        table="tab9",
        k=config["analysis"]["top_k"],
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/tab9.log",
    script:
        "../scripts/table.py"


rule fig_williams_pvalues:
    input:
        williams="results/{dataset}/{scoreset}/williams.csv",
        registry="results/{dataset}/{scoreset}/metrics.csv",
    output:
        **figure_outputs("williams"),
    params:
        sources=script_digest("williams_heatmap.py"),
        spec=lambda wildcards: WILLIAMS_FIGURES[wildcards.fig],
        **HEATMAP_PARAMS,
    wildcard_constraints:
        fig="|".join(WILLIAMS_FIGURES),
    conda:
        CORE_ENV
    log:
        "logs/figures/{dataset}/{scoreset}/{fig}.log",
    script:
        "../scripts/williams_heatmap.py"


rule fig07_fig26_bootstrap_f1:
    input:
        f1="results/{dataset}/{scoreset}/bootstrap_f1.csv",
        registry="results/{dataset}/{scoreset}/metrics.csv",
    output:
        **figure_outputs("bootstrap_f1"),
    params:
        sources=script_digest("bootstrap_heatmap.py"),
        **HEATMAP_PARAMS,
    wildcard_constraints:
        fig="fig07_bootstrap_f1_subset|fig26_bootstrap_f1",
    conda:
        CORE_ENV
    log:
        "logs/figures/{dataset}/{scoreset}/{fig}.log",
    script:
        "../scripts/bootstrap_heatmap.py"


rule fig08_topk_systems:
    input:
        topk="results/{dataset}/{scoreset}/topk.csv",
        registry="results/{dataset}/{scoreset}/metrics.csv",
    output:
        **figure_outputs("topk"),
    params:
        sources=script_digest("topk_figure.py"),
        coefficient=config["stats"]["topk"]["coefficient"],
        dpi=config["figures"]["dpi"],
    wildcard_constraints:
        fig="fig08_topk_systems",
    conda:
        CORE_ENV
    log:
        "logs/figures/{dataset}/{scoreset}/{fig}.log",
    script:
        "../scripts/topk_figure.py"


rule tab3_icc:
    input:
        "results/{dataset}/{scoreset}/icc.csv",
    output:
        **table_outputs("tab3_icc"),
    params:
        sources=script_digest("table.py"),
        table="tab3",
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/tab3.log",
    script:
        "../scripts/table.py"


rule kemeny_table:
    input:
        consensus="results/{dataset}/{scoreset}/kemeny.csv",
        summary="results/{dataset}/{scoreset}/kemeny_summary.csv",
    output:
        **table_outputs("kemeny_consensus"),
    params:
        sources=script_digest("table.py"),
        table="kemeny",
        k=config["analysis"]["top_k"],
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/kemeny.log",
    script:
        "../scripts/table.py"


rule reanalysis_tables:
    input:
        "results/{dataset}/{scoreset}/{name}.csv",
    output:
        **table_outputs("{name}"),
    params:
        sources=script_digest("table.py"),
        table=lambda wildcards: wildcards.name,
    wildcard_constraints:
        name="reanalysis1_sum_of_ranks|reanalysis2_top_k|reanalysis2_coefficient_agreement",
    conda:
        CORE_ENV
    log:
        "logs/tables/{dataset}/{scoreset}/{name}.log",
    script:
        "../scripts/table.py"
