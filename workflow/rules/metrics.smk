# One job per (dataset, metric); its `sources` parameter (the digests of its script, the metric's module and
# what they import) makes editing one rerun that metric (and what depends on it) and nothing else.


rule metric:
    input:
        unpack(metric_inputs),
    output:
        scores="results/{dataset}/computed/scores/{metric}.parquet",
        signature="results/{dataset}/computed/scores/{metric}.signature.json",
    params:
        options=metric_params,
        sources=metric_digest("metric.py"),
    wildcard_constraints:
        metric="|".join(STRING),
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        CORE_ENV
    log:
        "logs/metrics/{dataset}/{metric}.log",
    benchmark:
        "benchmarks/metrics/{dataset}/{metric}.tsv"
    script:
        "../scripts/metric.py"


rule merge_scores:
    input:
        unpack(merge_inputs),
    output:
        scores="results/{dataset}/computed/scores.parquet",
        registry="results/{dataset}/computed/metrics.csv",
    params:
        sources=script_digest("merge_scores.py"),
    conda:
        CORE_ENV
    log:
        "logs/merge/{dataset}.log",
    script:
        "../scripts/merge_scores.py"


rule validate_against_released:
    input:
        computed="results/{textset}/computed/scores.parquet",
        released="results/hanna/released/scores.parquet",
    output:
        "results/{textset}/validation.csv",
    params:
        sources=script_digest("validate.py"),
        reference_system=HANNA["reference_system"],
    conda:
        CORE_ENV
    log:
        "logs/validation/{textset}.log",
    script:
        "../scripts/validate.py"


rule computation_times:
    input:
        unpack(benchmark_inputs),
    output:
        csv="results/{dataset}/computed/tables/computation_times.csv",
        md="results/{dataset}/computed/tables/computation_times.md",
        page=report_entry("results/{dataset}/computed/report/computation_times.html", "computation_times", "Tables",
                          table_labels("computation_times"), category=lambda wildcards: f"{wildcards.dataset}, computed scores"),
    params:
        sources=script_digest("computation_times.py"),
    conda:
        CORE_ENV
    log:
        "logs/computation_times/{dataset}.log",
    script:
        "../scripts/computation_times.py"
