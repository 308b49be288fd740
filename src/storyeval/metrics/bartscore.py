"""BARTScore (Yuan et al. 2021): the mean log-likelihood of a text Y's tokens given a text X under a seq2seq LM.

score(X -> Y) = (1/|Y|) sum_t log p(y_t | y_<t, X), as the authors' `BARTScorer.score`:
Y's tokens are the tokenizer's ids including its special tokens (`<s> ... </s>` for
BART), the decoder is fed Y shifted right (the model's own `labels` shift), and |Y|
counts every id. Paper model: facebook/bart-large-cnn, texts truncated at 1,024 tokens.
Variants (Yuan et al. 2021: BARTScore-XY = log p(Y | X)):
- `ps` p(story | prompt), `sp` p(prompt | story)    (reference-free),
- `sh` p(human | story), `hs` p(story | human)      (the human story is the reference).
Higher is better. Distinct (X, Y) pairs are scored once (the human row's SH and HS
are the same pair), batched by length.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics.base import Resource, check_texts, columns, defaults_of, describe, scores_frame, warn_count
from storyeval.neural import models

NAME = "bartscore"
VARIANTS = {
    "ps": ("prompt", "story"),
    "sp": ("story", "prompt"),
    "sh": ("story", "reference"),
    "hs": ("reference", "story"),
}
NEEDS = frozenset({"prompt", "reference"})  # of all variants; `needs(variants)` for a subset
COLUMNS = {
    **columns("model", "free", "BARTScore-PS", "BARTScore-SP"),
    **columns("model", "based", "BARTScore-SH", "BARTScore-HS"),
}
RESOURCE = Resource("model", "seq2seq")


def needs(variants: Sequence[str]) -> frozenset[str]:
    return frozenset(column for variant in variants for column in VARIANTS[variant] if column != "story")


def check_variants(variants: Sequence[str]) -> None:
    unknown = [variant for variant in variants if variant not in VARIANTS]
    if unknown or not variants:
        raise InputError(
            f"metric {NAME}: unknown variants {unknown or '(none)'}; fix: choose among {', '.join(VARIANTS)}"
        )


def mean_log_likelihoods(
    loaded: models.LoadedModel,
    sources: Sequence[str],
    targets: Sequence[str],
    *,
    max_length: int,
    batch_size: int,
    max_tokens: int,
) -> tuple[list[float], int]:
    """Mean token log p(target | source) per pair, and how many of the texts were cut at `max_length`."""
    import torch

    tokenizer, model = loaded.tokenizer, loaded.model
    source_ids = tokenizer(list(sources), truncation=True, max_length=max_length)["input_ids"]
    target_ids = tokenizer(list(targets), truncation=True, max_length=max_length)["input_ids"]
    truncated = sum(len(ids) > max_length for ids in tokenizer(list(sources) + list(targets))["input_ids"])
    scores = [0.0] * len(sources)
    lengths = [len(s) + len(t) for s, t in zip(source_ids, target_ids)]
    with torch.inference_mode():
        for batch in models.length_batches(lengths, max_tokens, batch_size):
            src, src_mask = models.pad([source_ids[i] for i in batch], tokenizer.pad_token_id)
            tgt, tgt_mask = models.pad([target_ids[i] for i in batch], tokenizer.pad_token_id)
            # the decoder input the model itself makes from labels (shifted right), without computing its loss
            decoder_input = model.prepare_decoder_input_ids_from_labels(labels=tgt.masked_fill(tgt_mask == 0, -100))
            logits = model(
                input_ids=src.to(loaded.device),
                attention_mask=src_mask.to(loaded.device),
                decoder_input_ids=decoder_input.to(loaded.device),
            ).logits
            token_log_p = (
                torch.log_softmax(logits.float(), dim=-1).gather(-1, tgt.to(loaded.device).unsqueeze(-1)).squeeze(-1)
            )
            mask = tgt_mask.to(loaded.device)
            means = (token_log_p * mask).sum(dim=1) / mask.sum(dim=1)
            for index, value in zip(batch, means.tolist()):
                scores[index] = value
    return scores, truncated


def compute(
    texts: pd.DataFrame,
    *,
    model: str,
    variants: Sequence[str] = tuple(VARIANTS),
    max_length: int = 1024,
    batch_size: int = 4,
    max_tokens: int = 8192,
    device: str | None = None,
    revision: str | None = None,
) -> pd.DataFrame:
    """Columns `bartscore-<variant>` per story (see module docstring); `model` is a seq2seq model name or folder."""
    check_variants(variants)
    check_texts(texts, needs(variants), NAME)
    loaded = models.load("seq2seq", model, device, revision)
    models.check_window(loaded, max_length, NAME, "max_length")
    pairs = {variant: list(zip(texts[VARIANTS[variant][0]], texts[VARIANTS[variant][1]])) for variant in variants}
    distinct = list(dict.fromkeys(pair for variant_pairs in pairs.values() for pair in variant_pairs))
    values, truncated = mean_log_likelihoods(
        loaded,
        [s for s, _ in distinct],
        [t for _, t in distinct],
        max_length=max_length,
        batch_size=batch_size,
        max_tokens=max_tokens,
    )
    warn_count(
        NAME, texts, truncated, f"texts (of {2 * len(distinct)} in distinct pairs) were cut at {max_length} tokens"
    )
    score = dict(zip(distinct, values))
    return scores_frame(texts["story_id"], {f"bartscore-{v}": [score[pair] for pair in pairs[v]] for v in variants})


@defaults_of(compute)
def signature(
    *, model: str, variants: Sequence[str], max_length: int, batch_size: int, max_tokens: int, device: str | None,
    revision: str | None
) -> dict:
    return describe(
        NAME,
        ["torch", "transformers"],
        {v: f"log p({VARIANTS[v][1]} | {VARIANTS[v][0]})" for v in variants},
        {"variants": list(variants), "max_length": max_length},
        model=models.identity(model, revision),
        tokens="all target ids incl. special tokens, mean over them",
    )
