# The learned StoryER-style evaluator (StoryER, Chen et al. 2022): trained on StoryER's released samples with the
# encoder of its catalog role (models.sentence_encoder), scored as metric `storyer` on every dataset that lists
# it (then merged, correlated and ranked like any metric), evaluated beside every reference-free metric, explained.

from storyeval.learned.config import REASON_METHODS
from storyeval.workflow import storyer as workflow_storyer

STORYER = config["storyer_evaluator"]
STORYER_MODEL = workflow_storyer.MODEL  # what the rules read and make: storyeval.workflow.storyer
STORYER_MODEL_FILE = workflow_storyer.MODEL_FILE
STORYER_EVALUATION = workflow_storyer.EVALUATION
STORYER_REASONS = workflow_storyer.REASONS
STORYER_VECTORS = workflow_storyer.VECTORS
startup_check(workflow_storyer.check, RUN, PINNED, CONFIG_SOURCES)


rule train_storyer:
    input:
        pairs=PINNED.path(*workflow_storyer.source(config, "pairs")),
        ratings=PINNED.path(*workflow_storyer.source(config, "ratings")),
    output:
        model=STORYER_MODEL_FILE,
        signature=f"{STORYER_MODEL}/train.signature.json",
        history=f"{STORYER_MODEL}/loss_history.csv",
    log:
        "logs/storyer/train-{encoder}.log",
    benchmark:
        "benchmarks/storyer/train-{encoder}.tsv"
    priority: STORYER_FIRST
    conda:
        CORE_ENV
    threads: neural_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=120,
    params:
        training=STORYER["training"],
        max_prompts=STORYER["max_prompts"],
        encoder=lambda wildcards: startup_check(workflow_metrics.encoder_model, config, wildcards.encoder)["path"],
        device=config["device"],
        sources=script_digest("train_storyer.py"),
    script:
        "../scripts/train_storyer.py"


rule storyer_metric:
    input:
        texts="results/{dataset}/data/texts.parquet",
        model=STORYER_MODEL_FILE.format(encoder="{model}"),
    output:
        scores="results/{dataset}/computed/scores/storyer@{model}.parquet",
        signature="results/{dataset}/computed/scores/storyer@{model}.signature.json",
        vectors=STORYER_VECTORS,  # the story vectors, read again by storyer_reasons instead of re-encoding
    log:
        "logs/metrics/{dataset}/storyer@{model}.log",
    benchmark:
        "benchmarks/metrics/{dataset}/storyer@{model}.tsv"
    wildcard_constraints:
        model="[A-Za-z0-9._-]+",
    priority: STORYER_FIRST
    conda:
        CORE_ENV
    threads: neural_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=120,
    params:
        options=config["metric_params"].get("storyer", {}),
        encoder=lambda wildcards: workflow_storyer.encoder(config)["path"],
        device=config["device"],
        sources=script_digest("storyer_metric.py", "storyeval.metrics.storyer"),
    script:
        "../scripts/storyer_metric.py"


rule evaluate_storyer:
    input:
        unpack(lambda wildcards: workflow_storyer.evaluation_inputs(RUN, PINNED, wildcards.model)),
    output:
        **{ext: f"{STORYER_EVALUATION}/evaluation.{ext}" for ext in ("csv", "md")},
    log:
        "logs/storyer/evaluate-{model}.log",
    priority: STORYER_FIRST
    conda:
        CORE_ENV
    threads: neural_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=60,
    params:
        datasets=lambda wildcards: workflow_storyer.evaluation_datasets(RUN),
        pair_metrics=lambda wildcards: workflow_storyer.pair_metrics(RUN),
        metric_options=lambda wildcards: workflow_storyer.metric_options(RUN),
        stats={key: config["stats"][key] for key in ("seed", "n_resamples")},
        confidence=config["analysis"]["confidence"],
        max_prompts=STORYER["max_prompts"],
        encoder=lambda wildcards: workflow_storyer.encoder(config)["path"],
        device=config["device"],
        sources=script_digest("evaluate_storyer.py"),
    script:
        "../scripts/evaluate_storyer.py"


rule storyer_figure:
    input:
        table=f"{STORYER_EVALUATION}/evaluation.csv",
        history=f"{STORYER_MODEL.format(encoder='{model}')}/loss_history.csv",
        registries=lambda wildcards: [
            f"results/{name}/computed/metrics.csv" for name in workflow_storyer.evaluation_datasets(RUN)
        ],
        evaluation_caption=caption_file("storyer_evaluation"),
        training_caption=caption_file("storyer_training"),
    output:
        **{ext: f"{STORYER_EVALUATION}/evaluation.{ext}" for ext in ("pdf", "png")},
        # report pages (storyeval.plots.pages): the evaluation as a figure and as a table, the training loss
        page=report_entry(
            f"{STORYER_EVALUATION}/report/evaluation.html",
            "storyer_evaluation",
            "Evaluation",
            {"Shows": "figure"},
            category="storyer",
        ),
        table_page=report_entry(
            f"{STORYER_EVALUATION}/report/evaluation_table.html",
            "storyer_evaluation",
            "Evaluation",
            {"Shows": "table"},
            category="storyer",
        ),
        history_page=report_entry(
            f"{STORYER_EVALUATION}/report/loss_history.html",
            "storyer_training",
            "Training",
            {"Shows": "loss per epoch"},
            category="storyer",
        ),
    log:
        "logs/storyer/figure-{model}.log",
    conda:
        CORE_ENV
    params:
        dpi=config["figures"]["dpi"],
        sources=script_digest("storyer_figure.py"),
    script:
        "../scripts/storyer_figure.py"


rule storyer_reasons:
    input:
        unpack(lambda wildcards: workflow_storyer.reasons_inputs(RUN, wildcards.textset, wildcards.model)),
    output:
        STORYER_REASONS,
    log:
        "logs/storyer/reasons-{textset}-{method}@{model}.log",
    wildcard_constraints:
        method="|".join(REASON_METHODS),
        model="[A-Za-z0-9._-]+",
    priority: STORYER_FIRST
    conda:
        CORE_ENV
    threads: neural_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=60,
    params:
        method=lambda wildcards: wildcards.method,
        top_k=STORYER["reasons"]["top_k"],
        max_new_tokens=STORYER["reasons"]["max_new_tokens"],
        seq2seq=lambda wildcards: (
            (workflow_storyer.reasons_seq2seq(config) or {}).get("path") if wildcards.method == "generated" else None
        ),
        encoder=lambda wildcards: workflow_storyer.encoder(config)["path"],
        device=config["device"],
        sources=script_digest("storyer_reasons.py"),
    script:
        "../scripts/storyer_reasons.py"
