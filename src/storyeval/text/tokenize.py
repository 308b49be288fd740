"""Word tokenisation with spaCy's rule-based English tokenizer (no model download).

`spacy.blank("en")` holds only the tokenizer: English prefix, suffix and infix
rules and exceptions (`don't` -> `do`, `n't`), the same rules as the
`en_core_web_sm` tokenizer that SummEval used for the data statistics.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

from storyeval.limits import MAX_FIELD

BATCH = 256
# spaCy refuses texts over nlp.max_length characters (1,000,000), since its parser and NER need about 1 GB per
# 100,000; a blank pipeline (tokenizer, rule-based sentencizer) needs memory linear in the text, so it takes every
# text storyeval accepts (MAX_FIELD characters, plus the newline the data statistics append).
LONGEST = 2 * MAX_FIELD


def long_texts(nlp):
    """`nlp`, a pipeline of rules only, taking every text storyeval accepts."""
    nlp.max_length = LONGEST
    return nlp


@lru_cache(maxsize=1)
def english():
    import spacy  # imported here: spaCy costs ~1 s to import, most callers never need it

    return long_texts(spacy.blank("en"))


@lru_cache(maxsize=1)
def sentencizer():
    """English tokenizer and spaCy's rule-based sentencizer (SUPERT's and BLANC's sentences)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return long_texts(nlp)


def parts(text: str, size: int) -> Iterator[str]:
    """`text` in consecutive parts of at most `size` characters, each cut after its last line break, else its last
    whitespace (a statistical pipeline's limit: nlp.max_length); a text within `size` is one part, itself."""
    while len(text) > size:
        cut = max(text.rfind("\n", 0, size), text.rfind(" ", 0, size)) + 1 or size
        yield text[:cut]
        text = text[cut:]
    yield text


def spacy_tokens(texts: Sequence[str]) -> list[list[str]]:
    """All tokens, whitespace tokens included (a `\\n` or a double space is a token, as in SummEval)."""
    return [[token.text for token in doc] for doc in english().pipe(texts, batch_size=BATCH)]


def words(texts: Sequence[str], lowercase: bool = True) -> list[list[str]]:
    """Tokens without whitespace tokens, lowercased by default: the input of METEOR and CIDEr."""
    return [
        [token.lower_ if lowercase else token.text for token in doc if not token.is_space]
        for doc in english().pipe(texts, batch_size=BATCH)
    ]
