"""The cross-dataset benchmark (storyeval.benchmark): which rated score sets it reads, at which grouping, the
criteria map each dataset gets, the files it makes."""

from __future__ import annotations

from storyeval.errors import InputError
from storyeval.plan import report_page
from storyeval.sources import Facts
from storyeval.vocabulary import criteria_terms
from storyeval.workflow import meta

BASE = "results/benchmark"
TABLES = ("benchmark", "summary")
PAGES = ("benchmark", "heatmap")  # the summary's table page (its answer beside it, for the landing page), the figure


def rated_sets(run) -> list[tuple[str, str]]:
    """(dataset, score set) of every analysed score set with human ratings."""
    return [(dataset, scoreset) for dataset, scoreset in run.analysed_sets
            if run.structure(dataset, scoreset)["ratings"]]


def grouping(run, dataset: str, scoreset: str) -> str:
    """The first grouping of benchmark.groupings that the score set's meta-evaluation has (item and system need a
    prompt x system grid); its first meta grouping where none of them is."""
    found = meta.groupings(run, dataset, scoreset)
    return next((name for name in run.config["benchmark"]["groupings"] if name in found), found[0])


def coefficient(config) -> str:
    """benchmark.coefficient, null: the meta-evaluation's (meta.coefficient), the only one whose BOOT-BOTH intervals
    and PERM-BOTH clusters are computed."""
    chosen = config["benchmark"].get("coefficient") or config["meta"]["coefficient"]
    if chosen != config["meta"]["coefficient"]:
        raise InputError(f"benchmark.coefficient: {chosen}, but BOOT-BOTH and PERM-BOTH run for meta.coefficient "
                         f"({config['meta']['coefficient']}) only; fix: set meta.coefficient: {chosen} (it recomputes "
                         "the intervals and clusters), or benchmark.coefficient: null")
    return chosen


def sets(run) -> list[dict]:
    """Each rated score set's files at its benchmark grouping; agreement.csv (the human ceiling) and alt_test.csv
    where the set has per-rater ratings (rule agreement makes them), else None."""
    found = []
    for dataset, scoreset in rated_sets(run):
        top, chosen = f"results/{dataset}/{scoreset}", grouping(run, dataset, scoreset)
        registries = meta.consensus_inputs(run.config, dataset, scoreset)
        found.append({
            "dataset": dataset, "scoreset": scoreset, "grouping": chosen,
            "intervals": f"{meta.BASE.format(dataset=dataset, scoreset=scoreset)}/boot_both_{chosen}.csv",
            "clusters": f"{meta.BASE.format(dataset=dataset, scoreset=scoreset)}/clusters_{chosen}.csv",
            "confounds": f"{top}/confounds.csv",
            "registries": [registries[key] for key in ("registry", "judge_registry") if key in registries],
            "agreement": f"{top}/agreement.csv" if run.structure(dataset, scoreset)["raters"] else None,
            "alt_test": f"{top}/alt_test.csv" if run.structure(dataset, scoreset)["raters"] else None,
        })
    return found


def inputs(run) -> list[str]:
    """The files the benchmark reads: a set's meta-evaluation, confounds, registries, human ceiling and alt-test."""
    return list(dict.fromkeys(path for found in sets(run) for key in ("intervals", "clusters", "confounds",
                                                                       "registries", "agreement", "alt_test")
                              for path in (found[key] if isinstance(found[key], list) else [found[key]])
                              if path is not None))


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
    """The caption's sentences that depend on the run: each set's grouping, the coefficient. The answer itself is
    added by the job (its page opens with it; Snakemake's report, which renders captions before any data, leaves
    it empty)."""
    said = "; ".join(f"{found['dataset']} ({found['scoreset']}): {found['grouping']}" for found in sets(run))
    return Facts({"groupings": said, "coefficient": coefficient(run.config)})
