"""Config validation with one readable line per problem (the key path and the fix)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml

from storyeval.errors import InputError


def check_config(config: dict, schema_path: str | Path) -> None:
    """Raise InputError naming the first offending key of `config` against the JSON schema."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path) or "<top level>"
        raise InputError(
            f"config rejected at {where}: {error.message}; fix: correct or remove that key "
            f"(every key, its meaning and default are in {Path(schema_path).name})"
        )
