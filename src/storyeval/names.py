"""Names checked at start-up: those that become paths, and those that must exist in the data they name.

A dataset's name is a folder (results/<name>/) and part of rule names, a model's name part of file names, a
criterion's slug part of figure names (williams_<level>_<slug>.png), a released system's slug part of every story
id. Each is refused when it could leave its folder (a separator, `..`), or when two names map to one file; the
message names the config key (or the file) and suggests a valid name. Names that config lists give (the
reference system, metrics, criteria) must exist in the data they name; a miss lists the names that do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from storyeval.criteria import CRITERIA
from storyeval.data.registry import build_registry, slugify
from storyeval.errors import InputError
from storyeval.limits import ABSURD, MAX_NAME

if TYPE_CHECKING:  # storyeval.config imports the loaders, which check names here
    from storyeval.config import ConfigSources

SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # a folder or file name on every file system
LABEL = re.compile(r"[^\x00-\x1f\x7f/\\]+")  # a display name (criterion, system): any text but separators
# The computed columns HANNA's release lacks (a test checks them against the pinned file): config lists may name
# them although the released score set cannot hold them.
COMPUTED_ONLY = frozenset({"perplexity", "summaqa-f1", "storyer-preference",
                           *(f"storyer-aspect-{k}" for k in range(1, 11))})
SCALE = (1, 5)  # HANNA's criteria: 5-point Likert


def suggest(name: str) -> str:
    """A safe name close to `name`: runs of other characters as one '-', no '..', no leading '.' or '-'."""
    safe = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9_.-]+", "-", name)).strip(".-")[:64]
    return safe or "name"


def safe_name(name: object) -> bool:
    return isinstance(name, str) and SAFE.fullmatch(name) is not None and ".." not in name


def file_key(name: str) -> str:
    """What a name becomes in rule and file names (figures.smk: non-word characters as '_'), case folded for
    file systems that ignore case."""
    return re.sub(r"\W", "_", name).casefold()


def check_path_names(config: Mapping, sources: ConfigSources) -> None:
    """Dataset and model names are safe file names and no two map to one file; each dataset's criteria are
    labels without separators whose figure names differ."""
    from storyeval.datasets import describe

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


def check_labels(labels: Iterable[str], what: str, key: str, sources: ConfigSources | None = None,
                 source: str | None = None, into: str = "file names") -> None:
    """Criterion or system names: no separator or control character, at most MAX_NAME characters, a non-empty
    slug, and no two with one slug (`into`: what the slugs become, figure names or story ids). `key` and
    `sources` name a config key; else `source` names the file the labels came from."""

    def refuse(what_: str, fix: str) -> InputError:
        return sources.refuse(key, what_, fix) if sources else InputError(f"{source}: {what_}, {key}; fix: {fix}")

    labels = list(labels)

    def others(label: object) -> set[str]:  # the slugs a rename of `label` must avoid
        return {slugify(other) for other in labels if isinstance(other, str) and other != label}

    slugs: dict[str, str] = {}
    for label in labels:
        if not (isinstance(label, str) and LABEL.fullmatch(label) and len(label) <= MAX_NAME and slugify(label)
                and ".." not in label):
            raise refuse(f"{what} {str(label)[:60]!r} is not a safe name (no / \\ .. or control characters, at "
                         f"most {MAX_NAME} characters, some letter or digit)",
                         f"rename it, e.g. {unused(suggest(str(label)[:60]), others(label))}")
        other = slugs.setdefault(slugify(label), label)
        if other != label:
            raise refuse(f"{what} names {other!r} and {label!r} both become {slugify(label)!r} in {into}",
                         f"rename one, e.g. {unused(label, others(label) | {slugify(label)})}")


def unused(name: str, slugs: set[str]) -> str:
    """`name`, or `name 2`, `name 3`...: the first whose slug is none of `slugs` (a rename that collides with no
    other name)."""
    candidate, number = name, 2
    while slugify(candidate) in slugs:
        candidate, number = f"{name} {number}", number + 1
    return candidate


def check_known(names: Iterable[str], known: Iterable[str], key: str, what: str, sources: ConfigSources) -> None:
    """Every configured name is one of `known` (in the data the names name); a miss lists those that exist."""
    known = list(dict.fromkeys(known))
    missing = [name for name in names if name not in known]
    if missing:
        raise sources.refuse(key, f"{what} {missing[0]!r} does not exist; there are {', '.join(map(str, known))}",
                             "use one of these names")


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
    from storyeval.data.hanna import classify

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
    from storyeval.datasets import describe

    return [criterion for name, entry in config["datasets"].items() for criterion in describe(entry, name).criteria]


def absurd_values(columns: Mapping[str, Mapping[str, np.ndarray]], path: str) -> str | None:
    """One warning line on the finite values of a released score file that no metric or rating takes: beyond
    ABSURD in size, or a criterion outside its 1-5 scale; None when there are none."""
    systems = list(next(iter(columns.values())))
    found = []
    for column, by_system in columns.items():
        low, high = SCALE if column in CRITERIA else (-ABSURD, ABSURD)
        for row, system in enumerate(systems, start=1):
            values = by_system[system]
            bad = np.flatnonzero(~((values >= low) & (values <= high)) & np.isfinite(values))
            found += [(column, row, system, int(prompt), values[prompt]) for prompt in bad]
    if not found:
        return None
    column, row, system, prompt, value = found[0]
    return (f"warning: {path}: {len(found)} absurd value(s) (beyond {ABSURD:g}, or a criterion outside "
            f"{SCALE[0]}-{SCALE[1]}), the first {value:g} in column {column!r}, data row {row} (system {system!r}), "
            f"prompt {prompt}: correlations and means include them; check the file")
