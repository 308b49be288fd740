"""One encoder pass over every distinct text, cached: the token embeddings the embedding metrics read.

BERTScore, MoverScore, BaryScore, DepthScore and SUPERT all start from contextual token vectors; computing
them once per (dataset, encoder) and sharing them is the "one embedding pass".

Method. The distinct texts are stripped (as bert_score does) and tokenised by the model's own tokenizer with
its special tokens ([CLS] ... [SEP] for BERT), sorted by length (longest first) and batched by a token
budget (`batch_size` inputs of the full window; proportionally more shorter ones, e.g. sentences), inputs of
one length per batch (no padding), inputs under 16 tokens in batches of one shape (`batches`): a text's vectors
do not depend on the other texts of the pass, so a shard of a dataset caches the bytes the whole dataset's
pass caches. They are run through the encoder under
`torch.inference_mode()` in float32 with `output_hidden_states=True`. For each requested hidden-state index
(0 = embedding layer, 1..L = transformer layers) the vector of every token, specials included (and flagged),
is kept, stored as float32 (default) or float16 (`dtype`: half the size; read back as float32; the score
differences it makes are measured in README, "Large datasets").

Texts longer than the window (`max_length`; default the model's, min(tokenizer.model_max_length,
config.max_position_embeddings), 512 for BERT):
- "truncate" (default; what HANNA's libraries did: bert_score and MoverScore keep the first 510 word pieces
  and the 2 specials): keep the first `max_length - n_special` word pieces;
- "sliding": cover the whole text with windows of `max_length` tokens (specials included) whose word pieces
  overlap by `stride` (default half a window); each window is encoded alone, wrapped in the text's special
  tokens, and each word piece takes its vector from the window where it is most central (largest distance
  to the window's nearer edge; ties go to the earlier window). The leading specials come from the first
  window, the trailing ones from the last, so a text keeps the layout [CLS] every piece [SEP].
How many texts exceed the window is logged and recorded in the signature (`n_long_texts`, `n_truncated`).

Cache file: safetensors, one file; the arrays are packed (text i owns token rows offsets[i]:offsets[i+1]);
the texts, the token strings of the ids present and the signature sit in its JSON metadata. The same cache
gives the same bytes. `encode_to_file` writes those bytes batch by batch as the pass runs (the header and every
tensor's place are known once the texts are tokenised), so the job's memory is one batch's, not the dataset's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

from storyeval.errors import InputError
from storyeval.io import SAFETENSORS_METADATA_KEY as METADATA_KEY
from storyeval.io import damaged, read_safetensors
from storyeval.neural.paths import revision_record

LOG = logging.getLogger("storyeval.neural")
POLICIES = ("truncate", "sliding")
STORAGE = ("float32", "float16")
SHORT_BELOW = 16  # tokens: shorter inputs are encoded in batches of exactly SHORT_BATCH rows (`batches`)
SHORT_BATCH = 32
TOKENISE_CHUNK = 1024  # texts tokenised at a time: the tokenizer's output lists take ~250 bytes a token
FORMAT = "storyeval-token-embeddings/1"
WEIGHT_FILES = ("*.safetensors", "*.bin")


@dataclass(frozen=True)
class TokenEmbeddings:
    input_ids: np.ndarray  # [T] int64, special tokens included
    special: np.ndarray  # [T] bool, True for special tokens
    layers: dict[int, np.ndarray]  # hidden-state index -> [T, D] float32


class EmbeddingCache:
    """Hidden states of every token of every encoded text, packed by text, stored as float32 or float16.

    `idf_scope` (`storyeval.neural.shards.IdfScope`): set in a shard's metric job, so that idf counts the whole
    dataset's rows."""

    idf_scope = None

    def __init__(self, texts: Sequence[str], offsets: np.ndarray, input_ids: np.ndarray, special: np.ndarray,
                 hidden: dict[int, np.ndarray], vocab: dict[int, str], signature: dict):
        self.texts = tuple(texts)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.input_ids = np.asarray(input_ids, dtype=np.int64)
        self.special = np.asarray(special, dtype=bool)
        self.hidden = {int(layer): np.asarray(states) for layer, states in sorted(hidden.items())}
        if any(states.dtype.name not in STORAGE for states in self.hidden.values()):
            raise InputError(f"embedding cache of {signature['model']}: hidden states must be {' or '.join(STORAGE)}; "
                             "fix: rebuild the cache")
        self.vocab = dict(vocab)
        self.signature = signature
        self.layers = tuple(self.hidden)
        self.model = str(signature["model"])
        self.index = {text: position for position, text in enumerate(self.texts)}
        if len(self.offsets) != len(self.texts) + 1 or self.offsets[-1] != len(self.input_ids):
            raise InputError(f"embedding cache of {self.model}: offsets do not match the texts; fix: rebuild the cache")

    def get(self, text: str) -> TokenEmbeddings:
        """The token embeddings of one text (float32 whatever the storage); KeyError if it was not encoded."""
        position = self.index[text]
        rows = slice(self.offsets[position], self.offsets[position + 1])
        return TokenEmbeddings(self.input_ids[rows], self.special[rows],
                               {layer: states[rows].astype(np.float32, copy=False)
                                for layer, states in self.hidden.items()})

    def release(self) -> None:
        """Return the pages of memory-mapped vectors read so far to the OS (`madvise(MADV_DONTNEED)`; a later read
        maps them again from the page cache). Why: mapped pages stay in the reader's resident memory, so a job
        reading every text grew with the dataset; releasing after each group bounds it by the group."""
        import mmap

        for states in self.hidden.values():
            mapping = states
            while mapping is not None and not isinstance(mapping, mmap.mmap):  # a memmap's base is its mmap
                mapping = getattr(mapping, "base", None)
            if mapping is not None:
                mapping.madvise(mmap.MADV_DONTNEED)

    def ids(self, text: str) -> np.ndarray:
        """The token ids of one text (no vectors read); KeyError if it was not encoded."""
        position = self.index[text]
        return self.input_ids[self.offsets[position] : self.offsets[position + 1]]

    def __contains__(self, text: object) -> bool:
        return text in self.index

    def __len__(self) -> int:
        return len(self.texts)

    def tokens(self, ids: Iterable[int]) -> list[str]:
        """The tokenizer's strings of these ids (`##ing`, `[CLS]`)."""
        return [self.vocab[int(token)] for token in ids]


