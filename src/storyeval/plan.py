"""What the workflow makes for a dataset: HANNA's figures and tables (Chhun et al. 2022, numbered as in the
paper), which of them a dataset's shape allows, and the families one job renders together. The rule files call
these with the config's values; here they are plain functions, tested without Snakemake.

A figure is a spec {kind, level, coefficient, subset, criterion, p_values}; a dataset's shape
(storyeval.workflow.run.Run.structure) says its levels, criteria, whether its stories lie on a prompt x system
grid (`systems`) or on one of two systems (`paired`: system means, violins and paired comparisons, the story level
pooled), whether it has per-rater ratings (`raters`), and whether it holds the metrics of the
representative subset (`subset`), of Fig. 8 (`topk`) and of the reanalyses (`reanalyses`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache

from storyeval.criteria import CRITERIA
from storyeval.data.registry import slugify
from storyeval.errors import InputError

REANALYSES = ["reanalysis1_sum_of_ranks", "reanalysis2_top_k", "reanalysis2_coefficient_agreement"]
# The paper's Williams figures, by level, in the order of HANNA's CRITERIA; a set rating other criteria gets them
# unnumbered. Their representative-subset twins (*_subset) are drawn by rule fig_subset.
WILLIAMS_NUMBERS = {
    "story": ["fig27", "fig28", "fig29", "fig30", "fig31", "fig32"],  # rule fig_williams_story
    "system": ["fig33", "fig34", "fig35", "fig36", "fig37", "fig38"],  # rule fig_williams_system
}
TABLE_LEVELS = {"tab8_top5_story": "story", "tab9_top5_system": "system"}
# Drawing time of a figure over all metrics, relative to a small heatmap (HANNA's 72 metrics; the job times of
# bench/bench_workflow_analysis.py): a family's sum is its job priority, so the longest start first.
RELATIVE_COST = {"metric_metric": 4, "williams": 4, "violins": 3, "topk": 2}


def heatmaps(kind: str, numbers: Sequence[str], coefficients=("kendall", "spearman", "pearson"),
             subset: bool = False) -> dict[str, dict]:
    """{name: spec} of one heatmap kind; `numbers` are the figures in the paper of its (coefficient, level) pairs
    in order: the first coefficient at story and at system level, then the next."""
    pairs = [(coefficient, level) for coefficient in coefficients for level in ("story", "system")]
    return {
        f"{number}_{kind}_{level}_{coefficient}{'_subset' * subset}": {
            "kind": kind, "level": level, "coefficient": coefficient, "subset": subset,
        }
        for number, (coefficient, level) in zip(numbers, pairs, strict=True)
    }


def williams_figures(criteria: Sequence[str], p_values: str) -> dict[str, dict]:
    """Williams p-value figures, per level and criterion, each also for the representative subset."""
    numbered = list(criteria) == CRITERIA
    return {
        f"{f'{numbers[index]}_' if numbered else ''}williams_{level}_{slugify(criterion)}{'_subset' * subset}": {
            "kind": "williams", "level": level, "criterion": criterion, "subset": subset, "p_values": p_values,
        }
        for level, numbers in WILLIAMS_NUMBERS.items()
        for index, criterion in enumerate(criteria)
        for subset in (False, True)
    }


def figures_of(criteria: Sequence[str], p_values: str = "raw", topk_coefficient: str = "spearman") -> dict[str, dict]:
    """{name: spec} of every figure of a dataset rating `criteria` (Fig. 8's |r| by `topk_coefficient`, config
    stats.topk.coefficient). The rule that draws a figure is fig_<its family> (figure_family): the representative
    subset's in fig_subset, the others by kind and level."""
    return {
        **heatmaps("criteria", ["fig01", "fig02", "fig10", "fig11", "fig12", "fig13"]),  # criteria x criteria
        **heatmaps("metric_criteria", ["fig03", "fig04"], ["kendall"], subset=True),  # representative subset
        **heatmaps("metric_criteria", ["fig14", "fig15", "fig16", "fig17", "fig18", "fig19"]),  # all metrics
        **heatmaps("metric_metric", ["fig05", "fig06"], ["kendall"], subset=True),
        **heatmaps("metric_metric", ["fig20", "fig21", "fig22", "fig23", "fig24", "fig25"]),
        **williams_figures(criteria, p_values),
        "fig07_bootstrap_f1_subset": {"kind": "bootstrap_f1", "subset": True},
        "fig26_bootstrap_f1": {"kind": "bootstrap_f1", "subset": False},
        "fig08_topk_systems": {"kind": "topk", "level": "system", "subset": False,
                               "topk_coefficient": topk_coefficient},
        "fig09_rating_violins": {"kind": "violins", "subset": False},
    }


