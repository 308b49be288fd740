"""Read a third-party CSV file as strings, refusing a damaged file with one line.

pandas reports an empty file, a stray byte or a cut-off quoted field with a traceback of many lines (or, for a
file that holds only its header, not at all); here each is one InputError naming the file, the line and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.limits import check_cells, check_lines

REFETCH = "fetch the released file again (delete the copy; the workflow fetches it from a mirror or the pinned URL)"


def decode_utf8(raw: bytes, label: str, fix: str = REFETCH) -> str:
    """`raw` as text; an empty file, or a byte that is not UTF-8 (named by its line), is one InputError."""
    if not raw.strip():
        raise InputError(f"{label}: the file is empty, line 1; fix: {REFETCH}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputError(
            f"{label}: line {line} (byte {error.start}) is not UTF-8 ({error.reason}): 0x{raw[error.start]:02x}; "
            f"fix: {fix}"
        ) from error


def read_csv_strings(path: str | Path, label: str | None = None, numbers: Iterable[str] = (),
                     names: Iterable[str] = ()) -> pd.DataFrame:
    """Every cell of the CSV `path` as a string (no NA conversion), except the columns `numbers`, which must
    hold finite numbers; `label` starts each error (default: the path).

    Refused: an empty file, bytes that are not UTF-8, a line or a cell over its size limit (storyeval.limits;
    `names`: columns whose cells are names), a file pandas cannot tokenise (e.g. truncated inside a quoted
    field), a header without data rows, and a missing or non-finite number."""
    label = label or str(path)
    raw = Path(path).read_bytes()
    check_lines(raw, label, REFETCH)
    text = decode_utf8(raw, label, "re-save the file as UTF-8 or fetch the released file again")
    del raw
    try:
        frame = pd.read_csv(StringIO(text), dtype=str, keep_default_na=False)
    except pd.errors.ParserError as error:
        reason = " ".join(str(error).split())
        raise InputError(
            f"{label}: not a well-formed CSV file, truncated or damaged ({reason}); fix: {REFETCH}"
        ) from error
    if frame.empty:
        raise InputError(f"{label}: a header and no data rows, line 2; fix: {REFETCH}")
    check_cells(frame, label, names, REFETCH)
    for column in numbers:
        if column not in frame.columns:
            raise InputError(f"{label}: no column {column!r}, line 1 (the header); fix: {REFETCH}")
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = np.flatnonzero(~np.isfinite(values.to_numpy(dtype=float)))
        if bad.size:
            raise InputError(
                f"{label}: {frame[column].iloc[bad[0]]!r} is not a finite number ({bad.size} such "
                f"cells), column {column!r}, data row {bad[0] + 1}; fix: {REFETCH}"
            )
        frame[column] = values
    return frame
