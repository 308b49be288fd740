"""The text metrics storyeval computes, collected from their modules: each module of this package that
declares `NAME` and `COLUMNS` is a metric (see `storyeval.metrics.base` for what it declares).

A metric's score columns are the slugs of their labels, and where HANNA released the column, of HANNA's
label (`storyeval.data.registry.slugify("ROUGE-1 Recall") == "rouge-1-recall"`), so computed scores
register under the same slugs as the released ones and can be compared with them column by column.
Every metric module is imported here: their module-level imports stay light (`base`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType

from storyeval.errors import InputError
from storyeval.metrics.base import DIRECTIONS, Column, keyword_defaults


@dataclass(frozen=True)
class Entry:
    module: str
    needs: frozenset[str]
    columns: dict[str, Column]  # score column (slug) -> label, family, reference, direction
    # What a neural metric reads, as (keyword of compute(), config role): the shared embedding
    # cache of an encoder ("cache"), a model ("model"), a word-embedding file ("embeddings"), or a
    # model file the workflow trains on the role's encoder ("model_file": the StoryER-style evaluator).
    resource: tuple[str, str] | None = None
    # Pinned third-party files it reads: keyword of compute() -> "<config source>/<file key>" (S3's models).
    pinned: dict[str, str] = field(default_factory=dict)


def discover() -> dict[str, Entry]:
    """Every metric module of this package, by NAME, in module-name order."""
    import storyeval.metrics as package

    catalog = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "COLUMNS"):
            resource = getattr(module, "RESOURCE", None)
            catalog[module.NAME] = Entry(module.__name__, frozenset(module.NEEDS), dict(module.COLUMNS),
                                         None if resource is None else (resource.keyword, resource.role),
                                         dict(getattr(module, "PINNED", {})))
    return catalog


CATALOG: dict[str, Entry] = discover()


def entry(name: str) -> Entry:
    if name not in CATALOG:
        raise InputError(f"unknown text metric {name!r}; fix: use one of {', '.join(CATALOG)}")
    return CATALOG[name]


def load(name: str) -> ModuleType:
    """The metric's module (NAME, NEEDS, COLUMNS, compute, signature)."""
    return importlib.import_module(entry(name).module)


def applicable(name: str, columns_present: set[str]) -> bool:
    """Whether a dataset that has the text columns `columns_present` (e.g. {"story", "prompt"}) can be scored."""
    return entry(name).needs <= columns_present


def defaults(name: str) -> dict:
    """The metric's parameters and their defaults, the library's and the workflow's (config.yaml
    `metric_params` overrides them)."""
    return keyword_defaults(load(name).compute)


def parameters(name: str) -> set[str]:
    """The keyword-only parameters of a metric's compute() (after its `*`): the settings metric_params may
    give; the texts and other positional arguments are not among them."""
    import inspect

    return {key for key, parameter in inspect.signature(load(name).compute).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY}


def registry_rows(directions: Mapping[str, str] | None = None) -> dict[str, tuple[str, str, str, str]]:
    """Registry rows (label, reference, family, direction) of every column a metric declares; `directions`
    (slug -> direction, `resolve_directions`) overrides the declared directions."""
    chosen = directions or {}
    return {slug: (column.label, column.reference, column.family, chosen.get(slug, column.direction))
            for metric in CATALOG.values() for slug, column in metric.columns.items()}


def direction(slug: str, directions: Mapping[str, str] | None = None) -> str:
    """Which end of a column's scale is better: `directions[slug]` (config metric_directions, resolved), else as
    its metric declares; "higher" for a column no module computes."""
    if directions and slug in directions:
        return directions[slug]
    return next((metric.columns[slug].direction for metric in CATALOG.values() if slug in metric.columns), "higher")


def conventions() -> dict[str, str]:
    """slug -> why its direction is a convention only, for the columns whose definition orders no quality."""
    return {slug: column.convention for metric in CATALOG.values() for slug, column in metric.columns.items()
            if column.convention}


def resolve_directions(overrides: Mapping[str, str], where: str = "metric_directions") -> dict[str, str]:
    """Config `metric_directions` (a slug or display label -> higher or lower) as slug -> direction; an unknown
    name or direction stops the run in one line."""
    labels = {column.label: slug for metric in CATALOG.values() for slug, column in metric.columns.items()}
    slugs = set(labels.values())
    resolved = {}
    for name, chosen in overrides.items():
        slug = name if name in slugs else labels.get(name)
        if slug is None or chosen not in DIRECTIONS:
            what = f"unknown metric {name!r}" if slug is None else f"{name}: direction {chosen!r}"
            fix = (f"use a metric column's slug or label, e.g. {', '.join(sorted(slugs)[:4])} ..." if slug is None
                   else f"use one of {', '.join(DIRECTIONS)}")
            raise InputError(f"{where}: {what}; fix: {fix}")
        resolved[slug] = chosen
    return resolved
