"""Where each config key came from (config.yaml, a --configfile, or --config), so that an error names the file
that set the key. Apart from storyeval.config, which reads the datasets' and metrics' declarations, so that the
name checks the loaders make (storyeval.names) can take it without importing them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import yaml

from storyeval.errors import InputError

WHOLE = ("judges.datasets",)  # keys whose last source's value replaces what the sources before set (take_whole)


@dataclass(frozen=True)
class ConfigSources:
    """The config's sources, lowest precedence first: config files, then the `--config` values."""

    files: tuple[str, ...] = ("config.yaml",)
    values: Mapping = field(default_factory=dict)

    @classmethod
    def from_workflow(cls, configfiles: Sequence, cli_configfiles: Sequence, cli_values: Mapping) -> ConfigSources:
        """From Snakemake's `workflow.configfiles` (command-line files first, then the Snakefile's),
        `workflow.overwrite_configfiles` (the command-line ones) and `workflow.config_settings.config`."""
        given = [Path(file).absolute() for file in cli_configfiles]
        directive = [file for file in configfiles if Path(file).absolute() not in given]
        return cls(tuple(shown(file) for file in [*directive, *given]), dict(cli_values or {}))

    @cached_property
    def layers(self) -> list[tuple[str, Mapping]]:
        """(name, content) per source; files are read only when a problem needs its origin (Snakemake has
        read them already: one that is unreadable now counts as setting nothing)."""
        return [(name, read_yaml(name)) for name in self.files] + ([("--config", self.values)] if self.values else [])

    def origin(self, *keys: str) -> str:
        """The last source that sets any of the dotted `keys` ('stats.topk.k_min'), else the last config file."""
        for name, content in reversed(self.layers):
            if any(sets(content, key.split(".")) for key in keys):
                return name
        return self.files[-1] if self.files else "--config"

    def refuse(self, key: str, what: str, fix: str, *related: str) -> InputError:
        """The one-line error about `key` (and the `related` keys whose values conflict with it)."""
        return InputError(f"{self.origin(key, *related)} {key}: {what}; fix: {fix}")


def take_whole(config: dict, sources: ConfigSources, keys: Sequence[str] = WHOLE) -> None:
    """Set each dotted key of `keys` in `config` to the value of the last source that sets it, replacing what
    Snakemake merged into it from the sources before (a mapping is merged key by key otherwise)."""
    for key in keys:
        parts = key.split(".")
        for _, content in reversed(sources.layers):
            if sets(content, parts):
                value = content
                for part in parts:
                    value = value[part]
                target = config
                for part in parts[:-1]:
                    target = target.setdefault(part, {})
                target[parts[-1]] = value
                break


def read_yaml(path: str | Path) -> Mapping:
    try:
        content = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return content if isinstance(content, Mapping) else {}


def shown(file: str | Path) -> str:
    """A config file's name as the user knows it: relative to the working directory when inside it."""
    relative = os.path.relpath(file)
    return str(file) if relative.startswith("..") else relative


def sets(content: object, parts: list[str]) -> bool:
    """Whether a config mapping sets the key path `parts` (a list value sets every index below it)."""
    for part in parts:
        if isinstance(content, list) and part.isdigit():
            return True
        if not (isinstance(content, Mapping) and part in content):
            return False
        content = content[part]
    return True
