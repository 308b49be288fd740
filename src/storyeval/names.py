"""Names checked at start-up: those that become paths, and those that must exist in the data they name.

A dataset's name is a folder (results/<name>/) and part of rule names, a model's name part of file names, a
criterion's slug part of figure names (williams_<level>_<slug>.png), a released system's slug part of every story
id. Each is refused when it could leave its folder (a separator, `..`), or when two names map to one file; the
message names the config key (or the file) and suggests a valid name. Names that config lists give (the
reference system, metrics, criteria) must exist in the data they name; a miss lists the names that do.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from storyeval.criteria import CRITERIA
from storyeval.errors import InputError
from storyeval.limits import ABSURD, MAX_NAME

if TYPE_CHECKING:  # storyeval.config imports the loaders, which check names here
    from storyeval.config_sources import ConfigSources


def slugify(name: str) -> str:
    """`ROUGE-SU* F-Score` -> `rouge-su-star-f-score`; `BaryScore-SD-0.1` -> `baryscore-sd-0.1`; `流畅性` ->
    `流畅性`: how a label becomes a file-safe name of a column, criterion or system. Letters and digits of every
    script are kept (NFKC-normalised, lowercased), so names in Chinese or Arabic have slugs; the rest, runs of
    other characters (and `_`), become one '-'. An ASCII name's slug is what it always was."""
    slug = unicodedata.normalize("NFKC", name).lower().replace("*", "-star")
    slug = re.sub(r"(?:[^\w.]|_)+", "-", slug)
    return slug.strip("-")

SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # a folder or file name on every file system
LABEL = re.compile(r"[^\x00-\x1f\x7f/\\]+")  # a display name (criterion, system): any text but separators
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
