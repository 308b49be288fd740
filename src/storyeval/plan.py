"""What the workflow makes for a dataset: HANNA's figures and tables (Chhun et al. 2022, numbered as in the
paper), which of them a dataset's shape allows, and the families one job renders together. The rule files call
these with the config's values; here they are plain functions, tested without Snakemake.

A figure is a spec {kind, level, coefficient, subset, criterion, p_values}; a dataset's shape (the workflow's
`structure`) says its levels, criteria, whether its stories lie on a prompt x system grid (`systems`), whether it
has per-rater ratings (`raters`), and whether it holds the metrics of the representative subset (`subset`), of
Fig. 8 (`topk`) and of the reanalyses (`reanalyses`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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


def figures_of(criteria: Sequence[str], p_values: str = "raw") -> dict[str, dict]:
    """{name: spec} of every figure of a dataset rating `criteria`. The rule that draws a figure is
    fig_<its family> (figure_family): the representative subset's in fig_subset, the others by kind and level."""
    return {
        **heatmaps("criteria", ["fig01", "fig02", "fig10", "fig11", "fig12", "fig13"]),  # criteria x criteria
        **heatmaps("metric_criteria", ["fig03", "fig04"], ["kendall"], subset=True),  # representative subset
        **heatmaps("metric_criteria", ["fig14", "fig15", "fig16", "fig17", "fig18", "fig19"]),  # all metrics
        **heatmaps("metric_metric", ["fig05", "fig06"], ["kendall"], subset=True),
        **heatmaps("metric_metric", ["fig20", "fig21", "fig22", "fig23", "fig24", "fig25"]),
        **williams_figures(criteria, p_values),
        "fig07_bootstrap_f1_subset": {"kind": "bootstrap_f1", "subset": True},
        "fig26_bootstrap_f1": {"kind": "bootstrap_f1", "subset": False},
        "fig08_topk_systems": {"kind": "topk", "level": "system", "subset": False},
        "fig09_rating_violins": {"kind": "violins", "subset": False},
    }


def figure_family(spec: Mapping) -> str:
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


def wanted_figure(spec: Mapping, shape: Mapping) -> bool:
    """A figure of a set: its level computed, two criteria for criteria heatmaps, systems for the system
    figures, the representative subset and Fig. 8's metrics only where the set holds them."""
    return (
        (spec.get("level") is None or spec["level"] in shape["levels"])
        and (shape["subset"] or not spec["subset"])
        and (len(shape["criteria"]) >= 2 or spec["kind"] != "criteria")
        and (shape["topk"] or spec["kind"] != "topk")
        and (shape["systems"] or spec["kind"] not in ("bootstrap_f1", "topk", "violins"))
    )


def wanted_table(name: str, shape: Mapping) -> bool:
    """A table of a rated set: the reanalyses where their metrics exist, the per-rater ICC and (with systems)
    means, one top-k per level."""
    if name in REANALYSES:
        return shape["reanalyses"]
    if name in ("tab3_icc", "tab4_system_means"):
        return shape["raters"] and (shape["systems"] or name == "tab3_icc")
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
    names = ["correlations", "top_metrics", "borda", "williams", "kemeny", "kemeny_summary"]
    names += REANALYSES * shape["reanalyses"]
    if shape["systems"]:
        names += ["bootstrap_f1", "correlation_ci"] + ["topk"] * shape["topk"]
    if shape["raters"]:
        names += ["icc"] + ["system_means"] * shape["systems"]
    return names
