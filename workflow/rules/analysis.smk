# Correlations, system means and rankings of one score set of one dataset. The switches of config analysis
# (system_ties, system_coefficients, borda_ties, system_means_unit; config/paper-exact.yaml sets the papers'
# artefacts) are params of the package functions these rules call; what the rules read: storyeval.workflow.analysis.


rule correlations:
    input:
        unpack(lambda wildcards: workflow_analysis.correlation_inputs(RUN, wildcards.dataset, wildcards.scoreset)),
    output:
        "results/{dataset}/{scoreset}/correlations.csv",
    log:
        "logs/correlations/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/correlations/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("correlations.py"),
        reference_system=dataset_reference_system,
        levels=dataset_levels,
        coefficients=config["analysis"]["coefficients"],
        system_ties=config["analysis"]["system_ties"],
        system_coefficients=config["analysis"]["system_coefficients"],
    script:
        "../scripts/correlations.py"


rule system_means:
    input:
        stories="results/{dataset}/data/stories.csv",
        ratings="results/{dataset}/data/rater_ratings.csv",
    output:
        "results/{dataset}/{scoreset}/system_means.csv",
    log:
        "logs/system_means/{dataset}/{scoreset}.log",
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("system_means.py"),
        confidence=config["analysis"]["confidence"],
        unit=config["analysis"]["system_means_unit"],
        scale=lambda wildcards: config["datasets"].get(wildcards.dataset, {}).get("scale"),  # declared, if any
    script:
        "../scripts/system_means.py"


rule rankings:
    input:
        unpack(
            lambda wildcards: (
                {"answer": "results/{dataset}/{scoreset}/answer.csv"}
                if RUN.structure(wildcards.dataset, wildcards.scoreset)["ratings"]
                else {}
            )
        ),
        correlations="results/{dataset}/{scoreset}/correlations.csv",
        registry="results/{dataset}/{scoreset}/metrics.csv",
        confounds="results/{dataset}/{scoreset}/confounds.csv",
    output:
        top="results/{dataset}/{scoreset}/top_metrics.csv",
        borda="results/{dataset}/{scoreset}/borda.csv",
    log:
        "logs/rankings/{dataset}/{scoreset}.log",
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("rankings.py"),
        top_k=config["analysis"]["top_k"],
        borda_ties=config["analysis"]["borda_ties"],
        # The story level pools the systems' stories (two systems, or none): the system flag applies to it.
        pooled=lambda wildcards: not RUN.structure(wildcards.dataset, wildcards.scoreset)["systems"],
        orientation=config["analysis"]["orientation"],
    script:
        "../scripts/rankings.py"


SYSTEM_RANKING_FIGURE = {"kind": "system_ranking", "level": "system", "subset": False}


rule system_ranking:
    input:
        unpack(lambda wildcards: workflow_analysis.scoreset_inputs(wildcards.dataset, wildcards.scoreset, rated=False)),
        caption=caption_file("system_ranking"),
    output:
        csv="results/{dataset}/{scoreset}/system_ranking.csv",
        md="results/{dataset}/{scoreset}/tables/system_ranking.md",
        pdf="results/{dataset}/{scoreset}/figures/system_ranking.pdf",
        png="results/{dataset}/{scoreset}/figures/system_ranking.png",
        page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "system_ranking"),
            "system_ranking",
            "Figures",
            figure_labels("system_ranking", SYSTEM_RANKING_FIGURE),
        ),
        table_page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "system_ranking_table"),
            "system_ranking",
            "Tables",
            table_labels("system_ranking_table"),
        ),
    log:
        "logs/system_ranking/{dataset}/{scoreset}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("system_ranking.py"),
        reference_system=dataset_reference_system,
        dpi=config["figures"]["dpi"],
        figure=SYSTEM_RANKING_FIGURE,
    script:
        "../scripts/system_ranking.py"
