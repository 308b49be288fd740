# Config validation, data-source helpers, wildcard constraints, and the helpers several rule files share.
# Each rule file holds the input functions of its own rules.
import os
import re
import sys
from functools import cache
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "src"))  # the package, also without `pip install -e`
# Jobs too import this checkout's package: Snakemake appends its own paths to a script's sys.path, after the one
# `pip install -e` put there, which may be another checkout's.
if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] != sys.path[0]:
    os.environ.update(PYTHONPATH=os.pathsep.join(filter(None, [sys.path[0], os.environ.get("PYTHONPATH")])))
# Jobs inherit this environment. OpenMP threads (torch, numba) that wait by spinning burn their core while the
# thread they wait for is descheduled: on a machine busy with other work, torch's 2-thread encoder pass took
# 2.3x the CPU time and 2-3x the wall time of waiting passively (bench/bench_thread_wait.py); on a quiet machine
# passive waits cost 10-15 % of that pass's wall time. Same results.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pandas as pd

from storyeval.data.fetch import find_in_mirrors, local_copy, reachable, sha256sum, verify
from storyeval.data.hanna import read_wide, released_registry
from storyeval.data.registry import resolve_metrics
from storyeval.config import ConfigSources, check_config, check_consistency
from storyeval.datasets import RELEASED, describe, metric_names
from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.names import check_path_names, check_released
from storyeval.neural.placement import gpu_jobs, gpu_visible, storyer_threads
from storyeval.metrics import catalog
from storyeval.plots.pages import TABLE_CAPTIONS, figure_caption, figure_labels, table_labels
from storyeval import plan
from storyeval.sources import module_sources
from storyeval.text.fit import fitted_description, load_fitted


def startup_check(check, *args):
    """Run a package check before any job; its InputError becomes Snakemake's one-line start-up error."""
    try:
        return check(*args)
    except InputError as error:
        raise WorkflowError(str(error)) from None


