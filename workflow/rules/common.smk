# Config validation, data-source helpers, wildcard constraints and targets.
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "src"))  # the package, also without `pip install -e`

from storyeval.data.fetch import find_in_mirrors, reachable, sha256sum, verify
from storyeval.data.registry import build_registry, is_metric_label, resolve_metrics
from storyeval.config import check_config
from storyeval.errors import InputError
from storyeval.metrics import catalog

try:
    check_config(config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml")
except InputError as error:
    raise WorkflowError(str(error)) from None
validate(config, "../schemas/config.schema.yaml")  # fills the schema's defaults

CORE_ENV = "../../envs/core.yaml"
RESOURCES = config["data"]["resources_dir"]
HANNA = config["hanna"]
SOURCES = {"hanna": config["hanna"], "storyer": config["storyer"]}


def mirrors(source):
    return config["data"]["mirrors"].get(source, [])


def pinned_path(source, key):
    """Local path of a pinned third-party file (fetched by rule fetch)."""
    return f"{RESOURCES}/{source}/{Path(SOURCES[source]['files'][key]['path']).name}"


def hanna_path(key):
    return pinned_path("hanna", key)


def pinned_url(source, key):
    entry = SOURCES[source]["files"][key]
    return f"{SOURCES[source]['base_url']}/{entry['commit']}/{entry['path']}"


def pinned_entry(wildcards):
    """The config entry (url, sha256, mirrors) of the file named by the `source` and `file` wildcards."""
    for key, entry in SOURCES[wildcards.source]["files"].items():
        if Path(entry["path"]).name == wildcards.file:
            return {"key": key, "url": pinned_url(wildcards.source, key), "sha256": entry["sha256"],
                    "mirrors": mirrors(wildcards.source)}
    raise WorkflowError(f"no pinned {wildcards.source} file is called {wildcards.file!r}; fix: add it to config.yaml")


def annotations_available():
    """Use the raw annotation file when fetched already, mirrored, or its pinned URL answers."""
    if HANNA["annotations"] == "skip":
        return False
    name = HANNA["files"]["annotations"]["path"]
    if Path(hanna_path("annotations")).is_file() or find_in_mirrors(name, mirrors("hanna")):
        return True
    if config["data"]["allow_download"] and reachable(pinned_url("hanna", "annotations")):
        return True
    logger.warning(
        f"storyeval: skipping the raw-annotation outputs (hanna text dataset, its computed metrics, worker-id ICC): "
        f"{name} is in no mirror ({', '.join(mirrors('hanna')) or 'none'}) and {pinned_url('hanna', 'annotations')} "
        f"is unreachable; to use it, download that URL into "
        f"{mirrors('hanna')[0] if mirrors('hanna') else 'a directory listed in data.mirrors.hanna'}"
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
        return  # validated again by the rules once the file is fetched
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


# Text columns each dataset kind provides (a metric needs a subset of them).
KIND_COLUMNS = {"hanna-annotations": {"story", "prompt", "reference"}, "hanna-llm": {"story", "prompt", "reference"},
                "storyer": {"story"}}


def check_datasets():
    """Every dataset's metrics exist, fit the dataset, and get only parameters their compute() accepts."""
    for name, dataset in config["datasets"].items():
        source, key = dataset["file"].split("/")
        if key not in SOURCES[source]["files"]:
            raise WorkflowError(f"config.yaml datasets.{name}.file: no pinned file {key!r} under {source}.files; fix: add it or correct the key")
        for metric in dataset["metrics"]:
            if metric not in catalog.CATALOG:
                raise WorkflowError(f"config.yaml datasets.{name}.metrics: unknown metric {metric!r}; fix: use one of {', '.join(catalog.CATALOG)}")
            if not catalog.applicable(metric, KIND_COLUMNS[dataset["kind"]]):
                raise WorkflowError(
                    f"config.yaml datasets.{name}.metrics: {metric} needs {sorted(catalog.entry(metric).needs)}, "
                    f"which a {dataset['kind']} dataset lacks; fix: remove it from that dataset"
                )
    for metric, params in config["metric_params"].items():
        if metric not in catalog.CATALOG:
            raise WorkflowError(f"config.yaml metric_params: unknown metric {metric!r}; fix: use one of {', '.join(catalog.CATALOG)}")
        accepted = catalog.parameters(metric)
        unknown = sorted(set(params) - accepted)
        if unknown:
            raise WorkflowError(f"config.yaml metric_params.{metric}: unknown parameter(s) {unknown}; fix: use {sorted(accepted)}")


def required_files():
    """(source, key) of the pinned files the configured run reads (the optional raw annotations aside)."""
    files = [("hanna", key) for key in ("scores", "scores_llm", "license")]
    for dataset in config["datasets"].values():
        source, key = dataset["file"].split("/")
        if key != "annotations" and dataset["metrics"]:
            files.append((source, key))
    return list(dict.fromkeys(files))


def check_sources(files):
    """Before any job: every needed (source, key) file is fetched already, or in a mirror with the pinned checksum,
    or downloadable. A wrong checksum or an unreachable file stops the run with one line."""
    for source, key in files:
        entry = SOURCES[source]["files"][key]
        name = Path(entry["path"]).name
        if Path(pinned_path(source, key)).is_file():
            continue
        local = find_in_mirrors(name, mirrors(source))
        try:
            if local is not None:
                verify(local, entry["sha256"], str(local))
            elif not (config["data"]["allow_download"] and reachable(pinned_url(source, key))):
                raise InputError(
                    f"{name}: in no mirror ({', '.join(mirrors(source)) or 'none configured'}) and "
                    f"{pinned_url(source, key)} is unreachable or downloads are off; fix: put the file in a "
                    f"directory listed under data.mirrors.{source}, or run where that URL answers"
                )
        except InputError as error:
            raise WorkflowError(str(error)) from None


check_metric_names()
check_datasets()
check_sources(required_files())
USE_ANNOTATIONS = annotations_available()
TEXT_DATASETS = [name for name in config["datasets"] if name != "hanna" or USE_ANNOTATIONS]
DATASETS = list(dict.fromkeys(["hanna", *TEXT_DATASETS]))
SCORESETS = ["released", "computed"]


wildcard_constraints:
    dataset="|".join(map(re.escape, DATASETS)),
    textset="|".join(map(re.escape, TEXT_DATASETS)) or "none",
    scoreset="|".join(SCORESETS),
    source="|".join(SOURCES),
    metric="|".join(catalog.CATALOG),
    encoder="|".join(sorted({re.escape(model["name"]) for role, model in config["models"].items()
                             if model and role in ("encoder", "sentence_encoder")})) or "none",
