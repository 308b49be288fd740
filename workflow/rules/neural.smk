# Neural metrics: one embedding pass per (dataset, encoder) shared by every token-embedding
# metric, then one job per (dataset, metric, model). Jobs that run on a GPU declare gpu=1 so that local
# runs queue them (profiles/default) and clusters place them (profiles/slurm).


def neural_inputs(wildcards):
    inputs = metric_inputs(wildcards)
    kind, role = catalog.entry(wildcards.metric).resource
    if kind == "cache":
        inputs["cache"] = f"results/{wildcards.dataset}/computed/embeddings/{wildcards.model}.safetensors"
    for keyword, file in catalog.entry(wildcards.metric).pinned.items():
        source = file.split("/")[0]
        inputs[keyword] = pinned_path(source, file.split("/")[1])
        for key in {"license", "notice"} & set(SOURCES[source]["files"]):  # fetched beside the files they cover
            inputs[f"{source}_{key}"] = pinned_path(source, key)
    return inputs


def neural_resource(wildcards):
    """What a neural metric's compute() reads besides the texts: its keyword, the model's path and revision."""
    kind, role = catalog.entry(wildcards.metric).resource
    model = neural_model(wildcards.metric)
    return {"keyword": kind, "path": model["path"], "revision": model.get("revision")}


def cache_metrics(wildcards):
    """{metric: options} of the dataset's cache-based metrics that read this encoder (the layers to cache)."""
    return {
        metric: config["metric_params"].get(metric, {})
        for metric in enabled_metrics(wildcards.dataset)
        if metric in NEURAL
        and catalog.entry(metric).resource[0] == "cache"
        and neural_model(metric)["name"] == wildcards.encoder
    }


def sentence_metrics(wildcards):
    """Cache-based metrics of the dataset that encode sentences on their own (SUPERT) with this encoder."""
    return [
        metric
        for metric in enabled_metrics(wildcards.dataset)
        if metric == "supert" and neural_model(metric)["name"] == wildcards.encoder
    ]


def disabled_note():
    """One start-up line naming the metrics whose model role is not configured, or None."""
    roles = {}
    for metric in MODELLED:
        if not neural_model(metric) and any(metric in config["datasets"][name]["metrics"] for name in TEXT_DATASETS):
            roles.setdefault(catalog.entry(metric).resource[1], []).append(metric)
    if roles:
        listed = "; ".join(f"{', '.join(metrics)} (models.{role})" for role, metrics in roles.items())
        return f"disabled, no offline model for their role (config/paper.yaml sets them): {listed}"


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
    threads: 2
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=120,
    params:
        sources=script_digest("embed.py"),
        model=encoder_model,
        embedding=config["embedding"],
        device=config["device"],
        sentence_metrics=sentence_metrics,
        metrics=cache_metrics,
        metric_options={name: config["metric_params"].get(name, {}) for name in ["supert"]},
    script:
        "../scripts/embed.py"


rule neural_metric:
    input:
        unpack(neural_inputs),
    output:
        scores="results/{dataset}/computed/scores/{metric}@{model}.parquet",
        signature="results/{dataset}/computed/scores/{metric}@{model}.signature.json",
    log:
        "logs/metrics/{dataset}/{metric}@{model}.log",
    benchmark:
        "benchmarks/metrics/{dataset}/{metric}@{model}.tsv"
    wildcard_constraints:
        metric="|".join(NEURAL),
        model="[A-Za-z0-9._-]+",
    priority: LONGEST_PATH_FIRST
    conda:
        CORE_ENV
    threads: 2
    resources:
        gpu=lambda wildcards: 0 if catalog.entry(wildcards.metric).resource[0] == "cache" else GPU_JOBS,
        mem_mb=16000,
        runtime=240,
    params:
        options=metric_params,
        sources=metric_digest("neural_metric.py"),
        resource=neural_resource,
        device=config["device"],
    script:
        "../scripts/neural_metric.py"


STARTUP_NOTES.append(disabled_note())
