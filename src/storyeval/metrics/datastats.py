"""SummEval's data statistics of a story against its prompt (Fabbri et al. 2021), as HANNA computed them.

The story plays SummEval's "summary" S, the prompt the "source" T; tokens come
from spaCy's rule-based English tokenizer, whitespace tokens included.
- Coverage = sum |f| / |S|, Density = sum |f|^2 / |S| over the greedy extractive
  fragments f of S in T (Grusky et al. 2018, Newsroom), matched lowercased;
- Compression = |T| / |S|; Text length = |S|;
- Novelty-n = share of distinct story n-grams absent from the prompt's n-grams;
- Repetition-n = share of distinct story n-grams that occur more than once.

Two details reproduce HANNA's released values exactly (96 of 96 human stories,
every statistic; see tests/test_metrics_datastats.py):
- `summeval_newline`: SummEval read one text per line and kept the line break,
  which spaCy makes a final `\\n` token of both story and prompt (Text length of
  the first human story: 247 words + 1 = 248, as released);
- `lowercase_ngrams=False`: SummEval lowercased tokens for the fragments but
  counted novelty and repetition n-grams on the tokens as written.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pandas as pd

from storyeval.metrics.base import check_texts, columns, defaults_of, describe, scores_frame, warn_count
from storyeval.text.tokenize import spacy_tokens

NAME = "datastats"
NEEDS = frozenset({"prompt"})
ORDERS = (1, 2, 3)
# Extractiveness (Coverage, Density, Novelty) and length (Compression, Text length) order no quality by definition:
# a story may copy its prompt or leave it, be long or short; "higher" is HANNA's convention. Repetition-n is the
# share of repeated n-grams: the less a story repeats itself, the better (Welleck et al. 2020's rep-n).
EXTRACTIVE = "how much the story copies or leaves its prompt: no quality order by definition"
LENGTH = "length is no quality (and the field's best-known confound)"
COLUMNS = {
    **columns("string", "free", "Coverage", "Density", convention=EXTRACTIVE),
    **columns("string", "free", "Compression", "Text length", convention=LENGTH),
    **columns("string", "free", *[f"Novelty-{n}" for n in ORDERS], convention=EXTRACTIVE),
    **columns("string", "free", *[f"Repetition-{n}" for n in ORDERS], direction="lower"),
}


def greedy_fragments(summary: list[str], text: list[str]) -> list[int]:
    """Lengths of the extractive fragments of `summary` in `text`, Newsroom's greedy rule.

    Written by hand: Newsroom and SummEval are not installable here (they load a
    spaCy model at import). The rule is theirs, including the scan resuming after
    the end of each candidate match in `text` rather than at its next position.
    """
    positions: dict[str, list[int]] = defaultdict(list)
    for j, token in enumerate(text):
        positions[token].append(j)
    lengths, i = [], 0
    while i < len(summary):
        best, resume = 0, 0
        for j in positions.get(summary[i], ()):
            if j < resume:
                continue
            k = 1
            while i + k < len(summary) and j + k < len(text) and summary[i + k] == text[j + k]:
                k += 1
            best, resume = max(best, k), j + k
        if best:
            lengths.append(best)
        i += max(best, 1)
    return lengths


def ngram_shares(story: list[str], prompt: list[str], n: int) -> tuple[float, float]:
    """(novelty, repetition) of the story's n-grams; NaN for a story shorter than n tokens."""
    grams = list(zip(*[story[k:] for k in range(n)]))
    distinct = Counter(grams)
    if not distinct:
        return np.nan, np.nan
    novel = len(distinct.keys() - set(zip(*[prompt[k:] for k in range(n)])))
    repeated = sum(count > 1 for count in distinct.values())
    return novel / len(distinct), repeated / len(distinct)


def story_statistics(story: list[str], prompt: list[str], lowercase_ngrams: bool) -> list[float]:
    lower_story, lower_prompt = [t.lower() for t in story], [t.lower() for t in prompt]
    fragments = np.array(greedy_fragments(lower_story, lower_prompt), dtype=float)
    size = len(story)
    values = [fragments.sum() / size, (fragments**2).sum() / size, len(prompt) / size, float(size)]
    if lowercase_ngrams:
        story, prompt = lower_story, lower_prompt
    shares = [ngram_shares(story, prompt, n) for n in ORDERS]
    return values + [novelty for novelty, _ in shares] + [repetition for _, repetition in shares]


def compute(texts: pd.DataFrame, *, summeval_newline: bool = True, lowercase_ngrams: bool = False) -> pd.DataFrame:
    """One row per story: the ten statistics of COLUMNS."""
    check_texts(texts, NEEDS, NAME)
    suffix = "\n" if summeval_newline else ""
    stories = spacy_tokens([story + suffix for story in texts["story"]])
    unique_prompts = pd.unique(texts["prompt"])
    prompt_tokens = dict(zip(unique_prompts, spacy_tokens([prompt + suffix for prompt in unique_prompts])))
    rows = [story_statistics(story, prompt_tokens[prompt], lowercase_ngrams)
            for story, prompt in zip(stories, texts["prompt"])]
    scores = scores_frame(texts["story_id"], dict(zip(COLUMNS, np.array(rows, dtype=float).T)))
    warn_count(
        NAME, texts, int(scores.isna().any(axis=1).sum()), "are shorter than 3 tokens: their n-gram shares are NaN"
    )
    return scores


@defaults_of(compute)
def signature(*, summeval_newline: bool, lowercase_ngrams: bool) -> dict:
    return describe(
        NAME,
        ["spacy"],
        {"summary": "story", "source": "prompt"},
        {"summeval_newline": summeval_newline, "lowercase_ngrams": lowercase_ngrams, "orders": list(ORDERS)},
        tokenizer="spacy.blank('en') rule-based English tokenizer, whitespace tokens kept",
        fragments="Grusky et al. 2018 greedy, lowercased",
    )
