"""The datasets storyeval reads: each built-in kind is one module of this package that declares `KINDS` (kind ->
a function of the config entry and its name that returns a `storyeval.datasets.base.Dataset`) and, for a pinned
release, `SOURCE` (its files at one commit, with their sha256): HANNA's raw annotations and LLM stories (hanna),
StoryER's WP200 / SCARY200 (storyer), the user's own file (table: its `columns:` map) and the field's human-rated
story datasets. A new module joins with no other change (docs/contributing.md, "Adding a dataset")."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType

from storyeval.datasets.base import Dataset, Printed
from storyeval.datasets.table import table_criteria, table_dataset, table_parts
from storyeval.errors import InputError
from storyeval.text.layouts import TABLE_FORMATS


def modules() -> list[ModuleType]:
    """Every kind module of this package (one that declares KINDS), in module-name order."""
    import storyeval.datasets as package

    found = [importlib.import_module(f"{package.__name__}.{info.name}")
             for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name)]
    return [module for module in found if hasattr(module, "KINDS")]


MODULES = modules()
KINDS: dict[str, Callable[[Mapping, str], Dataset]] = {kind: build for module in MODULES
                                                       for kind, build in module.KINDS.items()}
# kind -> the module that declares it: its loaders are loaded by name, so no script's import names them (a
# change to them reruns the rules that read the dataset: the workflow's kind_digest).
KIND_MODULES: dict[str, str] = {kind: module.__name__ for module in MODULES for kind in module.KINDS}
# Pinned releases by source name, the kind module's name (rule dataset_<kind> relies on it): rule fetch reads them
# as it reads config.yaml's hanna, storyer and s3 sections.
SOURCES: dict[str, Mapping] = {module.__name__.rsplit(".", 1)[-1]: module.SOURCE
                               for module in MODULES if hasattr(module, "SOURCE")}
__all__ = ["KINDS", "SOURCES", "TABLE_FORMATS", "Dataset", "Printed", "describe", "table_criteria", "table_dataset",
           "table_parts"]


ALL_METRICS = "all"


@dataclass(frozen=True)
class MetricChoice:
    """A dataset's metrics and why others are not among them: `left_out` by `metrics: all` or the default (or
    switched off by a null model role), `refused`: named in its list but unable to run; metric -> reason."""

    metrics: list[str]
    left_out: dict[str, str]
    refused: dict[str, str]


def lacking_texts(metric: str, texts: frozenset[str], needs: frozenset[str] = frozenset()) -> str | None:
    """What a metric lacks among a dataset's texts ("no reference text"), or None; `needs`: more it reads here."""
    from storyeval.metrics import catalog

    missing = sorted((catalog.entry(metric).needs | needs) - set(texts), reverse=True)  # reference, prompt
    return f"no {' or '.join(missing)} text" if missing else None


def shared_columns(metric: str, metrics: list[str]) -> str | None:
    """Why a listed metric would collide with one listed before it in the merged scores (a column both write:
    textstats' columns are datastats' reference-free ones), or None."""
    from storyeval.metrics import catalog

    columns = set(catalog.entry(metric).columns)
    for other in metrics[:metrics.index(metric)]:
        shared = sorted(columns & set(catalog.entry(other).columns)) if other in catalog.CATALOG else []
        if shared and other != metric:
            within = f"; {other} computes its columns and more" if columns <= set(catalog.entry(other).columns) else ""
            return f"writes column {shared[0]!r} as {other} does, list one of them{within}"
    return None


