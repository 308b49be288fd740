"""What the analysis rules of a score set read (analysis.smk, stats.smk): its stories, human scores and metric
scores; the per-rater ratings where a switch of config analysis or reanalysis needs the exact means."""

from __future__ import annotations

from collections.abc import Mapping

from storyeval.data.load import needs_exact_means, reanalysis_recomputes


def scoreset_inputs(dataset: str, scoreset: str, rated: bool = True) -> dict:
    """Its stories and human scores, or for a set without human ratings its texts as the stories; its metric
    scores and registry."""
    base = f"results/{dataset}"
    if rated:
        stories = {"stories": f"{base}/data/stories.csv", "human": f"{base}/data/human_scores.csv"}
    else:
        stories = {"stories": f"{base}/data/texts.parquet"}
    return {**stories, "scores": f"{base}/{scoreset}/scores.parquet", "registry": f"{base}/{scoreset}/metrics.csv"}


def with_exact_means(config: Mapping, inputs: dict, system_ties: str, dataset: str) -> dict:
    """`inputs` plus rater_ratings.csv where the system level needs the exact per-story means (the authors' last
    bits: storyeval.data.load.needs_exact_means)."""
    if needs_exact_means(system_ties, config["analysis"]["system_coefficients"]) and "human" in inputs:
        inputs = {**inputs, "ratings": f"results/{dataset}/data/rater_ratings.csv"}
    return inputs


def correlation_inputs(run, dataset: str, scoreset: str) -> dict:
    """A set without human ratings (hanna-llm) correlates its metrics with each other only."""
    rated = run.structure(dataset, scoreset)["ratings"]
    inputs = scoreset_inputs(dataset, scoreset, rated)
    return with_exact_means(run.config, inputs, run.config["analysis"]["system_ties"], dataset)


def icc_inputs(annotations: bool, dataset: str) -> dict:
    """Released rater positions always; the raw file's worker-id judges when it is used."""
    inputs = {"positions": f"results/{dataset}/data/rater_ratings.csv"}
    if dataset == "hanna" and annotations:
        inputs["workers"] = "results/hanna/data/worker_ratings.csv"
    return inputs


def reanalysis_inputs(config: Mapping, dataset: str, scoreset: str) -> dict:
    """The correlations; also the cubes where Mendras & Nietge's system means (reanalysis.system_ties) are not the
    analysis' and their system level is recomputed."""
    base = f"results/{dataset}/{scoreset}"
    inputs = {"correlations": f"{base}/correlations.csv", "registry": f"{base}/metrics.csv"}
    ties = config["reanalysis"]["system_ties"]
    if reanalysis_recomputes(ties, config["analysis"]["system_ties"]):
        inputs.update(with_exact_means(config, scoreset_inputs(dataset, scoreset), ties, dataset))
    return inputs

