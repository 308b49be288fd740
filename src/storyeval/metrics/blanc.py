"""BLANC (Vasilyev et al. 2020): how much a summary helps a masked LM fill the gaps of a document, as PrimerAI/blanc.

The document is split into sentences; in each sentence, maskings are made "evenly":
masking k (k = 0..gap-1, gap 6) hides every token at index i with i mod gap = k that
is long enough (a whole word of >= 4 characters, a word-initial piece of >= 2 whose word
continues with `##` pieces, never a `##` continuation piece: min lengths 4, 2, 100).
Unmasking is judged per hidden token (argmax = original token), and over all hidden
tokens of the document S[b][a] counts tokens right (1) or wrong (0) without (b) and with
(a) the summary's help; BLANC = (S01 - S10) / (S00 + S01 + S10 + S11) ("relative",
the default; "improve" = S01 / (S00 + S11 + S01)).
- BLANC-help: each masked sentence is read with the summary in front ([CLS] summary
  sentence [SEP]) vs with as many filler tokens "." in front.
- BLANC-tune: the sentence alone, read by the model vs by a copy of it fine-tuned on
  the summary: 64-token chunks every 32 tokens, each chunk masked at random (15 % of
  its tokens per copy, every long-enough token once; a masked token becomes [MASK] 80 %,
  a random id in 1000..29999 10 %, itself 10 %), 10 epochs, batch 1, AdamW lr 5e-5,
  eps 1e-8, weight decay 0.01 except biases and LayerNorm weights, linear decay, no
  warm-up (BLANC's defaults). Randomness (masking, replacement, dropout) is seeded per
  summary from `seed` and the summary text, so a score does not depend on the other rows.
Roles (inferred from HANNA's released values): PS document = story, summary = prompt; SS document = prompt,
summary = story; Golden document = human story, summary = story, computed as BLANC-tune
by default (SummEval's `blanc` metric, which HANNA used, runs BlancTune) or help.
Model: bert-base-uncased (the token-length rule above assumes WordPiece); inputs hold
at most the model's 512 positions: a sentence is cut to no fewer than 100 tokens, then
the summary keeps its leading sentences that fit (the first one's end if none fits).
Deviations, each documented: sentences come from spaCy's rule-based sentencizer (BLANC
used nltk's punkt model, which cannot be downloaded here); BLANC's `half_num_sents`
typo (summaries always truncated from the bottom) is kept as behaviour, but its
over-cut of the summary when a sentence is shorter than 100 tokens is not (a bug);
BLANC-tune's sentences are cut only for their own length (the original also reserved
room for the summary it does not show).
"""

from __future__ import annotations

import copy
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics.base import Resource, check_texts, columns, defaults_of, describe, scores_frame
from storyeval.neural import models
from storyeval.text.tokenize import sentencizer

NAME = "blanc"
# column -> (method, document column, summary column); "golden" takes its method from `golden`
VARIANTS = {"blanc-help-ps": ("help", "story", "prompt"), "blanc-tune-ps": ("tune", "story", "prompt"),
            "blanc-help-ss": ("help", "prompt", "story"), "blanc-tune-ss": ("tune", "prompt", "story"),
            "blanc-golden": ("golden", "reference", "story")}
NEEDS = frozenset({"prompt", "reference"})  # of all variants; `needs(variants)` for a subset
COLUMNS = {**columns("model", "free", "BLANC-Help-PS", "BLANC-Tune-PS", "BLANC-Help-SS", "BLANC-Tune-SS"),
           **columns("model", "based", "BLANC-Golden")}
RESOURCE = Resource("model", "masked_lm")
PIECE = "##"


@dataclass(frozen=True)
class Settings:
    """BLANC's options (PrimerAI/blanc `Defaults`), the names of its command line."""
    gap: int = 6
    min_token_length_normal: int = 4
    min_token_length_lead: int = 2
    min_token_length_followup: int = 100
    measure: str = "relative"
    filler_token: str = "."
    len_sent_allow_cut: int = 100
    finetune_batch_size: int = 1
    finetune_epochs: int = 10
    finetune_chunk_size: int = 64
    finetune_chunk_stride: int = 32
    learning_rate: float = 5e-5
    warmup_steps: int = 0
    p_mask: float = 0.15
    p_token_replace: float = 0.1
    p_token_original: float = 0.1
    token_replace_range: tuple[int, int] = (1000, 29999)


@dataclass(frozen=True)
class Masked:
    ids: list[int]  # model input with [MASK]s
    positions: np.ndarray  # where the masks are
    answers: np.ndarray  # the original ids there


def needs(variants: Sequence[str]) -> frozenset[str]:
    return frozenset(column for v in variants for column in VARIANTS[v][1:] if column != "story")


