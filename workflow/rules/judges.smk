# LLM judges computed from the texts (storyeval.judges): one job per (dataset, judge, template), rating every story
# on each criterion; its columns merge into the dataset's computed score set (rule merge_scores) as family
# llm-judge, so every statistic and the meta-evaluation take them. Datasets opt in under judges.datasets.
from storyeval.judges import config as judge_config
from storyeval.judges.prompts import load_template

JUDGES = config["judges"]
startup_check(judge_config.check_judges, config)
# Pinned input files are checked when a target needs them (common.smk, pinned_entry).
JUDGE_OUT = "results/{dataset}/computed/judges/{judge}@{template}"
JUDGE_SHARD = "results/{dataset}/computed/judges/shards/{judge}@{template}/{shard}"
JUDGE_FILES = {"scores": ".parquet", "registry": ".registry.csv", "details": ".details.parquet"}


def judge_jobs(dataset):
    """(judge, template) of the dataset's judge jobs; none for a dataset that is not run."""
    return judge_config.jobs(config, dataset) if dataset in TEXT_DATASETS else []


def judge_outputs(dataset, kind):
    """The `kind` file (scores, registry, details, signature) of each of the dataset's judge jobs."""
    suffix = JUDGE_FILES.get(kind, ".signature.json")
    return [
        JUDGE_OUT.format(dataset=dataset, judge=judge, template=template) + suffix
        for judge, template in judge_jobs(dataset)
    ]


def judge_template_text(wildcards):
    """The template's text: editing the file reruns its jobs."""
    template = load_template(judge_config.template_spec(config, wildcards.template))
    return f"{template.user}\n{template.answer}"


class JudgePlan:
    """Start-up line of a judge job's cost: forward passes and prompt tokens, counted with the judge's tokenizer
    on the dataset's texts (results/<dataset>/data/texts.parquet) when a run starts (said by onstart)."""

    def __init__(self, dataset, judge, template):
        self.dataset, self.judge, self.template = dataset, judge, template

    def __str__(self):
        from storyeval.judges.plan import describe_plan

        entry = config["datasets"][self.dataset]
        pinned = entry.get("file")
        key = tuple(pinned.split("/")) if pinned else None
        source = VERIFIED.get(key) if key else entry.get("path")
        return describe_plan(config, self.dataset, self.judge, self.template, source)


def judge_validation_wanted(dataset):
    """A validation table beside HANNA's released judges: a HANNA dataset, a judge configured as a released one
    and a template that follows an Eval-Prompt of the TACL paper."""
    return config["datasets"][dataset]["kind"] in judge_config.HANNA_KINDS and any(
        JUDGES["models"][judge].get("released")
        and load_template(judge_config.template_spec(config, template)).task is not None
        for judge, template in judge_jobs(dataset)
    )


def judge_targets(dataset):
    return [f"results/{dataset}/judge_validation.csv"] if judge_validation_wanted(dataset) else []


wildcard_constraints:
    judge="|".join(map(re.escape, JUDGES["models"])) or "none",
    template="|".join(
        map(
            re.escape,
            {template for dataset in TEXT_DATASETS for _, template in judge_jobs(dataset)},
        )
    )
    or "none",


rule llm_judge:
    input:
        texts="results/{dataset}/data/texts.parquet",
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
        template_text=judge_template_text,
        criteria=lambda wildcards: judge_config.criteria(config, wildcards.dataset),
        settings=lambda wildcards: judge_config.settings(config, wildcards.judge),
        device=config["device"],
    script:
        "../scripts/llm_judge.py"


rule judge_validation:
    input:
        scores=lambda wildcards: judge_outputs(wildcards.textset, "scores"),
        registries=lambda wildcards: judge_outputs(wildcards.textset, "registry"),
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
        released={name: model.get("released") for name, model in JUDGES["models"].items() if model.get("released")},
    script:
        "../scripts/judge_validation.py"


if config["shards"]["stories"]:

    def judge_gather_inputs(wildcards):
        shards = expand(JUDGE_SHARD, shard=shard_names(wildcards.dataset), **wildcards)
        benchmarks = f"benchmarks/judges/{wildcards.dataset}/{wildcards.judge}@{wildcards.template}"
        return {
            "scores": [f"{shard}.parquet" for shard in shards],
            "details": [f"{shard}.details.parquet" for shard in shards],
            "registries": [f"{shard}.registry.csv" for shard in shards],
            "signatures": [f"{shard}.signature.json" for shard in shards],
            "benchmarks": [f"{benchmarks}/{Path(shard).name}.tsv" for shard in shards],
        }

    use rule llm_judge as llm_judge_shard with:
        input:
            texts=SHARD,
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
            unpack(judge_gather_inputs),
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
    JudgePlan(dataset, judge, template) for dataset in TEXT_DATASETS for judge, template in judge_jobs(dataset)
)
