# Meta-evaluation of the metrics and, on HANNA's released scores, of the LLM judges of its TACL 2024 release
# (Chhun, Suchanek & Clavel 2024): correlations by grouping with the Kendall variants (Deutsch, Foster & Freitag
# 2023), pairwise and soft pairwise accuracy (Kocmi et al. 2021; Thompson et al. 2024), PERM-BOTH and BOOT-BOTH
# (Deutsch, Dror & Roth 2021) per grouping, BH-adjusted p-values (Benjamini & Hochberg 1995), WMT clusters.
META = config["meta"]
META_BASE = "results/{dataset}/{scoreset}/meta"
META_TITLE = "Which metrics (and LLM judges) agree best with humans (BOOT-BOTH CI; rank: significance cluster)"
CONSENSUS_TITLE = "Best metrics (and LLM judges) by Kemeny consensus of their rankings per criterion (Borda beside)"


def with_judges(dataset, scoreset):
    return META["judges"] and (dataset, scoreset) == ("hanna", "released")


def meta_groupings(dataset, scoreset):
    """The configured groupings the score set has: item and system need stories on a prompt x system grid."""
    shape = structure(dataset, scoreset)
    return [name for name in META["groupings"] if shape["systems"] or name == "none"]


def meta_params(wildcards):
    """The meta section with the score set's own groupings."""
    return {**META, "groupings": meta_groupings(wildcards.dataset, wildcards.scoreset)}


def meta_best_inputs(wildcards):
    base = META_BASE.format(dataset=wildcards.dataset, scoreset=wildcards.scoreset)
    groupings = meta_groupings(wildcards.dataset, wildcards.scoreset)
    return {
        name: [f"{base}/{stem}_{grouping}.csv" for grouping in groupings]
        for name, stem in (("intervals", "boot_both"), ("clusters", "clusters"))
    }


def meta_inputs(wildcards):
    """The score set, and the LLM judges beside HANNA's released scores."""
    inputs = scoreset_inputs(wildcards)
    if with_judges(wildcards.dataset, wildcards.scoreset):
        inputs.update(
            judge_scores="results/hanna/judges/scores.parquet", judge_registry="results/hanna/judges/metrics.csv"
        )
    return inputs


def consensus_inputs(wildcards):
    """The meta correlations and the registries of their columns (the judges' beside HANNA's released scores)."""
    inputs = {
        "correlations": f"{META_BASE}/correlations.csv".format(**wildcards),
        "registry": f"results/{wildcards.dataset}/{wildcards.scoreset}/metrics.csv",
    }
    if with_judges(wildcards.dataset, wildcards.scoreset):
        inputs["judge_registry"] = "results/hanna/judges/metrics.csv"
    return inputs


def meta_targets(dataset, scoreset):
    base = META_BASE.format(dataset=dataset, scoreset=scoreset)
    top = f"results/{dataset}/{scoreset}"
    groupings = meta_groupings(dataset, scoreset)
    return [
        f"{base}/correlations.csv",
        *[f"{base}/pairwise.csv"] * ("system" in groupings),
        *expand(f"{base}/{{name}}_{{grouping}}.csv", name=["perm_both", "clusters"], grouping=groupings),
        f"{top}/williams_bh.csv",
        *[f"{base}/williams_judges.csv"]
        * (with_judges(dataset, scoreset) or scoreset == "computed" and bool(judge_jobs(dataset))),
        *[f"{base}/{name}.csv" for name in ("consensus", "consensus_summary")],
        *[f"{top}/tables/{name}.{ext}" for name in ("meta_best", "meta_consensus") for ext in ("csv", "md")],
        *[f"{top}/figures/meta_best.{ext}" for ext in ("pdf", "png")],
        *[report_page(top, name) for name in ("meta_best", "meta_best_table", "meta_consensus_table")],
    ]


wildcard_constraints:
    grouping="none|item|system",


rule judge_scores:
    input:
        hanna_path("scores_llm"),
    output:
        scores="results/hanna/judges/scores.parquet",
        registry="results/hanna/judges/metrics.csv",
    log:
        "logs/judge_scores.log",
    benchmark:
        "benchmarks/judge_scores.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("judge_scores.py"),
    script:
        "../scripts/judge_scores.py"


rule meta_correlations:
    input:
        unpack(meta_inputs),
    output:
        f"{META_BASE}/correlations.csv",
    log:
        "logs/meta_correlations/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/meta_correlations/{dataset}/{scoreset}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("meta_correlations.py"),
        reference_system=HANNA["reference_system"],
        meta=meta_params,
    script:
        "../scripts/meta_correlations.py"


