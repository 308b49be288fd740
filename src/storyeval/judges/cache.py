"""A cache of judge answers: each answer kept under the hash of what decides it, (model signature, template text,
mode, prompt, decoding settings), so that a rerun after a template or dataset change asks the judge only the
prompts it has not answered. Kept: ratings, rating distributions (mode expected) and answers, parse failures
included (the same prompt gets the same greedy answer); not kept: a server's errors (they may pass) and prompts
past the window (never asked). An entry kept before distributions were has none: its prompt's p1..p5 are NaN.

The store is one SQLite file (the standard library's, safe for several judge jobs at once). A file that does not
open as SQLite is deleted and started anew, an entry that does not read is asked again and overwritten (healed as
the other caches are: storyeval.io.damaged). A cached value was computed in another batch: it may differ from a
fresh one in the last bits (docs/judges.md, Limits).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
FIELDS = ("value", "rating_mass", "answer", "failure")
RATINGS = np.arange(1, 6)  # a judge rates 1-5
DISTRIBUTION = tuple(f"p{rating}" for rating in RATINGS)  # mode expected: p(rating); older entries lack it
KEPT = FIELDS + DISTRIBUTION
SCHEMA = "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"


def entry_key(signature: dict, template: str, mode: str, prompt, decoding: dict) -> str:
    """sha256 of the five things an answer depends on (`prompt`: the token ids sent, or the text)."""
    content = json.dumps([signature, template, mode, prompt, decoding], sort_keys=True, default=str)
    return hashlib.sha256(content.encode()).hexdigest()


class AnswerCache:
    """get/put answers ({field: value} of KEPT) by entry_key; `path` None: nothing kept."""

    def __init__(self, path: str | Path | None):
        self.path = None if path is None else Path(path)
        self.hits = 0
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self.run(SCHEMA)
                self.run("SELECT count(*) FROM answers")
            except sqlite3.DatabaseError as error:  # not a database, or a cut one
                log.warning("judge answer cache %s does not open (%s): deleted, started anew", self.path, error)
                self.path.unlink(missing_ok=True)
                self.run(SCHEMA)

    def run(self, sql: str, rows=(), many: bool = False) -> list:
        with closing(sqlite3.connect(self.path, timeout=300)) as connection, connection:
            return (connection.executemany(sql, rows) if many else connection.execute(sql, rows)).fetchall()

    def get(self, keys: list[str]) -> dict[str, dict]:
        """{key: answer} of the keys held (an entry that does not read is left out: asked again)."""
        if self.path is None or not keys:
            return {}
        found = {}
        for start in range(0, len(keys), 500):  # SQLite's bound on a statement's parameters
            chunk = keys[start:start + 500]
            for key, text in self.run(f"SELECT key, answer FROM answers WHERE key IN ({','.join('?' * len(chunk))})",
                                      chunk):
                try:
                    answer = json.loads(text)
                    found[key] = {field: answer[field] for field in FIELDS}
                    found[key] |= {field: answer.get(field) for field in DISTRIBUTION}  # None: not kept
                except (ValueError, KeyError, TypeError):
                    continue
        self.hits += len(found)
        return found

    def put(self, answers: dict[str, dict]) -> None:
        if self.path is not None and answers:
            self.run("INSERT OR REPLACE INTO answers VALUES (?, ?)",
                     [(key, json.dumps({field: answer.get(field) for field in KEPT}, default=float))
                      for key, answer in answers.items()], many=True)
