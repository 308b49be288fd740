# Neural metrics: one embedding pass per (dataset, encoder) shared by every token-embedding
# metric, then one job per (dataset, metric, model). GPU rules declare gpu=1 so that local
# runs queue them (profiles/default) and clusters place them (profiles/slurm).


rule embed_texts:
    input:
        texts="results/{dataset}/data/texts.parquet",
    output:
        "results/{dataset}/computed/embeddings/{encoder}.safetensors",
    params:
        sources=script_digest("embed.py"),
        model=encoder_model,
        embedding=config["embedding"],
        device=config["device"],
        sentence_metrics=sentence_metrics,
        metric_options={name: config["metric_params"].get(name, {}) for name in ["supert"]},
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=120,
    conda:
        CORE_ENV
    log:
        "logs/embed/{dataset}/{encoder}.log",
    benchmark:
        "benchmarks/embed/{dataset}/{encoder}.tsv"
    script:
        "../scripts/embed.py"


rule neural_metric:
    input:
        unpack(neural_inputs),
    output:
        scores="results/{dataset}/computed/scores/{metric}@{model}.parquet",
        signature="results/{dataset}/computed/scores/{metric}@{model}.signature.json",
    params:
        options=metric_params,
        sources=metric_digest("neural_metric.py"),
        resource=neural_resource,
        device=config["device"],
    wildcard_constraints:
        metric="|".join(NEURAL),
        model="[A-Za-z0-9._-]+",
    threads: 2
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=240,
    conda:
        CORE_ENV
    log:
        "logs/metrics/{dataset}/{metric}@{model}.log",
    benchmark:
        "benchmarks/metrics/{dataset}/{metric}@{model}.tsv"
    script:
        "../scripts/neural_metric.py"


STARTUP_NOTES.append(disabled_note())
