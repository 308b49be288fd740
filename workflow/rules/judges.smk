# LLM judges computed from the texts (storyeval.judges): one job per (dataset, judge, template), rating every story
# on each criterion; its columns merge into the dataset's computed score set (rule merge_scores) as family
# llm-judge, so every statistic and the meta-evaluation take them. Datasets opt in under judges.datasets.
from storyeval.judges import config as judge_config
from storyeval.workflow import judges as workflow_judges

JUDGES = config["judges"]
startup_check(judge_config.check_judges, config)
# Pinned input files are checked when a target needs them (common.smk, pinned_entry).
JUDGE_OUT = workflow_judges.OUT  # what the rules read and make: storyeval.workflow.judges
JUDGE_SHARD = workflow_judges.SHARD


wildcard_constraints:
    judge="|".join(map(re.escape, JUDGES["models"])) or "none",
    template="|".join(map(re.escape, workflow_judges.templates(RUN))) or "none",


rule llm_judge:
    input:
        texts="results/{dataset}/data/texts.parquet",
        batch=lambda wildcards: workflow_judges.batch_file(config, wildcards) or [],
    output:
        scores=f"{JUDGE_OUT}.parquet",
        registry=f"{JUDGE_OUT}.registry.csv",
        details=f"{JUDGE_OUT}.details.parquet",
        signature=f"{JUDGE_OUT}.signature.json",
    log:
        "logs/judges/{dataset}/{judge}@{template}.log",
    benchmark:
        "benchmarks/judges/{dataset}/{judge}@{template}.tsv"
    conda:
        CORE_ENV
    threads: 2
    resources:
        gpu=GPU_JOBS,
        mem_mb=32000,
        runtime=720,
    params:
        sources=script_digest("llm_judge.py"),
        model=lambda wildcards: JUDGES["models"][wildcards.judge],
        template=lambda wildcards: judge_config.template_spec(config, wildcards.template),
        template_text=lambda wildcards: workflow_judges.template_text(config, wildcards.template),
        criteria=lambda wildcards: judge_config.criteria(config, wildcards.dataset),
        settings=lambda wildcards: judge_config.settings(config, wildcards.judge),
        batch_results=lambda wildcards: workflow_judges.batch_file(config, wildcards),
        cache=JUDGES["cache"],
        device=config["device"],
    script:
        "../scripts/llm_judge.py"


# A judge job's prompts as an OpenAI batch (storyeval.judges.batch; docs/judges.md, Batches run elsewhere): run it
# anywhere, name its results as the judge's batch_results, and rule llm_judge reads them instead of a server.
rule judge_batch:
    input:
        texts="results/{dataset}/data/texts.parquet",
    output:
        f"{JUDGE_OUT}.batch.jsonl",
    log:
        "logs/judges/{dataset}/{judge}@{template}.batch.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("judge_batch.py"),
        model=lambda wildcards: JUDGES["models"][wildcards.judge],
        template=lambda wildcards: judge_config.template_spec(config, wildcards.template),
        criteria=lambda wildcards: judge_config.criteria(config, wildcards.dataset),
        settings=lambda wildcards: judge_config.settings(config, wildcards.judge),
    script:
        "../scripts/judge_batch.py"


localrules:
    judge_batch,


rule judge_validation:
    input:
        scores=lambda wildcards: workflow_judges.outputs(RUN, wildcards.textset, "scores"),
        registries=lambda wildcards: workflow_judges.outputs(RUN, wildcards.textset, "registry"),
        released="results/hanna/judges/scores.parquet",
        released_registry="results/hanna/judges/metrics.csv",
    output:
        "results/{textset}/judge_validation.csv",
    log:
        "logs/judge_validation/{textset}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("judge_validation.py"),
        released=workflow_judges.released_names(config),
    script:
        "../scripts/judge_validation.py"


