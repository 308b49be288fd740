# Human agreement beside every metric: Krippendorff's alpha, the leave-one-rater-out human ceiling at each level
# and coefficient, and the Alternative Annotator Test (Calderon, Reichart & Dror 2025) of every metric and judge.


rule agreement:
    input:
        unpack(lambda wildcards: workflow_meta.agreement_inputs(config, wildcards.dataset, wildcards.scoreset)),
    output:
        agreement="results/{dataset}/{scoreset}/agreement.csv",
        alt_test="results/{dataset}/{scoreset}/alt_test.csv",
    log:
        "logs/agreement/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/agreement/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("agreement.py"),
        reference_system=dataset_reference_system,
        levels=dataset_levels,
        coefficients=config["analysis"]["coefficients"],
        system_ties=config["analysis"]["system_ties"],
        system_backend=config["analysis"]["system_coefficients"],
        layout=dataset_rater_layout,
        rater_kind=lambda wildcards: rater_kind(wildcards),
        agreement=config["agreement"],
    script:
        "../scripts/agreement.py"


# The report's pages of both tables, and the paragraph on them that the landing page shows.
rule agreement_pages:
    input:
        agreement="results/{dataset}/{scoreset}/agreement.csv",
        alt_test="results/{dataset}/{scoreset}/alt_test.csv",
        agreement_caption=caption_file("agreement"),
        alt_test_caption=caption_file("alt_test"),
    output:
        agreement=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "agreement"),
            "agreement",
            "Tables",
            table_labels("agreement"),
        ),
        alt_test=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "alt_test"),
            "alt_test",
            "Tables",
            table_labels("alt_test"),
        ),
        landing="results/{dataset}/{scoreset}/report/agreement.rst",
    log:
        "logs/agreement_pages/{dataset}/{scoreset}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("agreement_pages.py"),
        alt_test=config["agreement"]["alt_test"],
        facts=caption_facts,
    script:
        "../scripts/agreement_pages.py"
