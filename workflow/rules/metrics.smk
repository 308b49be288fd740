# One job per (dataset, metric); its `sources` parameter (the digests of its script, the metric's module and
# what they import) makes editing one rerun that metric (and what depends on it) and nothing else. What the rules
# read: storyeval.workflow.metrics.


rule metric:
    input:
        unpack(metric_inputs),
    output:
        scores="results/{dataset}/computed/scores/{metric}.parquet",
        signature="results/{dataset}/computed/scores/{metric}.signature.json",
    log:
        "logs/metrics/{dataset}/{metric}.log",
    benchmark:
        "benchmarks/metrics/{dataset}/{metric}.tsv"
    wildcard_constraints:
        metric="|".join(workflow_metrics.STRING),
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=metric_params,
        sources=metric_digest("metric.py"),
    script:
        "../scripts/metric.py"


rule merge_scores:
    input:
        unpack(lambda wildcards: workflow_metrics.merge_inputs(RUN, wildcards.dataset)),
    output:
        scores="results/{dataset}/computed/scores.parquet",
        registry="results/{dataset}/computed/metrics.csv",
        left_out="results/{dataset}/computed/left_out_judges.csv",
        warnings="results/{dataset}/computed/metric_warnings.csv",
    log:
        "logs/merge/{dataset}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("merge_scores.py"),
        metric_directions=config["metric_directions"],
    script:
        "../scripts/merge_scores.py"


rule validate_against_released:
    input:
        computed="results/{textset}/computed/scores.parquet",
        released="results/hanna/released/scores.parquet",
    output:
        "results/{textset}/validation.csv",
    log:
        "logs/validation/{textset}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("validate.py"),
        reference_system=lambda wildcards: RUN.reference_system(wildcards.textset),
    script:
        "../scripts/validate.py"


rule computation_times:
    input:
        unpack(lambda wildcards: workflow_metrics.benchmark_inputs(RUN, wildcards.dataset)),
        caption=caption_file("computation_times"),
    output:
        csv="results/{dataset}/computed/tables/computation_times.csv",
        md="results/{dataset}/computed/tables/computation_times.md",
        page=report_entry(
            "results/{dataset}/computed/report/computation_times.html",
            "computation_times",
            "Tables",
            table_labels("computation_times"),
            category=lambda wildcards: f"{wildcards.dataset}, computed scores",
        ),
    log:
        "logs/computation_times/{dataset}.log",
    conda:
        CORE_ENV
    params:
        facts=caption_facts,
        sources=script_digest("computation_times.py"),
    script:
        "../scripts/computation_times.py"
