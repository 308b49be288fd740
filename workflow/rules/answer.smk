# The design's answer of a rated score set: the statistic its design calls for, with baselines, the human ceiling
# like for like and certainty (storyeval.stats.answer); its paragraph leads the report's landing page.


rule design_answer:
    input:
        unpack(
            lambda wildcards: workflow_benchmark.parts_inputs(
                wildcards.dataset,
                workflow_benchmark.scoreset_parts(RUN, wildcards.dataset, wildcards.scoreset),
            )
        ),
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
        scoresets=lambda wildcards: [
            part[0] for part in workflow_benchmark.scoreset_parts(RUN, wildcards.dataset, wildcards.scoreset)
        ],
        reference_system=dataset_reference_system,
        layout=lambda wildcards: declared_design(wildcards)[0],
        groups=lambda wildcards: declared_design(wildcards)[1],
        seed=config["stats"]["seed"],
        resamples=config["stats"]["n_resamples"],
        splits=config["stats"]["ceiling_splits"],
        confidence=config["analysis"]["confidence"],
    script:
        "../scripts/design_answer.py"


rule dataset_answer:
    """the design's answer over all the dataset's rated score sets on the stories they share: its benchmark cells"""
    input:
        unpack(
            lambda wildcards: workflow_benchmark.parts_inputs(
                wildcards.dataset, workflow_benchmark.dataset_parts(RUN, wildcards.dataset)
            )
        ),
    output:
        rows="results/{dataset}/answer.csv",
        summary="results/{dataset}/answer_summary.csv",
    log:
        "logs/dataset_answer/{dataset}.log",
    benchmark:
        "benchmarks/dataset_answer/{dataset}.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("design_answer.py"),
        scoresets=lambda wildcards: [part[0] for part in workflow_benchmark.dataset_parts(RUN, wildcards.dataset)],
        reference_system=lambda wildcards: RUN.reference_system(
            wildcards.dataset, workflow_benchmark.dataset_parts(RUN, wildcards.dataset)[0][0]
        ),
        layout=lambda wildcards: dataset_design(wildcards)[0],
        groups=lambda wildcards: dataset_design(wildcards)[1],
        seed=config["stats"]["seed"],
        resamples=config["stats"]["n_resamples"],
        splits=config["stats"]["ceiling_splits"],
        confidence=config["analysis"]["confidence"],
    script:
        "../scripts/design_answer.py"
