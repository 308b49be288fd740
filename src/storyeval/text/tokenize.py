"""Word tokenisation with spaCy's rule-based English tokenizer (no model download).

`spacy.blank("en")` holds only the tokenizer: English prefix, suffix and infix
rules and exceptions (`don't` -> `do`, `n't`), the same rules as the
`en_core_web_sm` tokenizer that SummEval used for the data statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

BATCH = 256


@lru_cache(maxsize=1)
def english():
    import spacy  # imported here: spaCy costs ~1 s to import, most callers never need it

    return spacy.blank("en")


def spacy_tokens(texts: Sequence[str]) -> list[list[str]]:
    """All tokens, whitespace tokens included (a `\\n` or a double space is a token, as in SummEval)."""
    return [[token.text for token in doc] for doc in english().pipe(texts, batch_size=BATCH)]


def words(texts: Sequence[str], lowercase: bool = True) -> list[list[str]]:
    """Tokens without whitespace tokens, lowercased by default: the input of METEOR and CIDEr."""
    return [
        [token.lower_ if lowercase else token.text for token in doc if not token.is_space]
        for doc in english().pipe(texts, batch_size=BATCH)
    ]
