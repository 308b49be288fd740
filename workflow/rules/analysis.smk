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


rule system_ranking:
    input:
        unpack(unrated_inputs),
    output:
        csv="results/{dataset}/{scoreset}/system_ranking.csv",
        md=report("results/{dataset}/{scoreset}/tables/system_ranking.md", caption="../report/system_ranking.rst",
                  category="{dataset} {scoreset}", subcategory="Tables"),
        pdf="results/{dataset}/{scoreset}/figures/system_ranking.pdf",
        png=report("results/{dataset}/{scoreset}/figures/system_ranking.png", caption="../report/system_ranking.rst",
                   category="{dataset} {scoreset}", subcategory="Figures"),
    params:
        sources=script_digest("system_ranking.py"),
        reference_system=HANNA["reference_system"],
        dpi=config["figures"]["dpi"],
    conda:
        CORE_ENV
    log:
        "logs/system_ranking/{dataset}/{scoreset}.log",
    script:
        "../scripts/system_ranking.py"
