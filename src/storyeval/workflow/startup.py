"""The checks a run makes before any job, on the files it has: the pinned files' local copies, the user's local
tables, the released scores' content and the metric names config gives. Each raises InputError (one line: the
key, the file that set it, the fix); what is worth saying but not fatal comes back as start-up notes."""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, MutableMapping
from pathlib import Path

import pandas as pd

from storyeval.config import ConfigSources
from storyeval.config_names import check_released
from storyeval.data.fetch import find_in_mirrors, local_copy, reachable, verify
from storyeval.data.hanna import read_wide
from storyeval.data.registry import resolve_metrics
from storyeval.datasets import Dataset, describe
from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.metrics import catalog
from storyeval.stats.design import Design, declared_design, infer_design
from storyeval.text.fit import fitted_description, load_fitted
from storyeval.text.folder import check_digest
from storyeval.workflow.sources import Pinned, local_name


class DatasetNote(str):
    """A start-up line about some datasets (or some rules' targets): said only where the run's DAG has a job of one
    of them (`storyeval.workflow.judges.asked`), so that `-- dataset_mine` hears nothing of hanna-llm. `naming`
    (names -> text), where given, rewrites a line that names several datasets with the asked ones only."""

    datasets: tuple[str, ...]
    rules: tuple[str, ...]

    def __new__(cls, text: str, datasets=(), rules=(), naming: Callable[[list[str]], str] | None = None
                ) -> DatasetNote:
        note = super().__new__(cls, text)
        note.datasets, note.rules, note.naming = tuple(datasets), tuple(rules), naming
        return note

    def only(self, datasets: set) -> str:
        """The line as said in a run whose DAG has jobs of `datasets`."""
        asked = [name for name in self.datasets if name in datasets]
        return self.naming(asked) if self.naming and asked else str(self)


class BeforeJobStats(logging.Filter):
    """A filter on Snakemake's logger that calls `say` once, just before the first job statistics it logs: after
    the DAG is built and before any job, in a dry run as in a run (Snakemake's onstart hook skips dry runs), and
    never in a cluster job or a --lint, which log none."""

    def __init__(self, say: Callable[[], None]):
        super().__init__()
        self.say = say

    def filter(self, record: logging.LogRecord) -> bool:
        from snakemake_interface_logger_plugins.common import LogEvent

        if self.say is not None and getattr(record, "event", None) == LogEvent.RUN_INFO:
            say, self.say = self.say, None  # first: say logs through this logger
            say()
        return True


def key_name(sources: ConfigSources, key: str) -> str:
    """How errors name a config key: `<file that set it, or --config> <dotted key>`."""
    return f"{sources.origin(key)} {key}"


def verify_sources(pinned: Pinned, files: Iterable[tuple[str, str]], verified: MutableMapping, recorded: str) -> None:
    """Each (source, key) file's local copy (fetched into resources/, else a mirror's) matches its pinned or
    recorded sha256, or the file is downloadable; `verified` records each local copy (None: to be downloaded)."""
    for source, key in files:
        missing = missing_file(pinned, source, key, verified, recorded)
        if missing:
            raise InputError(f"{missing}; fix: put the file in a directory listed under data.mirrors.{source}, or run "
                             "where that URL answers")


def missing_file(pinned: Pinned, source: str, key: str, verified: MutableMapping, recorded: str) -> str | None:
    """Why the run has no pinned file, or None when it has it: a copy fetched into resources/ or in a configured
    mirror (either checked against its sha256: a wrong one stops the run), or, with data.allow_download, a pinned
    URL that answers now. `verified` records each file had (its local copy; None: to be downloaded)."""
    if (source, key) in verified:
        return None
    local = local_copy(pinned.path(source, key), pinned.mirrors(source), pinned.files(source)[key]["sha256"], recorded)
    if local is None and not (pinned.config["data"]["allow_download"] and reachable(pinned.url(source, key))):
        return (f"{local_name(pinned.files(source)[key])}: in no mirror "
                f"({', '.join(pinned.mirrors(source)) or 'none configured'}) and {pinned.url(source, key)} is "
                "unreachable or downloads are off")
    verified[(source, key)] = local
    return None


def fetched(pinned: Pinned) -> list[tuple[str, str]]:
    """(source, key) of every pinned file fetched already."""
    return [(source, key) for source in pinned.sources for key in pinned.files(source)
            if Path(pinned.path(source, key)).is_file()]


def find_released_scores(pinned: Pinned, verified: MutableMapping, recorded: str) -> None:
    """The released scores' local copy (fetched, or a mirror's), verified and recorded in `verified` when there is
    one, so that the checks on its content run before any job."""
    if ("hanna", "scores") not in verified:
        sha256 = pinned.files("hanna")["scores"]["sha256"]
        local = local_copy(pinned.path("hanna", "scores"), pinned.mirrors("hanna"), sha256, recorded)
        if local is not None:
            verified[("hanna", "scores")] = local


def check_local_tables(config, sources: ConfigSources) -> None:
    """Each dataset file read from a local path (`path:`, or a part's under `files:`) exists (relative to the
    working directory) and matches its sha256."""
    for name, dataset in config["datasets"].items():
        parts = [(f"datasets.{name}.files[{index}]", part) for index, part in enumerate(dataset.get("files") or [])]
        for where, part in [(f"datasets.{name}", dataset), *parts]:
            if "path" not in part:
                continue
            key = key_name(sources, f"{where}.path")
            if not Path(part["path"]).is_file():
                raise InputError(f"{key}: no file {part['path']} (relative to {os.getcwd()}); fix: correct the path, "
                                 "or run from the directory it is relative to")
            verify(Path(part["path"]), part["sha256"], f"{key} {part['path']}",
                   "if you changed the file on purpose, set sha256: to the new value")
        if dataset.get("texts"):  # a folder of story files, pinned by one digest
            check_digest(dataset["texts"], key_name(sources, f"datasets.{name}.texts"))


