"""SUPERT (Gao, Zhao & Eger 2020): a text scored against a pseudo-reference built from a source document,
from the sentence encoder's token-embedding cache (`storyeval.neural.embeddings`).

Roles (inferred from HANNA's released values; SummEval's `SupertMetric.evaluate_example(summary,
input_text)`):
- supert-ps: summary = prompt, document = story;
- supert-ss: summary = story, document = prompt;
- supert-golden: summary = the story, document = the human story (reference).

Method, as SummEval's SupertMetric (ref_metric "top15", sim_metric "f1"), which HANNA ran:
1. both texts are split into sentences; the pseudo-reference is the document's first `top_n` = 15 sentences;
2. every sentence is encoded on its own by the sentence encoder, and its token vectors are the transformer's
   last layer (sentence-transformers' token embeddings; SUPERT used bert-large-nli-stsb-mean-tokens, here
   all-MiniLM-L6-v2 by default, whose sentence embedding is the mean of these vectors);
3. special tokens and NLTK's English stop words (compared with the lowercased word piece) are dropped;
4. soft alignment: cosine similarity of every pseudo-reference token with every summary token; recall =
   mean over pseudo-reference tokens of their best match, precision = mean over summary tokens of theirs,
   score = F1. The authors' code names this score "WMD": it is the relaxed word mover's distance (each token
   moves all its mass to its nearest neighbour) taken both ways. `alignment="wmd"` gives instead
   1 - the exact word mover's distance (uniform masses, Euclidean distance of unit vectors, POT).
`granularity="sentence"` aligns mean-pooled sentence embeddings (the pooling of sentence-transformers for
this model; SUPERT's earlier `get_sim_metric(..., "f1")`) instead of tokens; stop words then stay.
Simplified, and why: one source document per pair (SUPERT groups pseudo-references by document; HANNA has
one document); sentences are split by spaCy's rule-based sentencizer, since nltk's punkt model, which SUPERT
used, cannot be downloaded here; NLTK's 179-word English stop-word list is inlined (its corpus is absent);
a sentence longer than the cache's window is truncated there (SBERT: at 128 word pieces). A summary or
pseudo-reference left with no token scores NaN (SUPERT: None), with a warning.
Consequence checked on HANNA's released values: a human story of at most 15 sentences has Golden = 1, a
longer one less (released human-row Golden: 0.59-1.00), and PS = SS whenever the story has at most 15
sentences (F1 is symmetric).

Defaults: `config/paper.yaml`: sentence encoder bert-large-nli-stsb-mean-tokens, last layer (24), top 15,
token granularity, greedy alignment; with all-MiniLM-L6-v2: its last layer, 6 (`layer: null`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics.base import Resource, check_texts, columns, defaults_of, describe, scores_frame, warn_count
from storyeval.metrics.moverscore import transport_cost
from storyeval.neural.embeddings import EmbeddingCache, require_texts, resolve_layer, unit_rows
from storyeval.text.stopwords import STOP_WORDS
from storyeval.text.tokenize import sentencizer

NAME = "supert"
NEEDS = frozenset({"prompt", "reference"})
VARIANTS = {"supert-ps": ("prompt", "story"), "supert-ss": ("story", "prompt"), "supert-golden": ("story", "reference")}
# families as HANNA labelled them: the golden variant is "model-based" there
COLUMNS = {**columns("embedding", "free", "SUPERT-PS", "SUPERT-SS"), **columns("model", "based", "SUPERT-Golden")}
RESOURCE = Resource("cache", "sentence_encoder")
GRANULARITIES = ("token", "sentence")
ALIGNMENTS = ("greedy", "wmd")



def split_sentences(texts: Sequence[str]) -> dict[str, list[str]]:
    """Each distinct text -> its sentences (spaCy's rule-based sentencizer), stripped, empty ones dropped."""
    distinct = sorted(set(texts))
    return {text: [span.text.strip() for span in doc.sents if span.text.strip()]
            for text, doc in zip(distinct, sentencizer().pipe(distinct))}


def check_options(variants: Sequence[str], granularity: str, alignment: str, top_n: int) -> None:
    unknown = [variant for variant in variants if variant not in VARIANTS]
    if unknown or not variants:
        raise InputError(
            f"metric {NAME}: unknown variants {unknown or '(none)'}; fix: use some of {', '.join(VARIANTS)}"
        )
    if granularity not in GRANULARITIES:
        raise InputError(f"metric {NAME}: granularity {granularity!r}; fix: use one of {', '.join(GRANULARITIES)}")
    if alignment not in ALIGNMENTS:
        raise InputError(f"metric {NAME}: alignment {alignment!r}; fix: use one of {', '.join(ALIGNMENTS)}")
    if int(top_n) < 1:
        raise InputError(f"metric {NAME}: top_n {top_n} must be at least 1 (sentences of the pseudo-reference)")


def role_sentences(texts: pd.DataFrame, variants: Sequence[str], top_n: int):
    """(variant, summary sentences per row, pseudo-reference sentences per row) for each variant."""
    columns = {column for variant in variants for column in VARIANTS[variant]}
    sentences = split_sentences([text for column in sorted(columns) for text in texts[column]])
    groups = []
    for variant in variants:
        summary, document = VARIANTS[variant]
        groups.append(
            (
                variant,
                [sentences[text] for text in texts[summary]],
                [sentences[text][:top_n] for text in texts[document]],
            )
        )
    return groups


def needed_sentences(groups) -> list[str]:
    """Every sentence of the summaries and pseudo-references of `role_sentences` groups."""
    return sorted(
        {sentence for _, summaries, references in groups for group in (*summaries, *references) for sentence in group}
    )


def required_texts(texts: pd.DataFrame, *, variants: Sequence[str] = tuple(VARIANTS), top_n: int = 15) -> list[str]:
    """The sentences the sentence encoder's cache must hold: every summary sentence, each pseudo-reference's."""
    return needed_sentences(role_sentences(texts, variants, int(top_n)))


def vectors(cache: EmbeddingCache, sentences: Sequence[str], layer: int, granularity: str) -> np.ndarray:
    """Unit vectors to align: content tokens (stop words, specials dropped) or one mean-pooled vector per sentence."""
    rows = []
    for sentence in sentences:
        tokens = cache.get(sentence)
        states = tokens.layers[layer].astype(np.float64)
        if granularity == "sentence":
            rows.append(states.mean(axis=0, keepdims=True))
        else:
            keep = ~tokens.special & np.array(
                [token.lower() not in STOP_WORDS for token in cache.tokens(tokens.input_ids)]
            )
            rows.append(states[keep])
    stacked = np.concatenate(rows) if rows else np.empty((0, 1))
    return unit_rows(stacked) if len(stacked) else stacked


def similarity(reference: np.ndarray, summary: np.ndarray, alignment: str) -> float:
    """F1 of greedy soft alignment (relaxed WMD both ways), or 1 - exact WMD with uniform masses."""
    if len(reference) == 0 or len(summary) == 0:
        return np.nan
    if alignment == "wmd":
        return 1.0 - transport_cost(
            np.full(len(reference), 1 / len(reference)), np.full(len(summary), 1 / len(summary)), reference, summary
        )
    cosine = reference @ summary.T
    recall, precision = cosine.max(axis=1).mean(), cosine.max(axis=0).mean()
    return float(2 * recall * precision / (recall + precision)) if recall + precision else np.nan


def compute(
    texts: pd.DataFrame,
    *,
    cache: EmbeddingCache,
    layer: int | None = None,
    top_n: int = 15,
    granularity: str = "token",
    alignment: str = "greedy",
    variants: Sequence[str] = tuple(VARIANTS),
) -> pd.DataFrame:
    check_options(variants, granularity, alignment, top_n)
    check_texts(texts, {column for variant in variants for column in VARIANTS[variant]} - {"story"}, NAME)
    layer = resolve_layer(cache, layer, NAME)
    groups = role_sentences(texts, variants, int(top_n))
    require_texts(cache, needed_sentences(groups), NAME)
    memo: dict[tuple[str, ...], np.ndarray] = {}

    def of(sentences: list[str]) -> np.ndarray:
        key = tuple(sentences)
        if key not in memo:
            memo[key] = vectors(cache, sentences, layer, granularity)
        return memo[key]

    columns = {}
    for variant, summaries, references in groups:
        columns[variant] = [
            similarity(of(reference), of(summary), alignment) for summary, reference in zip(summaries, references)
        ]
        warn_count(
            f"{NAME} ({variant})",
            texts,
            int(np.isnan(columns[variant]).sum()),
            "have a summary or pseudo-reference with no token left (stop words only?); score NaN",
        )
    return scores_frame(texts["story_id"], columns)


@defaults_of(compute)
def signature(
    *,
    cache: EmbeddingCache | dict,
    layer: int | None,
    top_n: int,
    granularity: str,
    alignment: str,
    variants: Sequence[str],
) -> dict:
    encoder = cache.signature if isinstance(cache, EmbeddingCache) else dict(cache)
    return describe(
        NAME,
        ["numpy", "spacy", "POT"],
        {
            variant: f"summary = {summary}, document = {document}"
            for variant, (summary, document) in VARIANTS.items()
            if variant in variants
        },
        {
            "layer": int(encoder["num_hidden_layers"]) if layer is None else int(layer),
            "top_n": int(top_n),
            "granularity": granularity,
            "alignment": alignment,
            "variants": list(variants),
        },
        sentences="spaCy sentencizer (rule-based), each sentence encoded alone",
        stop_words="NLTK English (179 words), special tokens dropped",
        encoder=encoder,
    )
