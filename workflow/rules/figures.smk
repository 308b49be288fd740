# The figures and tables of HANNA (Chhun et al. 2022), numbered as in the paper (storyeval.plan: which ones a
# dataset gets, and their families). One job renders a family of them in one process, so that the imports and
# fonts are loaded once, not once a figure. Heatmaps show |round(100 r)|; Kendall, Spearman and Pearson as in the
# paper's appendix.
from functools import cache

from storyeval import plan


@cache
def figures_of(criteria):
    return plan.figures_of(criteria, config["figures"]["p_values"])


def analysed_sets():
    """(dataset, score set) of every analysis the run makes: HANNA's released scores, each scored dataset."""
    return [("hanna", "released")] + [(name, "computed") for name in TEXT_DATASETS if enabled_metrics(name)]


def enabled_figures(criteria):
    """{name: spec} of the figures of a dataset rating `criteria` whose level and coefficient config.yaml's
    analysis computes."""
    analysis = config["analysis"]
    return {
        name: spec
        for name, spec in figures_of(tuple(criteria)).items()
        if spec.get("level", analysis["levels"][0]) in analysis["levels"]
        and spec.get("coefficient", analysis["coefficients"][0]) in analysis["coefficients"]
    }


def enabled_tables():
    """The tables whose level (Tab. 8, 9) and coefficient (Tab. 5: Pearson) config.yaml's analysis computes."""
    analysis = config["analysis"]
    return [
        name
        for name in TABLES
        if plan.TABLE_LEVELS.get(name, analysis["levels"][0]) in analysis["levels"]
        and (name != "tab5_top3_pearson" or "pearson" in analysis["coefficients"])
    ]


def figure_families(criteria):
    """{family: figures} of the rules in figures.smk for a dataset rating `criteria`, one job each per
    dataset and score set."""
    families = {}
    for name, spec in enabled_figures(criteria).items():
        families.setdefault(plan.figure_family(spec), []).append(name)
    return families


TABLE_FAMILIES = {
    "system": ["tab9_top5_system"],
    "raters": ["tab3_icc"],
    "systems_raters": ["tab4_system_means"],
    "reanalyses": REANALYSES,
}  # each wanted by the same sets (wanted_table); the rest: common


def table_families():
    grouped = [name for names in TABLE_FAMILIES.values() for name in names]
    families = {
        "common": [name for name in enabled_tables() if name not in grouped],
        **{family: [name for name in enabled_tables() if name in names] for family, names in TABLE_FAMILIES.items()},
    }
    return {family: names for family, names in families.items() if names}


def table_targets(base, shape):
    wanted = [name for name in enabled_tables() if plan.wanted_table(name, shape)]
    names = startup_check(plan.whole_families, wanted, table_families(), "table")
    return [f"{base}/tables/{name}.{ext}" for name in names for ext in ("csv", "md")] + [
        report_page(base, name) for name in names
    ]


def figure_targets(base, shape, kinds=None):
    """The figures of a score set (of `kinds`, default all), each with its report page, and the set's own page
    (rule about_dataset, which the landing page reads)."""
    figures = enabled_figures(shape["criteria"])
    names = [
        name
        for name, spec in figures.items()
        if plan.wanted_figure(spec, shape) and (kinds is None or spec["kind"] in kinds)
    ]
    names = startup_check(plan.whole_families, names, figure_families(shape["criteria"]), "figure")
    return [f"{base}/figures/{name}.{ext}" for name in names for ext in ("pdf", "png")] + [
        report_page(base, name) for name in [*names, "about"]
    ]


def figure_outputs(figures):
    """PDF and PNG of each figure ({name: spec}), and its report page (the PNG at full size, the PDF named)."""
    base = "results/{dataset}/{scoreset}"
    outputs = {}
    for name, spec in figures.items():
        outputs[f"{name}_pdf"] = f"{base}/figures/{name}.pdf"
        outputs[f"{name}_png"] = f"{base}/figures/{name}.png"
        outputs[f"{name}_page"] = report_entry(
            report_page(base, name), figure_caption(spec), "Figures", figure_labels(name, spec)
        )
    return outputs


def table_outputs(names):
    base = "results/{dataset}/{scoreset}"
    outputs = {}
    for name in names:
        outputs[f"{name}_csv"] = f"{base}/tables/{name}.csv"
        outputs[f"{name}_md"] = f"{base}/tables/{name}.md"
        outputs[f"{name}_page"] = report_entry(
            report_page(base, name), TABLE_CAPTIONS[name], "Tables", table_labels(name)
        )
    return outputs


def figure_rules():
    """{name of the job's rule -> (its datasets or None, its figures {name -> spec})}. A family whose names hold criteria
    (Williams, and the subset's Williams) gets one rule per criteria set, for the datasets that rate them;
    HANNA's keeps the plain family name."""
    criteria_sets = {}
    for dataset, scoreset in analysed_sets():
        criteria_sets.setdefault(tuple(structure(dataset, scoreset)["criteria"]), []).append(dataset)
    rules = {}
    for criteria, datasets in criteria_sets.items():
        suffix = "" if list(criteria) == plan.CRITERIA else re.sub(r"\W", "_", f"_{datasets[0]}")
        figures = enabled_figures(criteria)
        for family, names in figure_families(criteria).items():
            if family == "subset" or family.startswith("williams"):
                if criteria:  # an unrated set has neither
                    rules[f"fig_{family}{suffix}"] = (sorted(set(datasets)), {name: figures[name] for name in names})
            else:
                rules.setdefault(f"fig_{family}", (None, {name: figures[name] for name in names}))
    return rules


