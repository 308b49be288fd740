"""The start-up checks of config names against the data and the file system: dataset and model names are safe
file names (storyeval.names), the released scores' systems, reference system and metric names exist, and the
criteria config lists name are some dataset's. Apart from storyeval.names, whose label checks the loaders use,
because these read the datasets' declarations and HANNA's release, which import the loaders."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from storyeval.config import ConfigSources
from storyeval.criteria import CRITERIA
from storyeval.data.hanna import classify
from storyeval.data.registry import build_registry
from storyeval.datasets import describe
from storyeval.errors import InputError
from storyeval.names import absurd_values, check_known, check_labels, file_key, safe_name, slugify, suggest

# The computed columns HANNA's release lacks (a test checks them against the pinned file): config lists may name
# them although the released score set cannot hold them.
COMPUTED_ONLY = frozenset({"perplexity", "summaqa-f1", "storyer-preference",
                           *(f"storyer-aspect-{k}" for k in range(1, 11))})

def check_path_names(config: Mapping, sources: ConfigSources) -> None:
    """Dataset and model names are safe file names and no two map to one file; each dataset's criteria are
    labels without separators whose figure names differ."""
    seen: dict[str, str] = {}
    for name in config["datasets"]:
        key = f"datasets.{name}"
        if not safe_name(name):
            raise sources.refuse(key, f"{name!r} is not a safe name (it is the folder results/<name>: letters, "
                                 "digits, _ . -, at most 64, no ..)", f"rename it, e.g. {suggest(str(name))}")
        other = seen.setdefault(file_key(name), name)
        if other != name:
            raise sources.refuse(key, f"{name!r} and {other!r} map to the same files (rule and figure names, or "
                                 "folders on a file system that ignores case)", f"rename one, e.g. {name}-2")
    for role, model in config["models"].items():
        if model and not safe_name(model["name"]):
            raise sources.refuse(f"models.{role}.name", f"{model['name']!r} is not a safe name (part of file "
                                 "names: letters, digits, _ . -, no ..)", f"use e.g. {suggest(model['name'])}")
    for name, entry in config["datasets"].items():
        if entry.get("kind") == "table":
            check_labels(describe(entry, name).criteria, "criterion", f"datasets.{name}.columns.criteria", sources)


def check_released(columns: Mapping[str, Mapping[str, np.ndarray]], path: str, config: Mapping,
                   sources: ConfigSources) -> str | None:
    """Start-up checks of HANNA's verified released scores ({column: {system: values}}, storyeval.data.hanna's
    read_wide): system names, the reference system, the metrics config lists name, the criteria of
    reanalysis.top_k_criteria. Returns the one warning line on absurd values, or None."""
    systems = list(next(iter(columns.values())))
    check_labels(systems, "system", "column 'Model'", source=path, into="story ids")
    reference = config["hanna"]["reference_system"]
    if reference not in systems:
        raise sources.refuse("hanna.reference_system", f"no system {reference!r} in {path}, whose systems are "
                             f"{', '.join(systems)}", "use one of these (the human reference: Human)")
    _, _, metric_columns = classify(list(columns), path)
    registry = build_registry(metric_columns, path)
    for slug, column in zip(registry["slug"], registry["column"]):
        if not safe_name(slug):
            raise InputError(f"{path}: metric column {column[:60]!r} has the slug {slug!r}, not a safe name (slugs "
                             "name files and table rows: letters, digits, . -, no ..); fix: restore the released file")
    released = set(registry["slug"]) | set(registry["label"])
    for key, names in metric_lists(config).items():
        for name in names:
            if name not in released and slugify(name) not in COMPUTED_ONLY:
                raise sources.refuse(key, f"metric {name!r} is not in {path}, whose metrics are "
                                     f"{', '.join(registry['label'])}",
                                     "restore the released file (its pinned sha256), or remove the name")
    check_known(config["reanalysis"]["top_k_criteria"], [*CRITERIA, *criteria_of(config)],
                "reanalysis.top_k_criteria", "criterion", sources)
    return absurd_values(columns, path)


def metric_lists(config: Mapping) -> dict[str, list[str]]:
    """The config lists that name metrics, by key."""
    return {
        "figures.representative_metrics": config["figures"]["representative_metrics"],
        "stats.topk.metrics": config["stats"]["topk"]["metrics"],
        "reanalysis.sum_of_ranks_metrics": config["reanalysis"]["sum_of_ranks_metrics"],
        "reanalysis.top_k_metrics": config["reanalysis"]["top_k_metrics"] or [],
    }


def criteria_of(config: Mapping) -> list[str]:
    """The criteria of every configured dataset."""
    return [criterion for name, entry in config["datasets"].items() for criterion in describe(entry, name).criteria]
