# Config validation and the start-up checks (storyeval.workflow.startup), wildcard constraints, and the one-line
# adapters several rule files share. What each rule reads and makes is planned in storyeval.workflow and
# storyeval.plan, plain functions of the config and of what start-up found (RUN), tested without Snakemake.
import os
import re
import sys
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
# POT runs on numpy arrays only: its torch backend costs 1.1 s of import in each job (and worker process) that
# imports POT, and the job server (storyeval.workflow.jobserver) imports POT once for all jobs only without it.
os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")

from storyeval.data.fetch import sha256sum
from storyeval.datasets import KIND_MODULES
from storyeval.data.hanna import released_registry
from storyeval.config import ConfigSources, check_config, check_consistency, take_whole
from storyeval.errors import InputError
from storyeval.config_names import check_path_names
from storyeval.neural.placement import gpu_jobs, gpu_visible, job_threads
from storyeval.metrics import catalog
from storyeval.plots.pages import TABLE_CAPTIONS, figure_caption, figure_labels, table_labels
from storyeval import plan
from storyeval.stats import design
from storyeval.sources import Digests, Specs, module_sources
from storyeval.workflow import analysis as workflow_analysis
from storyeval.workflow import jobserver
from storyeval.workflow import judges as workflow_judges
from storyeval.workflow import scheduling
from storyeval.workflow import scriptjobs
from storyeval.workflow import metrics as workflow_metrics
from storyeval.workflow import selection as workflow_selection
from storyeval.workflow import shards as workflow_shards
from storyeval.workflow import startup as workflow_startup
from storyeval.workflow import targets as workflow_targets
from storyeval.workflow.run import Run, text_datasets
from storyeval.workflow.sources import Pinned


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
take_whole(config, CONFIG_SOURCES)  # judges.datasets: the last config that names it says who is judged
startup_check(check_config, config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml", CONFIG_SOURCES)
validate(config, "../schemas/config.schema.yaml")  # fills the schema's defaults
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
# Before all: a fetch takes a fraction of a second (a mirror's copy and its checksum), and every path waits on its
# files; Snakemake passes no job's priority on to the jobs it needs, so a fetch left at 0 waited behind every
# statistic of the datasets already fetched, hanna-llm's stories among them (its embedding pass then ran last).
DATA_FIRST = 4000
# A neural job holds the GPU (one at a time, profiles/default) only where it runs on one
# (storyeval.neural.placement).
GPU_JOBS = gpu_jobs(config["device"], gpu_visible())


def neural_job_threads(wildcards):
    """Threads of a neural job: 1 on a machine of fewer than 4 cores (storyeval.neural.placement)."""
    return job_threads(workflow.resource_settings.cores)


RESOURCES = config["data"]["resources_dir"]
PINNED = Pinned(config)  # pinned third-party files by source; the user's datasets given by URL: source "datasets"
SOURCES = PINNED.sources
RECORDED = f"{RESOURCES}/recorded-checksums.tsv"  # sha256 of files pinned with sha256: null, at first download
STARTUP_NOTES = []  # said once, before the job statistics of a run or a dry run, not on every parse (--lint, jobs)


def say_startup_notes():
    for note in filter(None, workflow_judges.asked(STARTUP_NOTES, workflow.dag.jobs)):
        logger.info(f"storyeval: {note}")


logger.addFilter(workflow_startup.BeforeJobStats(say_startup_notes))


def pinned_entry(wildcards):
    """The config entry (url, sha256, mirrors) of the file named by the `source` and `file` wildcards, checked
    (`check_sources`) when the DAG first needs it: before any job, and only for the files the targets read."""
    entry = startup_check(PINNED.entry, wildcards.source, wildcards.file)
    check_sources([(wildcards.source, entry["key"])])
    return entry


VERIFIED = {}  # (source, key) -> the local copy checked against its sha256 this run, None: to be downloaded


def check_sources(files):
    """Before any job: each (source, key) file's local copy (fetched into resources/, else a mirror's) matches
    its pinned or recorded sha256, or the file is downloadable. One line per problem, before anything parses."""
    startup_check(workflow_startup.verify_sources, PINNED, files, VERIFIED, RECORDED)


# Every copy already fetched is read by some rule: all are verified on every start (a few ms for the ~10 MB).
# Files still to fetch are checked when a target needs them (pinned_entry): a dataset of one's own needs none.
check_sources(workflow_startup.fetched(PINNED))
startup_check(workflow_startup.check_local_tables, config, CONFIG_SOURCES)
if not workflow.dryrun:  # a dry run writes nothing
    startup_check(workflow_startup.check_writable, [*workflow_startup.OUTPUT_FOLDERS, RESOURCES])
# The released scores, verified now when a copy is local: the checks on their content run before any job.
startup_check(workflow_startup.find_released_scores, PINNED, VERIFIED, RECORDED)
RELEASED_SCORES = VERIFIED.get(("hanna", "scores"))  # None: not local yet, the jobs check the file they fetch
RELEASED_REGISTRY = None if RELEASED_SCORES is None else startup_check(released_registry, RELEASED_SCORES)
startup_check(workflow_startup.check_metric_names, config, RELEASED_REGISTRY, CONFIG_SOURCES)
STARTUP_NOTES.append(startup_check(workflow_startup.check_released_data, config, RELEASED_SCORES, CONFIG_SOURCES))
USE_ANNOTATIONS, _note = workflow_startup.annotations_available(config, PINNED)
STARTUP_NOTES.append(_note)
TEXT_DATASETS = text_datasets(config, USE_ANNOTATIONS)
# Each dataset's metrics: its list, `all` or the default, as far as this run has their texts, models and files.
STARTUP_NOTES.extend(
    startup_check(workflow_selection.select_metrics, config, TEXT_DATASETS, PINNED, VERIFIED, RECORDED, CONFIG_SOURCES)
)
FITTED, _notes = startup_check(workflow_startup.fit_tables, config, TEXT_DATASETS, PINNED)
STARTUP_NOTES[:0] = _notes  # a dataset's design and size first
# RUN, what the rule files plan from (storyeval.workflow), is the checked config and what start-up found.
RELEASED_NAMES = None if RELEASED_REGISTRY is None else {*RELEASED_REGISTRY["slug"], *RELEASED_REGISTRY["label"]}
RUN = Run(config, USE_ANNOTATIONS, FITTED, RELEASED_NAMES)
DATASETS = RUN.datasets
SCORESETS = ["released", "computed"]


wildcard_constraints:
    dataset="|".join(map(re.escape, DATASETS)),
    textset="|".join(map(re.escape, TEXT_DATASETS)) or "none",
    scoreset="|".join(SCORESETS),
    source="|".join(SOURCES),
    metric="|".join(catalog.CATALOG),
    encoder="|".join(sorted(map(re.escape, workflow_metrics.encoders(config)))) or "none",


# Shared by the rule files, one line each, for score-set inputs and levels, shards, metric options and digests,
# report entries.


def dataset_reference_system(wildcards):
    """The dataset's human "system", left out of correlations and rankings (storyeval.workflow.run.Run)."""
    return RUN.reference_system(wildcards.dataset, wildcards.get("scoreset", "computed"))


def dataset_rater_layout(wildcards):
    """What a rater id of the dataset is: a person, or a judge slot (storyeval.datasets.base.Dataset)."""
    return RUN.described(wildcards.dataset, wildcards.scoreset).rater_layout


def declared_design(wildcards, scoreset=None):
    """(rater_layout, rater_groups) the dataset declares; None where the data decide (kind table)."""
    entry = config["datasets"].get(wildcards.dataset, {})
    if entry.get("kind") == "table":
        return design.declared_design(entry)
    return RUN.described(wildcards.dataset, scoreset or wildcards.scoreset).rater_layout, None


def rater_kind(wildcards):
    """(raters' kind, alt-test epsilon) the dataset entry declares, else its kind's (storyeval.stats.alttest)."""
    entry = config["datasets"].get(wildcards.dataset, {})
    described = RUN.described(wildcards.dataset, wildcards.scoreset)
    return entry.get("rater_kind", described.rater_kind), entry.get("alt_test_epsilon")


def dataset_levels(wildcards):
    return RUN.structure(wildcards.dataset, wildcards.scoreset)["levels"]


def scoreset_inputs(wildcards):
    return workflow_analysis.scoreset_inputs(wildcards.dataset, wildcards.scoreset)


def metric_inputs(wildcards):
    return workflow_metrics.texts(wildcards.dataset)


def metric_digest(script):
    """The sources parameter of a metric rule: its script, the metric's module (loaded by name, so no import
    names it) and every storyeval module these import (script_digest)."""
    return lambda wildcards: script_digest(script, catalog.entry(wildcards.metric).module)


def kind_digest(script):
    """The sources parameter of the jobs that read a dataset through its kind (its script and the kind's module,
    loaded by name: storyeval.datasets.KIND_MODULES, with every storyeval module these import)."""

    def digest(wildcards):
        name = wildcards.get("textset") or wildcards.get("dataset")
        return script_digest(script, KIND_MODULES[config["datasets"][name]["kind"]])

    return digest


def shard_names(dataset):
    """The dataset's shards (0000, 0001, ...), known once checkpoint shard_texts (shards.smk) has run."""
    return workflow_shards.names(checkpoints.shard_texts.get(dataset=dataset).output[0])


def metric_params(wildcards):
    return config["metric_params"].get(wildcards.metric, {})


def report_category(wildcards):
    return f"{wildcards.dataset}, {wildcards.scoreset} scores"


def dataset_design(wildcards):
    """declared_design of the dataset's first rated score set: the design is the dataset's, whichever set."""
    return declared_design(wildcards, workflow_benchmark.dataset_parts(RUN, wildcards.dataset)[0][0])


def caption_file(name):
    """A caption of the report (workflow/report/<name>.rst), as an input of the job whose page shows it."""
    return str(Path(workflow.basedir) / "workflow/report" / f"{name}.rst")


def caption_facts(wildcards):
    """What the captions of a score set's report pages say of it (storyeval.workflow.targets.caption_facts)."""
    return workflow_targets.caption_facts(RUN, wildcards.dataset, wildcards.get("scoreset", "computed"))


def report_entry(path, caption, subcategory, labels, category=report_category):
    """One result of the report: an HTML page (storyeval.plots.pages) that shows a figure at full size or a
    table as a table; the report shows HTML inline, while PNG is shrunk to the window and CSV downloaded."""
    return report(path, caption=f"../report/{caption}.rst", category=category, subcategory=subcategory, labels=labels)


def report_entries(outputs):
    """Outputs (storyeval.plan) whose report pages, (path, caption, subcategory, labels), become report entries."""
    return {key: report_entry(*value) if isinstance(value, tuple) else value for key, value in outputs.items()}


def script_digest(script, *modules):
    """sha256 of a rule's script, of the modules it loads by name and of every storyeval module these import
    (storyeval.sources): editing any of them reruns the rule (Snakemake's params trigger). Keys are module
    names and the script's own name, so the parameters do not depend on where the repository lies."""
    path = str(Path(workflow.basedir) / "workflow/scripts" / script)
    return Digests(
        {(script if key == path else key): sha256sum(file) for key, file in module_sources(path, *modules).items()}
    )