FIGURE_INPUTS = {  # what each kind of figure reads
    "criteria": ["correlations", "registry"],
    "metric_criteria": ["correlations", "registry"],
    "metric_metric": ["correlations", "registry"],
    "williams": ["williams", "registry"],
    "bootstrap_f1": ["f1", "registry"],
    "topk": ["topk", "registry"],
    "violins": ["stories", "human"],
}
INPUT_PATHS = {
    "correlations": "results/{dataset}/{scoreset}/correlations.csv",
    "registry": "results/{dataset}/{scoreset}/metrics.csv",
    # figures.p_values bh: the p-values that williams_bh adjusts per level and criterion (Benjamini & Hochberg 1995)
    "williams": f"results/{{dataset}}/{{scoreset}}/williams{'_bh' * (config['figures']['p_values'] == 'bh')}.csv",
    "f1": "results/{dataset}/{scoreset}/bootstrap_f1.csv",
    "topk": "results/{dataset}/{scoreset}/topk.csv",
    "stories": "results/{dataset}/data/stories.csv",
    "human": "results/{dataset}/data/human_scores.csv",
}


def family_params(figures):
    """Only the settings a family's figures read, so that changing one reruns only the figures it changes."""
    params = {"dpi": config["figures"]["dpi"]}
    if any(spec["subset"] for spec in figures.values()):
        params["representative"] = config["figures"]["representative_metrics"]
    if any(spec["kind"] == "topk" for spec in figures.values()):
        params["topk_coefficient"] = config["stats"]["topk"]["coefficient"]
    return params


FIGURE_RULES = figure_rules()


# One rule per figure family, named fig_<family>: `snakemake --list-rules` lists each with the figures it draws
# (e.g. `snakemake --list-rules | grep fig27`).
for rule_name, (datasets, figures) in FIGURE_RULES.items():

    rule:
        f"draws {', '.join(figures)}"
        name:
            rule_name
        input:
            **{key: INPUT_PATHS[key] for spec in figures.values() for key in FIGURE_INPUTS[spec["kind"]]},
            **{f"caption_{name}": caption_file(name) for name in map(figure_caption, figures.values())},
        output:
            **figure_outputs(figures),
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
            **family_params(figures),
            figures=figures,
            sources=script_digest("figures.py"),
        script:
            "../scripts/figures.py"


# The tables, by the same rule: the ones every rated set has, and those of HANNA's criteria, raters and systems.
TABLES = {  # name -> (inputs, settings it reads)
    "tab6_borda": (["borda"], ["top_k"]),
    "kemeny_consensus": (["kemeny", "kemeny_summary"], ["top_k"]),
    "tab8_top5_story": (["top_metrics"], ["top_k"]),
    "tab5_top3_pearson": (["top_metrics"], ["tab5_top_k"]),
    "tab9_top5_system": (["top_metrics"], ["top_k"]),
    "tab3_icc": (["icc"], []),
    "tab4_system_means": (["system_means"], []),
    **{name: ([name], []) for name in REANALYSES},
}


TABLE_RULES = {f"tables_{family}": names for family, names in table_families().items()}


# One rule per table family, named tables_<family>; `snakemake --list-rules` lists the tables of each.
for rule_name, names in TABLE_RULES.items():

    rule:
        f"writes {', '.join(names)}"
        name:
            rule_name
        input:
            **{key: f"results/{{dataset}}/{{scoreset}}/{key}.csv" for name in names for key in TABLES[name][0]},
            **{f"caption_{TABLE_CAPTIONS[name]}": caption_file(TABLE_CAPTIONS[name]) for name in names},
        output:
            **table_outputs(names),
        log:
            f"logs/tables/{{dataset}}/{{scoreset}}/{rule_name.removeprefix('tables_')}.log",
        benchmark:
            f"benchmarks/tables/{{dataset}}/{{scoreset}}/{rule_name.removeprefix('tables_')}.tsv"
        priority: STATISTICS_FIRST
        conda:
            CORE_ENV
        params:
            **{key: config["analysis"][key] for name in names for key in TABLES[name][1]},
            tables=names,
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
    output:
        text="results/{dataset}/{scoreset}/report/about.rst",
        page=report_entry(
            report_page("results/{dataset}/{scoreset}", "about"),
            "dataset",
            "About",
            {"Shows": "stories, systems, criteria, raters and metrics"},
        ),
    log:
        "logs/about/{dataset}/{scoreset}.log",
    conda:
        CORE_ENV
    params:
        reference_system=HANNA["reference_system"],
        sources=script_digest("about.py"),
    script:
        "../scripts/about.py"
