# Download (pinned commit + sha256, local mirrors first) and normalisation of HANNA.


localrules:
    fetch_hanna,


rule fetch_hanna:
    output:
        f"{RESOURCES}/hanna/{{file}}",
    params:
        entry=hanna_entry,
        recorded=f"{RESOURCES}/recorded-checksums.tsv",
        allow_download=config["data"]["allow_download"],
    conda:
        CORE_ENV
    log:
        "logs/fetch/hanna/{file}.log",
    script:
        "../scripts/fetch.py"


rule normalise_hanna:
    input:
        scores=hanna_path("scores"),
        raters=hanna_path("scores_llm"),
    output:
        stories="results/hanna/data/stories.csv",
        human="results/hanna/data/human_scores.csv",
        ratings="results/hanna/data/rater_ratings.csv",
        scores="results/hanna/released/scores.parquet",
        registry="results/hanna/released/metrics.csv",
    conda:
        CORE_ENV
    log:
        "logs/normalise/hanna.log",
    script:
        "../scripts/normalise_hanna.py"


rule normalise_hanna_annotations:
    input:
        hanna_path("annotations"),
    output:
        "results/hanna/data/worker_ratings.csv",
    conda:
        CORE_ENV
    log:
        "logs/normalise/hanna_annotations.log",
    script:
        "../scripts/normalise_annotations.py"
