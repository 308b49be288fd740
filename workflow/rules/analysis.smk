# Correlations, system means and rankings of one score set of one dataset.


def correlation_inputs(wildcards):
    """A text set without human ratings (hanna-llm) correlates its metrics with each other only."""
    if structure(wildcards.dataset, wildcards.scoreset)["ratings"]:
        return scoreset_inputs(wildcards)
    return unrated_inputs(wildcards)


def unrated_inputs(wildcards):
    base = f"results/{wildcards.dataset}"
    return {"stories": f"{base}/data/texts.parquet", "scores": f"{base}/{wildcards.scoreset}/scores.parquet",
            "registry": f"{base}/{wildcards.scoreset}/metrics.csv"}


def unrated_targets(dataset):
    """Metric x metric heatmaps and the systems' ranking by each metric, for a computed set without ratings."""
    base = f"results/{dataset}/computed"
    shape = structure(dataset, "computed")
    figures = wanted(METRIC_METRIC_FIGURES, shape) + ["system_ranking"] * shape["systems"]
    tables = [f"{base}/tables/system_ranking.md"] * shape["systems"]
    return [f"{base}/correlations.csv", *tables, *[f"{base}/figures/{name}.{ext}" for name in figures for ext in ("pdf", "png")]]


rule correlations:
    input:
        unpack(correlation_inputs),
    output:
        "results/{dataset}/{scoreset}/correlations.csv",
    params:
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
        reference_system=HANNA["reference_system"],
        dpi=config["figures"]["dpi"],
    conda:
        CORE_ENV
    log:
        "logs/system_ranking/{dataset}/{scoreset}.log",
    script:
        "../scripts/system_ranking.py"