def figure_family(spec: Mapping) -> str:
    """The job that renders a figure: the representative subset's figures together, the figures of the systems
    (ratings, F1) together, Fig. 8 (its metrics may be absent), the others by kind and level (a set may have the
    story level alone)."""
    if spec["subset"]:
        return "subset"
    if spec["kind"] == "bootstrap_f1":
        return "systems"
    if spec["kind"] == "violins":  # also drawn for two systems, which have no bootstrap F1
        return "violins"
    if spec["kind"] == "topk":
        return "topk"
    return f"{spec['kind']}_{spec['level']}"


def wanted_figure(spec: Mapping, shape: Mapping) -> bool:
    """A figure of a set: its level computed, two criteria for criteria heatmaps, systems for the system
    figures (the violins also for two systems), the representative subset and Fig. 8's metrics only where the set
    holds them."""
    return (
        (spec.get("level") is None or spec["level"] in shape["levels"])
        and (shape["subset"] or not spec["subset"])
        and (len(shape["criteria"]) >= 2 or spec["kind"] != "criteria")
        and (shape["topk"] or spec["kind"] != "topk")
        and (shape["systems"] or spec["kind"] not in ("bootstrap_f1", "topk", "violins"))
        or (shape["paired"] and spec["kind"] == "violins")
    )


def wanted_table(name: str, shape: Mapping) -> bool:
    """A table of a rated set: the reanalyses where their metrics exist, the per-rater ICC and (with systems)
    means (also of two systems), one top-k per level."""
    if name in REANALYSES:
        return shape["reanalyses"]
    if name in ("tab3_icc", "tab4_system_means"):
        return shape["raters"] and (shape["systems"] or shape["paired"] or name == "tab3_icc")
    return TABLE_LEVELS.get(name, shape["levels"][0]) in shape["levels"]


def whole_families(names: list[str], families: Mapping[str, list[str]], what: str) -> list[str]:
    """The wanted names, checked to be whole families: a job's outputs are all targets or none (a partial
    family would ask a job for files that it cannot make)."""
    chosen = set(names)
    for family, members in families.items():
        if chosen & set(members) and not chosen >= set(members):
            raise InputError(f"{what} family {family}: only {sorted(chosen & set(members))} wanted; fix: regroup the "
                             "family in storyeval.plan")
    return names


def family_cost(figures: Mapping[str, Mapping]) -> int:
    """A figure family's job priority: its figures' relative drawing times (longest-processing-time first)."""
    return sum(1 if spec["subset"] else RELATIVE_COST.get(spec["kind"], 1) for spec in figures.values())


def stats_tables(shape: Mapping) -> list[str]:
    """The statistics files (results/<dataset>/<scoreset>/<name>.csv) of a rated set's analysis."""
    names = ["correlations", "confounds", "top_metrics", "borda", "williams", "kemeny", "kemeny_summary"]
    names += REANALYSES * shape["reanalyses"]
    if shape["systems"]:
        names += ["bootstrap_f1", "correlation_ci"] + ["topk"] * shape["topk"]
    names += ["paired_accuracy"] * shape["paired"]
    if shape["raters"]:  # agreement: alpha and the human ceiling (agreement.csv) and the alt-test (alt_test.csv)
        names += ["agreement", "alt_test", "icc"] + ["system_means"] * (shape["systems"] or shape["paired"])
    return names


def paired_targets(base: str, shape: Mapping) -> list[str]:
    """The paired comparisons' Markdown table and report page (rule paired_accuracy) of a set of two systems."""
    return [f"{base}/tables/paired_accuracy.md", report_page(base, "paired_accuracy")] if shape["paired"] else []


def agreement_targets(base: str, shape: Mapping) -> list[str]:
    """Human agreement's report pages and the landing page's paragraph (rule agreement_pages) of a set with
    per-rater ratings."""
    return [*(report_page(base, name) for name in ("agreement", "alt_test")),
            f"{base}/report/agreement.rst"] if shape["raters"] else []


# What the rule files ask of these for a run: the config's figures and tables, their families (one rule each in
# figures.smk, named fig_<family> and tables_<family>), their files, inputs and settings.

