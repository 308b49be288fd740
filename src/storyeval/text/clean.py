"""Story cleaning: one normalisation, applied once at load time, seen by every metric.

What `clean_text` does, in order:
1. line-break markers become a line break: WritingPrompts' `<newline>`, StoryER's
   `<\\newline>` (also `</newline>`) and HTML `<br>`, `<br/>`, `<br />` (any case);
   Windows and old-Mac line ends become `\\n`;
2. every run of whitespace (spaces, tabs, line breaks, non-breaking spaces) becomes
   one space, and the ends are stripped.

So a story is one line of single-spaced text. This is the form of HANNA's human
stories and prompts (no line breaks, no double spaces: step 2 leaves them
unchanged, which is why the released data statistics are reproduced exactly),
and ROUGE-1.5.5 then reads each story as one sentence, as HANNA's pipeline did.
Paragraph structure is lost; no metric here uses it. Nothing else is touched:
no Unicode normalisation, no case change, no quote or punctuation rewriting
(tokenisers and metrics do their own). Prompts keep WritingPrompts tags such
as `[ RF ]`: HANNA kept them (two of its 96 prompts have one, and the released
Compression counts their three tokens).
"""

from __future__ import annotations

import re

CLEANING = "line-break markers (<newline>, <\\newline>, <br>) to breaks, whitespace runs to one space, ends stripped"
LINE_BREAK_MARKERS = re.compile(r"<\s*[\\/]?\s*newline\s*>|<\s*br\s*/?\s*>", re.IGNORECASE)


def clean_text(text: str) -> str:
    """Markers to line breaks, then all whitespace runs to one space (see module docstring)."""
    text = LINE_BREAK_MARKERS.sub("\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    return " ".join(text.split())
