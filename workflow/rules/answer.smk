# The design's answer of a rated score set: the statistic its design calls for, with baselines, the human ceiling
# like for like and certainty (storyeval.stats.answer); its paragraph leads the report's landing page.


rule design_answer:
    input:
        unpack(scoreset_inputs),
        ratings="results/{dataset}/data/rater_ratings.csv",
        caption=caption_file("design_answer"),
    output:
        rows="results/{dataset}/{scoreset}/answer.csv",
        summary="results/{dataset}/{scoreset}/answer_summary.csv",
        md="results/{dataset}/{scoreset}/tables/answer.md",
        landing="results/{dataset}/{scoreset}/report/answer.rst",  # leads the landing page (workflow.rst)
        page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "answer"),
            "design_answer",
            "Answer",
            {"Shows": "the design's answer: statistic, baselines, ceiling, certainty"},
        ),
    log:
        "logs/design_answer/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/design_answer/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("design_answer.py"),
        reference_system=dataset_reference_system,
        layout=lambda wildcards: declared_design(wildcards)[0],
        groups=lambda wildcards: declared_design(wildcards)[1],
        seed=config["stats"]["seed"],
        resamples=config["stats"]["n_resamples"],
        splits=config["stats"]["ceiling_splits"],
        confidence=config["analysis"]["confidence"],
    script:
        "../scripts/design_answer.py"
