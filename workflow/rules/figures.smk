# The figures and tables of HANNA (Chhun et al. 2022), numbered as in the paper. One job renders a family of them
# in one process, so that the imports and fonts are loaded once, not once a figure: a family holds figures that a
# dataset has all of or none of (wanted_figure). Heatmaps show |round(100 r)|; Kendall, Spearman and
# Pearson as in the paper's appendix.

from functools import cache

from storyeval.criteria import CRITERIA
from storyeval.data.registry import slugify


def _heatmaps(kind, numbers, coefficients=("kendall", "spearman", "pearson"), subset=False):
    """{name: spec} of one heatmap kind; `numbers` are the figures in the paper of its (coefficient, level) pairs in
    order: the first coefficient at story and at system level, then the next."""
    pairs = [(coefficient, level) for coefficient in coefficients for level in ("story", "system")]
    return {
        f"{number}_{kind}_{level}_{coefficient}{'_subset' * subset}": {
            "kind": kind,
            "level": level,
            "coefficient": coefficient,
            "subset": subset,
        }
        for number, (coefficient, level) in zip(numbers, pairs, strict=True)
    }


# The paper's Williams figures, by level, in the order of HANNA's CRITERIA; a set rating other criteria gets them
# unnumbered. Their representative-subset twins (*_subset) are drawn by rule fig_subset.
WILLIAMS_NUMBERS = {
    "story": ["fig27", "fig28", "fig29", "fig30", "fig31", "fig32"],  # rule fig_williams_story
    "system": ["fig33", "fig34", "fig35", "fig36", "fig37", "fig38"],  # rule fig_williams_system
}


def williams_figures(criteria):
    """Williams p-value figures, per level and criterion, each also for the representative subset."""
    numbered = list(criteria) == CRITERIA
    return {
        f"{f'{numbers[index]}_' if numbered else ''}williams_{level}_{slugify(criterion)}{'_subset' * subset}": {
            "kind": "williams",
            "level": level,
            "criterion": criterion,
            "subset": subset,
            "p_values": config["figures"]["p_values"],
        }
        for level, numbers in WILLIAMS_NUMBERS.items()
        for index, criterion in enumerate(criteria)
        for subset in (False, True)
    }


@cache
def figures_of(criteria):
    """{name: spec} of every figure of a dataset rating `criteria` (a tuple). The rule that draws a figure is
    fig_<its family> (figure_family): the representative subset's in fig_subset, the others by kind and level."""
    return {
        **_heatmaps("criteria", ["fig01", "fig02", "fig10", "fig11", "fig12", "fig13"]),  # criteria x criteria
        **_heatmaps("metric_criteria", ["fig03", "fig04"], ["kendall"], subset=True),  # representative subset
        **_heatmaps("metric_criteria", ["fig14", "fig15", "fig16", "fig17", "fig18", "fig19"]),  # all metrics
        **_heatmaps("metric_metric", ["fig05", "fig06"], ["kendall"], subset=True),
        **_heatmaps("metric_metric", ["fig20", "fig21", "fig22", "fig23", "fig24", "fig25"]),
        **williams_figures(criteria),
        "fig07_bootstrap_f1_subset": {"kind": "bootstrap_f1", "subset": True},
        "fig26_bootstrap_f1": {"kind": "bootstrap_f1", "subset": False},
        "fig08_topk_systems": {"kind": "topk", "level": "system", "subset": False},
        "fig09_rating_violins": {"kind": "violins", "subset": False},
    }


def analysed_sets():
    """(dataset, score set) of every analysis the run makes: HANNA's released scores, each scored dataset."""
    return [("hanna", "released")] + [(name, "computed") for name in TEXT_DATASETS if enabled_metrics(name)]


TABLE_LEVELS = {"tab8_top5_story": "story", "tab9_top5_system": "system"}


def wanted_table(name, shape):
    """A table of a rated set: the reanalyses where their metrics exist, the per-rater ICC and (with systems)
    means, one top-k per level."""
    if name in REANALYSES:
        return shape["reanalyses"]
    if name in ("tab3_icc", "tab4_system_means"):
        return shape["raters"] and (shape["systems"] or name == "tab3_icc")
    return TABLE_LEVELS.get(name, shape["levels"][0]) in shape["levels"]


