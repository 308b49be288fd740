"""Config validation with one readable line per problem: the file the key came from, the key path, the fix.

Snakemake builds the config from the Snakefile's `configfile:` (config.yaml), then each `--configfile` in the
order given, then `--config` values, each overriding the last (snakemake.workflow.Workflow.configfile); a
key's origin is the last of these sources that sets it. `check_config` applies the JSON schema (one key at a
time); `check_consistency` the constraints between keys that a schema cannot state. A few keys (WHOLE) are not
merged key by key: the last source that sets one gives all of it (`take_whole`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import jsonschema
import yaml

from storyeval.config_sources import WHOLE, ConfigSources, read_yaml, sets, shown, take_whole  # noqa: F401
from storyeval.datasets import KINDS, TABLE_FORMATS, Dataset, describe
from storyeval.datasets import SOURCES as DATASET_SOURCES
from storyeval.metrics import catalog
from storyeval.text.sniff import WHAT, container

SOURCES = ("hanna", "storyer", "s3", *DATASET_SOURCES)  # config sections, and the built-in kinds' releases
# Keys a layered config gives whole: judges.datasets names who is judged, so a --configfile that judges one's own
# dataset judges that dataset only, not also config.yaml's hanna and hanna-llm (hours with a 7B judge on a CPU).
NO_SOURCES = ConfigSources()  # config.yaml alone
TABLE_KEYS = ("path", "url", "files", "sha256", "size", "format", "encoding", "delimiter", "decimal",
              "columns", "sheet", "range", "raters", "texts")  # kind table


def check_config(config: dict, schema_path: str | Path, sources: ConfigSources = NO_SOURCES) -> None:
    """Raise InputError naming the first offending key of `config` against the JSON schema, and its file."""
    schema = yaml.load(Path(schema_path).read_text(), Loader=yaml.CSafeLoader)  # the package's own file: libyaml
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return
    parts = [str(part) for part in error.absolute_path]
    if error.validator == "additionalProperties":  # name the unexpected key itself, not its parent
        parts.append(next(key for key in error.instance if key not in error.schema.get("properties", {})))
    fix = f"correct or remove that key (every key, its meaning and default are in {Path(schema_path).name})"
    if numeric(error.schema):  # a number: its bounds
        fix = f"use {accepted(error.schema)} (docs/configuration.md, Bounds of the numeric keys)"
        if isinstance(error.instance, str) and re.fullmatch(r"[+-]?[\d.]+e[+-]?\d+", error.instance, re.I):
            fix += f"; YAML reads {error.instance} as text: write the number's digits"
    raise sources.refuse(".".join(parts) or "<top level>", f"config rejected, {error.message}", fix)


def numeric(schema: Mapping) -> bool:
    """Whether a schema fragment (or one of its anyOf alternatives) takes a number."""
    kinds = schema.get("type", [])
    return bool({"integer", "number"} & set([kinds] if isinstance(kinds, str) else kinds)) or any(
        numeric(alternative) for alternative in schema.get("anyOf", []))


def accepted(schema: Mapping) -> str:
    """What a fragment accepts, in words with its bounds: 'an integer from 0 to 20000 or 'auto''."""
    from storyeval.parameters import wanted  # here: it imports metric modules, needed on this path only

    if "anyOf" in schema:
        return " or ".join(accepted(alternative) for alternative in schema["anyOf"])
    if "const" in schema:
        return repr(schema["const"])
    return wanted({key: value for key, value in schema.items() if key != "description"})


def check_consistency(config: Mapping, sources: ConfigSources = NO_SOURCES) -> None:
    """Constraints between keys, on a config whose defaults the schema has filled; the first broken one
    raises InputError naming the key, its file and the fix."""
    topk = config["stats"]["topk"]
    if topk["k_min"] > topk["k_max"]:
        raise sources.refuse("stats.topk.k_min", f"{topk['k_min']} is larger than stats.topk.k_max ({topk['k_max']})",
                             "set k_min <= k_max (Fig. 8 draws k from k_max down to k_min)", "stats.topk.k_max")
    embedding = config["embedding"]
    if embedding["stride"] is not None and embedding["policy"] != "sliding":
        raise sources.refuse("embedding.stride", f"set, but embedding.policy is {embedding['policy']}",
                             "set stride: null, or policy: sliding", "embedding.policy")
    if None not in (embedding["stride"], embedding["max_length"]) and embedding["stride"] >= embedding["max_length"]:
        raise sources.refuse("embedding.stride", f"{embedding['stride']} is not below embedding.max_length "
                             f"({embedding['max_length']})", "use a stride (window overlap) below max_length",
                             "embedding.max_length")
    unknown = sorted(set(config["data"]["mirrors"]) - set(SOURCES))
    if unknown:
        raise sources.refuse(f"data.mirrors.{unknown[0]}", "not a data source, its mirrors are never searched",
                             f"use one of {', '.join(SOURCES)}")
    check_model_names(config, sources)
    check_datasets(config, sources)
    from storyeval.metrics.catalog import resolve_directions  # imports every metric module (light, catalog)

    resolve_directions(config["metric_directions"], f"{sources.origin('metric_directions')} metric_directions")


def check_model_names(config: Mapping, sources: ConfigSources) -> None:
    """One name, one model: names are part of output paths, and the rules find a model by its name."""
    models = {f"models.{role}": model for role, model in config["models"].items()}
    models["storyer_evaluator.reasons.seq2seq"] = config["storyer_evaluator"]["reasons"]["seq2seq"]
    first = {}
    for key, model in models.items():
        if not model:
            continue
        other = first.setdefault(model["name"], key)
        same_model = [models[other].get(part) for part in ("path", "layers", "revision")] == [
            model.get(part) for part in ("path", "layers", "revision")]
        if other != key and not same_model:
            raise sources.refuse(
                f"{key}.name",
                f"{model['name']!r} also names {other}, a different model (path, layers or revision)",
                "give each different model its own name",
                f"{other}.name",
            )
    vectors = config["models"]["word_embeddings"]
    if vectors and vectors.get("revision"):
        raise sources.refuse("models.word_embeddings.revision", "a word-vector file has no hub revision",
                             "remove it (the score signatures name the file and its size)")


def check_datasets(config: Mapping, sources: ConfigSources) -> None:
    """Every dataset reads a pinned file of its kind, and metric_params name only parameters their compute()
    accepts (which metrics run: storyeval.workflow.selection)."""
    for name, dataset in config["datasets"].items():
        key = f"datasets.{name}"
        if dataset["kind"] not in KINDS:
            raise sources.refuse(f"{key}.kind", f"unknown kind {dataset['kind']!r}", f"use one of {', '.join(KINDS)}")
        described = describe(dataset, name)
        if dataset["kind"] == "table":
            check_table_entry(dataset, key, sources)
        else:
            check_pinned_entry(config, dataset, described, key, sources)
        if name == "hanna" and dataset["kind"] != "hanna-annotations":
            raise sources.refuse(
                f"{key}.kind",
                f"{dataset['kind']}, but results/hanna holds HANNA's released "
                "scores, whose stories only the raw annotations match",
                "use kind hanna-annotations, or rename the dataset",
            )
    for metric, params in config["metric_params"].items():
        if metric not in catalog.CATALOG:
            raise sources.refuse(
                f"metric_params.{metric}", "unknown metric", f"use one of {', '.join(catalog.CATALOG)}"
            )
        accepted = catalog.parameters(metric)
        unknown = sorted(set(params) - accepted)
        if unknown:
            raise sources.refuse(
                f"metric_params.{metric}", f"unknown parameter(s) {unknown}", f"use {sorted(accepted)}"
            )


def check_pinned_entry(config: Mapping, dataset: Mapping, described: Dataset, key: str, sources: ConfigSources) -> None:
    """A released dataset reads a pinned file of its loader's type (a kind that pins its own release: those),
    and none of kind table's keys."""
    extra = [name for name in TABLE_KEYS if name in dataset]
    if extra:
        raise sources.refuse(
            f"{key}.{extra[0]}",
            f"only kind table reads {extra[0]}",
            "remove it, or set kind: table for your own file",
            f"{key}.kind",
        )
    if "file" not in dataset and described.source:  # a release its kind module pins (SOURCE)
        return
    if "file" not in dataset:
        raise sources.refuse(
            f"{key}.file",
            f"missing: a {dataset['kind']} dataset reads a pinned file",
            "set file: <source>/<pinned file key>, e.g. storyer/wp200",
        )
    source, file = dataset["file"].split("/")
    pinned = config[source]["files"].get(file)
    if pinned is None:
        raise sources.refuse(
            f"{key}.file", f"no pinned file {file!r} under {source}.files", "add it or correct the key"
        )
    if Path(pinned["path"]).suffix not in described.suffixes:
        raise sources.refuse(
            f"{key}.file",
            f"{dataset['file']} is {pinned['path']}, but a {dataset['kind']} "
            f"dataset reads a {' or '.join(described.suffixes)} file",
            "point file at a file of that kind or change kind",
            f"{key}.kind",
        )


