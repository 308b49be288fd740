"""The cross-dataset benchmark (storyeval.benchmark): which datasets' answers it reads (each over all the dataset's
rated score sets), the study each belongs to, the criteria map each dataset gets, the files it makes."""

from __future__ import annotations

from storyeval.plan import report_page
from storyeval.sources import Facts
from storyeval.vocabulary import criteria_terms
from storyeval.workflow import meta

BASE = "results/benchmark"
TABLES = ("benchmark", "summary", "matrix")
PAGES = ("benchmark", "summary", "heatmap")  # the matrix (the main page, its answer above it), the summary, the figure


def rated_sets(run) -> list[tuple[str, str]]:
    """(dataset, score set) of every analysed score set with human ratings."""
    return [(dataset, scoreset) for dataset, scoreset in run.analysed_sets
            if run.structure(dataset, scoreset)["ratings"]]


def scoreset_parts(run, dataset: str, scoreset: str) -> list[tuple[str, str, str]]:
    """(name, scores, registry) of a score set, HANNA's released LLM judges beside its released scores
    (meta.with_judges), as its meta-evaluation compares them."""
    top = f"results/{dataset}/{scoreset}"
    found = [(scoreset, f"{top}/scores.parquet", f"{top}/metrics.csv")]
    if meta.with_judges(run.config, dataset, scoreset):
        found.append(("judges", "results/hanna/judges/scores.parquet", "results/hanna/judges/metrics.csv"))
    return found


def dataset_parts(run, dataset: str) -> list[tuple[str, str, str]]:
    """scoreset_parts of every rated score set of the dataset: the columns of its one benchmark cell per
    criterion."""
    return [part for name, scoreset in rated_sets(run) if name == dataset
            for part in scoreset_parts(run, dataset, scoreset)]


def parts_inputs(dataset: str, parts: list[tuple[str, str, str]]) -> dict:
    """Rules design_answer and dataset_answer: the dataset's stories and ratings, the parts' scores and
    registries."""
    return {"stories": f"results/{dataset}/data/stories.csv", "human": f"results/{dataset}/data/human_scores.csv",
            "ratings": f"results/{dataset}/data/rater_ratings.csv", "scores": [part[1] for part in parts],
            "registry": [part[2] for part in parts]}


def study(run, dataset: str) -> str:
    """The paper a dataset comes from: its kind (a kind's corpora are one study), an own table its own name."""
    kind = run.config["datasets"].get(dataset, {}).get("kind", "hanna-annotations")
    return dataset if kind == "table" else kind


def sets(run) -> list[dict]:
    """Each rated dataset's answer over all its score sets (rule dataset_answer) and its score sets' alt-test
    verdicts where they have per-rater ratings (rule agreement makes them)."""
    found = {}
    for dataset, scoreset in rated_sets(run):
        entry = found.setdefault(dataset, {
            "dataset": dataset, "study": study(run, dataset), "rows": f"results/{dataset}/answer.csv",
            "summary": f"results/{dataset}/answer_summary.csv", "alt_test": {}})
        if run.structure(dataset, scoreset)["raters"]:
            entry["alt_test"][scoreset] = f"results/{dataset}/{scoreset}/alt_test.csv"
    return list(found.values())


def inputs(run) -> list[str]:
    """The files the benchmark reads: each dataset's answer and its score sets' alt-tests."""
    return [path for found in sets(run) for path in (found["rows"], found["summary"], *found["alt_test"].values())]


def terms(run) -> list[dict]:
    """Each rated set's criteria in the shared vocabulary (storyeval.benchmark.criteria_terms) as records: the
    config's benchmark.criteria_map first, then the dataset kind's criteria_map, then the default map."""
    rated = rated_sets(run)
    criteria = {dataset: run.structure(dataset, scoreset)["criteria"] for dataset, scoreset in rated}
    kinds = {dataset: dict(getattr(run.described(dataset, scoreset), "criteria_map", None) or {})
             for dataset, scoreset in rated}
    return criteria_terms(criteria, run.config["benchmark"]["criteria_map"], kinds).to_dict("records")


def outputs(run) -> list[str]:
    """The benchmark's tables, heatmap and report pages, where at least one score set is rated."""
    if not rated_sets(run):
        return []
    return [*[f"{BASE}/{name}.{ext}" for name in TABLES for ext in ("csv", "md")],
            *[f"{BASE}/heatmap.{ext}" for ext in ("png", "pdf")], *[report_page(BASE, name) for name in PAGES]]


def facts(run) -> Facts:
    """The caption's sentences that depend on the run: the studies and their datasets, the coverage gate. The answer
    itself is added by the job (its page opens with it; Snakemake's report, which renders captions before any data,
    leaves it empty)."""
    studies = {}
    for found in sets(run):
        studies.setdefault(found["study"], []).append(found["dataset"])
    said = "; ".join(f"{name}: {', '.join(datasets)}" for name, datasets in studies.items())
    return Facts({"studies": said, "min_studies": str(run.config["benchmark"]["min_studies"])})