# Where each config key came from (config.yaml, a --configfile, or --config), for the errors below.
CONFIG_SOURCES = ConfigSources.from_workflow(
    workflow.configfiles, workflow.overwrite_configfiles, workflow.config_settings.config
)
startup_check(check_config, config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml", CONFIG_SOURCES)
validate(config, "../schemas/config.schema.yaml")  # fills the schema's defaults
for _name, _entry in config["datasets"].items():  # `metrics: all` -> the catalog's metrics the texts allow
    _entry["metrics"] = startup_check(metric_names, _entry, _name)
startup_check(check_consistency, config, CONFIG_SOURCES)
startup_check(check_path_names, config, CONFIG_SOURCES)


def config_key(key):
    """How start-up errors name a config key: `<file that set it, or --config> <dotted key>`."""
    return f"{CONFIG_SOURCES.origin(key)} {key}"


CORE_ENV = "../../envs/core.yaml"
# Job order on few cores, longest processing time first (Graham 1969): the statistics (1-2 s each; every figure
# and table reads one) and the tables (under a second each) run as soon as they can, then the figure families,
# the longest first (priority: storyeval.plan.family_cost): no long figure job starts last and runs alone.
STATISTICS_FIRST = 1000  # above any figure family's cost
# The jobs on the way to the slowest result (hanna-llm's texts, their embedding pass, the metrics that read it)
# and the chain of StoryER's jobs start before the statistics: short jobs fill the cores around them.
LONGEST_PATH_FIRST = 3000
STORYER_FIRST = 2000
# A neural job holds the GPU (one at a time, profiles/default) only where it runs on one
# (storyeval.neural.placement).
GPU_JOBS = gpu_jobs(config["device"], gpu_visible())


def storyer_job_threads(wildcards):
    """Threads of StoryER's jobs: 1 on a machine of fewer than 4 cores (storyeval.neural.placement)."""
    return storyer_threads(workflow.resource_settings.cores)


RESOURCES = config["data"]["resources_dir"]
HANNA = config["hanna"]
# Pinned third-party files by source; the user's datasets given by URL are the source "datasets".
SOURCES = {
    "hanna": config["hanna"],
    "storyer": config["storyer"],
    "s3": config["s3"],
    "datasets": {
        "files": {
            name: {"path": name + Path(entry["url"]).suffix, "url": entry["url"], "sha256": entry["sha256"]}
            for name, entry in config["datasets"].items()
            if "url" in entry
        }
    },
}
RECORDED = f"{RESOURCES}/recorded-checksums.tsv"  # sha256 of files pinned with sha256: null, at first download
STARTUP_NOTES = []  # said once when a run starts (onstart), not on every parse (-n, --lint, cluster jobs)


def say_startup_notes():
    for note in filter(None, STARTUP_NOTES):
        logger.info(f"storyeval: {note}")


def mirrors(source):
    return config["data"]["mirrors"].get(source, [])


def pinned_path(source, key):
    """Local path of a pinned third-party file (fetched by rule fetch)."""
    return f"{RESOURCES}/{source}/{Path(SOURCES[source]['files'][key]['path']).name}"


def hanna_path(key):
    return pinned_path("hanna", key)


def pinned_url(source, key):
    entry = SOURCES[source]["files"][key]
    return entry.get("url") or f"{SOURCES[source]['base_url']}/{entry['commit']}/{entry['path']}"


def pinned_entry(wildcards):
    """The config entry (url, sha256, mirrors) of the file named by the `source` and `file` wildcards, checked
    (`check_sources`) when the DAG first needs it: before any job, and only for the files the targets read."""
    for key, entry in SOURCES[wildcards.source]["files"].items():
        if Path(entry["path"]).name == wildcards.file:
            check_sources([(wildcards.source, key)])
            return {
                "key": key,
                "url": pinned_url(wildcards.source, key),
                "sha256": entry["sha256"],
                "mirrors": mirrors(wildcards.source),
            }
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
    STARTUP_NOTES.append(
        f"skipping the raw-annotation outputs (hanna text dataset, its computed metrics, worker-id ICC): "
        f"{name} is in no mirror ({', '.join(mirrors('hanna')) or 'none'}) and {pinned_url('hanna', 'annotations')} "
        f"is unreachable; to use it, download that URL into "
        f"{mirrors('hanna')[0] if mirrors('hanna') else 'a directory listed in data.mirrors.hanna'}"
    )
    return False


def released_metrics():
    """The released scores' registry (slug, label) from the verified file's header; None before it is fetched."""
    scores = VERIFIED.get(("hanna", "scores"))
    return None if scores is None else startup_check(released_registry, scores)


def check_metric_names():
    """Stop before any job when config names a metric that neither the released scores (the verified file's
    header) nor a computed metric has: a typo. A score set that lacks a named metric skips it (its rule logs)."""
    released = released_metrics()
    if released is None:
        return  # validated again by the rules once the file is fetched
    computed = pd.DataFrame([{"slug": slug, "label": row[0]} for slug, row in catalog.registry_rows().items()])
    registry = pd.concat([released[["slug", "label"]], computed], ignore_index=True)
    for key, names in {
        "figures.representative_metrics": config["figures"]["representative_metrics"],
        "stats.topk.metrics": config["stats"]["topk"]["metrics"],
        "reanalysis.sum_of_ranks_metrics": config["reanalysis"]["sum_of_ranks_metrics"],
    }.items():
        startup_check(resolve_metrics, names, registry, config_key(key))


def find_released_scores():
    """The released scores' local copy (fetched, or a mirror's), verified at start-up when there is one, so that
    the checks on its content run before any job; a copy that does not match its sha256 stops the run here, in
    one line (none at all: checked when a target needs the file, pinned_entry)."""
    if ("hanna", "scores") not in VERIFIED:
        pinned = SOURCES["hanna"]["files"]["scores"]["sha256"]
        local = startup_check(local_copy, pinned_path("hanna", "scores"), mirrors("hanna"), pinned, RECORDED)
        if local is not None:
            VERIFIED[("hanna", "scores")] = local


def check_released_data():
    """Before any job, on the verified released scores: their system names, the names config gives (reference
    system, metrics, criteria), the memory of the configured resampling counts, and one warning line on absurd
    values (said at the start of a run)."""
    scores = VERIFIED.get(("hanna", "scores"))
    if scores is None:
        return  # none local yet: the jobs check the file they fetch
    columns = startup_check(read_wide, scores)
    STARTUP_NOTES.append(startup_check(check_released, columns, str(scores), config, CONFIG_SOURCES))
    prompts = len(next(iter(next(iter(columns.values())).values())))
    shape = (prompts, len(next(iter(columns.values()))), len(columns))  # criteria and metrics
    for key in ("stats.n_resamples", "meta.n_permutations", "meta.n_resamples"):
        section, name = key.split(".")
        startup_check(check_draws, config[section][name], *shape, config_key(key))


def check_local_tables():
    """Before any job: each dataset read from a local path exists and matches its sha256."""
    for name, dataset in config["datasets"].items():
        if "path" not in dataset:
            continue
        if not Path(dataset["path"]).is_file():
            raise WorkflowError(
                f"{config_key(f'datasets.{name}.path')}: no file {dataset['path']} (relative to "
                f"{os.getcwd()}); fix: correct the path, or run from the directory it is relative to"
            )
        startup_check(
            verify,
            Path(dataset["path"]),
            dataset["sha256"],
            f"{config_key(f'datasets.{name}.path')} " f"{dataset['path']}",
            "if you changed the file on purpose, set sha256: to the new value",
        )


FITTED = {}  # user dataset -> its declaration reduced to what its file allows (storyeval.text.fit)


def dataset_notes():
    """One start-up line per user dataset (kind table) that lacks something the analysis could use, or whose
    data allow less than its columns declare, saying what follows (the released datasets' shapes are in the
    README's table)."""
    reference_based = [name for name, entry in catalog.CATALOG.items() if "reference" in entry.needs]
    for name in [name for name in TEXT_DATASETS if config["datasets"][name]["kind"] == "table"]:
        entry = config["datasets"][name]
        declared = describe(entry, name)
        path = entry.get("path") or pinned_path("datasets", name)
        notes = []
        if Path(path).is_file():
            data, notes = startup_check(load_fitted, entry, name, path)
            FITTED[name] = fitted_description(declared, data)
        lacks = declared.lacks(reference_based) + notes
        if lacks:
            STARTUP_NOTES.append(f"dataset {name}: " + "; ".join(lacks))


VERIFIED = {}  # (source, key) -> the local copy checked against its sha256 this run, None: to be downloaded


def check_sources(files):
    """Before any job: each (source, key) file's local copy (fetched into resources/, else a mirror's) matches
    its pinned or recorded sha256, or the file is downloadable. One line per problem, before anything parses."""
    for source, key in files:
        if (source, key) in VERIFIED:
            continue
        local = startup_check(
            local_copy, pinned_path(source, key), mirrors(source), SOURCES[source]["files"][key]["sha256"], RECORDED
        )
        if local is None and not (config["data"]["allow_download"] and reachable(pinned_url(source, key))):
            name = Path(SOURCES[source]["files"][key]["path"]).name
            raise WorkflowError(
                f"{name}: in no mirror ({', '.join(mirrors(source)) or 'none configured'}) and "
                f"{pinned_url(source, key)} is unreachable or downloads are off; fix: put the file in a "
                f"directory listed under data.mirrors.{source}, or run where that URL answers"
            )
        VERIFIED[(source, key)] = local


# Every copy already fetched is read by some rule: all are verified on every start (a few ms for the ~10 MB).
# Files still to fetch are checked when a target needs them (pinned_entry): a dataset of one's own needs none.
check_sources(
    [
        (source, key)
        for source in SOURCES
        for key in SOURCES[source]["files"]
        if Path(pinned_path(source, key)).is_file()
    ]
)
check_local_tables()
find_released_scores()
check_metric_names()
check_released_data()
USE_ANNOTATIONS = annotations_available()
TEXT_DATASETS = [name for name in config["datasets"] if name != "hanna" or USE_ANNOTATIONS]
dataset_notes()
DATASETS = list(dict.fromkeys(["hanna", *TEXT_DATASETS]))
SCORESETS = ["released", "computed"]


wildcard_constraints:
    dataset="|".join(map(re.escape, DATASETS)),
    textset="|".join(map(re.escape, TEXT_DATASETS)) or "none",
    scoreset="|".join(SCORESETS),
    source="|".join(SOURCES),
    metric="|".join(catalog.CATALOG),
    encoder="|".join(
        sorted(
            {
                re.escape(model["name"])
                for role, model in config["models"].items()
                if model and role in ("encoder", "sentence_encoder")
            }
        )
    )
    or "none",


# What several rule files share: score-set structure, the metric families, report entries, digests.

# The reanalyses rank a score set's metrics (reanalysis.sum_of_ranks_metrics) over its criteria.
REANALYSES = plan.REANALYSES


def described(dataset, scoreset):
    """What the score set's dataset is (storyeval.datasets): HANNA's released scores, or a configured dataset."""
    if scoreset == "released":
        return RELEASED
    return FITTED.get(dataset) or describe(config["datasets"][dataset], dataset)


def scoreset_metrics(dataset, scoreset):
    """Slugs and labels of the metrics a score set will hold: the released file's header (all the configured
    names, before it is fetched), or the columns of the dataset's enabled metrics."""
    if scoreset == "released":
        registry = released_metrics()
        return None if registry is None else set(registry["slug"]) | set(registry["label"])
    columns = [
        (slug, column.label)
        for metric in enabled_metrics(dataset)
        for slug, column in catalog.entry(metric).columns.items()
    ]
    return {name for pair in columns for name in pair}


def present(names, metrics):
    """How many of the configured metric `names` a score set holds (all of them when not yet known)."""
    return len(names) if metrics is None else sum(name in metrics for name in names)


@cache
def structure(dataset, scoreset):
    """What a score set's analysis can do: its levels, criteria, systems and raters, and which config lists
    (representative subset, Fig. 8 metrics, the reanalyses' metrics) it holds enough metrics of."""
    data = described(dataset, scoreset)
    metrics = scoreset_metrics(dataset, scoreset)
    rated = bool(data.criteria)
    return {
        "levels": [level for level in config["analysis"]["levels"] if level in data.levels],
        "systems": data.grouped,
        "raters": data.raters,
        "ratings": rated,
        "criteria": list(data.criteria),
        "subset": rated and data.grouped and present(config["figures"]["representative_metrics"], metrics) >= 2,
        "topk": data.grouped and present(config["stats"]["topk"]["metrics"], metrics) >= 1,
        "reanalyses": rated and present(config["reanalysis"]["sum_of_ranks_metrics"], metrics) >= 2,
    }


def dataset_levels(wildcards):
    return structure(wildcards.dataset, wildcards.scoreset)["levels"]


def scoreset_inputs(wildcards):
    base = f"results/{wildcards.dataset}"
    return {
        "stories": f"{base}/data/stories.csv",
        "human": f"{base}/data/human_scores.csv",
        "scores": f"{base}/{wildcards.scoreset}/scores.parquet",
        "registry": f"{base}/{wildcards.scoreset}/metrics.csv",
    }


MODELLED = [name for name, entry in catalog.CATALOG.items() if entry.resource]  # scores named <metric>@<model>


LEARNED = [name for name in MODELLED if catalog.entry(name).resource[0] == "model_file"]  # trained here: storyer.smk


NEURAL = [name for name in MODELLED if name not in LEARNED]  # rule neural_metric


STRING = [name for name in catalog.CATALOG if name not in MODELLED]


def neural_model(metric):
    """The configured model (name, path) a neural metric reads, or None when its role is disabled."""
    _, role = catalog.entry(metric).resource
    return config["models"][role]


def metric_stem(metric):
    """File stem of a metric's scores: the model is part of a neural metric's name."""
    return f"{metric}@{neural_model(metric)['name']}" if metric in MODELLED else metric


def enabled_metrics(dataset):
    """The dataset's metrics whose model role is configured (config.yaml disables roles with no offline model)."""
    return [
        metric for metric in config["datasets"][dataset]["metrics"] if metric not in MODELLED or neural_model(metric)
    ]


def metric_inputs(wildcards):
    return {"texts": f"results/{wildcards.dataset}/data/texts.parquet"}


def metric_digest(script):
    """The sources parameter of a metric rule: its script, the metric's module (loaded by name, so no import
    names it) and every storyeval module these import (script_digest)."""
    return lambda wildcards: script_digest(script, catalog.entry(wildcards.metric).module)


def metric_params(wildcards):
    return config["metric_params"].get(wildcards.metric, {})


def encoder_model(wildcards):
    """The configured encoder named by the `encoder` wildcard: its role, path, layers to cache and revision."""
    for role in ("encoder", "sentence_encoder"):
        model = config["models"][role]
        if model and model["name"] == wildcards.encoder:
            layers = model.get("layers") or config["embedding"]["layers"]
            return {"role": role, "path": model["path"], "layers": layers, "revision": model.get("revision")}
    raise WorkflowError(f"no configured encoder is named {wildcards.encoder!r}; fix: set models.encoder.name in config")


def report_page(base, name):
    return f"{base}/report/{name}.html"


def report_category(wildcards):
    return f"{wildcards.dataset}, {wildcards.scoreset} scores"


def caption_file(name):
    """A caption of the report (workflow/report/<name>.rst), as an input of the job whose page shows it."""
    return str(Path(workflow.basedir) / "workflow/report" / f"{name}.rst")


def report_entry(path, caption, subcategory, labels, category=report_category):
    """One result of the report: an HTML page (storyeval.plots.pages) that shows a figure at full size or a
    table as a table; the report shows HTML inline, while PNG is shrunk to the window and CSV downloaded."""
    return report(path, caption=f"../report/{caption}.rst", category=category, subcategory=subcategory, labels=labels)


def script_digest(script, *modules):
    """sha256 of a rule's script, of the modules it loads by name and of every storyeval module these import
    (storyeval.sources): editing any of them reruns the rule (Snakemake's params trigger). Keys are module
    names and the script's own name, so the parameters do not depend on where the repository lies."""
    path = str(Path(workflow.basedir) / "workflow/scripts" / script)
    return {(script if key == path else key): sha256sum(file) for key, file in module_sources(path, *modules).items()}
