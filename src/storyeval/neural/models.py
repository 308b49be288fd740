"""Model roles for the model-based metrics: load once, on the device chosen at run time.

A role names what a metric needs from a model, as HANNA (Chhun et al. 2022) used them:
`encoder` (token embeddings), `masked-lm` (InfoLM, BLANC), `seq2seq` (BARTScore),
`causal-lm` (perplexity), `question-answering` (SummaQA). `name_or_path` is a local Hugging Face folder or a hub
name; with HF_HUB_OFFLINE=1 (or TRANSFORMERS_OFFLINE=1) a hub name is read from the
local cache only, and a model found nowhere is an InputError naming the role.
Models are loaded once per (role, model, device) per process, in eval mode, with
their tokenizer. The device is `cuda` when torch sees one, else `cpu`, unless the
caller names one (`storyeval.neural.device`); `bundled` names the offline MiniLM
(`storyeval.neural.paths`). A `revision` pins the model to one commit of its hub repository: a hub name is
loaded at it, a local folder must record it (`storyeval.neural.paths.recorded_revision`), and any other
revision stops the run with one line.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from storyeval.errors import InputError
from storyeval.neural.paths import (
    cached_revision,
    check_revision,
    config_key,
    recorded_revision,
    resolve_model_path,
    revision_record,
)

ROLES = {"encoder": "AutoModel", "masked-lm": "AutoModelForMaskedLM", "seq2seq": "AutoModelForSeq2SeqLM",
         "causal-lm": "AutoModelForCausalLM", "question-answering": "AutoModelForQuestionAnswering"}
IDENTITY_FILES = ("config.json", "tokenizer.json", "vocab.txt", "tokenizer_config.json")


@dataclass(frozen=True)
class LoadedModel:
    role: str
    name: str
    model: object  # a transformers PreTrainedModel in eval mode, on `device`
    tokenizer: object  # its tokenizer
    device: object  # torch.device


def offline() -> bool:
    flags = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    return any(os.environ.get(flag, "").lower() in {"1", "true", "yes"} for flag in flags)


def load(role: str, name_or_path: str | Path, device: str | None = None, revision: str | None = None) -> LoadedModel:
    """The model of `role` and its tokenizer, loaded once per process (see module docstring)."""
    from storyeval.neural.device import choose_device  # imports torch: not when the catalog reads the metric modules

    if role not in ROLES:
        raise InputError(f"unknown model role {role!r}; fix: use one of {', '.join(ROLES)}")
    return _load(role, resolve_model_path(str(name_or_path)), str(choose_device(device)), revision)


def where_from(name: str) -> str:
    hub = "the Hugging Face cache (HF_HUB_OFFLINE is set)" if offline() else "the hub"
    return "the local folder" if Path(name).is_dir() else hub


def pinned_source(role: str, name: str, revision: str | None) -> dict:
    """from_pretrained's keyword arguments for model `name` of config role `role` pinned to `revision` (None: not
    pinned), once its revision is checked: a local folder's recorded commit, or the commit the hub (or its
    cache) resolves the revision to, read from where huggingface_hub puts the model's config."""
    local = Path(name).is_dir()
    if revision is None:
        return {"local_files_only": local or offline()}
    if local:
        found = recorded_revision(name)
    else:
        from huggingface_hub import hf_hub_download

        try:
            found = recorded_revision(Path(hf_hub_download(name, "config.json", revision=revision,
                                                           local_files_only=offline())).parent)
        except (OSError, ValueError) as error:  # huggingface_hub's not-found errors are OSErrors
            raise InputError(f"{config_key(role)}: cannot find {name!r} at revision {revision} in {where_from(name)}: "
                             f"{str(error).splitlines()[0]}; fix: correct the name or revision") from error
    check_revision(role, name, revision, found)
    return {"local_files_only": local or offline(), **({} if local else {"revision": revision})}


@lru_cache(maxsize=8)
def _load(role: str, name: str, device: str, revision: str | None) -> LoadedModel:
    import torch
    import transformers

    transformers.logging.disable_progress_bar()
    source = pinned_source(role.replace("-", "_"), name, revision)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(name, **source)
        model = getattr(transformers, ROLES[role]).from_pretrained(name, dtype=torch.float32, **source)
    except (OSError, ValueError) as error:
        raise InputError(f"model role {role}: cannot load {name!r} as {ROLES[role]} from {where_from(name)}: "
                         f"{str(error).splitlines()[0]}; fix: name a model folder that holds it, "
                         "or disable the metric") from error
    model.eval()
    warn_unpinned(role, name, revision)
    return LoadedModel(role, name, model.to(device), tokenizer, torch.device(device))


def warn_unpinned(role: str, name: str, revision: str | None) -> None:
    """For a hub model loaded without a pinned `revision`, say which commit it resolved to and how to pin it (the
    signature records it too); a pinned model or a local folder needs no word."""
    if revision is not None or Path(name).is_dir():
        return
    commit = cached_revision(name) or "unknown"
    logging.getLogger(__name__).warning(
        "%s %s: no revision pinned, loaded commit %s; pin it with `revision: %s` for the same weights "
        "next time", config_key(role if "." in role else role.replace("-", "_")), name, commit, commit)


def identity(name_or_path: str | Path, revision: str | None = None) -> dict:
    """What names a model in a signature: its name and revision (the pinned one, or the commit a local folder
    records), and for a local folder the sha256 of its config and tokenizer files and of its weight files."""
    from storyeval.neural.embeddings import weight_hashes

    path = Path(resolve_model_path(str(name_or_path)))
    pinned = revision_record(path, revision)
    if not path.is_dir():
        return {"name": str(name_or_path), **pinned}
    digest = hashlib.sha256()
    for file in IDENTITY_FILES:
        if (path / file).is_file():
            digest.update(file.encode() + (path / file).read_bytes())
    return {"name": path.name, **pinned, "files_sha256": digest.hexdigest(), "weights_sha256": weight_hashes(path)}


def check_window(loaded: LoadedModel, length: int, metric: str, parameter: str) -> None:
    """Stop when a metric's `parameter` asks for `length` tokens a row, past the model's position table (the
    model would fail on an index, or read positions it never learned)."""
    window = getattr(loaded.model.config, "max_position_embeddings", None)
    if window is not None and length > window:
        raise InputError(f"metric {metric}: {parameter} {length} exceeds the {window}-position window of "
                         f"{loaded.name}; fix: set metric_params.{metric}.{parameter} to at most {window}")


def length_batches(lengths: Sequence[int], max_tokens: int, max_batch: int) -> list[np.ndarray]:
    """Indices grouped into batches of similar length (longest first, stable), each at most `max_batch`
    items and `max_tokens` padded tokens (one item per batch at least): little padding, bounded memory."""
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        longest = max(int(lengths[order[start]]), 1)
        size = max(1, min(max_batch, max_tokens // longest))
        batches.append(order[start:start + size])
        start += size
    return batches


def pad(rows: Sequence[Sequence[int]], pad_id: int):
    """Right-padded id tensor and attention mask (torch, on cpu) for rows of token ids."""
    import torch

    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for index, row in enumerate(rows):
        ids[index, :len(row)] = torch.as_tensor(row, dtype=torch.long)
        mask[index, :len(row)] = 1
    return ids, mask