def require_texts(cache: EmbeddingCache, texts: Iterable[str], metric: str) -> None:
    """Refuse to score texts the cache lacks (a cache built for another dataset or before the texts changed)."""
    missing = [text for text in dict.fromkeys(texts) if text not in cache]
    if missing:
        raise InputError(
            f"metric {metric}: {len(missing)} texts are not in the embedding cache of {cache.model} "
            f"(first: {missing[0][:60]!r}); fix: rebuild the cache from this dataset's texts"
        )


def resolve_layer(cache: EmbeddingCache, layer: int | None, metric: str) -> int:
    """`None` means the model's last layer; the layer must be in the cache."""
    chosen = int(cache.signature["num_hidden_layers"]) if layer is None else int(layer)
    if chosen not in cache.layers:
        raise InputError(
            f"metric {metric}: layer {chosen} is not in the embedding cache of {cache.model} (layers "
            f"{list(cache.layers)}); "
            "fix: add the layer to the cache's layers or choose a cached one"
        )
    return chosen


def layers_read(metrics: dict[str, dict], n_layers: int) -> tuple[int, ...]:
    """The hidden states that the cache-based `metrics` ({name: compute() options}) read from an encoder of
    `n_layers` layers, as their signatures name them (`layer`, or BaryScore's `layers`): the only ones worth
    caching."""
    from storyeval.metrics import catalog

    chosen = set()
    for name, options in metrics.items():
        parameters = catalog.load(name).signature(cache={"num_hidden_layers": n_layers}, **options)["parameters"]
        chosen |= set(parameters["layers"] if "layers" in parameters else [parameters["layer"]])
    if not chosen:
        raise InputError("embedding pass: no enabled metric reads this encoder's cache; fix: set embedding.layers")
    return tuple(sorted(chosen))