OUTPUT_FOLDERS = ("results", "logs", "benchmarks")  # where the rules write, relative to the working directory


def check_writable(folders: Iterable[str | Path]) -> None:
    """Each folder a run writes into (or, where it is not made yet, the nearest folder above it) takes a new file:
    a read-only one is one line before any job, not Snakemake's bare OSError at the first output."""
    for folder in folders:
        existing = Path(folder)
        while not existing.exists():
            existing = existing.parent
        try:
            with tempfile.TemporaryFile(dir=existing):
                pass
        except OSError as error:
            raise InputError(f"{folder}: {existing} is not writable ({error.strerror}), and the run writes its "
                             f"outputs under {folder}; fix: make it writable (chmod -R u+w {existing}), or run in a "
                             "directory you can write (snakemake --directory DIR)") from error


def check_metric_names(config, released: pd.DataFrame | None, sources: ConfigSources) -> None:
    """A metric that config names and that neither the released scores' registry (`released`, None before the
    file is fetched: checked by the rules then) nor a computed metric has is a typo. A score set that lacks a
    named metric skips it (its rule logs)."""
    if released is None:
        return
    computed = pd.DataFrame([{"slug": slug, "label": row[0]} for slug, row in catalog.registry_rows().items()])
    registry = pd.concat([released[["slug", "label"]], computed], ignore_index=True)
    for key, names in {
        "figures.representative_metrics": config["figures"]["representative_metrics"],
        "stats.topk.metrics": config["stats"]["topk"]["metrics"],
        "reanalysis.sum_of_ranks_metrics": config["reanalysis"]["sum_of_ranks_metrics"],
    }.items():
        resolve_metrics(names, registry, key_name(sources, key))


def check_released_data(config, scores: str | Path | None, sources: ConfigSources) -> str | None:
    """On the verified released scores (None: none local yet, the jobs check the file they fetch): their system
    names, the names config gives (reference system, metrics, criteria) and the memory of the configured
    resampling counts; returns one warning line on absurd values, or None."""
    if scores is None:
        return None
    columns = read_wide(scores)
    note = check_released(columns, str(scores), config, sources)
    prompts = len(next(iter(next(iter(columns.values())).values())))
    shape = (prompts, len(next(iter(columns.values()))), len(columns))  # criteria and metrics
    for key in ("stats.n_resamples", "meta.n_permutations", "meta.n_resamples"):
        section, name = key.split(".")
        check_draws(config[section][name], *shape, key_name(sources, key))
    return note


def annotations_available(config, pinned: Pinned) -> tuple[bool, str | None]:
    """Whether the raw annotation file is used: when fetched already, mirrored, or its pinned URL answers; else
    the note that says what is skipped and how to get the file."""
    hanna = config["hanna"]
    if hanna["annotations"] == "skip":
        return False, None
    name, mirrors = hanna["files"]["annotations"]["path"], pinned.mirrors("hanna")
    url = pinned.url("hanna", "annotations")
    if Path(pinned.path("hanna", "annotations")).is_file() or find_in_mirrors(name, mirrors):
        return True, None
    if config["data"]["allow_download"] and reachable(url):
        return True, None
    return False, DatasetNote(
        f"skipping the raw-annotation outputs (hanna text dataset, its computed metrics, worker-id ICC): "
        f"{name} is in no mirror ({', '.join(mirrors) or 'none'}) and {url} is unreachable; to use it, download "
        f"that URL into {mirrors[0] if mirrors else 'a directory listed in data.mirrors.hanna'}", ["hanna"]
    )


def design_of(data, entry) -> Design:
    """The design of a fitted table dataset (storyeval.stats.design), as its entry declares it or its data show."""
    ratings = None if data.ratings is None else data.ratings.rename(columns={"worker": "rater"})
    layout, groups = declared_design(entry)
    return infer_design(data.texts, ratings, layout, groups, entry.get("reference_system"))


def fit_tables(config, datasets: Iterable[str], pinned: Pinned) -> tuple[dict[str, Dataset], list[str]]:
    """The user tables (kind table) among `datasets`: each declaration reduced to what its file allows, when the
    file is there (storyeval.text.fit), and one note per table that lacks something the analysis could use, or
    whose data allow less than its columns declare, saying what follows."""
    reference_based = [name for name, entry in catalog.CATALOG.items() if "reference" in entry.needs]
    fitted, notes = {}, []
    for name in [name for name in datasets if config["datasets"][name]["kind"] == "table"]:
        entry = config["datasets"][name]
        declared = describe(entry, name)
        paths = pinned.text_sources(name)
        found, warning = [], None
        if all(Path(path).is_file() for path in paths):
            data, found = load_fitted(entry, name, paths)
            warning = data.warning
            design = design_of(data, entry)
            fitted[name] = fitted_description(declared, data)
            if design.layout == "position":  # read off the ids: per-person analyses must know it too
                fitted[name] = dataclasses.replace(fitted[name], rater_layout="position")
            if not declared.criteria and fitted[name].criteria:  # layout long, no columns.criteria: the file's
                found.insert(0, f"criteria {', '.join(fitted[name].criteria)} (every value of the criterion "
                                "column; columns.criteria lists none)")
                declared = fitted[name]
        lacks = declared.lacks(reference_based) + found
        if name in fitted:  # the design first, in the same line
            lacks.insert(0, f"design {design.describe()}")
        if lacks:
            notes.append(DatasetNote(f"dataset {name}: " + "; ".join(lacks), [name]))
        notes += [DatasetNote(warning, [name])] if warning else []
    return fitted, notes