def sentences(text: str) -> list[str]:
    return [s.text for s in sentencizer()(unicodedata.normalize("NFKD", text)).sents if s.text.strip()]


def large_enough(token: str, next_token: str, settings: Settings) -> bool:
    if token.startswith(PIECE):
        return len(token) - len(PIECE) >= settings.min_token_length_followup
    if next_token.startswith(PIECE):
        return len(token) >= settings.min_token_length_lead
    return len(token) >= settings.min_token_length_normal


def eligible(tokens: Sequence[str], settings: Settings) -> np.ndarray:
    return np.array(
        [large_enough(t, tokens[i + 1] if i + 1 < len(tokens) else "", settings) for i, t in enumerate(tokens)],
        dtype=bool,
    )


def mask_evenly(tokens: Sequence[str], settings: Settings) -> list[np.ndarray]:
    """Positions hidden by each even masking (BLANC's mask_tokens_evenly; empty maskings dropped)."""
    gap = min(settings.gap, len(tokens))
    ok, index = eligible(tokens, settings), np.arange(len(tokens))
    maskings = [index[ok & (index % gap == k)] for k in range(gap)]
    return [m for m in maskings if len(m)]


def mask_randomly(tokens: Sequence[str], settings: Settings, rng: np.random.Generator) -> list[np.ndarray]:
    """BLANC's mask_tokens_randomly: shuffled eligible positions, n = max(int(15 % of tokens), 1) per masking."""
    n_mask = max(int(len(tokens) * settings.p_mask), 1)
    positions = np.flatnonzero(eligible(tokens, settings))
    rng.shuffle(positions)
    return [np.sort(positions[i : i + n_mask]) for i in range(0, len(positions), n_mask)]


def fit_summary(
    sentence: list[str], summary: list[list[str]], room: int, settings: Settings
) -> tuple[list[str], list[str]]:
    """Cut the sentence (not below len_sent_allow_cut tokens), then the summary, so both fit in `room` tokens."""
    excess = len(sentence) + sum(map(len, summary)) - room
    if excess <= 0:
        return sentence, [t for s in summary for t in s]
    sentence = sentence[: len(sentence) - max(0, min(excess, len(sentence) - settings.len_sent_allow_cut))]
    left, kept = room - len(sentence), []
    for summary_sentence in summary:  # leading summary sentences that fit
        if sum(map(len, kept)) + len(summary_sentence) > left:
            break
        kept.append(summary_sentence)
    if not kept:  # not even the first: its last tokens
        return sentence, summary[0][len(summary[0]) - max(left, 0) :] if summary else []
    return sentence, [t for s in kept for t in s]


def inference_inputs(tokenizer, document: str, summary: str | None, settings: Settings, window: int) -> list[Masked]:
    """BLANC's get_inference_inputs: per sentence and masking, [CLS] help sentence [SEP]; with a summary, the help
    input (summary in front) and the filler input follow each other; without, the sentence alone."""
    summary_tokens = [tokenizer.tokenize(s) for s in sentences(summary)] if summary is not None else []
    inputs = []
    for sentence_text in sentences(document):
        sentence, helper = fit_summary(tokenizer.tokenize(sentence_text), summary_tokens, window - 2, settings)
        helpers = [helper, [settings.filler_token] * len(helper)] if summary is not None else [[]]
        sentence_ids = tokenizer.convert_tokens_to_ids(sentence)
        for positions in mask_evenly(sentence, settings):
            masked = np.array(sentence_ids)
            masked[positions] = tokenizer.mask_token_id
            for help_tokens in helpers:
                ids = [
                    tokenizer.cls_token_id,
                    *tokenizer.convert_tokens_to_ids(help_tokens),
                    *masked.tolist(),
                    tokenizer.sep_token_id,
                ]
                inputs.append(Masked(ids, positions + 1 + len(help_tokens), np.asarray(sentence_ids)[positions]))
    return inputs


def correct(loaded: models.LoadedModel, model, inputs: list[Masked], max_tokens: int) -> list[np.ndarray]:
    """Per input, whether the model's top token at each mask is the original one."""
    import torch

    results: list[np.ndarray] = [np.zeros(0, dtype=bool)] * len(inputs)
    with torch.inference_mode():
        for batch in models.length_batches([len(x.ids) for x in inputs], max_tokens, max_tokens):
            ids, mask = models.pad([inputs[i].ids for i in batch], loaded.tokenizer.pad_token_id)
            rows = np.concatenate([np.full(len(inputs[i].positions), k) for k, i in enumerate(batch)])
            columns = np.concatenate([inputs[i].positions for i in batch])
            logits = model(input_ids=ids.to(loaded.device), attention_mask=mask.to(loaded.device)).logits
            predicted = (
                logits[torch.as_tensor(rows, device=loaded.device), torch.as_tensor(columns, device=loaded.device)]
                .argmax(-1)
                .cpu()
                .numpy()
            )
            hits = np.split(
                predicted == np.concatenate([inputs[i].answers for i in batch]),
                np.cumsum([len(inputs[i].positions) for i in batch])[:-1],
            )
            for i, hit in zip(batch, hits):
                results[i] = hit
    return results


