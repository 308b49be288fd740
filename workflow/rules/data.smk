# Download (pinned commit + sha256, local mirrors first) and normalisation of the datasets.


rule fetch:
    output:
        f"{RESOURCES}/{{source}}/{{file}}",
    log:
        "logs/fetch/{source}/{file}.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("fetch.py"),
        entry=pinned_entry,
        recorded=f"{RESOURCES}/recorded-checksums.tsv",
        allow_download=config["data"]["allow_download"],
    script:
        "../scripts/fetch.py"


rule normalise_hanna:
    input:
        scores=PINNED.path("hanna", "scores"),
        raters=PINNED.path("hanna", "scores_llm"),
    output:
        stories="results/hanna/data/stories.csv",
        human="results/hanna/data/human_scores.csv",
        ratings="results/hanna/data/rater_ratings.csv",
        scores="results/hanna/released/scores.parquet",
        registry="results/hanna/released/metrics.csv",
    log:
        "logs/normalise/hanna.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("normalise_hanna.py"),
        metric_directions=config["metric_directions"],
    script:
        "../scripts/normalise_hanna.py"


rule normalise_hanna_annotations:
    input:
        PINNED.path("hanna", "annotations"),
    output:
        "results/hanna/data/worker_ratings.csv",
    log:
        "logs/normalise/hanna_annotations.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("normalise_annotations.py"),
    script:
        "../scripts/normalise_annotations.py"


rule normalise_texts:
    input:
        lambda wildcards: PINNED.text_sources(wildcards.textset),
    output:
        texts="results/{textset}/data/texts.parquet",
        text_human="results/{textset}/data/text_human_scores.csv",
        text_ratings="results/{textset}/data/text_ratings.csv",
    log:
        "logs/normalise/{textset}_texts.log",
    priority: LONGEST_PATH_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("normalise_texts.py"),
        dataset=lambda wildcards: config["datasets"][wildcards.textset],
        max_prompts=lambda wildcards: config["datasets"][wildcards.textset].get("max_prompts"),
    script:
        "../scripts/normalise_texts.py"


rule text_dataset_tables:
    # Datasets other than HANNA get their stories, human scores and per-rater ratings from their texts
    # (HANNA's come from the released file, with the same story ids).
    input:
        texts="results/{textset}/data/texts.parquet",
        text_human="results/{textset}/data/text_human_scores.csv",
        text_ratings="results/{textset}/data/text_ratings.csv",
    output:
        stories="results/{textset}/data/stories.csv",
        human="results/{textset}/data/human_scores.csv",
        ratings="results/{textset}/data/rater_ratings.csv",
    log:
        "logs/normalise/{textset}_tables.log",
    wildcard_constraints:
        textset="|".join(map(re.escape, [name for name in TEXT_DATASETS if name != "hanna"])) or "none",
    conda:
        CORE_ENV
    params:
        sources=script_digest("text_dataset_tables.py"),
    script:
        "../scripts/text_dataset_tables.py"
