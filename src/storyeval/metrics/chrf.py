"""Sentence chrF of the story against the human reference, with sacrebleu (Popovic 2015).

As HANNA scored it: character n-grams up to 6, no word n-grams, beta 2 (recall
weighted), scale 0-100 (story = reference gives 100).
"""

from __future__ import annotations

import pandas as pd

from storyeval.metrics.base import check_texts, columns, defaults_of, describe, scores_frame

NAME = "chrf"
NEEDS = frozenset({"reference"})
COLUMNS = columns("string", "based", "chrF")


def scorer(char_order: int, word_order: int, beta: int):
    from sacrebleu.metrics import CHRF

    return CHRF(char_order=char_order, word_order=word_order, beta=beta)


def compute(texts: pd.DataFrame, *, char_order: int = 6, word_order: int = 0, beta: int = 2) -> pd.DataFrame:
    check_texts(texts, NEEDS, NAME)
    chrf = scorer(char_order, word_order, beta)
    values = [
        chrf.sentence_score(story, [reference]).score for story, reference in zip(texts["story"], texts["reference"])
    ]
    return scores_frame(texts["story_id"], {"chrf": values})


@defaults_of(compute)
def signature(*, char_order: int, word_order: int, beta: int) -> dict:
    chrf = scorer(char_order, word_order, beta)
    chrf.sentence_score("a", ["a"])  # sacrebleu knows its signature only after scoring
    return describe(
        NAME,
        ["sacrebleu"],
        {"hypothesis": "story", "reference": "reference"},
        {"char_order": char_order, "word_order": word_order, "beta": beta},
        sacrebleu_signature=str(chrf.get_signature()),
    )
