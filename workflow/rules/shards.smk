# Sharded neural jobs (config shards.stories; README, "Large datasets"): checkpoint shard_texts splits a dataset's
# text table into shards of that many stories; per shard, one embedding pass per encoder and one job per
# cache-based metric; gather_scores joins a metric's shards into the path one job writes, with the same bytes.
# With shards.stories null (the default) none of these rules exists and nothing changes.

SHARD = "results/{dataset}/data/shards/{shard}.parquet"
SHARD_SCORES = "results/{dataset}/computed/scores/shards/{metric}@{model}/{shard}"
SHARD_CACHE = "results/{dataset}/computed/embeddings/{encoder}/{shard}.safetensors"
CACHED = [name for name in NEURAL if catalog.entry(name).resource[0] == "cache"]


def shard_names(dataset):
    """The dataset's shards (0000, 0001, ...), known once checkpoint shard_texts has run."""
    folder = Path(checkpoints.shard_texts.get(dataset=dataset).output[0])
    return sorted(path.stem for path in folder.glob("*.parquet"))


def shard_metric_inputs(wildcards):
    """The shard's texts and cache, and for idf the whole dataset's texts and every shard's cache."""
    caches = expand(
        SHARD_CACHE, dataset=wildcards.dataset, encoder=wildcards.model, shard=shard_names(wildcards.dataset)
    )
    return {
        "texts": SHARD.format(dataset=wildcards.dataset, shard=wildcards.shard),
        "cache": SHARD_CACHE.format(dataset=wildcards.dataset, encoder=wildcards.model, shard=wildcards.shard),
        "dataset_texts": f"results/{wildcards.dataset}/data/texts.parquet",
        "shard_caches": caches,
    }


def gather_inputs(wildcards):
    shards = expand(SHARD_SCORES, shard=shard_names(wildcards.dataset), **wildcards)
    return {
        "scores": [f"{shard}.parquet" for shard in shards],
        "signatures": [f"{shard}.signature.json" for shard in shards],
        "benchmarks": [
            f"benchmarks/metrics/{wildcards.dataset}/{wildcards.metric}@{wildcards.model}/{Path(shard).name}.tsv"
            for shard in shards
        ],
    }


if config["shards"]["stories"]:

    checkpoint shard_texts:
        input:
            texts="results/{dataset}/data/texts.parquet",
        output:
            directory("results/{dataset}/data/shards"),
        log:
            "logs/shards/{dataset}.log",
        conda:
            CORE_ENV
        params:
            stories=config["shards"]["stories"],
            sources=script_digest("shard_texts.py"),
        script:
            "../scripts/shard_texts.py"

    use rule embed_texts as embed_shard with:
        input:
            texts=SHARD,
        output:
            SHARD_CACHE,
        log:
            "logs/embed/{dataset}/{encoder}/{shard}.log",
        benchmark:
            "benchmarks/embed/{dataset}/{encoder}/{shard}.tsv"
        wildcard_constraints:
            shard="[0-9]+",

    use rule neural_metric as neural_metric_shard with:
        input:
            unpack(shard_metric_inputs),
        output:
            scores=f"{SHARD_SCORES}.parquet",
            signature=f"{SHARD_SCORES}.signature.json",
        log:
            "logs/metrics/{dataset}/{metric}@{model}/{shard}.log",
        benchmark:
            "benchmarks/metrics/{dataset}/{metric}@{model}/{shard}.tsv"
        wildcard_constraints:
            metric="|".join(CACHED),
            model="[A-Za-z0-9._-]+",
            shard="[0-9]+",
        resources:
            gpu=0,  # cache-based metrics compute on the CPU (numpy, POT): their shards spread over CPU nodes
            mem_mb=4000,
            runtime=120,

    rule gather_scores:
        input:
            unpack(gather_inputs),
        output:
            scores="results/{dataset}/computed/scores/{metric}@{model}.parquet",
            signature="results/{dataset}/computed/scores/{metric}@{model}.signature.json",
            benchmark="benchmarks/metrics/{dataset}/{metric}@{model}.tsv",
        log:
            "logs/metrics/{dataset}/{metric}@{model}.log",
        wildcard_constraints:
            metric="|".join(CACHED),
            model="[A-Za-z0-9._-]+",
        conda:
            CORE_ENV
        params:
            sources=script_digest("gather_scores.py"),
        script:
            "../scripts/gather_scores.py"

    ruleorder: gather_scores > neural_metric

    localrules:
        shard_texts,
        gather_scores,
