"""Perplexity of each story under a causal LM: exp(mean token negative log-likelihood); lower is better.

Every token of the story is scored once. With `add_bos` (default) the tokenizer's BOS
token (GPT-2's `<|endoftext|>`) is put in front, so the first word is scored too (as
lm-evaluation-harness's rolling log-likelihood); without it the first token is context
only. Stories longer than the model's window are scored with sliding windows (the
Hugging Face perplexity guide): windows of `window` tokens start every `stride` tokens,
and each window scores only the tokens no earlier window scored, so every token after
the first window sees at least `window - stride` tokens of context. Paper-setup model:
gpt2 (window 1,024); no HANNA column (the HANNA-LLM follow-up reported GPT-2 perplexity).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics.base import Resource, check_texts, columns, defaults_of, describe, scores_frame, warn_count
from storyeval.neural import models

NAME = "perplexity"
NEEDS: frozenset[str] = frozenset()
COLUMNS = columns("model", "free", "Perplexity", direction="lower")
RESOURCE = Resource("model", "causal_lm")


def model_window(loaded: models.LoadedModel) -> int:
    config = loaded.model.config
    for key in ("n_positions", "max_position_embeddings"):
        if isinstance(getattr(config, key, None), int):
            return getattr(config, key)
    raise InputError(f"metric {NAME}: {loaded.name} does not state its window; fix: set window explicitly")


def windows(length: int, window: int, stride: int) -> list[tuple[int, int, int]]:
    """(begin, end, first scored position) of each window over `length` tokens; position 0 is never scored."""
    spans, scored_until, begin = [], 1, 0
    while scored_until < length:
        end = min(begin + window, length)
        spans.append((begin, end, max(scored_until, begin + 1)))
        scored_until, begin = end, begin + stride
    return spans


def token_ids(loaded: models.LoadedModel, stories: list[str], add_bos: bool) -> list[list[int]]:
    bos = loaded.tokenizer.bos_token_id
    if add_bos and bos is None:
        raise InputError(f"metric {NAME}: {loaded.name}'s tokenizer has no BOS token; fix: set add_bos to false")
    encoded = loaded.tokenizer(stories, add_special_tokens=False)["input_ids"]
    return [[bos, *ids] if add_bos else list(ids) for ids in encoded]


def compute(
    texts: pd.DataFrame,
    *,
    model: str,
    window: int | None = None,
    stride: int | None = None,
    add_bos: bool = True,
    batch_size: int = 8,
    max_tokens: int = 4096,
    device: str | None = None,
    revision: str | None = None,
) -> pd.DataFrame:
    """Column `perplexity` per story (see module docstring); `window` defaults to the model's, `stride` to half
    of it."""
    import torch

    check_texts(texts, NEEDS, NAME)
    loaded = models.load("causal-lm", model, device, revision)
    window = window or model_window(loaded)
    stride = stride or window // 2
    if window > model_window(loaded):
        raise InputError(
            f"metric {NAME}: window {window} exceeds the {model_window(loaded)} positions of {loaded.name}"
        )
    if not 0 < stride < window:
        raise InputError(
            f"metric {NAME}: stride {stride} must lie in 1..window-1 (window {window}) so that every token is scored"
        )
    ids = token_ids(loaded, list(texts["story"]), add_bos)
    spans = [(text, *span) for text, row in enumerate(ids) for span in windows(len(row), window, stride)]
    warn_count(
        NAME,
        texts,
        sum(len(row) > window for row in ids),
        f"stories are longer than the {window}-token window (sliding windows, stride {stride})",
    )
    nll, count = np.zeros(len(ids)), np.zeros(len(ids), dtype=np.int64)
    with torch.inference_mode():
        for batch in models.length_batches([end - begin for _, begin, end, _ in spans], max_tokens, batch_size):
            chosen = [spans[i] for i in batch]
            rows, mask = models.pad([ids[text][begin:end] for text, begin, end, _ in chosen], 0)
            logits = loaded.model(input_ids=rows.to(loaded.device), attention_mask=mask.to(loaded.device)).logits[
                :, :-1
            ]
            log_p = (
                torch.log_softmax(logits.float(), dim=-1)
                .gather(-1, rows[:, 1:].to(loaded.device).unsqueeze(-1))
                .squeeze(-1)
            )
            position = torch.arange(1, rows.shape[1])  # position (within the window) of each predicted token
            for k, (text, begin, end, first) in enumerate(chosen):
                scored = (position >= first - begin) & (position < end - begin)
                nll[text] -= float(log_p[k, scored.to(loaded.device)].double().sum())
                count[text] += int(scored.sum())
    warn_count(NAME, texts, int((count == 0).sum()), "have no token to score (perplexity NaN)")
    with np.errstate(invalid="ignore", divide="ignore"):
        return scores_frame(texts["story_id"], {"perplexity": np.exp(nll / count)})


@defaults_of(compute)
def signature(
    *,
    model: str,
    window: int | None,
    stride: int | None,
    add_bos: bool,
    batch_size: int,
    max_tokens: int,
    device: str | None,
    revision: str | None,
) -> dict:
    return describe(
        NAME,
        ["torch", "transformers"],
        {"text": "story"},
        {"window": window, "stride": stride, "add_bos": add_bos},
        model=models.identity(model, revision),
        defaults="window: the model's positions; stride: window // 2",
    )