rule meta_pairwise:
    input:
        unpack(meta_inputs),
    output:
        f"{META_BASE}/pairwise.csv",
    log:
        "logs/meta_pairwise/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/meta_pairwise/{dataset}/{scoreset}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("meta_pairwise.py"),
        reference_system=HANNA["reference_system"],
        meta=meta_params,
    script:
        "../scripts/meta_pairwise.py"


rule meta_perm_both:
    input:
        unpack(meta_inputs),
    output:
        tests=f"{META_BASE}/perm_both_{{grouping}}.csv",
        clusters=f"{META_BASE}/clusters_{{grouping}}.csv",
    log:
        "logs/meta_perm_both/{dataset}/{scoreset}/{grouping}.log",
    benchmark:
        "benchmarks/meta_perm_both/{dataset}/{scoreset}/{grouping}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("meta_perm_both.py"),
        reference_system=HANNA["reference_system"],
        meta=meta_params,
    script:
        "../scripts/meta_perm_both.py"


rule meta_boot_both:
    input:
        unpack(meta_inputs),
    output:
        f"{META_BASE}/boot_both_{{grouping}}.csv",
    log:
        "logs/meta_boot_both/{dataset}/{scoreset}/{grouping}.log",
    benchmark:
        "benchmarks/meta_boot_both/{dataset}/{scoreset}/{grouping}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("meta_boot_both.py"),
        reference_system=HANNA["reference_system"],
        meta=meta_params,
    script:
        "../scripts/meta_boot_both.py"


rule meta_best:
    input:
        unpack(meta_best_inputs),
        caption=caption_file("meta_best"),
    output:
        csv="results/{dataset}/{scoreset}/tables/meta_best.csv",
        md="results/{dataset}/{scoreset}/tables/meta_best.md",
        table_page=report_entry(
            report_page("results/{dataset}/{scoreset}", "meta_best_table"),
            "meta_best",
            "Tables",
            table_labels("meta_best_table"),
        ),
        pdf="results/{dataset}/{scoreset}/figures/meta_best.pdf",
        png="results/{dataset}/{scoreset}/figures/meta_best.png",
        figure_page=report_entry(
            report_page("results/{dataset}/{scoreset}", "meta_best"),
            "meta_best",
            "Figures",
            {
                "Figure": "Meta",
                "Shows": "best LLM judges and metrics, BOOT-BOTH CI",
                "Level": "none, item, system",
                "Coefficient": META["coefficient"],
                "Metrics": "best per family",
            },
        ),
    log:
        "logs/meta_best/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/meta_best/{dataset}/{scoreset}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("meta_best.py"),
        top=META["top"],
        coefficient=META["coefficient"],
        title=META_TITLE,
        dpi=config["figures"]["dpi"],
    script:
        "../scripts/meta_best.py"


rule meta_consensus:
    input:
        unpack(consensus_inputs),
        caption=caption_file("meta_consensus"),
    output:
        consensus=f"{META_BASE}/consensus.csv",
        summary=f"{META_BASE}/consensus_summary.csv",
        csv="results/{dataset}/{scoreset}/tables/meta_consensus.csv",
        md="results/{dataset}/{scoreset}/tables/meta_consensus.md",
        table_page=report_entry(
            report_page("results/{dataset}/{scoreset}", "meta_consensus_table"),
            "meta_consensus",
            "Tables",
            table_labels("meta_consensus_table"),
        ),
    log:
        "logs/meta_consensus/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/meta_consensus/{dataset}/{scoreset}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("meta_consensus.py"),
        coefficients=META["consensus_coefficients"],
        kemeny=config["stats"]["kemeny"],
        top=META["top"],
        title=CONSENSUS_TITLE,
    script:
        "../scripts/meta_consensus.py"


rule meta_williams_judges:
    input:
        unpack(meta_inputs),
    output:
        f"{META_BASE}/williams_judges.csv",
    log:
        "logs/meta_williams_judges/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/meta_williams_judges/{dataset}/{scoreset}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("meta_williams_judges.py"),
        reference_system=HANNA["reference_system"],
        meta=meta_params,
    script:
        "../scripts/meta_williams_judges.py"


rule williams_bh:
    input:
        "results/{dataset}/{scoreset}/williams.csv",
    output:
        "results/{dataset}/{scoreset}/williams_bh.csv",
    log:
        "logs/williams_bh/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/williams_bh/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("williams_bh.py"),
    script:
        "../scripts/williams_bh.py"