def measure(base: Sequence[np.ndarray], assisted: Sequence[np.ndarray], kind: str) -> float:
    """BLANC's measure_relative / measure_improve over the S matrix of (base, assisted) correctness."""
    b, a = (np.concatenate(list(x)) if len(x) else np.zeros(0, dtype=bool) for x in (base, assisted))
    s01, s10 = int(np.sum(~b & a)), int(np.sum(b & ~a))
    s00, s11 = int(np.sum(~b & ~a)), int(np.sum(b & a))
    if kind == "relative":
        total = s00 + s01 + s10 + s11
        return (s01 - s10) / total if total else 0.0
    total = s00 + s11 + s01
    return s01 / total if total else 0.0


def finetuning_batches(tokenizer, summary: str, settings: Settings, rng: np.random.Generator) -> list[tuple]:
    """BLANC's prepare_finetuning_data, batched: (ids, labels) lists per batch."""
    tokens = tokenizer.tokenize(summary)
    examples = []
    for start in range(0, len(tokens), settings.finetune_chunk_stride):
        chunk = tokens[start : start + settings.finetune_chunk_size]
        chunk_ids = tokenizer.convert_tokens_to_ids(chunk)
        for positions in mask_randomly(chunk, settings, rng):
            ids = [tokenizer.cls_token_id, *chunk_ids, tokenizer.sep_token_id]
            labels = [-100] * len(ids)
            for position in positions + 1:
                labels[position] = ids[position]
                draw = rng.random()
                if draw < settings.p_token_replace:
                    ids[position] = int(
                        rng.integers(settings.token_replace_range[0], settings.token_replace_range[1] + 1)
                    )
                elif draw >= settings.p_token_replace + settings.p_token_original:
                    ids[position] = tokenizer.mask_token_id
            examples.append((ids, labels))
    size = settings.finetune_batch_size
    return [examples[i : i + size] for i in range(0, len(examples), size)]


