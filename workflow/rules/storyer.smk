# The learned StoryER-style evaluator (StoryER, Chen et al. 2022): trained on StoryER's released samples with the
# encoder of its catalog role (models.sentence_encoder), scored as metric `storyer` on every dataset that lists
# it (then merged, correlated and ranked like any metric), evaluated beside every reference-free metric, explained.

from storyeval.learned.config import REASON_METHODS, TrainConfig

STORYER = config["storyer_evaluator"]
STORYER_ROLE = catalog.entry("storyer").resource[1]
STORYER_MODEL = "results/storyer-model/{encoder}"
STORYER_MODEL_FILE = f"{STORYER_MODEL}/model.safetensors"
STORYER_EVALUATION = "results/storyer-evaluation/{model}"
STORYER_REASONS = "results/{textset}/storyer/reasons-{method}@{model}.csv"
STORYER_VECTORS = "results/{dataset}/computed/embeddings/storyer@{model}.vectors.npz"


def storyer_encoder():
    """The configured model of the evaluator's encoder role (name, path), or None: the metric is disabled."""
    return config["models"][STORYER_ROLE]


def storyer_source(name):
    """(source, key) of the pinned training file `pairs` or `ratings` (config storyer_evaluator)."""
    return tuple(STORYER[name].split("/"))


def storyer_file(name):
    return pinned_path(*storyer_source(name))


def storyer_datasets():
    return [name for name in TEXT_DATASETS if "storyer" in enabled_metrics(name)]


def evaluation_datasets():
    """Datasets correlated in the evaluation: the StoryER-kind ones (one human score per story) scored by storyer."""
    return [name for name in storyer_datasets() if config["datasets"][name]["kind"] == "storyer"]


def pair_metrics():
    """The model-free metrics of the evaluation datasets, also scored on the held-out pairs."""
    return list(
        dict.fromkeys(metric for name in evaluation_datasets() for metric in enabled_metrics(name) if metric in STRING)
    )


def reasons_seq2seq():
    """The seq2seq model that generates reasons: storyer_evaluator.reasons.seq2seq, else models.seq2seq."""
    return STORYER["reasons"]["seq2seq"] or config["models"]["seq2seq"]


def storyer_targets():
    model = storyer_encoder()
    if not (model and storyer_datasets()):
        return []
    targets = [STORYER_MODEL_FILE.format(encoder=model["name"])]
    if evaluation_datasets():
        base = STORYER_EVALUATION.format(model=model["name"])
        targets += [f"{base}/evaluation.{ext}" for ext in ("csv", "md", "pdf", "png")]
    reasons = STORYER["reasons"]
    targets += [
        STORYER_REASONS.format(textset=name, method=reasons["method"], model=model["name"])
        for name in reasons["datasets"]
        if name in TEXT_DATASETS
    ]
    return targets


def check_storyer():
    """Before any job: a valid training section, data the rules can read, reasons that can be produced."""
    try:
        training = TrainConfig.from_mapping(STORYER["training"])
    except InputError as error:
        raise WorkflowError(f"{config_key('storyer_evaluator.training')}: {error}") from None
    for name in ("pairs", "ratings"):
        source, key = storyer_source(name)
        if key not in SOURCES[source]["files"]:
            raise WorkflowError(
                f"{config_key(f'storyer_evaluator.{name}')}: no pinned file {key!r} under {source}.files; "
                "fix: add it or correct the key"
            )
    if training.heldout_share == 0 and evaluation_datasets():
        raise WorkflowError(
            f"{config_key('storyer_evaluator.training.heldout_share')} is 0: no held-out pairs to evaluate "
            "on; fix: set it above 0 (default 0.2)"
        )
    if training.use_prompt:
        promptless = [name for name in storyer_datasets() if "prompt" not in described(name, "computed").texts]
        if promptless:
            raise WorkflowError(
                f"{config_key('storyer_evaluator.training.use_prompt')}: datasets {promptless} have no "
                "prompts to score; fix: remove storyer from their metrics or set use_prompt: false"
            )
    unknown = sorted(set(STORYER["reasons"]["datasets"]) - set(config["datasets"]))
    if unknown:
        raise WorkflowError(
            f"{config_key('storyer_evaluator.reasons.datasets')}: unknown datasets {unknown}; "
            f"fix: use names under datasets ({', '.join(config['datasets'])})"
        )
    if STORYER["reasons"]["method"] == "generated" and not reasons_seq2seq():
        raise WorkflowError(
            f"{config_key('storyer_evaluator.reasons.method')} is generated, but no seq2seq model is set; "
            "fix: set storyer_evaluator.reasons.seq2seq or models.seq2seq, or use method retrieved"
        )
    # Its pinned training files are checked when a target needs them (common.smk, pinned_entry).


