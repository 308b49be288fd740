"""The targets of rule all and of each rule dataset_<name>: what each dataset and score set supports
(Run.structure), the figures and tables it wants (storyeval.plan), its meta-evaluation, the LLM judges'
validation and the learned evaluator's outputs."""

from __future__ import annotations

from storyeval import plan
from storyeval.workflow import benchmark, judges, meta, storyer
from storyeval.workflow.sources import Pinned


def figure_rules(run) -> dict[str, tuple]:
    """The figure rules of the analysed score sets (storyeval.plan.figure_rules)."""
    analysed = [(dataset, run.structure(dataset, scoreset)["criteria"]) for dataset, scoreset in run.analysed_sets]
    return plan.figure_rules(run.config, analysed)


def analysis_targets(run, dataset: str, scoreset: str, figures: bool = True) -> list[str]:
    """A rated score set's statistics, tables and figures (`figures` False: its own page only)."""
    shape = run.structure(dataset, scoreset)
    base = f"results/{dataset}/{scoreset}"
    shown = plan.figure_targets(run.config, base, shape) if figures else [plan.report_page(base, "about")]
    answer = [f"{base}/answer.csv", f"{base}/report/answer.rst", plan.report_page(base, "answer")]
    return (answer + [f"{base}/{name}.csv" for name in plan.stats_tables(shape)] + plan.paired_targets(base, shape)
            + plan.agreement_targets(base, shape) + plan.table_targets(run.config, base, shape) + shown)


def unrated_targets(run, dataset: str) -> list[str]:
    """Metric x metric heatmaps and the systems' ranking by each metric, for a computed set without ratings."""
    base = f"results/{dataset}/computed"
    shape = run.structure(dataset, "computed")
    ranking = [
        f"{base}/tables/system_ranking.md",
        *[f"{base}/figures/system_ranking.{ext}" for ext in ("pdf", "png")],
        *[plan.report_page(base, name) for name in ("system_ranking", "system_ranking_table")],
    ]
    return [f"{base}/correlations.csv", *ranking * shape["systems"],
            *plan.figure_targets(run.config, base, shape, ["metric_metric"])]


def computed_targets(run, dataset: str, figures: bool = True) -> list[str]:
    """A dataset's computed scores, their computation times, the validation against HANNA's released scores
    (hanna-llm), and the analysis and meta-evaluation (rated) or the unrated set's heatmaps and ranking."""
    base = f"results/{dataset}/computed"
    targets = [f"{base}/scores.parquet", f"{base}/tables/computation_times.md"]
    if run.config["datasets"][dataset]["kind"] == "hanna-llm":
        targets.append(f"results/{dataset}/validation.csv")
    if run.structure(dataset, "computed")["ratings"]:
        targets += analysis_targets(run, dataset, "computed", figures) + meta.targets(run, dataset, "computed")
    else:
        targets += unrated_targets(run, dataset)
    return targets


def released_targets(run) -> list[str]:
    """HANNA's released scores: the paper's analysis, the meta-evaluation and the raw annotations' ratings."""
    targets = [Pinned(run.config).path("hanna", "license"), *judges.released_targets("hanna")]
    targets += analysis_targets(run, "hanna", "released") + meta.targets(run, "hanna", "released")
    if run.annotations:
        targets.append("results/hanna/data/worker_ratings.csv")  # also feeds Tab. 3
    return targets


def dataset_targets(run, dataset: str, figures: bool = True) -> list[str]:
    """Everything of one dataset (rule dataset_<name>): its computed scores and analyses, and for hanna also the
    released scores' analysis; nothing of another dataset's files. `figures` False: no figure of the analyses
    (the meta-evaluation's aside), as rule all makes for an entry with `all_figures: false`."""
    scored = dataset in run.text_datasets and (run.enabled_metrics(dataset) or run.judge_jobs(dataset))
    targets = computed_targets(run, dataset, figures) + judges.targets(run, dataset) if scored else []
    if dataset in run.released_sets:
        targets += analysis_targets(run, dataset, "released", figures) + meta.targets(run, dataset, "released")
        targets += judges.released_targets(dataset) * (dataset in judges.released_sets(run))
    if dataset in run.recipe_sets:
        targets.append(f"results/{dataset}/paper_recipes.csv")
    if dataset in run.text_datasets:  # a release's licence travels with the results of its files
        targets += licence_files(run, dataset)
    return targets + (released_targets(run) if dataset == "hanna" else [])


def licence_files(run, dataset: str) -> list[str]:
    """The licence file of a built-in dataset's pinned release (key `license`), where it has one."""
    from storyeval.datasets import describe

    source = describe(run.config["datasets"][dataset], dataset).source
    pinned = Pinned(run.config)
    return [pinned.path(source, "license")] if source and "license" in pinned.files(source) else []


def kind_targets(run) -> dict[str, list[str]]:
    """Rule dataset_<kind> of a built-in kind configured under other names (union-roc and union-wp: dataset_union):
    the targets of each of its datasets."""
    from storyeval.datasets import SOURCES

    kinds = {}
    for name, entry in run.config["datasets"].items():
        if entry["kind"] in SOURCES and entry["kind"] not in run.config["datasets"]:
            kinds.setdefault(entry["kind"], []).extend(dataset_targets(run, name))
    return {kind: list(dict.fromkeys(targets)) for kind, targets in kinds.items()}


def all_targets(run) -> list[str]:
    """Every dataset's targets (those of an entry with `all_figures: false` without the analyses' figures: rule
    dataset_<name> makes them), the learned evaluator's and the cross-dataset benchmark's, once each (rule all
    adds the audit)."""
    targets = released_targets(run)
    for dataset in run.text_datasets:
        targets += dataset_targets(run, dataset, run.config["datasets"][dataset].get("all_figures", True))
    return list(dict.fromkeys(targets + storyer.targets(run) + benchmark.outputs(run)))


def caption_facts(run, dataset: str, scoreset: str = "computed") -> dict[str, str]:
    """The sentences of the report's captions that depend on the score set (storyeval.plots.pages.caption_facts):
    its levels as computed, whether a human reference system is left out, the judges it is compared with."""
    from storyeval.plots.pages import caption_facts as facts

    released = scoreset == "released" and dataset == "hanna"
    reference = run.reference_system(dataset, scoreset) is not None
    judges = ("released" if meta.with_judges(run.config, dataset, scoreset)
              else "configured" if not released and run.judge_jobs(dataset) else "")
    config = run.config
    settings = {"orientation": config["analysis"]["orientation"], "p_values": config["figures"]["p_values"],
                "confound_margin": config["stats"]["confound_margin"],
                "length_confound": config["stats"]["length_confound"], "k_min": config["stats"]["topk"]["k_min"]}
    paper = released or run.described(dataset, scoreset).kind == "hanna-annotations"  # HANNA's own stories
    return facts(run.structure(dataset, scoreset), reference, released, judges, meta.groupings(run, dataset, scoreset),
                 config["analysis"].get("system_means_unit", "story"), settings, paper)
