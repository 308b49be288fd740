"""InfoLM with the Fisher-Rao distance (Colombo et al. 2022), as the authors' `nlg_eval_via_simi_measures.InfoLM`.

Per text: every non-special token position is masked in turn (one masked copy of the
text per position), the masked LM's distribution at that position is softmax(logits / T)
with temperature T = 0.25, and the text's distribution is the weighted mean of these
over its positions, weights idf(token) (or 1 with `idf="none"`). The score is the
Fisher-Rao distance FR(p, q) = 2 arccos(sum_v sqrt(p_v q_v)) between the story's and
the reference's distributions; lower is better, 0 for identical texts (Colombo et al. 2022).
Paper model: bert-base-uncased, texts truncated at 512 tokens.

Variants as HANNA names them (the library returns three numbers per pair):
`infolm-fisherrao` = FR(story, reference), `infolm-r-fisherrao` = FR(reference, story)
(the measure with its arguments reversed), `infolm-sim-fisherrao` = their mean. The
Fisher-Rao distance is symmetric, so the three are equal, as in HANNA's released file.

idf = log((N + 1) / (df + 1)) over N documents (the library's, as BERTScore), special
tokens weigh 0. `idf="separate"` is the library's `prepare_idfs`: stories weighted by an
idf over the story column, references by one over the reference column (as given, one
entry per row). `idf="shared"` (default): one idf over the distinct stories and
references, so a story identical to its reference scores 0, as every human story does in
HANNA's released values (mean 0.0002, float32 noise), which separate tables would not give.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics.base import Resource, check_texts, columns, defaults_of, describe, scores_frame, warn_count
from storyeval.neural import models
from storyeval.neural.embeddings import IdfWeights, idf_weights

NAME = "infolm"
NEEDS = frozenset({"reference"})
COLUMNS = columns("model", "based", "InfoLM-FisherRao", "InfoLM-R-FisherRao", "InfoLM-Sim-FisherRao",
                  direction="lower")
RESOURCE = Resource("model", "masked_lm")
IDF_MODES = ("shared", "separate", "none")


def fisher_rao(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """2 arccos(sum sqrt(p q)) over the last axis, written as 4 arcsin(||sqrt p - sqrt q|| / 2), the same
    for distributions summing to 1 but exact near 0, where arccos(1 - e) loses half the digits."""
    return 4.0 * np.arcsin(np.clip(np.linalg.norm(np.sqrt(p) - np.sqrt(q), axis=-1) / 2.0, 0.0, 1.0))


def distributions(loaded: models.LoadedModel, token_ids: Sequence[Sequence[int]],
                  weight_tables: Sequence[IdfWeights | None], temperature: float, max_tokens: int) -> list[np.ndarray]:
    """For each weight table (None = uniform), a [texts, vocabulary] array of the texts' weighted mean
    masked-token distributions (NaN rows where the weights sum to 0)."""
    import torch

    tokenizer, model, device = loaded.tokenizer, loaded.model, loaded.device
    copies = [
        (text, position)
        for text, ids in enumerate(token_ids)
        for position, special in enumerate(tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True))
        if not special
    ]
    copy_text = np.array([text for text, _ in copies], dtype=np.int64)
    copy_position = np.array([position for _, position in copies], dtype=np.int64)
    copy_ids = np.array([token_ids[t][p] for t, p in copies], dtype=np.int64)
    weights = np.stack([np.ones(len(copies)) if table is None else table.of(copy_ids) for table in weight_tables])
    vocabulary = model.get_output_embeddings().weight.shape[0]
    sums = torch.zeros((len(weight_tables), len(token_ids), vocabulary), dtype=torch.float64, device=device)
    with torch.inference_mode():
        for batch in models.length_batches([len(token_ids[t]) for t in copy_text], max_tokens, max_tokens):
            ids, mask = models.pad([token_ids[t] for t in copy_text[batch]], tokenizer.pad_token_id)
            rows, positions = torch.arange(len(batch)), torch.as_tensor(copy_position[batch])
            ids[rows, positions] = tokenizer.mask_token_id
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits[
                rows.to(device), positions.to(device)
            ]
            probabilities = torch.softmax(logits.double() / temperature, dim=-1)
            targets = torch.as_tensor(copy_text[batch], device=device)
            for k in range(len(weight_tables)):
                sums[k].index_add_(
                    0, targets, probabilities * torch.as_tensor(weights[k, batch], device=device).unsqueeze(1)
                )
    totals = np.stack(
        [np.bincount(copy_text, weights=weights[k], minlength=len(token_ids)) for k in range(len(weight_tables))]
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return [sums[k].cpu().numpy() / totals[k][:, None] for k in range(len(weight_tables))]


def compute(
    texts: pd.DataFrame,
    *,
    model: str,
    temperature: float = 0.25,
    idf: str = "shared",
    max_length: int = 512,
    max_tokens: int = 4096,
    device: str | None = None,
    revision: str | None = None,
) -> pd.DataFrame:
    """Columns infolm-fisherrao, infolm-r-fisherrao, infolm-sim-fisherrao (see module docstring)."""
    check_texts(texts, NEEDS, NAME)
    if idf not in IDF_MODES:
        raise InputError(f"metric {NAME}: idf={idf!r}; fix: use one of {', '.join(IDF_MODES)}")
    if not temperature > 0:
        raise InputError(f"metric {NAME}: temperature must be positive, got {temperature}")
    loaded = models.load("masked-lm", model, device, revision)
    models.check_window(loaded, max_length, NAME, "max_length")
    stories, references = list(texts["story"]), list(texts["reference"])
    distinct = list(dict.fromkeys(stories + references))
    full = loaded.tokenizer(distinct)["input_ids"]
    warn_count(
        NAME, texts, sum(len(ids) > max_length for ids in full), f"distinct texts were cut at {max_length} tokens"
    )
    ids = loaded.tokenizer(distinct, truncation=True, max_length=max_length)["input_ids"]
    position = {text: index for index, text in enumerate(distinct)}
    if idf == "separate":  # the library's prepare_idfs: one table per column, over the rows as given
        tables = [
            idf_weights([full[position[t]] for t in stories]),
            idf_weights([full[position[t]] for t in references]),
        ]
    else:
        tables = [None if idf == "none" else idf_weights(full)]
    dists = distributions(loaded, ids, tables, temperature, max_tokens)
    p = dists[0][[position[t] for t in stories]]
    q = dists[-1][[position[t] for t in references]]
    forward, reverse = fisher_rao(p, q), fisher_rao(q, p)
    warn_count(NAME, texts, int(np.isnan(forward).sum()), "have a text whose idf weights sum to 0 (score NaN)")
    return scores_frame(texts["story_id"], dict(zip(COLUMNS, [forward, reverse, (forward + reverse) / 2])))


@defaults_of(compute)
def signature(
    *, model: str, temperature: float, idf: str, max_length: int, max_tokens: int, device: str | None,
    revision: str | None
) -> dict:
    return describe(
        NAME,
        ["torch", "transformers"],
        {"candidate": "story", "reference": "reference"},
        {"temperature": temperature, "idf": idf, "max_length": max_length, "measure": "fisher_rao"},
        model=models.identity(model, revision),
    )
