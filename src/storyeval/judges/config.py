"""The `judges` section of the workflow's config: which judge rates which dataset, with which templates and
criteria; checked before any job (one line naming the key and the fix)."""

from __future__ import annotations

from collections.abc import Mapping

from storyeval.datasets import describe
from storyeval.errors import InputError
from storyeval.judges.prompts import hanna_criteria, load_template

HANNA_KINDS = ("hanna-annotations", "hanna-llm")  # rated with HANNA's criteria unless the entry names others


def jobs(config: Mapping, dataset: str) -> list[tuple[str, str]]:
    """(judge, template) of each judge job on `dataset`: its entry's judges (default: every configured judge)
    times its templates (default: judges.templates), a judge in mode pairwise with the pairwise templates, the
    others with the templates that rate one story."""
    judges = config["judges"]
    entry = judges["datasets"].get(dataset)
    if entry is None:
        return []
    names = entry.get("judges") or list(judges["models"])
    specs = entry.get("templates") or judges["templates"]
    return [(name, template_name(spec)) for name in names for spec in specs
            if load_template(spec).pairwise == (mode(config, name) == "pairwise")]


def mode(config: Mapping, judge: str) -> str:
    """The judge's mode: its own, else the judges section's."""
    return config["judges"]["models"][judge].get("mode") or config["judges"].get("mode") or "expected"


def template_name(spec: str) -> str:
    return load_template(spec).name


def template_spec(config: Mapping, name: str) -> str:
    """The configured template (a bundled name or a .yaml path) whose name is `name`."""
    specs = [*config["judges"]["templates"], *(spec for entry in config["judges"]["datasets"].values()
                                               for spec in entry.get("templates") or [])]
    return next(spec for spec in specs if template_name(spec) == name)


def criteria(config: Mapping, dataset: str) -> dict[str, str]:
    """{criterion: definition} the judges rate `dataset` on: its entry's `criteria`, else HANNA's six."""
    return dict(config["judges"]["datasets"][dataset].get("criteria") or hanna_criteria())


def served(model: Mapping) -> bool:
    """A judge answered by a server: one at its URL, or a batch run elsewhere (its results file)."""
    return str(model["path"]).startswith(("http://", "https://")) or bool(model.get("batch_results"))


def batch_file(config: Mapping, dataset: str, judge: str, template: str) -> str | None:
    """The batch results file a judge job reads instead of a server: the judge's batch_results, its {dataset},
    {judge} and {template} filled in (one batch per job); None: none."""
    pattern = config["judges"]["models"][judge].get("batch_results")
    return pattern.format(dataset=dataset, judge=judge, template=template) if pattern else None


OWN = ("mode", "truncate", "max_length")  # a judge's own setting over the judges section's


def settings(config: Mapping, judge: str) -> dict:
    """The keyword arguments of storyeval.judges.rate.Settings for `judge` (its own mode, truncate and max_length
    over the judges section's)."""
    section, model = config["judges"], config["judges"]["models"][judge]
    own = {key: model[key] if model.get(key) is not None else section.get(key) for key in OWN}
    shared = ("batch_size", "batch_tokens", "max_new_tokens", "dtype", "top_logprobs", "pairs", "ties", "pair_score",
              "seed")
    return ({key: value for key, value in own.items() if value is not None}
            | {key: section[key] for key in shared if key in section})


def check_judges(config: Mapping) -> None:
    """Template names are unique; with judges configured, every judged dataset is configured, has criteria to rate
    and the texts its templates read, and every judge it names is configured."""
    section = config["judges"]
    names = {}
    for spec in [*section["templates"], *(s for e in section["datasets"].values() for s in e.get("templates") or [])]:
        if names.setdefault(template_name(spec), spec) != spec:
            raise InputError(f"judges.templates: {spec} and {names[template_name(spec)]} are both called "
                             f"{template_name(spec)!r}; fix: rename one file (the name is part of output paths)")
    for name, model in section["models"].items():
        try:
            batch_file(config, "dataset", name, "template")
        except (KeyError, IndexError, ValueError) as error:
            raise InputError(f"judges.models.{name}.batch_results: {model['batch_results']!r} does not format "
                             f"({error!r}); fix: use only the fields {{dataset}}, {{judge}}, {{template}}") from error
        own = {key: model.get(key) or section.get(key) for key in ("truncate", "max_length")}
        if served(model) and not model.get("tokenizer") and (
                own["truncate"] not in (None, "none") or own["max_length"] is not None):
            raise InputError(f"judges.models.{name}: truncate and max_length need the served model's tokenizer to "
                             "count tokens; fix: set its tokenizer: (a local copy), or leave truncate and "
                             "max_length out")
    if not section["models"]:
        return  # nothing is judged: the default config's entries name datasets a config may have replaced
    for name, entry in section["datasets"].items():
        key = f"judges.datasets.{name}"
        if name not in config["datasets"]:
            raise InputError(f"{key}: no dataset {name!r} under datasets; fix: add it there, or remove this entry")
        unknown = [judge for judge in entry.get("judges") or [] if judge not in section["models"]]
        if unknown:
            raise InputError(f"{key}.judges: {unknown[0]!r} is not under judges.models; fix: add it there or "
                             f"use one of {', '.join(section['models']) or '(none configured)'}")
        dataset = config["datasets"][name]
        if not entry.get("criteria") and dataset["kind"] not in HANNA_KINDS:
            raise InputError(f"{key}.criteria: missing; fix: give each criterion the judges rate with its "
                             "definition, e.g. criteria: {Coherence: how much the story makes sense}")
        texts = describe(dataset, name).texts
        matched = {judge for judge, _ in jobs(config, name)}
        for judge in entry.get("judges") or section["models"]:
            if judge not in matched:
                kind = "compare two stories" if mode(config, judge) == "pairwise" else "rate one story"
                raise InputError(f"{key}: judge {judge} (mode {mode(config, judge)}) has no template that would "
                                 f"{kind}; fix: add one to {key}.templates (pairwise templates: pairwise, "
                                 "pairwise-stories; the others rate one story)")
        for spec in entry.get("templates") or section["templates"]:
            lacking = sorted(load_template(spec).needs - texts)
            if lacking:
                raise InputError(f"{key}: template {template_name(spec)} reads the {', '.join(lacking)} of each story, "
                                 f"which dataset {name} lacks; fix: set {key}.templates to templates that do not "
                                 "(geval reads the story only)")
