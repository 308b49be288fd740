"""Story vectors from the bundled sentence encoder, the input of the learned evaluator (StoryER, Chen et al. 2022).

Method: sentence-transformers' recipe for all-MiniLM-L6-v2 (its modules.json: Transformer, mean Pooling,
Normalize): the text's word pieces wrapped in the model's special tokens ([CLS] ... [SEP]), the last hidden
layer averaged over the attention mask (specials included), then scaled to unit L2 norm. The window is
`max_length` word pieces, specials included (default: `max_seq_length` of the model's
sentence_bert_config.json, 256 for MiniLM; else the model's window). Longer stories:
- "truncate": the first `max_length - specials` word pieces, as sentence-transformers encodes;
- "chunks": the whole story as consecutive windows of that size, each wrapped in the specials; the mean runs
  over every token of every window (one mean over the whole story, computed window by window).
The pooling is differentiable (`story_vectors(..., grad=True)`), so fine-tuning uses the same code.

Cache: one .npz per (encoder, settings): sha256 of each text, its float32 vector, and the settings as JSON;
texts already there are not encoded again. Settings that differ from the file's replace the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from storyeval.errors import InputError
from storyeval.learned.config import POLICIES
from storyeval.neural.device import choose_device
from storyeval.neural.embeddings import load_encoder, model_window
from storyeval.neural.models import identity, length_batches, pad

# Intel MKL's strict reproducible mode: the same floats whatever the number of threads (else small batches of
# windows differ in the last bit between 1 and 2 threads, and so does a model trained on them). MKL reads it at
# its first matrix product, so it is set on import, before any; it costs about 3 %.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
LOG = logging.getLogger("storyeval.learned")
FORMAT = "storyeval-story-vectors/1"
POOLING = "mean of the last hidden layer over the attention mask (specials included), then unit L2 norm"


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sentence_window(model_path: str | Path, tokenizer, config, max_length: int | None) -> int:
    """`max_length`, else sentence-transformers' max_seq_length for the model, else the model's window."""
    if max_length is None:
        settings = Path(model_path) / "sentence_bert_config.json"
        if settings.is_file():
            max_length = json.loads(settings.read_text()).get("max_seq_length")
    return model_window(tokenizer, config, max_length)


def window_ids(tokenizer, texts: Sequence[str], window: int, policy: str) -> tuple[list[list[int]], np.ndarray]:
    """Encoder inputs (word pieces wrapped in the specials) and the index of the text each one belongs to."""
    room = window - tokenizer.num_special_tokens_to_add()
    encoded = tokenizer([text.strip() for text in texts], add_special_tokens=True, return_special_tokens_mask=True,
                        verbose=False)
    windows, owners = [], []
    for owner, (ids, mask) in enumerate(zip(encoded["input_ids"], encoded["special_tokens_mask"])):
        head = next((i for i, flag in enumerate(mask) if not flag), len(mask))  # leading specials ([CLS])
        tail = len(ids) - next((i for i, flag in enumerate(reversed(mask)) if not flag), 0)  # trailing ([SEP])
        content = ids[head:tail]
        starts = [0] if policy == "truncate" else range(0, max(len(content), 1), room)
        for start in starts:
            windows.append(ids[:head] + content[start:start + room] + ids[tail:])
            owners.append(owner)
    return windows, np.asarray(owners, dtype=np.int64)


# Windows per forward pass: on CPU, 8 windows of 256 pieces encode ~15 % more pieces per CPU second than 32
# (MiniLM, bench/bench_storyer.py: the attention and feed-forward blocks stay in cache); same vectors up to 1e-7.
MAX_BATCH = 8


def story_vectors(model, windows: list[list[int]], owners: np.ndarray, n_texts: int, pad_id: int, device,
                  grad: bool = False, max_tokens: int = 8192, max_batch: int = MAX_BATCH):
    """[n_texts, D] unit vectors: the masked mean of the last layer over all windows of each text (torch)."""
    import torch

    sums, counts = None, torch.zeros(n_texts, device=device)
    context = torch.enable_grad() if grad else torch.inference_mode()
    with context:
        for batch in length_batches([len(ids) for ids in windows], max_tokens, max_batch):
            ids, mask = pad([windows[index] for index in batch], pad_id)
            ids, mask = ids.to(device), mask.to(device)
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
            target = torch.as_tensor(owners[batch], device=device)
            summed = (hidden * mask.unsqueeze(-1)).sum(dim=1)
            sums = (torch.zeros(n_texts, hidden.shape[-1], device=device) if sums is None else sums).index_add(
                0, target, summed
            )
            counts = counts.index_add(0, target, mask.sum(dim=1).to(counts.dtype))
        return torch.nn.functional.normalize(sums / counts.unsqueeze(-1), dim=-1)


def settings(model_path: str | Path, window: int, policy: str) -> dict:
    return {
        "format": FORMAT,
        "model": identity(model_path),
        "max_length": int(window),
        "policy": policy,
        "pooling": POOLING,
    }


def read_cache(path: Path, wanted: dict) -> dict[str, np.ndarray]:
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as stored:
            if json.loads(str(stored["settings"])) != wanted:
                LOG.warning("story vectors %s were made with other settings; they are replaced", path)
                return {}
            return dict(zip(stored["keys"].tolist(), stored["vectors"]))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:  # cut by a killed job, or edited
        LOG.warning("story vectors %s do not load (%s: %s); deleted, computed again", path, type(error).__name__,
                    " ".join(str(error).split())[:200])
        path.unlink(missing_ok=True)
        return {}


def write_cache(path: Path, vectors: dict[str, np.ndarray], wanted: dict) -> None:
    """Keys sorted, so the same vectors give the same bytes; written beside, then renamed."""
    keys = sorted(vectors)
    partial = path.with_name(path.name + ".partial.npz")
    np.savez(
        partial,
        keys=np.array(keys),
        vectors=np.stack([vectors[key] for key in keys]).astype(np.float32),
        settings=np.array(json.dumps(wanted, sort_keys=True)),
    )
    os.replace(partial, path)


def state_hash(state: dict) -> str:
    digest = hashlib.sha256()
    for name in sorted(state):
        digest.update(name.encode() + state[name].detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


class StoryEncoder:
    """The encoder with its window settings; `state` replaces its weights (a fine-tuned encoder)."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        max_length: int | None = None,
        policy: str = "truncate",
        device: str | None = None,
        state: dict | None = None,
        max_batch: int = MAX_BATCH,
    ):
        if policy not in POLICIES:
            raise InputError(
                f"story vectors: unknown long-text policy {policy!r}; fix: use one of {', '.join(POLICIES)}"
            )
        self.device = choose_device(device)
        self.tokenizer, self.model = load_encoder(model_path, self.device)
        if state is not None:
            self.model.load_state_dict(state)
        self.window = sentence_window(model_path, self.tokenizer, self.model.config, max_length)
        self.policy, self.max_batch = policy, max_batch
        self.settings = settings(model_path, self.window, policy)
        if state is not None:  # a fine-tuned encoder's vectors must never be mistaken for the base model's
            self.settings["fine_tuned_sha256"] = state_hash(state)

    def __call__(self, texts: Sequence[str], grad: bool = False):
        """[len(texts), D] unit vectors (torch, on the encoder's device)."""
        windows, owners = window_ids(self.tokenizer, texts, self.window, self.policy)
        return story_vectors(
            self.model,
            windows,
            owners,
            len(texts),
            self.tokenizer.pad_token_id or 0,
            self.device,
            grad=grad,
            max_batch=self.max_batch,
        )


def check_texts(texts: Sequence[str]) -> None:
    if isinstance(texts, str) or not len(texts) or any(not isinstance(t, str) or not t.strip() for t in texts):
        raise InputError("story vectors: every text must be a non-empty string; fix: drop or restore the empty texts")


def embed_texts(texts: Sequence[str], encoder: StoryEncoder, cache_path: str | Path | None = None) -> np.ndarray:
    """[len(texts), D] float32 unit vectors of `texts` (module docstring), read from / added to `cache_path`."""
    check_texts(texts)
    cache = Path(cache_path) if cache_path is not None else None
    known = read_cache(cache, encoder.settings) if cache else {}
    missing = sorted({text for text in texts if text_key(text) not in known})
    if missing:
        LOG.info(
            "story vectors: encoding %d texts (window %d, %s) on %s",
            len(missing),
            encoder.window,
            encoder.policy,
            encoder.device.type,
        )
        vectors = encoder(missing).float().cpu().numpy()
        known.update({text_key(text): vector for text, vector in zip(missing, vectors)})
        if cache:
            write_cache(cache, known, encoder.settings)
    return np.stack([known[text_key(text)] for text in texts]).astype(np.float32)