def evaluation_inputs(wildcards):
    datasets = evaluation_datasets()
    return {
        "model": STORYER_MODEL_FILE.format(encoder=wildcards.model),
        "pairs": storyer_file("pairs"),
        "scores": [f"results/{name}/computed/scores.parquet" for name in datasets],
        "registries": [f"results/{name}/computed/metrics.csv" for name in datasets],
        "human": [f"results/{name}/data/human_scores.csv" for name in datasets],
    }


def reasons_inputs(wildcards):
    """Texts and model; the story vectors of the dataset's storyer job when it has one (no second encoding)."""
    inputs = {
        "texts": f"results/{wildcards.textset}/data/texts.parquet",
        "model": STORYER_MODEL_FILE.format(encoder=wildcards.model),
    }
    if wildcards.textset in storyer_datasets():
        inputs["vectors"] = STORYER_VECTORS.format(dataset=wildcards.textset, model=wildcards.model)
    return inputs


check_storyer()


rule train_storyer:
    input:
        pairs=storyer_file("pairs"),
        ratings=storyer_file("ratings"),
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
    threads: storyer_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=120,
    params:
        training=STORYER["training"],
        max_prompts=STORYER["max_prompts"],
        encoder=lambda wildcards: encoder_model(wildcards)["path"],
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
    threads: storyer_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=120,
    params:
        options=config["metric_params"].get("storyer", {}),
        encoder=lambda wildcards: storyer_encoder()["path"],
        device=config["device"],
        sources=script_digest("storyer_metric.py", "storyeval.metrics.storyer"),
    script:
        "../scripts/storyer_metric.py"


rule evaluate_storyer:
    input:
        unpack(evaluation_inputs),
    output:
        **{ext: f"{STORYER_EVALUATION}/evaluation.{ext}" for ext in ("csv", "md")},
    log:
        "logs/storyer/evaluate-{model}.log",
    priority: STORYER_FIRST
    conda:
        CORE_ENV
    threads: storyer_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=60,
    params:
        datasets=lambda wildcards: evaluation_datasets(),
        pair_metrics=lambda wildcards: pair_metrics(),
        metric_options=lambda wildcards: {name: config["metric_params"].get(name, {}) for name in pair_metrics()},
        stats={key: config["stats"][key] for key in ("seed", "n_resamples")},
        confidence=config["analysis"]["confidence"],
        max_prompts=STORYER["max_prompts"],
        encoder=lambda wildcards: storyer_encoder()["path"],
        device=config["device"],
        sources=script_digest("evaluate_storyer.py"),
    script:
        "../scripts/evaluate_storyer.py"


rule storyer_figure:
    input:
        table=f"{STORYER_EVALUATION}/evaluation.csv",
        history=f"{STORYER_MODEL.format(encoder='{model}')}/loss_history.csv",
        registries=lambda wildcards: [f"results/{name}/computed/metrics.csv" for name in evaluation_datasets()],
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
        unpack(reasons_inputs),
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
    threads: storyer_job_threads
    resources:
        gpu=GPU_JOBS,
        mem_mb=8000,
        runtime=60,
    params:
        method=lambda wildcards: wildcards.method,
        top_k=STORYER["reasons"]["top_k"],
        max_new_tokens=STORYER["reasons"]["max_new_tokens"],
        seq2seq=lambda wildcards: (reasons_seq2seq() or {}).get("path") if wildcards.method == "generated" else None,
        encoder=lambda wildcards: storyer_encoder()["path"],
        device=config["device"],
        sources=script_digest("storyer_reasons.py"),
    script:
        "../scripts/storyer_reasons.py"
