"""Size limits of what storyeval reads, and of the memory a resampling may take.

A job's memory grows with what it derives from a value, not only with the value: a system's name is part of
every story id of that system, so HANNA's released scores repeat it once per prompt and column (one 50 MB name
filled 23 GB). Every read file is therefore checked line by line and cell by cell against the limits below,
generous for real data (HANNA's longest line is 0.3 MB, its longest story 4,837 characters, its longest
system name 17), before anything is derived from it; a value over a limit stops the read with one line naming
the file, the row and the limit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

from storyeval.errors import InputError

MAX_LINE = 16 * 2**20  # bytes of one line of a text file
MAX_FIELD = 2**20  # characters of one cell: a story, a prompt, a score list
MAX_NAME = 200  # characters of a name that outputs repeat: a system, a criterion, a rater, a story id
ABSURD = 1e100  # no score or rating is this large; an edited or broken file is (released: a warning; own: refused)


def check_lines(raw: bytes, label: str, fix: str = "repair or re-export the file") -> None:
    """Refuse a file with a line longer than MAX_LINE bytes."""
    newlines = np.flatnonzero(np.frombuffer(raw, np.uint8) == 10)
    ends = np.append(newlines, len(raw))
    lengths = np.diff(ends, prepend=-1) - 1
    over = np.flatnonzero(lengths > MAX_LINE)
    if over.size:
        raise InputError(f"{label}: line {over[0] + 1} has {lengths[over[0]]:,} bytes, over the limit of "
                         f"{MAX_LINE:,} bytes a line; fix: {fix}")


def check_cells(frame, label: str, names: Iterable[str] = (),
                fix: str = "repair or re-export the file") -> None:
    """Refuse a cell of `frame` (as read from the file `label`, one row per data row) longer than MAX_FIELD
    characters, or than MAX_NAME in the columns `names`; column headers count as names."""
    import pandas as pd  # here: the statistics import this module for check_draws alone

    names = set(names)
    for index, column in enumerate(frame.columns):
        if len(str(column)) > MAX_NAME:
            raise InputError(f"{label}: column {index + 1} of the header has a name of {len(str(column)):,} "
                             f"characters, over the limit of {MAX_NAME} for a name; fix: {fix}")
    for column in frame.columns:
        values = frame[column]
        if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
            continue
        limit, what = (MAX_NAME, "a name") if column in names else (MAX_FIELD, "a cell")
        try:  # vectorised; cells that are not strings (a JSONL number) count as 0
            lengths = values.str.len().fillna(0).to_numpy(dtype=np.int64)
        except AttributeError:  # an object column without strings
            continue
        over = np.flatnonzero(lengths > limit)
        if over.size:
            raise InputError(f"{label}: {lengths[over[0]]:,} characters in column {str(column)[:40]!r}, data row "
                             f"{over[0] + 1}, over the limit of {limit:,} for {what}; fix: {fix}")


def check_text(text: str, label: str, fix: str) -> None:
    """Refuse one text (a story, prompt or reference given as a value) longer than MAX_FIELD characters."""
    if len(text) > MAX_FIELD:
        raise InputError(f"{label}: {len(text):,} characters, over the limit of {MAX_FIELD:,} for a text; fix: {fix}")


def available_memory() -> int:
    """Bytes of memory this machine can give now (Linux MemAvailable; else all physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def draw_bytes(prompts: int, systems: int, columns: int, pairs: bool = True) -> int:
    """Bytes one resample or permutation holds at once, at most, in storyeval.stats: its prompt draw or sign
    flips (float64 a prompt), a swap mask (a prompt x system), the resampled means of every system and column,
    and (`pairs`) the paired bootstrap's differences and comparisons of every system pair and column (float64)."""
    held = 16 * (systems * (systems - 1) // 2) * columns if pairs else 0
    return 8 * prompts + prompts * systems + 8 * systems * (columns + 1) + held


def check_draws(count: int, prompts: int, systems: int, columns: int, key: str, memory: int | None = None,
                pairs: bool = True) -> None:
    """Refuse `count` resamples or permutations (config `key`) of a prompts x systems x columns set that would
    not fit into half the available memory, naming the largest count that would. `pairs` False: the job holds no
    system-pair arrays (PERM-BOTH and BOOT-BOTH correlate chunk by chunk; one group of 400 stories would
    otherwise count 80,000 "system" pairs a draw)."""
    memory = available_memory() if memory is None else memory
    each = draw_bytes(prompts, systems, columns, pairs)
    fits = memory // 2 // each
    if count > fits:
        raise InputError(f"{key}: {count:,} draws of {prompts} prompts x {systems} systems x {columns} columns need "
                         f"about {count * each / 2**30:,.1f} GiB, over half the {memory / 2**30:,.1f} GiB available; "
                         f"fix: use at most {fits:,}")
