"""What a dataset is: one declaration that the loaders, the config check and the workflow's rules read.

A dataset provides text columns (a metric needs a subset of them), may group its stories by prompt and by
system, may hold per-rater ratings, and rates its stories on its own criteria (none: an unrated set whose
metrics are only correlated with each other). HANNA (released scores and raw annotations), HANNA-LLM and
StoryER's WP200 / SCARY200 are fixed kinds; kind `table` describes the user's own file through its
`columns:` map (`storyeval.text.datasets.load_table`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

from storyeval.criteria import CRITERIA
from storyeval.errors import InputError
from storyeval.text import datasets as loaders
from storyeval.text import layouts
from storyeval.text.datasets import TABLE_FORMATS


@dataclass(frozen=True)
class Dataset:
    kind: str
    load: Callable | None  # (path, name) -> TextDataset; None: HANNA's released scores (rule normalise_hanna)
    texts: frozenset[str]  # text columns a metric can read: story, prompt, reference
    prompts: bool  # stories grouped by prompt
    systems: bool  # stories written by named systems
    raters: bool  # per-rater ratings (Tab. 3 ICC, Tab. 4 system means)
    criteria: tuple[str, ...]  # human criteria; () for an unrated set
    suffixes: tuple[str, ...] = field(default=tuple(TABLE_FORMATS))  # the file types its loader reads
    # Two systems on several prompts (storyeval.text.fit): story level pooled, paired comparisons per prompt.
    paired: bool = False

    @property
    def levels(self) -> list[str]:
        """Story level (per prompt across systems, or over all stories at once), and system level where
        stories of named systems share prompts."""
        return ["story", "system"] if self.grouped else ["story"]

    @property
    def grouped(self) -> bool:
        """Stories lie on a prompt x system grid of at least three systems; otherwise all stories form one group
        (one 'prompt')."""
        return self.prompts and self.systems and not self.paired

    def lacks(self, reference_based: list[str]) -> list[str]:
        """What this dataset lacks and what follows, one phrase each (said once at start-up)."""
        phrases = []
        if "reference" not in self.texts:
            phrases.append(f"no reference text, so reference-based metrics are refused ({', '.join(reference_based)})")
        if not self.systems:
            phrases.append("no systems, so story-level correlations over all stories and no system level")
        elif not self.prompts:
            phrases.append("no prompts, so one group: story-level correlations over all stories and no system level")
        if not self.criteria:
            phrases.append("no human ratings, so metrics are correlated with each other only")
        elif not self.raters:
            phrases.append("no per-rater ratings, so no ICC (Tab. 3) or system means (Tab. 4)")
        return phrases


# HANNA's released per-system scores (Chhun et al. 2022), read by rule normalise_hanna, not a text loader.
RELEASED = Dataset("hanna-released", None, frozenset({"story", "prompt", "reference"}), True, True, True,
                   tuple(CRITERIA), (".csv",))
KINDS = {
    "hanna-annotations": Dataset("hanna-annotations", loaders.load_hanna_annotations,
                                 frozenset({"story", "prompt", "reference"}), True, True, True, tuple(CRITERIA),
                                 (".csv",)),
    "hanna-llm": Dataset("hanna-llm", loaders.load_hanna_llm, frozenset({"story", "prompt", "reference"}), True, True,
                         False, (), (".csv",)),
    # StoryER (Chen et al. 2022): stories with one averaged human preference score, no prompt or system.
    "storyer": Dataset("storyer", loaders.load_storyer, frozenset({"story"}), False, False, False,
                       (loaders.STORYER_CRITERION,), (".pkl",)),
    "table": None,  # the user's file: described by its columns map (`table_dataset`)
}


def table_parts(entry: Mapping) -> list[Mapping]:
    """The files of a table entry (`files:`), or the one file (`path:`/`url:`) as one part with no settings of
    its own."""
    return list(entry.get("files") or [{}])


def table_criteria(entry: Mapping) -> tuple[str, ...]:
    """The criteria a table entry names: each part's constant `criterion`, or its (merged) columns map's
    criteria; layout long without `columns.criteria` names none (the file's values decide)."""
    columns = entry.get("columns") or {}
    named = [part["criterion"] if part.get("criterion") else
             layouts.criterion_columns({**columns, **(part.get("columns") or {})}) for part in table_parts(entry)]
    return tuple(dict.fromkeys(name for names in named for name in ([names] if isinstance(names, str) else names)))


def table_dataset(entry: Mapping, name: str = "dataset") -> Dataset:
    """The user's own file, or files (CSV, TSV, JSONL, Parquet), in `storyeval.text.layouts`' layouts as a
    dataset: what it has follows from its columns map."""
    columns = entry.get("columns") or {}
    layout = entry.get("layout", "wide")
    if layout not in layouts.LAYOUTS:
        raise InputError(f"datasets.{name}.layout: {layout!r}; fix: use one of {', '.join(layouts.LAYOUTS)}")
    for index, part in enumerate(table_parts(entry)):
        merged = {**columns, **(part.get("columns") or {})}
        needed = ("score",) if part.get("criterion") else ("criterion", "score") if layout == "long" else ()
        missing = [key for key in needed if not merged.get(key)]
        if missing:
            what = (f"files[{index}] rates one criterion, so it" if part.get("criterion") else f"layout {layout}")
            raise InputError(f"datasets.{name}.columns: {what} needs {' and '.join(missing)}; fix: name the columns "
                             f"that hold each row's {' and '.join(missing)}")
    scale = entry.get("scale")
    if scale is not None and not (len(scale) == 2 and scale[0] < scale[1]):
        raise InputError(f"datasets.{name}.scale: {scale!r}; fix: write the rating scale as [min, max], min < max")
    criteria = table_criteria(entry)
    texts = {"story"} | {key for key in ("prompt", "reference") if columns.get(key)}
    load = partial(loaders.load_table, columns=columns, parts=entry.get("files"), file_format=entry.get("format"),
                   encoding=entry.get("encoding"), layout=layout, scale=scale, integer=bool(entry.get("integer")),
                   delimiter=entry.get("delimiter"), decimal=entry.get("decimal", "."))
    per_rater = any(isinstance(value, list) for value in layouts.criterion_columns(columns).values())
    rated = bool(criteria) or layout == "long"  # layout long: the criterion column's values, read from the file
    raters = (bool(columns.get("rater")) or per_rater) and rated
    return Dataset("table", load, frozenset(texts), bool(columns.get("prompt_id") or columns.get("prompt")),
                   bool(columns.get("system")), raters, criteria)


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
    out; a list drops the disabled and refuses the lacking. Catalog order, less a metric whose columns another one
    chosen writes too (textstats within datastats): a new metric module joins `all` with no config change."""
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
    pool = [metric for metric, found in catalog.CATALOG.items()
            if requested == ALL_METRICS or not (found.resource or found.pinned)]
    reasons = {metric: lacking(metric, texts) or disabled(metric) for metric in pool}
    kept = [metric for metric in pool if not reasons[metric]]
    written = {metric: set(catalog.entry(metric).columns) for metric in kept}
    return MetricChoice([metric for metric in kept if not any(written[metric] < written[other] for other in kept)],
                        {metric: reason for metric, reason in reasons.items() if reason}, {})


def metric_names(entry: Mapping, name: str = "dataset") -> list[str]:
    """A dataset's metrics as its texts allow (choose_metrics, with no check of models or files)."""
    return choose_metrics(entry, name).metrics


def describe(entry: Mapping, name: str = "dataset") -> Dataset:
    """The Dataset of a config entry under `datasets:` (its kind, and for kind table its columns map)."""
    kind = entry.get("kind")
    if kind not in KINDS:
        raise InputError(f"datasets.{name}.kind: unknown kind {kind!r}; fix: use one of {', '.join(KINDS)}")
    if kind == "table":
        return table_dataset(entry, name)
    return KINDS[kind]