def finetune(loaded: models.LoadedModel, summary: str, settings: Settings, seed: int):
    """A copy of the model fine-tuned on the summary (BLANC's BlancTune.finetune), seeded by (seed, summary)."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    summary_seed = [seed, zlib.crc32(summary.encode())]
    batches = finetuning_batches(loaded.tokenizer, summary, settings, np.random.default_rng(summary_seed))
    model = copy.deepcopy(loaded.model)
    decay = [p for n, p in model.named_parameters() if not any(k in n for k in ("bias", "LayerNorm.weight"))]
    no_decay = [p for n, p in model.named_parameters() if any(k in n for k in ("bias", "LayerNorm.weight"))]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 1e-2}, {"params": no_decay, "weight_decay": 0.0}],
        lr=settings.learning_rate,
        eps=1e-8,
    )
    schedule = get_linear_schedule_with_warmup(
        optimizer, settings.warmup_steps, len(batches) * settings.finetune_epochs
    )
    devices = (
        [loaded.device.index if loaded.device.index is not None else torch.cuda.current_device()]
        if loaded.device.type == "cuda"
        else []
    )
    with torch.random.fork_rng(devices=devices):  # seeded dropout without touching the caller's generator
        torch.manual_seed(int(np.random.default_rng(summary_seed).integers(2**62)))
        model.train()
        for _ in range(settings.finetune_epochs):
            for batch in batches:
                ids, mask = models.pad([x[0] for x in batch], loaded.tokenizer.pad_token_id)
                labels, _ = models.pad([x[1] for x in batch], -100)
                optimizer.zero_grad()
                model(
                    input_ids=ids.to(loaded.device),
                    attention_mask=mask.to(loaded.device),
                    labels=labels.to(loaded.device),
                ).loss.backward()
                optimizer.step()
                schedule.step()
    model.eval()
    return model


def help_scores(
    loaded: models.LoadedModel, pairs: list[tuple[str, str]], settings: Settings, window: int, max_tokens: int
) -> list[float]:
    inputs = [inference_inputs(loaded.tokenizer, document, summary, settings, window) for document, summary in pairs]
    hits = correct(loaded, loaded.model, [x for pair in inputs for x in pair], max_tokens)
    scores, start = [], 0
    for pair in inputs:
        pair_hits, start = hits[start : start + len(pair)], start + len(pair)
        scores.append(measure(pair_hits[1::2], pair_hits[0::2], settings.measure))  # filler = base, summary = assisted
    return scores


def tune_scores(
    loaded: models.LoadedModel,
    pairs: list[tuple[str, str]],
    settings: Settings,
    window: int,
    max_tokens: int,
    seed: int,
) -> list[float]:
    documents = list(dict.fromkeys(document for document, _ in pairs))
    inputs = {d: inference_inputs(loaded.tokenizer, d, None, settings, window) for d in documents}
    base_hits = split_by(
        documents, inputs, correct(loaded, loaded.model, [x for d in documents for x in inputs[d]], max_tokens)
    )
    scores = {}
    for summary in dict.fromkeys(summary for _, summary in pairs):  # one fine-tuning per distinct summary
        tuned = finetune(loaded, summary, settings, seed)
        mine = list(dict.fromkeys(d for d, s in pairs if s == summary))
        tuned_hits = split_by(mine, inputs, correct(loaded, tuned, [x for d in mine for x in inputs[d]], max_tokens))
        scores.update({(d, summary): measure(base_hits[d], tuned_hits[d], settings.measure) for d in mine})
        del tuned
    return [scores[pair] for pair in pairs]


def split_by(documents: list[str], inputs: dict[str, list], hits: list[np.ndarray]) -> dict[str, list[np.ndarray]]:
    """The flat per-input results back per document."""
    out, start = {}, 0
    for d in documents:
        out[d], start = hits[start : start + len(inputs[d])], start + len(inputs[d])
    return out


def settings_from(options: dict) -> Settings:
    try:
        settings = Settings(**{k: tuple(v) if k == "token_replace_range" else v for k, v in options.items()})
    except TypeError as error:
        raise InputError(
            f"metric {NAME}: {error}; fix: use BLANC's option names {', '.join(asdict(Settings()))}"
        ) from error
    if settings.measure not in ("relative", "improve"):
        raise InputError(f"metric {NAME}: measure {settings.measure!r}; fix: relative or improve")
    return settings


def compute(
    texts: pd.DataFrame,
    *,
    model: str,
    variants: Sequence[str] = tuple(VARIANTS),
    golden: str = "tune",
    seed: int = 1,
    max_tokens: int = 4096,
    device: str | None = None,
    revision: str | None = None,
    options: dict | None = None,
) -> pd.DataFrame:
    """Columns blanc-help-ps, blanc-tune-ps, blanc-help-ss, blanc-tune-ss, blanc-golden (those in `variants`);
    `options`: BLANC's own option names (class Settings), e.g. {"gap": 6}."""
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        raise InputError(
            f"metric {NAME}: unknown variants {unknown or '(none)'}; fix: choose among {', '.join(VARIANTS)}"
        )
    if golden not in ("tune", "help"):
        raise InputError(f"metric {NAME}: golden={golden!r}; fix: tune or help")
    check_texts(texts, needs(variants), NAME)
    settings = settings_from(options or {})
    loaded = models.load("masked-lm", model, device, revision)
    window = min(getattr(loaded.model.config, "max_position_embeddings", 512), loaded.tokenizer.model_max_length)
    if window - 2 < settings.len_sent_allow_cut:
        raise InputError(
            f"metric {NAME}: len_sent_allow_cut {settings.len_sent_allow_cut} exceeds the {window}-token "
            f"window of {loaded.name} less [CLS] and [SEP]"
        )
    if settings.token_replace_range[1] >= loaded.model.config.vocab_size:
        raise InputError(
            f"metric {NAME}: token_replace_range {settings.token_replace_range} exceeds the vocabulary "
            f"({loaded.model.config.vocab_size} ids) of {loaded.name}"
        )
    columns = {}
    for variant in variants:
        method, document, summary = VARIANTS[variant]
        pairs = list(zip(texts[document], texts[summary]))
        if (golden if method == "golden" else method) == "help":
            columns[variant] = help_scores(loaded, pairs, settings, window, max_tokens)
        else:
            columns[variant] = tune_scores(loaded, pairs, settings, window, max_tokens, seed)
    return scores_frame(texts["story_id"], columns)


@defaults_of(compute)
def signature(
    *,
    model: str,
    variants: Sequence[str],
    golden: str,
    seed: int,
    max_tokens: int,
    device: str | None,
    revision: str | None,
    options: dict | None,
) -> dict:
    return describe(
        NAME,
        ["torch", "transformers", "spacy"],
        {v: f"document = {VARIANTS[v][1]}, summary = {VARIANTS[v][2]}" for v in variants},
        {"variants": list(variants), "golden": golden, "seed": seed, **asdict(settings_from(options or {}))},
        model=models.identity(model, revision),
        sentences="spaCy sentencizer",
    )
