# The LLM judges the built-in datasets' authors released (HANNA's TACL 2024 judges, PDS's GPT personas, TTCW's seven
# LLMs), measured as the judges storyeval runs: missing ratings and why, the distance of their distribution to the
# raters' histograms where the data hold one, and whether position can be measured (storyeval.judges.released).


rule released_judges:
    input:
        files=lambda wildcards: workflow_judges.released_files(PINNED, config, wildcards.dataset),
        caption=caption_file("released_judges"),
    output:
        csv=workflow_judges.RELEASED,
        page=report_entry(
            workflow_judges.RELEASED_PAGE,
            "released_judges",
            "Tables",
            table_labels("released_judges"),
            category=lambda wildcards: f"{wildcards.dataset}, released scores",
        ),
    log:
        "logs/released_judges/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, workflow_judges.released_sets(RUN))),
    conda:
        CORE_ENV
    params:
        sources=script_digest("released_judges.py"),
        kind=lambda wildcards: workflow_judges.released_kind(config, wildcards.dataset),
    script:
        "../scripts/released_judges.py"


localrules:
    released_judges,