# The judges in mode expected against the raters: the mean 1-Wasserstein distance between a judge's distribution
# over the ratings and each story's histogram of ratings, beside the raters' leave-one-out value
# (storyeval.stats.distribution; docs/judges.md).
rule judge_distribution:
    input:
        ratings="results/{textset}/data/rater_ratings.csv",
        details=lambda wildcards: workflow_judges.outputs(
            RUN, wildcards.textset, "details", workflow_judges.distribution_jobs(RUN, wildcards.textset)
        ),
        caption=caption_file("judge_distribution"),
    output:
        csv=workflow_judges.DISTRIBUTION.replace("{dataset}", "{textset}"),
        page=report_entry(
            workflow_judges.DISTRIBUTION_PAGE.replace("{dataset}", "{textset}"),
            "judge_distribution",
            "Tables",
            table_labels("judge_distribution"),
            category=lambda wildcards: f"{wildcards.textset}, computed scores",
        ),
    log:
        "logs/judge_distribution/{textset}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("judge_distribution.py"),
        jobs=lambda wildcards: workflow_judges.distribution_jobs(RUN, wildcards.textset),
    script:
        "../scripts/judge_distribution.py"


localrules:
    judge_distribution,


# The pairwise judges' verdicts (storyeval.judges.pairwise): position consistency, the first position's share of
# the verdicts, ties under the tie rule, and pairwise accuracy with ties against the humans' pairs.
rule judge_pairwise:
    input:
        human="results/{textset}/data/human_scores.csv",
        details=lambda wildcards: workflow_judges.outputs(
            RUN, wildcards.textset, "details", workflow_judges.mode_jobs(RUN, wildcards.textset, "pairwise")
        ),
        caption=caption_file("judge_pairwise"),
    output:
        csv=workflow_judges.PAIRWISE.replace("{dataset}", "{textset}"),
        page=report_entry(
            workflow_judges.PAIRWISE_PAGE.replace("{dataset}", "{textset}"),
            "judge_pairwise",
            "Tables",
            table_labels("judge_pairwise"),
            category=lambda wildcards: f"{wildcards.textset}, computed scores",
        ),
    log:
        "logs/judge_pairwise/{textset}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("judge_pairwise.py"),
        jobs=lambda wildcards: workflow_judges.mode_jobs(RUN, wildcards.textset, "pairwise"),
        ties=JUDGES["ties"],
    script:
        "../scripts/judge_pairwise.py"


localrules:
    judge_pairwise,


if config["shards"]["stories"]:

    use rule llm_judge as llm_judge_shard with:
        input:
            texts=SHARD,
            batch=lambda wildcards: workflow_judges.batch_file(config, wildcards) or [],
        output:
            scores=f"{JUDGE_SHARD}.parquet",
            registry=f"{JUDGE_SHARD}.registry.csv",
            details=f"{JUDGE_SHARD}.details.parquet",
            signature=f"{JUDGE_SHARD}.signature.json",
        log:
            "logs/judges/{dataset}/{judge}@{template}/{shard}.log",
        benchmark:
            "benchmarks/judges/{dataset}/{judge}@{template}/{shard}.tsv"
        wildcard_constraints:
            shard="[0-9]+",

    rule gather_judge:
        input:
            unpack(
                lambda wildcards: workflow_judges.gather_inputs(
                    wildcards.dataset, wildcards.judge, wildcards.template, shard_names(wildcards.dataset)
                )
            ),
        output:
            scores=f"{JUDGE_OUT}.parquet",
            registry=f"{JUDGE_OUT}.registry.csv",
            details=f"{JUDGE_OUT}.details.parquet",
            signature=f"{JUDGE_OUT}.signature.json",
            benchmark="benchmarks/judges/{dataset}/{judge}@{template}.tsv",
        log:
            "logs/judges/{dataset}/{judge}@{template}.log",
        conda:
            CORE_ENV
        params:
            sources=script_digest("gather_judge.py"),
        script:
            "../scripts/gather_judge.py"

    ruleorder: gather_judge > llm_judge

    localrules:
        gather_judge,


STARTUP_NOTES.extend(
    workflow_judges.JobCost(config, dataset, judge, template, VERIFIED)
    for dataset in TEXT_DATASETS
    for judge, template in RUN.judge_jobs(dataset)
)
