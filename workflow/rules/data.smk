# Download (pinned commit + sha256, local mirrors first) and normalisation of the datasets.


rule fetch:
    output:
        f"{RESOURCES}/{{source}}/{{file}}",
    log:
        "logs/fetch/{source}/{file}.log",
    priority: DATA_FIRST
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
        sources=kind_digest("normalise_texts.py"),
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


rule normalise_released:
    # The scores a built-in dataset's authors released beside its texts (UNION's metric outputs, PDS's and TTCW's
    # LLM judges): a score set of the dataset's own stories, analysed as HANNA's released scores are.
    input:
        texts="results/{dataset}/data/texts.parquet",
        files=lambda wildcards: PINNED.released_sources(wildcards.dataset),
    output:
        scores="results/{dataset}/released/scores.parquet",
        registry="results/{dataset}/released/metrics.csv",
    log:
        "logs/normalise/{dataset}_released.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, RUN.released_sets)) or "none",
    conda:
        CORE_ENV
    params:
        sources=kind_digest("normalise_released.py"),
        dataset=lambda wildcards: config["datasets"][wildcards.dataset],
        metric_directions=config["metric_directions"],
    script:
        "../scripts/normalise_released.py"


rule paper_recipes:
    # A built-in dataset's printed numbers recomputed by its paper's own recipe where storyeval's analysis
    # computes them otherwise (the audit compares both).
    input:
        lambda wildcards: PINNED.released_sources(wildcards.dataset, "recipe_inputs"),
    output:
        "results/{dataset}/paper_recipes.csv",
    log:
        "logs/paper_recipes/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, RUN.recipe_sets)) or "none",
    conda:
        CORE_ENV
    params:
        sources=kind_digest("paper_recipes.py"),
        dataset=lambda wildcards: config["datasets"][wildcards.dataset],
    script:
        "../scripts/paper_recipes.py"