# Metrics whose scores float16 storage changes by less than their tolerance, 1e-4 (README, "Large datasets": all
# 672 hanna-llm stories, largest differences 2e-6..8e-6); DepthScore's ranks and BaryScore's barycenters move by
# 3e-3 to 8e-3.
FLOAT16_SAFE = frozenset({"bertscore", "moverscore", "supert"})


def storage_dtype(setting: str, metrics: Iterable[str]) -> str:
    """`embedding.dtype`: float32, float16, or auto: float16 when every metric reading the cache is FLOAT16_SAFE."""
    if setting == "auto":
        return "float16" if set(metrics) <= FLOAT16_SAFE else "float32"
    return setting


def encoder_depth(model_path: str | Path) -> int:
    """The number of hidden layers of an encoder, from its config (no weights loaded)."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(model_path))
    return int(getattr(config, "num_hidden_layers", None) or config.num_layers)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (cosine similarity becomes a dot product)."""
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


@dataclass(frozen=True)
class Window:
    """One encoder input: a piece of one text, wrapped in its special tokens, and where its kept rows go."""

    ids: np.ndarray  # int32: 4 bytes a token (a list of Python ints takes 36), for every window of the pass
    source: slice  # rows of the window's output that are kept
    target: int  # first cache row they fill


def sliding_ranges(n: int, room: int, stride: int) -> list[tuple[int, int, int, int]]:
    """Windows over n word pieces, `room` wide, overlapping by `stride`: (start, stop, keep_start, keep_stop).

    Each piece is kept from the window where it is most central (ties: the earlier window); the kept ranges
    tile 0..n in order. The last window is pulled back to end at n, so every window is full when n >= room.
    """
    if n <= room:
        return [(0, n, 0, n)]
    starts = list(range(0, n - room + 1, room - stride))
    if starts[-1] + room < n:
        starts.append(n - room)
    starts = np.array(starts)
    stops = starts + room
    position = np.arange(n)
    centrality = np.minimum(position - starts[:, None], stops[:, None] - 1 - position)  # negative outside a window
    owner = centrality.argmax(axis=0)
    ranges = []
    for window, (start, stop) in enumerate(zip(starts, stops)):
        mine = np.flatnonzero(owner == window)
        if mine.size:
            ranges.append((int(start), int(stop), int(mine[0]), int(mine[-1]) + 1))
    return ranges


def distinct_texts(texts: Iterable[str]) -> list[str]:
    """Sorted distinct texts; an empty or non-string text is an input error."""
    distinct = [] if isinstance(texts, str) else sorted(set(texts))
    if not distinct:
        raise InputError(
            "embedding pass: no texts to encode (a list of strings is needed); fix: pass the dataset's texts"
        )
    for text in distinct:
        if not isinstance(text, str) or not text.strip():
            raise InputError(
                f"embedding pass: text {text!r} is empty or not a string; fix: drop it or restore the text"
            )
    return distinct


