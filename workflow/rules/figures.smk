# The figures and tables of HANNA (Chhun et al. 2022), numbered as in the paper (storyeval.plan: which ones a
# dataset gets, and their families). One job renders a family of them in one process, so that the imports and
# fonts are loaded once, not once a figure. Heatmaps show round(100 r), oriented for the metrics (HANNA's
# |round(100 r)| with analysis.orientation absolute); Kendall, Spearman and Pearson as in the paper's appendix.

FIGURE_RULES = workflow_targets.figure_rules(RUN)  # {rule: (datasets or None, figures)}


# One rule per figure family, named fig_<family>: `snakemake --list-rules` lists each with the figures it draws
# (e.g. `snakemake --list-rules | grep fig27`).
for rule_name, (datasets, figures) in FIGURE_RULES.items():

    rule:
        f"draws {', '.join(figures)}"
        name:
            rule_name
        input:
            **plan.figure_inputs(config, figures),
            **{f"caption_{name}": caption_file(name) for name in map(figure_caption, figures.values())},
        output:
            **report_entries(plan.figure_outputs(figures)),
        log:
            f"logs/figures/{{dataset}}/{{scoreset}}/{rule_name.removeprefix('fig_')}.log",
        benchmark:
            f"benchmarks/figures/{{dataset}}/{{scoreset}}/{rule_name.removeprefix('fig_')}.tsv"
        wildcard_constraints:
            dataset="|".join(map(re.escape, datasets or DATASETS)),
        priority: plan.family_cost(figures)
        conda:
            CORE_ENV
        params:
            **plan.family_params(config, figures),
            figures=Specs(figures),
            facts=caption_facts,
            sources=script_digest("figures.py"),
        script:
            "../scripts/figures.py"


# The tables, by the same rule: the ones every rated set has, and those of HANNA's criteria, raters and systems.
TABLE_RULES = {f"tables_{family}": names for family, names in plan.table_families(config).items()}


# One rule per table family, named tables_<family>; `snakemake --list-rules` lists the tables of each.
for rule_name, names in TABLE_RULES.items():

    rule:
        f"writes {', '.join(names)}"
        name:
            rule_name
        input:
            **{key: f"results/{{dataset}}/{{scoreset}}/{key}.csv" for name in names for key in plan.TABLES[name][0]},
            **{f"caption_{TABLE_CAPTIONS[name]}": caption_file(TABLE_CAPTIONS[name]) for name in names},
        output:
            **report_entries(plan.table_outputs(names)),
        log:
            f"logs/tables/{{dataset}}/{{scoreset}}/{rule_name.removeprefix('tables_')}.log",
        benchmark:
            f"benchmarks/tables/{{dataset}}/{{scoreset}}/{rule_name.removeprefix('tables_')}.tsv"
        priority: STATISTICS_FIRST
        conda:
            CORE_ENV
        params:
            **{key: config["analysis"][key] for name in names for key in plan.TABLES[name][1]},
            tables=names,
            reference_system=dataset_reference_system,  # Tab. 4 marks the generated systems
            facts=caption_facts,
            sources=script_digest("tables.py"),
        script:
            "../scripts/tables.py"


# What a score set holds, from its data: a page of the report and the paragraph the landing page shows for it.
rule about_dataset:
    """writes a score set's About page and its paragraph of the report's landing page"""
    input:
        stories="results/{dataset}/data/stories.csv",
        human="results/{dataset}/data/human_scores.csv",
        ratings="results/{dataset}/data/rater_ratings.csv",
        registry="results/{dataset}/{scoreset}/metrics.csv",
        left_out=lambda wildcards: workflow_judges.left_out_file(wildcards.dataset, wildcards.scoreset),
        pairwise=lambda wildcards: workflow_judges.pairwise_file(RUN, wildcards.dataset, wildcards.scoreset),
        warnings=lambda wildcards: workflow_metrics.warnings_file(wildcards.dataset, wildcards.scoreset),
    output:
        text="results/{dataset}/{scoreset}/report/about.rst",
        page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "about"),
            "dataset",
            "About",
            {"Shows": "stories, systems, criteria, raters and metrics"},
        ),
    log:
        "logs/about/{dataset}/{scoreset}.log",
    conda:
        CORE_ENV
    params:
        reference_system=dataset_reference_system,
        facts=caption_facts,
        layout=lambda wildcards: declared_design(wildcards)[0],
        groups=lambda wildcards: declared_design(wildcards)[1],
        gaps=lambda wildcards: getattr(FITTED.get(wildcards.dataset), "rating_gaps", None),
        sources=script_digest("about.py"),
    script:
        "../scripts/about.py"
