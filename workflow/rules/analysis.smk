# Correlations, system means and rankings of one score set of one dataset.


rule correlations:
    input:
        unpack(correlation_inputs),
    output:
        "results/{dataset}/{scoreset}/correlations.csv",
    params:
        sources=script_digest("correlations.py"),
        reference_system=HANNA["reference_system"],
        levels=dataset_levels,
        coefficients=config["analysis"]["coefficients"],
    conda:
        CORE_ENV
    log:
        "logs/correlations/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/correlations/{dataset}/{scoreset}.tsv"
    script:
        "../scripts/correlations.py"


rule system_means:
    input:
        stories="results/{dataset}/data/stories.csv",
        ratings="results/{dataset}/data/rater_ratings.csv",
    output:
        "results/{dataset}/{scoreset}/system_means.csv",
    params:
        sources=script_digest("system_means.py"),
        confidence=config["analysis"]["confidence"],
    conda:
        CORE_ENV
    log:
        "logs/system_means/{dataset}/{scoreset}.log",
    script:
        "../scripts/system_means.py"


rule rankings:
    input:
        correlations="results/{dataset}/{scoreset}/correlations.csv",
        registry="results/{dataset}/{scoreset}/metrics.csv",
    output:
        top="results/{dataset}/{scoreset}/top_metrics.csv",
        borda="results/{dataset}/{scoreset}/borda.csv",
    params:
        sources=script_digest("rankings.py"),
        top_k=config["analysis"]["top_k"],
    conda:
        CORE_ENV
    log:
        "logs/rankings/{dataset}/{scoreset}.log",
    script:
        "../scripts/rankings.py"


SYSTEM_RANKING_FIGURE = {"kind": "system_ranking", "level": "system", "subset": False}


rule system_ranking:
    input:
        unpack(unrated_inputs),
    output:
        csv="results/{dataset}/{scoreset}/system_ranking.csv",
        md="results/{dataset}/{scoreset}/tables/system_ranking.md",
        pdf="results/{dataset}/{scoreset}/figures/system_ranking.pdf",
        png="results/{dataset}/{scoreset}/figures/system_ranking.png",
        page=report_entry(report_page("results/{dataset}/{scoreset}", "system_ranking"), "system_ranking", "Figures",
                          figure_labels("system_ranking", SYSTEM_RANKING_FIGURE)),
        table_page=report_entry(report_page("results/{dataset}/{scoreset}", "system_ranking_table"), "system_ranking",
                                "Tables", table_labels("system_ranking_table")),
    params:
        sources=script_digest("system_ranking.py"),
        reference_system=HANNA["reference_system"],
        dpi=config["figures"]["dpi"],
        figure=SYSTEM_RANKING_FIGURE,
    conda:
        CORE_ENV
    log:
        "logs/system_ranking/{dataset}/{scoreset}.log",
    script:
        "../scripts/system_ranking.py"
