# Config validation, data-source helpers, wildcard constraints and targets.
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "src"))  # the package, also without `pip install -e`

from storyeval.data.fetch import find_in_mirrors, reachable
from storyeval.data.registry import build_registry, is_metric_label, resolve_metrics
from storyeval.config import check_config
from storyeval.errors import InputError

try:
    check_config(config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml")
except InputError as error:
    raise WorkflowError(str(error)) from None
validate(config, "../schemas/config.schema.yaml")  # fills the schema's defaults

CORE_ENV = "../../envs/core.yaml"
RESOURCES = config["data"]["resources_dir"]
HANNA = config["hanna"]
SCORESETS = ["released"]
STATS_TABLES = ["williams", "bootstrap_f1", "topk", "icc", "kemeny", "kemeny_summary", "correlation_ci",
                "reanalysis1_sum_of_ranks", "reanalysis2_top_k", "reanalysis2_coefficient_agreement"]
DATASETS = ["hanna"]


wildcard_constraints:
    dataset="|".join(DATASETS),
    scoreset="|".join(SCORESETS),
    level="story|system",
    coefficient="pearson|spearman|kendall",


def mirrors(dataset):
    return config["data"]["mirrors"].get(dataset, [])


def hanna_path(key):
    """Local path of a pinned HANNA file (fetched by rule fetch_hanna)."""
    return f"{RESOURCES}/hanna/{HANNA['files'][key]['path']}"


def pinned_url(key):
    entry = HANNA["files"][key]
    return f"{HANNA['base_url']}/{entry['commit']}/{entry['path']}"


def hanna_entry(wildcards):
    """The config entry (key, url, sha256) of the HANNA file named by the `file` wildcard."""
    for key, entry in HANNA["files"].items():
        if entry["path"] == wildcards.file:
            return {"key": key, "url": pinned_url(key), "sha256": entry["sha256"], "mirrors": mirrors("hanna")}
    raise WorkflowError(f"no pinned HANNA file is called {wildcards.file!r}; fix: add it under hanna.files in config.yaml")


def annotations_available():
    """Use the raw annotation file when fetched already, mirrored, or its pinned URL answers."""
    if HANNA["annotations"] == "skip":
        return False
    name = HANNA["files"]["annotations"]["path"]
    if Path(hanna_path("annotations")).is_file() or find_in_mirrors(name, mirrors("hanna")):
        return True
    if config["data"]["allow_download"] and reachable(pinned_url("annotations")):
        return True
    logger.warning(
        f"storyeval: skipping the raw-annotation outputs (worker-id rater table): {name} is in no mirror "
        f"({', '.join(mirrors('hanna')) or 'none'}) and {pinned_url('annotations')} is unreachable; "
        f"to use it, download that URL into {mirrors('hanna')[0] if mirrors('hanna') else 'a directory listed in data.mirrors.hanna'}"
    )
    return False


def released_registry():
    """Metric registry from the header of the released score file, when it is at hand before the run."""
    name = HANNA["files"]["scores"]["path"]
    local = Path(hanna_path("scores"))
    source = local if local.is_file() else find_in_mirrors(name, mirrors("hanna"))
    if source is None:
        return None
    with open(source, encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split(",")
    return build_registry([column for column in header if is_metric_label(column)], str(source))


def check_metric_names():
    """Stop before any job when config names a metric the registry does not know."""
    registry = released_registry()
    if registry is None:
        return  # validated again by the figure rules once the file is fetched
    lists = {
        "figures.representative_metrics": config["figures"]["representative_metrics"],
        "stats.topk.metrics": config["stats"]["topk"]["metrics"],
        "reanalysis.sum_of_ranks_metrics": config["reanalysis"]["sum_of_ranks_metrics"],
    }
    try:
        for key, names in lists.items():
            resolve_metrics(names, registry, f"config.yaml {key}")
    except InputError as error:
        raise WorkflowError(str(error)) from None


check_metric_names()
USE_ANNOTATIONS = annotations_available()


def analysis_targets(dataset, scoreset):
    base = f"results/{dataset}/{scoreset}"
    tables = ["correlations", "system_means", "top_metrics", "borda"] + STATS_TABLES
    return [f"{base}/{name}.csv" for name in tables] + table_targets(base) + figure_targets(base)


def all_targets():
    targets = [hanna_path("license")] + analysis_targets("hanna", "released")
    if USE_ANNOTATIONS:
        targets.append("results/hanna/data/worker_ratings.csv")  # also feeds Tab. 3
    return targets


# Inputs and outputs shared by the analysis and figure rules.

def scoreset_inputs(wildcards):
    base = f"results/{wildcards.dataset}"
    return {
        "stories": f"{base}/data/stories.csv",
        "human": f"{base}/data/human_scores.csv",
        "scores": f"{base}/{wildcards.scoreset}/scores.parquet",
        "registry": f"{base}/{wildcards.scoreset}/metrics.csv",
    }


def wanted(figures):
    """Figures whose level and coefficient the config computes."""
    analysis = config["analysis"]
    return [name for name, (level, coefficient, *_) in figures.items()
            if level in analysis["levels"] and coefficient in analysis["coefficients"]]


def figure_targets(base):
    names = wanted(CRITERIA_FIGURES) + wanted(METRIC_CRITERIA_FIGURES) + wanted(METRIC_METRIC_FIGURES)
    names += ["fig09_rating_violins", "fig07_bootstrap_f1_subset", "fig26_bootstrap_f1", "fig08_topk_systems"]
    if "story" in config["analysis"]["levels"] or "system" in config["analysis"]["levels"]:
        names += [name for name, (level, _, _) in WILLIAMS_FIGURES.items() if level in config["analysis"]["levels"]]
    return [f"{base}/figures/{name}.{ext}" for name in names for ext in ("pdf", "png")]


def table_targets(base):
    tables = [name for name in TABLES + STATS_TABLE_RENDERINGS if name != "tab5_top3_pearson" or "pearson" in config["analysis"]["coefficients"]]
    return [f"{base}/tables/{name}.{ext}" for name in tables for ext in ("csv", "md")]


def heatmap_params(figures):
    def params(wildcards):
        level, coefficient, *subset = figures[wildcards.fig]
        return {"level": level, "coefficient": coefficient, "subset": bool(subset and subset[0])}

    return params


def figure_outputs(caption):
    return {
        ext: report(
            f"results/{{dataset}}/{{scoreset}}/figures/{{fig}}.{ext}",
            caption=f"../report/{caption}.rst",
            category="{dataset} {scoreset}",
            subcategory="Figures",
        )
        for ext in ("pdf", "png")
    }


def table_outputs(name):
    return {
        ext: report(
            f"results/{{dataset}}/{{scoreset}}/tables/{name}.{ext}",
            caption="../report/table.rst",
            category="{dataset} {scoreset}",
            subcategory="Tables",
        )
        for ext in ("csv", "md")
    }


def icc_inputs(wildcards):
    """Released rater positions always; the raw file's worker-id judges when it is used."""
    inputs = {"positions": f"results/{wildcards.dataset}/data/rater_ratings.csv"}
    if wildcards.dataset == "hanna" and USE_ANNOTATIONS:
        inputs["workers"] = "results/hanna/data/worker_ratings.csv"
    return inputs
