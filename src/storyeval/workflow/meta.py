"""The meta-evaluation of a score set's metrics (and, beside HANNA's released scores, of the LLM judges of its
TACL 2024 release): the groupings it has, what its rules read, the files it makes."""

from __future__ import annotations

from storyeval.plan import report_page
from storyeval.workflow.analysis import scoreset_inputs

BASE = "results/{dataset}/{scoreset}/meta"


def with_judges(config, dataset: str, scoreset: str) -> bool:
    """HANNA's released LLM judges are compared beside its released scores (meta.judges)."""
    return bool(config["meta"]["judges"]) and (dataset, scoreset) == ("hanna", "released")


def groupings(run, dataset: str, scoreset: str) -> list[str]:
    """The configured groupings the score set has: item and system need stories on a prompt x system grid."""
    shape = run.structure(dataset, scoreset)
    return [name for name in run.config["meta"]["groupings"] if shape["systems"] or name == "none"]


def params(run, dataset: str, scoreset: str) -> dict:
    """The meta section with the score set's own groupings."""
    return {**run.config["meta"], "groupings": groupings(run, dataset, scoreset)}


def inputs(config, dataset: str, scoreset: str) -> dict:
    """The score set, and the LLM judges beside HANNA's released scores."""
    found = scoreset_inputs(dataset, scoreset)
    if with_judges(config, dataset, scoreset):
        found.update(judge_scores="results/hanna/judges/scores.parquet",
                     judge_registry="results/hanna/judges/metrics.csv")
    return found


def agreement_inputs(config, dataset: str, scoreset: str) -> dict:
    """Rule agreement: the per-rater ratings beside what the meta-evaluation reads (the score set and, beside
    HANNA's released scores, the LLM judges): the alt-test's candidates are its metrics and judges."""
    return {**inputs(config, dataset, scoreset), "ratings": f"results/{dataset}/data/rater_ratings.csv"}


def best_inputs(run, dataset: str, scoreset: str) -> dict:
    base = BASE.format(dataset=dataset, scoreset=scoreset)
    found = groupings(run, dataset, scoreset)
    return {**{name: [f"{base}/{stem}_{grouping}.csv" for grouping in found]
               for name, stem in (("intervals", "boot_both"), ("clusters", "clusters"))},
            "confounds": f"results/{dataset}/{scoreset}/confounds.csv",  # grouping none pools the systems' stories
            "answer": f"results/{dataset}/{scoreset}/answer.csv"}  # the design's answer, shown first


def consensus_inputs(config, dataset: str, scoreset: str) -> dict:
    """The meta correlations and the registries of their columns (the judges' beside HANNA's released scores)."""
    found = {"correlations": f"{BASE.format(dataset=dataset, scoreset=scoreset)}/correlations.csv",
             "registry": f"results/{dataset}/{scoreset}/metrics.csv",
             "answer": f"results/{dataset}/{scoreset}/answer.csv"}  # the design's answer: level design
    if with_judges(config, dataset, scoreset):
        found["judge_registry"] = "results/hanna/judges/metrics.csv"
    return found


def targets(run, dataset: str, scoreset: str) -> list[str]:
    """Everything the meta-evaluation makes of a score set: correlations by grouping, pairwise accuracy (with
    systems), PERM-BOTH tests and clusters, the judges' Williams tests, the consensus, the tables and figure."""
    base = BASE.format(dataset=dataset, scoreset=scoreset)
    top = f"results/{dataset}/{scoreset}"
    found = groupings(run, dataset, scoreset)
    judged = with_judges(run.config, dataset, scoreset) or scoreset == "computed" and bool(run.judge_jobs(dataset))
    return [
        f"{base}/correlations.csv",
        *[f"{base}/pairwise.csv"] * ("system" in found),
        *[f"{base}/{name}_{grouping}.csv" for name in ("perm_both", "clusters") for grouping in found],
        f"{top}/williams_bh.csv",
        *[f"{base}/williams_judges.csv"] * judged,
        *[f"{base}/{name}.csv" for name in ("consensus", "consensus_summary")],
        *[f"{top}/tables/{name}.{ext}" for name in ("meta_best", "meta_consensus") for ext in ("csv", "md")],
        *[f"{top}/figures/meta_best.{ext}" for ext in ("pdf", "png")],
        *[report_page(top, name) for name in ("meta_best", "meta_best_table", "meta_consensus_table")],
    ]