def load_encoder(model_path: str | Path, device, revision: str | None = None, role: str = "encoder"):
    """Tokenizer and encoder (the encoder half of an encoder-decoder model), float32, in eval mode on `device`;
    pinned to `revision` (`storyeval.neural.models`; `role` names the config key in its refusal)."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    from storyeval.neural.models import pinned_source, warn_unpinned

    transformers_logging.disable_progress_bar()  # its "Loading weights" bar would fill the console of every job
    source = pinned_source(role, str(model_path), revision)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(model_path), **source)
        model = AutoModel.from_pretrained(str(model_path), dtype=torch.float32, **source)
    except (OSError, ValueError) as error:
        raise InputError(
            f"encoder {model_path}: cannot be loaded ({str(error).splitlines()[0]}); "
            "fix: point the models section at a Hugging Face model folder or name"
        ) from error
    warn_unpinned(role, str(model_path), revision)
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    return tokenizer, model.eval().to(device)


@lru_cache(maxsize=2)
def inference_encoder(model_path: str | Path, device, revision: str | None = None, role: str = "encoder"):
    """`load_encoder`, once per process, for inference only (`encode_texts` under inference_mode): repeated
    passes (`storyeval.api.score`) reuse the model; training loads its own copy."""
    return load_encoder(model_path, device, revision, role)


def model_window(tokenizer, config, max_length: int | None) -> int:
    """The longest input the model takes, or `max_length` when it is set and fits."""
    limit = min(tokenizer.model_max_length, getattr(config, "max_position_embeddings", math.inf))
    if max_length is None and not math.isfinite(limit):
        raise InputError(f"encoder {config.name_or_path}: its window is unknown; fix: set max_length")
    window, shortest = int(limit if max_length is None else max_length), tokenizer.num_special_tokens_to_add() + 1
    if not shortest <= window <= limit:
        raise InputError(
            f"encoder {config.name_or_path}: max_length {window} must lie in {shortest}..{limit} "
            "(the model's window); fix: choose a max_length within it"
        )
    return window


def check_layers(layers: Iterable[int], n_layers: int, model: str) -> tuple[int, ...]:
    chosen = tuple(sorted({int(layer) for layer in layers}))
    if not chosen or chosen[0] < 0 or chosen[-1] > n_layers:
        raise InputError(
            f"encoder {model}: layers {list(chosen)} must lie in 0..{n_layers} "
            "(0 = embedding layer); fix: choose layers the model has"
        )
    return chosen


def plan_windows(ids: list[int], mask: list[int], room: int, policy: str, stride: int, offset: int):
    """The windows of one tokenised text and its cached ids and special flags."""
    prefix = next((i for i, flag in enumerate(mask) if not flag), len(mask))
    suffix = next((i for i, flag in enumerate(reversed(mask)) if not flag), 0)
    head, content, tail = ids[:prefix], ids[prefix : len(ids) - suffix], ids[len(ids) - suffix :]
    if policy == "truncate":
        content = content[:room]
        ranges = [(0, len(content), 0, len(content))]
    else:
        ranges = sliding_ranges(len(content), room, stride)
    windows = []
    for number, (start, stop, keep_start, keep_stop) in enumerate(ranges):
        first, last = number == 0, number == len(ranges) - 1
        window = head + content[start:stop] + tail
        source = slice(0 if first else prefix + keep_start - start, len(window) if last else prefix + keep_stop - start)
        target = offset + (0 if first else prefix + keep_start)
        windows.append(Window(np.asarray(window, dtype=np.int32), source, target))
    cached_ids = head + content + tail
    special = [True] * len(head) + [bool(flag) for flag in mask[prefix : prefix + len(content)]] + [True] * len(tail)
    return windows, cached_ids, special


def batches(windows: list[Window], budget: int) -> list[list[Window]]:
    """Windows of one length per batch (longest first), as many as fit `budget` tokens; windows shorter than
    SHORT_BELOW tokens SHORT_BATCH at a time, encoded in exactly that many rows (`batch_rows`). A text's vectors
    then do not depend on which texts share its pass, so a shard of a dataset caches the bytes of the whole
    dataset's pass. Measured with MiniLM on CPU: padding changed the last bits of 9 of 60 hanna-llm texts'
    vectors; unpadded batches of 5-7-token sentences still changed with the batch's size (6 of 490 inputs),
    longer ones never did; in batches of one shape no input's bits depend on the other rows (3-15 tokens).
    Why not alone, as before: a forward call streams the encoder's weights whatever its size (6 ms for one
    8-token sentence with MiniLM), and SUPERT's sentences are thousands of them (hanna-llm: 4,840 of 5,112
    calls); 32 such sentences in one call take 27-115 ms against 200-280 ms one by one."""
    by_length: dict[int, list[Window]] = {}
    for window in windows:
        by_length.setdefault(len(window.ids), []).append(window)
    groups = []
    for length in sorted(by_length, reverse=True):
        same = by_length[length]
        count = max(1, budget // length) if length >= SHORT_BELOW else SHORT_BATCH
        groups += [same[start : start + count] for start in range(0, len(same), count)]
    return groups


def batch_rows(batch: list[Window]) -> list[Window]:
    """The rows a batch is encoded in: a batch of short windows filled up to SHORT_BATCH rows with copies of its
    first window (their outputs are not kept), so that every short window of a length is encoded in one shape."""
    if len(batch[0].ids) >= SHORT_BELOW:
        return batch
    return batch + [batch[0]] * (SHORT_BATCH - len(batch))


def run_windows(model, windows: list[Window], layers: tuple[int, ...], budget: int, pad: int, device, store) -> None:
    """Encode the windows in length-sorted batches; `store(layer, first_row, rows)` takes each window's kept rows
    (float32) as soon as its batch is done, so memory holds one batch's hidden states, whatever the dataset."""
    import torch

    with torch.inference_mode():
        for batch in batches(windows, budget):
            rows = batch_rows(batch)
            ids = torch.full((len(rows), len(rows[0].ids)), pad, dtype=torch.long)
            attention = torch.zeros_like(ids)
            for row, window in enumerate(rows):
                ids[row, : len(window.ids)] = torch.from_numpy(window.ids)
                attention[row, : len(window.ids)] = 1
            states = model(
                input_ids=ids.to(device), attention_mask=attention.to(device), output_hidden_states=True
            ).hidden_states
            for layer in layers:
                block = states[layer].float().cpu().numpy()
                for row, window in enumerate(batch):
                    store(layer, window.target, block[row, window.source])


