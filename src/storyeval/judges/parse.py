"""The rating in a judge's free answer (mode generate): the first 1-5 rating the answer states, or None.

Read in order, the first rule that matches wins: a marked rating ("Rating: 4", "**Score:** 4/5", "my rating
is 3"); a rating over its scale ("4/5", "3 out of 5"); a verb of rating ("I would rate it a 4", "I'd give it
four"); an answer that starts with the rating ("5", "4. The story ..."). A number outside 1-5 or on another
scale ("8/10"), a range ("3-4"), or no rating at all is a parse failure: counted and reported, never imputed.
"""

from __future__ import annotations

import re

WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
NUMBER = r"([1-5]|one|two|three|four|five)(?![\d.,]\d|\s*-\s*\d|\s*/\s*(?!5\b)\d)"
RULES = [
    re.compile(r"\b(?:rating|score|grade|rate)\b\**\s*(?:\bis\b|\bof\b|[:=])?\s*\**\s*" + NUMBER + r"\b", re.I),
    re.compile(r"(?<![\d.])" + NUMBER + r"\s*(?:/\s*5|out of (?:5|five))\b", re.I),
    re.compile(r"\b(?:rate|give|rating)\b[^.\n\d]{0,30}?\b(?:an?\s+)?" + NUMBER + r"\b", re.I),
    re.compile(r"^\W{0,3}" + NUMBER + r"(?!\d)\b", re.I),
]


def parse_rating(answer: str) -> int | None:
    """The rating `answer` states (module docstring), or None."""
    text = answer.strip()
    for rule in RULES:
        match = rule.search(text)
        if match:
            value = match.group(1).lower()
            return WORDS.get(value) or int(value)
    return None
