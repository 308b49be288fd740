# Neural metrics: one embedding pass per (dataset, encoder) shared by every token-embedding metric, then one job
# per (dataset, metric, model); what they read and are given: storyeval.workflow.metrics. Jobs that run on a GPU
# declare gpu=1 so that local runs queue them (profiles/default) and clusters place them (profiles/slurm).


rule embed_texts:
    input:
        texts="results/{dataset}/data/texts.parquet",
    output:
        "results/{dataset}/computed/embeddings/{encoder}.safetensors",
    log:
        "logs/embed/{dataset}/{encoder}.log",
    benchmark:
        "benchmarks/embed/{dataset}/{encoder}.tsv"
    priority: LONGEST_PATH_FIRST
    conda:
        CORE_ENV
    threads: neural_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=120,
    params:
        sources=script_digest("embed.py"),
        model=lambda wildcards: startup_check(workflow_metrics.encoder_model, config, wildcards.encoder),
        embedding=config["embedding"],
        device=config["device"],
        sentence_metrics=lambda wildcards: workflow_metrics.sentence_metrics(
            config, wildcards.dataset, wildcards.encoder
        ),
        metrics=lambda wildcards: workflow_metrics.cache_metrics(config, wildcards.dataset, wildcards.encoder),
        metric_options={name: config["metric_params"].get(name, {}) for name in ["supert"]},
    script:
        "../scripts/embed.py"


rule neural_metric:
    input:
        unpack(
            lambda wildcards: workflow_metrics.neural_inputs(
                PINNED, wildcards.dataset, wildcards.metric, wildcards.model
            )
        ),
    output:
        scores="results/{dataset}/computed/scores/{metric}@{model}.parquet",
        signature="results/{dataset}/computed/scores/{metric}@{model}.signature.json",
    log:
        "logs/metrics/{dataset}/{metric}@{model}.log",
    benchmark:
        "benchmarks/metrics/{dataset}/{metric}@{model}.tsv"
    wildcard_constraints:
        metric="|".join(workflow_metrics.NEURAL),
        model="[A-Za-z0-9._-]+",
    priority: lambda wildcards: workflow_metrics.neural_priority(wildcards.metric, LONGEST_PATH_FIRST)
    conda:
        CORE_ENV
    threads: neural_job_threads
    resources:
        gpu=lambda wildcards: 0 if wildcards.metric in workflow_metrics.CACHED else GPU_JOBS,
        mem_mb=16000,
        runtime=240,
    params:
        options=metric_params,
        sources=metric_digest("neural_metric.py"),
        resource=lambda wildcards: workflow_metrics.neural_resource(config, wildcards.metric),
        device=config["device"],
    script:
        "../scripts/neural_metric.py"
