# Meta-evaluation of the metrics and, on HANNA's released scores, of the LLM judges of its TACL 2024 release
# (Chhun, Suchanek & Clavel 2024): correlations by grouping with the Kendall variants (Deutsch, Foster & Freitag
# 2023), pairwise and soft pairwise accuracy (Kocmi et al. 2021; Thompson et al. 2024), PERM-BOTH and BOOT-BOTH
# (Deutsch, Dror & Roth 2021) per grouping, BH-adjusted p-values (Benjamini & Hochberg 1995), WMT clusters.
from storyeval.workflow import meta as workflow_meta

META = config["meta"]
META_BASE = workflow_meta.BASE  # what the rules read and make: storyeval.workflow.meta
# "(and LLM judges)" where the score set is compared with judges (caption_facts)
META_TITLE = "Which metrics{and_judges} agree best with humans (BOOT-BOTH CI; rank: significance cluster)"
CONSENSUS_TITLE = "Best metrics{and_judges} by Kemeny consensus of their rankings per criterion (Borda beside)"


wildcard_constraints:
    grouping="none|item|system",


rule judge_scores:
    input:
        PINNED.path("hanna", "scores_llm"),
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
        unpack(lambda wildcards: workflow_meta.inputs(config, wildcards.dataset, wildcards.scoreset)),
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
        reference_system=dataset_reference_system,
        meta=lambda wildcards: workflow_meta.params(RUN, wildcards.dataset, wildcards.scoreset),
    script:
        "../scripts/meta_correlations.py"


rule meta_pairwise:
    input:
        unpack(lambda wildcards: workflow_meta.inputs(config, wildcards.dataset, wildcards.scoreset)),
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
        reference_system=dataset_reference_system,
        meta=lambda wildcards: workflow_meta.params(RUN, wildcards.dataset, wildcards.scoreset),
    script:
        "../scripts/meta_pairwise.py"


rule meta_perm_both:
    input:
        unpack(lambda wildcards: workflow_meta.inputs(config, wildcards.dataset, wildcards.scoreset)),
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
        reference_system=dataset_reference_system,
        meta=lambda wildcards: workflow_meta.params(RUN, wildcards.dataset, wildcards.scoreset),
    script:
        "../scripts/meta_perm_both.py"


rule meta_boot_both:
    input:
        unpack(lambda wildcards: workflow_meta.inputs(config, wildcards.dataset, wildcards.scoreset)),
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
        reference_system=dataset_reference_system,
        meta=lambda wildcards: workflow_meta.params(RUN, wildcards.dataset, wildcards.scoreset),
    script:
        "../scripts/meta_boot_both.py"


rule meta_best:
    input:
        unpack(lambda wildcards: workflow_meta.best_inputs(RUN, wildcards.dataset, wildcards.scoreset)),
        caption=caption_file("meta_best"),
    output:
        csv="results/{dataset}/{scoreset}/tables/meta_best.csv",
        md="results/{dataset}/{scoreset}/tables/meta_best.md",
        table_page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "meta_best_table"),
            "meta_best",
            "Tables",
            lambda wildcards: table_labels("meta_best_table", caption_facts(wildcards)),
        ),
        pdf="results/{dataset}/{scoreset}/figures/meta_best.pdf",
        png="results/{dataset}/{scoreset}/figures/meta_best.png",
        landing="results/{dataset}/{scoreset}/report/meta_best.rst",  # its answer on the landing page
        figure_page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "meta_best"),
            "meta_best",
            "Figures",
            lambda wildcards: {
                # "Answer" sorts before "Fig. 01": the report lists entries by their labels as text
                "Figure": "Answer",
                "Shows": f"best metrics{caption_facts(wildcards)['and_judges']}, BOOT-BOTH CI",
                "Level": ", ".join(workflow_meta.groupings(RUN, wildcards.dataset, wildcards.scoreset)),
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
        title=lambda wildcards: META_TITLE.format(**caption_facts(wildcards)),
        dpi=config["figures"]["dpi"],
        facts=caption_facts,
    script:
        "../scripts/meta_best.py"


rule meta_consensus:
    input:
        unpack(lambda wildcards: workflow_meta.consensus_inputs(config, wildcards.dataset, wildcards.scoreset)),
        caption=caption_file("meta_consensus"),
    output:
        consensus=f"{META_BASE}/consensus.csv",
        summary=f"{META_BASE}/consensus_summary.csv",
        csv="results/{dataset}/{scoreset}/tables/meta_consensus.csv",
        md="results/{dataset}/{scoreset}/tables/meta_consensus.md",
        table_page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "meta_consensus_table"),
            "meta_consensus",
            "Tables",
            lambda wildcards: table_labels("meta_consensus_table", caption_facts(wildcards)),
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
        title=lambda wildcards: CONSENSUS_TITLE.format(**caption_facts(wildcards)),
        facts=caption_facts,
    script:
        "../scripts/meta_consensus.py"


rule meta_williams_judges:
    input:
        unpack(lambda wildcards: workflow_meta.inputs(config, wildcards.dataset, wildcards.scoreset)),
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
        reference_system=dataset_reference_system,
        meta=lambda wildcards: workflow_meta.params(RUN, wildcards.dataset, wildcards.scoreset),
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