def choose_metrics(entry: Mapping, name: str = "dataset", lacking: Callable | None = None,
                   disabled: Callable = lambda metric: None) -> MetricChoice:
    """A dataset's metrics: its `metrics` list; `all`: every metric of the catalog that this run can compute on it;
    no `metrics` key: the default, the model-free metrics (no model, no file: they run offline in seconds on any
    machine). `lacking(metric, texts)` says what a metric lacks to run here (texts, model, file; default: its texts
    only), `disabled(metric)` why config switched it off (a null model role). `all` and the default leave both kinds
    out, and the entry's `skip_metrics`; a list drops the disabled and refuses the lacking. Catalog order, less a
    metric whose columns another one chosen writes too (textstats within datastats): a new metric module joins
    `all` with no config change."""
    from storyeval.metrics import catalog  # the catalog imports every metric module: only when asked

    lacking = lacking or lacking_texts
    requested = entry.get("metrics")
    texts = describe(entry, name).texts
    if isinstance(requested, list):
        reasons = {metric: "unknown metric (docs/metrics.md lists them)" if metric not in catalog.CATALOG
                   else shared_columns(metric, requested) or lacking(metric, texts) for metric in requested}
        off = {metric: disabled(metric) for metric in requested if not reasons[metric] and disabled(metric)}
        return MetricChoice([metric for metric in requested if not reasons[metric] and metric not in off], off,
                            {metric: reason for metric, reason in reasons.items() if reason})
    skipped = list(entry.get("skip_metrics") or [])
    unknown = [metric for metric in skipped if metric not in catalog.CATALOG]
    if unknown:
        raise InputError(f"datasets.{name}.skip_metrics: unknown metric {unknown[0]!r}; fix: use catalog names "
                         "(docs/metrics.md)")
    pool = [metric for metric, found in catalog.CATALOG.items()
            if requested == ALL_METRICS or not (found.resource or found.pinned)]
    reasons = {metric: (f"skipped (datasets.{name}.skip_metrics)" if metric in skipped else None)
               or lacking(metric, texts) or disabled(metric) for metric in pool}
    kept = [metric for metric in pool if not reasons[metric]]
    written = {metric: set(catalog.entry(metric).columns) for metric in kept}
    return MetricChoice([metric for metric in kept if not any(written[metric] < written[other] for other in kept)],
                        {metric: reason for metric, reason in reasons.items() if reason}, {})


def metric_names(entry: Mapping, name: str = "dataset") -> list[str]:
    """A dataset's metrics as its texts allow (choose_metrics, with no check of models or files)."""
    return choose_metrics(entry, name).metrics


def describe(entry: Mapping, name: str = "dataset") -> Dataset:
    """The Dataset of a config entry under `datasets:`: its kind's declaration, which may read the entry (kind
    table: its columns map; a corpus)."""
    kind = entry.get("kind")
    if kind not in KINDS:
        raise InputError(f"datasets.{name}.kind: unknown kind {kind!r}; fix: use one of {', '.join(KINDS)}")
    return KINDS[kind](entry, name)


def released_scores(entry: Mapping, name: str, paths: list[str], texts, directions: Mapping[str, str] | None = None):
    """(scores: story_id, metric, value; registry) of the scores a built-in dataset's authors released beside its
    texts, on the ids of its `texts` (the text table of its loader): its kind's `released` reader, checked.
    `directions` (config metric_directions: slug or label -> higher or lower) overrides a column's direction."""
    from storyeval.data.registry import REGISTRY_COLUMNS

    declared = describe(entry, name)
    if declared.released is None:
        raise InputError(f"datasets.{name}: kind {declared.kind} has no released scores; fix: analyse its computed "
                         "scores only")
    scores, registry = declared.released(paths, name, texts)
    missing = [column for column in REGISTRY_COLUMNS if column not in registry.columns]
    unknown = sorted(set(scores["story_id"]) - set(texts["story_id"]))
    if missing or unknown:  # the reader's error (the files are checksummed): said before any analysis reads them
        what = f"lack registry columns {missing}" if missing else f"name stories its texts lack, e.g. {unknown[0]!r}"
        raise InputError(f"dataset {name}: its released scores {what}; fix: the kind module's released reader")
    overrides = dict(directions or {})
    chosen = [overrides.get(slug, overrides.get(label)) for slug, label in zip(registry["slug"], registry["label"])]
    registry = registry.assign(direction=[new or old for new, old in zip(chosen, registry["direction"])])
    return scores.reset_index(drop=True), registry.reset_index(drop=True)


RECIPE_COLUMNS = ["item", "value", "recipe"]


def paper_recipes(entry: Mapping, name: str, paths: list[str]):
    """item, value, recipe: the numbers a built-in dataset's kind recomputes by its paper's own recipe."""
    declared = describe(entry, name)
    table = declared.recipes(paths, name)
    if list(table.columns) != RECIPE_COLUMNS or table["item"].duplicated().any():
        raise InputError(f"dataset {name}: its paper recipes give columns {list(table.columns)} or repeat an item; "
                         f"fix: the kind module's recipes return one row an item, columns {RECIPE_COLUMNS}")
    return table.reset_index(drop=True)