def wanted_figure(spec, shape):
    """A figure of a set: its level computed, two criteria for criteria heatmaps, systems for the system
    figures, the representative subset and Fig. 8's metrics only where the set holds them."""
    return (
        (spec.get("level") is None or spec["level"] in shape["levels"])
        and (shape["subset"] or not spec["subset"])
        and (len(shape["criteria"]) >= 2 or spec["kind"] != "criteria")
        and (shape["topk"] or spec["kind"] != "topk")
        and (shape["systems"] or spec["kind"] not in ("bootstrap_f1", "topk", "violins"))
    )


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
        if TABLE_LEVELS.get(name, analysis["levels"][0]) in analysis["levels"]
        and (name != "tab5_top3_pearson" or "pearson" in analysis["coefficients"])
    ]


def figure_families(criteria):
    """{family: figures} of the rules in figures.smk for a dataset rating `criteria`, one job each per
    dataset and score set."""
    families = {}
    for name, spec in enabled_figures(criteria).items():
        families.setdefault(figure_family(spec), []).append(name)
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


def whole_families(names, families, what):
    """The wanted names, checked to be whole families: a job's outputs are all targets or none (a partial
    family would ask a job for files that it cannot make)."""
    chosen = set(names)
    for family, members in families.items():
        if chosen & set(members) and not chosen >= set(members):
            raise WorkflowError(
                f"{what} family {family}: only {sorted(chosen & set(members))} wanted; "
                "fix: regroup the family in figures.smk"
            )
    return names


def table_targets(base, shape):
    names = whole_families([name for name in enabled_tables() if wanted_table(name, shape)], table_families(), "table")
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
        if wanted_figure(spec, shape) and (kinds is None or spec["kind"] in kinds)
    ]
    names = whole_families(names, figure_families(shape["criteria"]), "figure")
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


def figure_family(spec):
    """The job that renders a figure: the representative subset's figures together, the figures of the systems
    (ratings, F1) together, Fig. 8 (its metrics may be absent), the others by kind and level (a set may have the
    story level alone)."""
    if spec["subset"]:
        return "subset"
    if spec["kind"] in ("bootstrap_f1", "violins"):
        return "systems"
    if spec["kind"] == "topk":
        return "topk"
    return f"{spec['kind']}_{spec['level']}"


def figure_rules():
    """{name of the job's rule -> (its datasets or None, its figures {name -> spec})}. A family whose names hold criteria
    (Williams, and the subset's Williams) gets one rule per criteria set, for the datasets that rate them;
    HANNA's keeps the plain family name."""
    criteria_sets = {}
    for dataset, scoreset in analysed_sets():
        criteria_sets.setdefault(tuple(structure(dataset, scoreset)["criteria"]), []).append(dataset)
    rules = {}
    for criteria, datasets in criteria_sets.items():
        suffix = "" if list(criteria) == CRITERIA else re.sub(r"\W", "_", f"_{datasets[0]}")
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


# Drawing time of a figure over all metrics, relative to a small heatmap (HANNA's 72 metrics; the job times of
# bench/bench_workflow_analysis.py): a family's sum is its job priority, so the longest start first (common.smk).
RELATIVE_COST = {"metric_metric": 4, "williams": 4, "violins": 3, "topk": 2}


def family_cost(figures):
    return sum(1 if spec["subset"] else RELATIVE_COST.get(spec["kind"], 1) for spec in figures.values())


def family_params(figures):
    """Only the settings a family's figures read, so that changing one reruns only the figures it changes."""
    params = {"dpi": config["figures"]["dpi"]}
    if any(spec["subset"] for spec in figures.values()):
        params["representative"] = config["figures"]["representative_metrics"]
    if any(spec["kind"] == "topk" for spec in figures.values()):
        params["topk_coefficient"] = config["stats"]["topk"]["coefficient"]
    return params


FIGURE_RULES = figure_rules()


for rule_name, (datasets, figures) in FIGURE_RULES.items():

    rule:
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
        priority: family_cost(figures)
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


for rule_name, names in TABLE_RULES.items():

    rule:
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