TABLES = {  # name -> (the statistics it reads, the config analysis settings it reads)
    "tab6_borda": (["borda"], ["top_k", "orientation"]),
    "kemeny_consensus": (["kemeny", "kemeny_summary"], ["top_k", "orientation"]),
    "tab8_top5_story": (["top_metrics"], ["top_k", "orientation"]),
    "tab5_top3_pearson": (["top_metrics"], ["tab5_top_k", "orientation"]),
    "tab9_top5_system": (["top_metrics"], ["top_k", "orientation"]),
    "tab3_icc": (["icc"], []),
    "tab4_system_means": (["system_means"], []),
    **{name: ([name], []) for name in REANALYSES},
}
# Each family is wanted by the same score sets (wanted_table); the other tables form family "common".
TABLE_FAMILIES = {"system": ["tab9_top5_system"], "raters": ["tab3_icc"], "systems_raters": ["tab4_system_means"],
                  "reanalyses": REANALYSES}
FIGURE_INPUTS = {  # what each kind of figure reads
    "criteria": ["correlations", "registry"],
    "metric_criteria": ["correlations", "registry"],
    "metric_metric": ["correlations", "registry"],
    "williams": ["williams", "registry"],
    "bootstrap_f1": ["f1", "registry"],
    "topk": ["topk", "registry"],
    "violins": ["stories", "human"],
}
SCORESET = "results/{dataset}/{scoreset}"  # a score set's folder, as a rule's pattern


def report_page(base: str, name: str) -> str:
    """The report's page of a figure or table (storyeval.plots.pages)."""
    return f"{base}/report/{name}.html"


@cache
def _figures_of(criteria: tuple[str, ...], p_values: str, topk_coefficient: str) -> dict[str, dict]:
    return figures_of(criteria, p_values, topk_coefficient)


def enabled_figures(config: Mapping, criteria: Sequence[str]) -> dict[str, dict]:
    """{name: spec} of the figures of a dataset rating `criteria` whose level and coefficient config's analysis
    computes."""
    analysis = config["analysis"]
    return {
        name: spec
        for name, spec in _figures_of(tuple(criteria), config["figures"]["p_values"],
                                      config["stats"]["topk"]["coefficient"]).items()
        if spec.get("level", analysis["levels"][0]) in analysis["levels"]
        and spec.get("coefficient", analysis["coefficients"][0]) in analysis["coefficients"]
    }


def enabled_tables(config: Mapping) -> list[str]:
    """The tables whose level (Tab. 8, 9) and coefficient (Tab. 5: Pearson) config's analysis computes."""
    analysis = config["analysis"]
    return [name for name in TABLES
            if TABLE_LEVELS.get(name, analysis["levels"][0]) in analysis["levels"]
            and (name != "tab5_top3_pearson" or "pearson" in analysis["coefficients"])]


def figure_families(config: Mapping, criteria: Sequence[str]) -> dict[str, list[str]]:
    """{family: figures} for a dataset rating `criteria`: one job each per dataset and score set."""
    families = {}
    for name, spec in enabled_figures(config, criteria).items():
        families.setdefault(figure_family(spec), []).append(name)
    return families


def table_families(config: Mapping) -> dict[str, list[str]]:
    """{family: tables} of the enabled tables: those of TABLE_FAMILIES, and "common" for the rest."""
    enabled = enabled_tables(config)
    grouped = [name for names in TABLE_FAMILIES.values() for name in names]
    families = {"common": [name for name in enabled if name not in grouped],
                **{family: [name for name in enabled if name in names] for family, names in TABLE_FAMILIES.items()}}
    return {family: names for family, names in families.items() if names}


def table_targets(config: Mapping, base: str, shape: Mapping) -> list[str]:
    """CSV, Markdown and report page of each table a score set (folder `base`) wants."""
    wanted = [name for name in enabled_tables(config) if wanted_table(name, shape)]
    names = whole_families(wanted, table_families(config), "table")
    return [f"{base}/tables/{name}.{ext}" for name in names for ext in ("csv", "md")] + [
        report_page(base, name) for name in names]