def weight_hashes(model_path: str | Path) -> dict[str, str]:
    """sha256 of the weight files of a local model folder: the model's identity beyond its path."""
    folder = Path(model_path)
    if not folder.is_dir():
        return {}
    files = sorted({file for pattern in WEIGHT_FILES for file in folder.glob(pattern)})
    return {file.name: hashlib.sha256(file.read_bytes()).hexdigest() for file in files}


@dataclass
class Plan:
    """What one pass encodes and records, before any forward pass: the model, the windows, every array but the
    hidden states, and the cache's metadata."""

    model: object
    device: object
    layers: tuple[int, ...]
    windows: list[Window]
    budget: int
    pad: int
    texts: list[str]
    arrays: dict[str, np.ndarray]  # offsets, input_ids, special
    vocab: dict[int, str]
    signature: dict

    @property
    def width(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def n_tokens(self) -> int:
        return int(self.arrays["offsets"][-1])


def plan_pass(
    texts: Iterable[str],
    model_path: str | Path,
    layers: Iterable[int],
    batch_size: int = 32,
    device: str | None = None,
    max_length: int | None = None,
    policy: str = "truncate",
    stride: int | None = None,
    revision: str | None = None,
    role: str = "encoder",
    dtype: str = "float32",
) -> Plan:
    """Check the settings, load the encoder, tokenise and window every distinct text (`encode_texts`)."""
    from storyeval.neural.device import choose_device

    distinct = distinct_texts(texts)
    if policy not in POLICIES:
        raise InputError(f"embedding pass: unknown long-text policy {policy!r}; fix: use one of {', '.join(POLICIES)}")
    if stride is not None and policy != "sliding":
        raise InputError(
            "embedding pass: stride applies to the sliding policy only; fix: drop stride or use policy sliding"
        )
    if int(batch_size) < 1:
        raise InputError(f"embedding pass: batch_size {batch_size} must be at least 1")
    if dtype not in STORAGE:
        raise InputError(f"embedding pass: storage dtype {dtype!r}; fix: use one of {', '.join(STORAGE)}")
    torch_device = choose_device(device)
    tokenizer, model = inference_encoder(str(model_path), torch_device, revision, role)
    n_layers = int(model.config.num_hidden_layers)
    chosen = check_layers(layers, n_layers, str(model_path))
    window = model_window(tokenizer, model.config, max_length)
    room = window - tokenizer.num_special_tokens_to_add()
    stride = room // 2 if stride is None and policy == "sliding" else stride
    if policy == "sliding" and not 0 <= int(stride) < room:
        raise InputError(f"embedding pass: stride {stride} must lie in 0..{room - 1} (the window's word pieces)")

    windows, ids, special, offsets, long_texts = [], [], [], [0], 0
    for start in range(0, len(distinct), TOKENISE_CHUNK):  # the tokenizer's lists, a chunk at a time
        encoded = tokenizer([text.strip() for text in distinct[start : start + TOKENISE_CHUNK]],
                            add_special_tokens=True, return_special_tokens_mask=True, verbose=False)
        for text_ids, mask in zip(encoded["input_ids"], encoded["special_tokens_mask"]):
            long_texts += len(text_ids) > window
            text_windows, cached_ids, flags = plan_windows(text_ids, mask, room, policy, stride, offsets[-1])
            windows += text_windows
            ids.append(np.asarray(cached_ids, dtype=np.int64))
            special.append(np.asarray(flags, dtype=bool))
            offsets.append(offsets[-1] + len(cached_ids))
    ids, special = np.concatenate(ids), np.concatenate(special)
    if long_texts:
        LOG.warning(
            "encoder %s: %d of %d texts exceed the %d-token window; %s",
            model_path,
            long_texts,
            len(distinct),
            window,
            f"kept their first {room} word pieces (truncate)"
            if policy == "truncate"
            else f"covered by sliding windows overlapping by {stride} word pieces",
        )
    vector_bytes = len(chosen) * offsets[-1] * int(model.config.hidden_size) * np.dtype(dtype).itemsize
    cache_bytes = vector_bytes + 9 * offsets[-1] + 8 * len(offsets)  # ids, flags
    present = np.unique(ids)
    vocab = dict(zip(present.tolist(), tokenizer.convert_ids_to_tokens(present.tolist())))
    signature = {
        "format": FORMAT,
        "model": str(model_path),
        **revision_record(model_path, revision),
        "weights_sha256": weight_hashes(model_path),
        "model_type": model.config.model_type,
        "num_hidden_layers": n_layers,
        "layers": list(chosen),
        "policy": policy,
        "max_length": window,
        "stride": stride,
        "n_texts": len(distinct),
        "n_long_texts": long_texts,
        "n_truncated": long_texts if policy == "truncate" else 0,
        "n_tokens": offsets[-1],
        "dtype": dtype,
        "cache_bytes": cache_bytes,
        "bytes_per_text": round(cache_bytes / len(distinct)),
        "special_tokens": "included, flagged in `special`",
        "device": torch_device.type,
        "batch_tokens": int(batch_size) * window,
        "versions": {
            package: metadata.version(package)
            for package in ("torch", "transformers", "tokenizers", "numpy", "safetensors")
        },
    }
    arrays = {"offsets": np.asarray(offsets, dtype=np.int64), "input_ids": ids, "special": special}
    return Plan(model, torch_device, chosen, windows, int(batch_size) * window, tokenizer.pad_token_id or 0, distinct,
                arrays, vocab, signature)


def log_pass(plan: Plan) -> None:
    LOG.info("encoder %s: %d texts, %d tokens, layers %s on %s", plan.signature["model"], len(plan.texts),
             plan.n_tokens, list(plan.layers), plan.device.type)


def encode_texts(texts: Iterable[str], model_path: str | Path, layers: Iterable[int], batch_size: int = 32,
                 device: str | None = None, max_length: int | None = None, policy: str = "truncate",
                 stride: int | None = None, revision: str | None = None, role: str = "encoder",
                 dtype: str = "float32") -> EmbeddingCache:
    """Encode every distinct text once and keep the requested layers' token vectors in memory (module docstring;
    `encode_to_file` streams them to a cache file instead).

    `batch_size` counts full-window inputs: each batch holds up to batch_size x max_length tokens, so short
    inputs (sentences) go many to a batch. `device`: None/"auto" = cuda when present, else cpu. `revision`:
    the hub commit the model of config role `role` is pinned to (`storyeval.neural.models`). `dtype`: the
    storage of the vectors (float32 or float16; computed in float32 either way)."""
    plan = plan_pass(texts, model_path, layers, batch_size, device, max_length, policy, stride, revision, role, dtype)
    hidden = {layer: np.empty((plan.n_tokens, plan.width), dtype=dtype) for layer in plan.layers}

    def store(layer: int, first: int, rows: np.ndarray) -> None:
        hidden[layer][first : first + len(rows)] = rows

    run_windows(plan.model, plan.windows, plan.layers, plan.budget, plan.pad, plan.device, store)
    log_pass(plan)
    arrays = plan.arrays
    return EmbeddingCache(plan.texts, arrays["offsets"], arrays["input_ids"], arrays["special"], hidden, plan.vocab,
                          plan.signature)


def encode_to_file(texts: Iterable[str], path: str | Path, model_path: str | Path, layers: Iterable[int],
                   batch_size: int = 32, device: str | None = None, max_length: int | None = None,
                   policy: str = "truncate", stride: int | None = None, revision: str | None = None,
                   role: str = "encoder", dtype: str = "float32") -> dict:
    """`encode_texts` written to `path` as `save_cache` writes it, byte for byte, with each batch's rows written
    as soon as it is encoded: memory holds one batch, not the dataset's vectors. Returns the signature."""
    plan = plan_pass(texts, model_path, layers, batch_size, device, max_length, policy, stride, revision, role, dtype)
    shapes = {name: (array.dtype, array.shape) for name, array in plan.arrays.items()}
    shapes |= {f"layer_{layer}": (np.dtype(dtype), (plan.n_tokens, plan.width)) for layer in plan.layers}
    header, starts, size = safetensors_layout(shapes, metadata_of(plan.texts, plan.vocab, plan.signature))
    row_bytes = plan.width * np.dtype(dtype).itemsize
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as file:
        file.write(header)
        file.truncate(size)
        handle = file.fileno()
        for name, array in plan.arrays.items():
            os.pwrite(handle, array.tobytes(), starts[name])

        def store(layer: int, first: int, rows: np.ndarray) -> None:
            os.pwrite(handle, np.ascontiguousarray(rows, dtype=dtype), starts[f"layer_{layer}"] + first * row_bytes)

        run_windows(plan.model, plan.windows, plan.layers, plan.budget, plan.pad, plan.device, store)
    os.replace(partial, path)
    log_pass(plan)
    return plan.signature


def metadata_of(texts: Sequence[str], vocab: dict[int, str], signature: dict) -> dict[str, str]:
    content = {"signature": signature, "texts": list(texts), "vocab": sorted(vocab.items())}
    return {METADATA_KEY: json.dumps(content, sort_keys=True, ensure_ascii=False)}


# safetensors' names of numpy dtypes, in the order it lays tensors out: larger alignment first (then by name)
SAFETENSORS_DTYPES = {"int64": "I64", "float32": "F32", "float16": "F16", "bool": "BOOL"}


def safetensors_layout(shapes: dict[str, tuple[np.dtype, tuple]], metadata: dict[str, str]):
    """The header bytes safetensors writes for tensors of these (dtype, shape), each tensor's first byte in the
    file, and the file's size: the format's 8-byte little-endian length, then JSON (metadata first, tensors in
    data order, padded with spaces to 8 bytes), then the tensors back to back."""
    order = sorted(shapes, key=lambda name: (list(SAFETENSORS_DTYPES).index(shapes[name][0].name), name))
    entries, position = {"__metadata__": metadata}, 0
    for name in order:
        dtype, shape = shapes[name]
        length = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        entries[name] = {"dtype": SAFETENSORS_DTYPES[dtype.name], "shape": list(shape),
                         "data_offsets": [position, position + length]}
        position += length
    text = json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    start = 8 + len(text)
    header = len(text).to_bytes(8, "little") + text
    return header, {name: start + entries[name]["data_offsets"][0] for name in order}, start + position


def save_cache(cache: EmbeddingCache, path: str | Path) -> None:
    """Write the cache as one safetensors file (written beside, then renamed: never half a file)."""
    from safetensors.numpy import save_file

    path = Path(path)
    arrays = {
        "offsets": cache.offsets,
        "input_ids": cache.input_ids,
        "special": cache.special,
        **{f"layer_{layer}": np.ascontiguousarray(states) for layer, states in cache.hidden.items()},
    }
    partial = path.with_name(path.name + ".partial")
    save_file(arrays, str(partial), metadata=metadata_of(cache.texts, cache.vocab, cache.signature))
    os.replace(partial, path)


def load_cache(path: str | Path) -> EmbeddingCache:
    """Open a cache written by `save_cache`: its token vectors are memory-mapped, read as metrics use them."""
    arrays, content = read_safetensors(
        path, "np", "embedding cache", "run the embedding rule first", None, mapped=True
    )
    if content.get("signature", {}).get("format") != FORMAT:
        raise damaged(path, "embedding cache", ValueError(f"not a {FORMAT} file"))
    hidden = {int(name.removeprefix("layer_")): states for name, states in arrays.items() if name.startswith("layer_")}
    return EmbeddingCache(
        content["texts"],
        arrays["offsets"],
        arrays["input_ids"],
        arrays["special"],
        hidden,
        {int(token): string for token, string in content["vocab"]},
        content["signature"],
    )


class IdfWeights(dict):
    """token id -> idf = log((N+1)/(df+1)); an id absent from every document gets log(N+1) (df = 0).

    The convention of bert_score's and MoverScore's `get_idf_dict` (a defaultdict), without inserting
    looked-up ids.
    """

    def __init__(self, values: dict[int, float], n_documents: int):
        super().__init__(values)
        self.n_documents = n_documents
        self.unseen = math.log(n_documents + 1)
        self.keys_sorted = np.array(sorted(values), dtype=np.int64)
        self.values_sorted = np.array([values[key] for key in self.keys_sorted.tolist()], dtype=np.float64)

    def __missing__(self, key: int) -> float:
        return self.unseen

    def of(self, ids: np.ndarray) -> np.ndarray:
        """The idf of each id, vectorised."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.keys_sorted):
            return np.full(ids.shape, self.unseen)
        where = np.minimum(np.searchsorted(self.keys_sorted, ids), len(self.keys_sorted) - 1)
        return np.where(self.keys_sorted[where] == ids, self.values_sorted[where], self.unseen)


def document_frequencies(documents: Iterable[np.ndarray]) -> tuple[np.ndarray, int]:
    """df[id] = number of documents (token-id arrays) containing the id, and the number of documents, reading one
    document at a time: memory is the vocabulary's (the largest id), whatever the number of documents."""
    df, n = np.zeros(0, dtype=np.int64), 0
    for ids in documents:
        present = np.unique(np.asarray(ids, dtype=np.int64))
        if len(present) and present[0] < 0:
            raise InputError(f"idf: token id {present[0]} is negative; fix: rebuild the embedding cache")
        if len(present) and present[-1] >= len(df):
            df = np.concatenate([df, np.zeros(max(present[-1] + 1, 2 * len(df)) - len(df), dtype=np.int64)])
        df[present] += 1
        n += 1
    return df, n


def idf_weights(documents: EmbeddingCache | Iterable[np.ndarray], texts: Sequence[str] | None = None) -> IdfWeights:
    """idf = log((N+1)/(df+1)) over N documents (token-id arrays, or `texts` looked up in a cache; all its
    texts when `texts` is None), df = number of documents containing the id (BERTScore, MoverScore, BaryScore).
    A document listed twice counts twice, as in bert_score. In a shard (`cache.idf_scope`), `texts` stand for the
    same columns of the whole dataset, whose rows are counted. Documents are read one at a time
    (`document_frequencies`), so a generator keeps memory independent of their number."""
    if isinstance(documents, EmbeddingCache) and documents.idf_scope is not None and texts is not None:
        documents = documents.idf_scope.documents(list(texts))  # a shard: the dataset's rows
    elif isinstance(documents, EmbeddingCache):
        cache, names = documents, documents.texts if texts is None else list(texts)
        require_texts(cache, names, "idf")
        documents = (cache.ids(text) for text in names)
    df, n = document_frequencies(documents)
    if n == 0:
        raise InputError("idf: no documents to count token frequencies over; fix: pass the reference texts")
    present = np.flatnonzero(df)
    return IdfWeights(dict(zip(present.tolist(), np.log((n + 1) / (df[present] + 1)).tolist())), n)