def check_table_entry(dataset: Mapping, key: str, sources: ConfigSources) -> None:
    """The user's file: a local path or a URL (not both), or `files:`, parts of one each; each file's sha256, a
    readable format, and a columns map."""
    if "file" in dataset:
        raise sources.refuse(
            f"{key}.file",
            "kind table reads path: or url:, not a pinned file",
            "replace file: with path: <your file> (or url:)",
        )
    if dataset.get("files") and any(name in dataset for name in ("path", "url", "sha256")):
        raise sources.refuse(f"{key}.files", "given beside path:, url: or sha256: of the entry",
                             "give each file's path: (or url:) and sha256: under files:, or use path: alone")
    parts = [(f"{key}.files[{index}]", part) for index, part in enumerate(dataset.get("files") or [])]
    for where, part in parts or [(key, dataset)]:
        check_table_file(part, dataset, where, sources)
    if "columns" not in dataset:
        raise sources.refuse(
            f"{key}.columns",
            "missing: the map of which column holds the story id, the story, the criteria...",
            'add columns: (README, section "Your own data")',
        )


def check_table_file(part: Mapping, dataset: Mapping, key: str, sources: ConfigSources) -> None:
    """One file of a table: a local path or a URL (not both), its sha256, a format its name or `format:` says."""
    given = [name for name in ("path", "url") if name in part]
    if len(given) != 1:
        raise sources.refuse(
            f"{key}.path",
            f"{'both path and url' if given else 'neither path nor url'} given",
            "give the file's local path: or its pinned url:, one of them",
            f"{key}.url",
        )
    if "sha256" not in part:
        raise sources.refuse(
            f"{key}.sha256",
            "missing: your file is checked against its sha256 before any job",
            f"add sha256: <the output of `sha256sum {part[given[0]]}`>",
        )
    packed = sniff_packed(part.get("path"))
    if packed:
        raise sources.refuse(f"{key}.path", f"{part['path']} is {WHAT[packed]}, not a plain table",
                             f"unpack it and give the unpacked file's path: and sha256: in {key}")
    if ("format" not in part and "format" not in dataset
            and Path(part[given[0]]).suffix.lower() not in TABLE_FORMATS):
        raise sources.refuse(
            f"{key}.{given[0]}",
            f"{part[given[0]]} does not end in {', '.join(TABLE_FORMATS)}",
            f"set format: one of {', '.join(sorted(set(TABLE_FORMATS.values())))}",
            f"{key}.format",
        )


def sniff_packed(path: str | None) -> str | None:
    """Whether a local table file is compressed ("gzip") or archived ("zip"), by its first bytes
    (storyeval.text.sniff); None for anything else."""
    if not path or not Path(path).is_file():
        return None
    with open(path, "rb") as handle:
        found = container(path, handle.read(512))
    return found if found in ("gzip", "zip") else None