def figure_targets(config: Mapping, base: str, shape: Mapping, kinds: Sequence[str] | None = None) -> list[str]:
    """The figures of a score set (of `kinds`, default all), each with its report page, and the set's own page
    (rule about_dataset, which the landing page reads)."""
    figures = enabled_figures(config, shape["criteria"])
    names = [name for name, spec in figures.items()
             if wanted_figure(spec, shape) and (kinds is None or spec["kind"] in kinds)]
    names = whole_families(names, figure_families(config, shape["criteria"]), "figure")
    return [f"{base}/figures/{name}.{ext}" for name in names for ext in ("pdf", "png")] + [
        report_page(base, name) for name in [*names, "about"]]


def figure_rules(config: Mapping, analysed: Sequence[tuple[str, Sequence[str]]]) -> dict[str, tuple]:
    """{rule name: (its datasets or None, its figures {name: spec})} for the analysed (dataset, criteria) score
    sets. A family whose names hold criteria (Williams, and the subset's Williams) gets one rule per criteria set,
    for the datasets that rate them; HANNA's keeps the plain family name."""
    criteria_sets = {}
    for dataset, criteria in analysed:
        criteria_sets.setdefault(tuple(criteria), []).append(dataset)
    rules = {}
    for criteria, datasets in criteria_sets.items():
        suffix = "" if list(criteria) == CRITERIA else re.sub(r"\W", "_", f"_{datasets[0]}")
        figures = enabled_figures(config, criteria)
        for family, names in figure_families(config, criteria).items():
            if family == "subset" or family.startswith("williams"):
                if criteria:  # an unrated set has neither
                    rules[f"fig_{family}{suffix}"] = (sorted(set(datasets)), {name: figures[name] for name in names})
            else:
                rules.setdefault(f"fig_{family}", (None, {name: figures[name] for name in names}))
    return rules


def figure_inputs(config: Mapping, figures: Mapping[str, Mapping]) -> dict[str, str]:
    """The statistics a family's figures read; with figures.p_values bh, the Williams p-values that rule
    williams_bh adjusts per level and criterion (Benjamini & Hochberg 1995)."""
    paths = {
        "correlations": f"{SCORESET}/correlations.csv",
        "registry": f"{SCORESET}/metrics.csv",
        "williams": f"{SCORESET}/williams{'_bh' * (config['figures']['p_values'] == 'bh')}.csv",
        "f1": f"{SCORESET}/bootstrap_f1.csv",
        "topk": f"{SCORESET}/topk.csv",
        "stories": "results/{dataset}/data/stories.csv",
        "human": "results/{dataset}/data/human_scores.csv",
    }
    return {key: paths[key] for spec in figures.values() for key in FIGURE_INPUTS[spec["kind"]]}


def family_params(config: Mapping, figures: Mapping[str, Mapping]) -> dict:
    """Only the settings a family's figures read, so that changing one reruns only the figures it changes."""
    params = {"dpi": config["figures"]["dpi"]}
    if any(spec["subset"] for spec in figures.values()):
        params["representative"] = config["figures"]["representative_metrics"]
    if any(spec["kind"] == "topk" for spec in figures.values()):
        params["topk_coefficient"] = config["stats"]["topk"]["coefficient"]
    if any(spec["kind"] in ("criteria", "metric_criteria", "metric_metric") for spec in figures.values()):
        params["orientation"] = config["analysis"]["orientation"]  # oriented r, or HANNA's |r|
    return params


def figure_outputs(figures: Mapping[str, Mapping]) -> dict:
    """PDF and PNG of each figure ({name: spec}), and its report page (the PNG at full size, the PDF named) as
    (path, caption, subcategory, labels) for the rule file's report entry."""
    from storyeval.plots.pages import figure_caption, figure_labels

    outputs = {}
    for name, spec in figures.items():
        outputs[f"{name}_pdf"] = f"{SCORESET}/figures/{name}.pdf"
        outputs[f"{name}_png"] = f"{SCORESET}/figures/{name}.png"
        outputs[f"{name}_page"] = (report_page(SCORESET, name), figure_caption(spec), "Figures",
                                   figure_labels(name, spec))
    return outputs


def table_outputs(names: Sequence[str]) -> dict:
    """CSV and Markdown of each table, and its report page as (path, caption, subcategory, labels)."""
    from storyeval.plots.pages import TABLE_CAPTIONS, table_labels

    outputs = {}
    for name in names:
        outputs[f"{name}_csv"] = f"{SCORESET}/tables/{name}.csv"
        outputs[f"{name}_md"] = f"{SCORESET}/tables/{name}.md"
        outputs[f"{name}_page"] = (report_page(SCORESET, name), TABLE_CAPTIONS[name], "Tables", table_labels(name))
    return outputs
