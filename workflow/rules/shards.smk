# Sharded neural jobs (config shards.stories; README, "Large datasets"): checkpoint shard_texts splits a dataset's
# text table into shards of that many stories; per shard, one embedding pass per encoder and one job per
# cache-based metric; gather_scores joins a metric's shards into the path one job writes, with the same bytes.
# With shards.stories null (the default) none of these rules exists and nothing changes.

SHARD = workflow_shards.SHARD  # what the rules read and make: storyeval.workflow.shards
SHARD_SCORES = workflow_shards.SCORES
SHARD_CACHE = workflow_shards.CACHE


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
            unpack(
                lambda wildcards: workflow_shards.metric_inputs(
                    wildcards.dataset, wildcards.model, wildcards.shard, shard_names(wildcards.dataset)
                )
            ),
        output:
            scores=f"{SHARD_SCORES}.parquet",
            signature=f"{SHARD_SCORES}.signature.json",
        log:
            "logs/metrics/{dataset}/{metric}@{model}/{shard}.log",
        benchmark:
            "benchmarks/metrics/{dataset}/{metric}@{model}/{shard}.tsv"
        wildcard_constraints:
            metric="|".join(workflow_metrics.CACHED),
            model="[A-Za-z0-9._-]+",
            shard="[0-9]+",
        resources:
            gpu=0,  # cache-based metrics compute on the CPU (numpy, POT): their shards spread over CPU nodes
            mem_mb=4000,
            runtime=120,

    rule gather_scores:
        input:
            unpack(
                lambda wildcards: workflow_shards.gather_inputs(
                    wildcards.dataset, wildcards.metric, wildcards.model, shard_names(wildcards.dataset)
                )
            ),
        output:
            scores="results/{dataset}/computed/scores/{metric}@{model}.parquet",
            signature="results/{dataset}/computed/scores/{metric}@{model}.signature.json",
            benchmark="benchmarks/metrics/{dataset}/{metric}@{model}.tsv",
        log:
            "logs/metrics/{dataset}/{metric}@{model}.log",
        wildcard_constraints:
            metric="|".join(workflow_metrics.CACHED),
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
