"""Reading and writing the workflow's tidy tables, deterministically and atomically."""

from __future__ import annotations

import faulthandler
import functools
import html
import json
import logging
import os
import re
import sys
from pathlib import Path

import pandas as pd

from storyeval.errors import InputError

FLOAT_FORMAT = "%.10g"  # enough digits for every statistic, and stable text across runs


def _atomic(path: str | Path, write) -> None:
    """Write to a temporary sibling, then rename: a failed step leaves no partial output."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)


# Spreadsheet formulas (CSV injection, OWASP): a text cell a spreadsheet would evaluate starts with one of these.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
ESCAPE = "'"  # OWASP's prefix: the cell is text; a cell that starts with it gets one more, so reading undoes each
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+|inf)(?:[eE][+-]?\d+)?"
# A number, or a number and its interval ("-0.50 [-0.62, -0.30]"), as text: no letters, nothing a spreadsheet calls.
NUMBER_TEXT = re.compile(rf"{_NUMBER}(?: [\[(]{_NUMBER}(?:, {_NUMBER})*[\])])?")


def escape_cell(value: object) -> object:
    """`value` as a spreadsheet shows it without evaluating it: text starting with a formula character (or with
    the escape itself) prefixed by ESCAPE; numbers, and text that is a number, stay as they are."""
    if not isinstance(value, str) or not value.startswith((*FORMULA_STARTS, ESCAPE)) or NUMBER_TEXT.fullmatch(value):
        return value
    return ESCAPE + value


def unescape_cell(value: object) -> object:
    """The inverse of `escape_cell`, for text read back from a table this module wrote."""
    return value[1:] if isinstance(value, str) and value.startswith(ESCAPE) else value


def _texts(frame: pd.DataFrame, cell) -> pd.DataFrame:
    """`frame` with `cell` applied to its column names and to every cell of its text columns."""
    frame = frame.copy()
    for position, values in enumerate(frame.dtypes):
        if pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values) or isinstance(
                values, pd.CategoricalDtype):
            frame.isetitem(position, frame.iloc[:, position].astype(object).map(cell))
    frame.columns = [cell(column) for column in frame.columns]
    return frame


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` as every CSV, TSV and Markdown table storyeval writes holds it: names users give (a system
    `=HYPERLINK(...)`, a criterion `=1+1`) escaped as text (`escape_cell`), so that a spreadsheet opening the
    file runs nothing; `read_table` undoes it."""
    return _texts(frame, escape_cell)


def write_csv(frame: pd.DataFrame, path: str | Path, float_format: str | None = FLOAT_FORMAT, sep: str = ",") -> None:
    """`float_format` None: every float to the last bit (repr; read it back with read_table's round_trip).
    Text cells are spreadsheet-safe (`spreadsheet_safe`); `sep` "\t" writes TSV."""
    _atomic(path, lambda tmp: spreadsheet_safe(frame).to_csv(tmp, index=False, float_format=float_format,
                                                            lineterminator="\n", sep=sep))


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    _atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))


def markdown_cell(value: object) -> object:
    """A text cell or header as Markdown shows it, not runs it: `<`, `>` and `&` as HTML entities (Markdown passes
    HTML through, so a name `<img src=x onerror=...>` would be markup), `|` escaped (it would end the cell)."""
    return html.escape(value, quote=False).replace("|", "\\|") if isinstance(value, str) else value


def markdown_table(frame: pd.DataFrame) -> str:
    """`frame` as a Markdown table, its text cells spreadsheet-safe (a table pasted into a spreadsheet) and
    escaped as in HTML (`markdown_cell`)."""
    return _texts(spreadsheet_safe(frame), markdown_cell).to_markdown(index=False)


def write_markdown(frame: pd.DataFrame, path: str | Path, title: str) -> None:
    text = f"# {markdown_cell(title)}\n\n{markdown_table(frame)}\n"
    _atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def damaged(path: str | Path, what: str, error: Exception) -> InputError:
    """The refusal of a file the workflow wrote that does not load (cut by a killed job or a full disk, or edited):
    a file under a results/ folder is deleted first, so that the next run rebuilds it (Snakemake remakes a missing
    input); one elsewhere (a file of the user's, passed by hand) is left as it is."""
    reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
    if "results" not in Path(path).parts:
        return InputError(f"{what} {path} does not load, damaged or cut ({reason}); fix: delete it and run what "
                          "wrote it again")
    Path(path).unlink(missing_ok=True)
    return InputError(f"{what} {path} does not load, damaged or cut ({reason}); deleted it; fix: run the same "
                      "command again, which rebuilds it")


def read_parquet(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """A parquet file the workflow wrote (scores, a judge's ratings, a text table); a damaged one is deleted and
    refused (`damaged`), never read as pyarrow's bare ArrowInvalid."""
    if not Path(path).is_file():
        return pd.read_parquet(path, columns=columns)  # pandas' FileNotFoundError: the rule was not run
    try:
        return pd.read_parquet(path, columns=columns)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid and ArrowIOError among them
        raise damaged(path, "workflow file", error) from error


def read_table(path: str | Path, required: list[str], round_trip: bool = False, sep: str = ",") -> pd.DataFrame:
    """Read a CSV (TSV: `sep` "\t") or parquet table that storyeval wrote, its text cells unescaped
    (`spreadsheet_safe`), and check that it has the `required` columns (a damaged one: `damaged`). `round_trip`:
    CSV floats parsed to the bit that their repr wrote (pandas' default parser may miss the last bit of a 17-digit
    number)."""
    path = Path(path)
    if path.suffix == ".parquet":
        frame = read_parquet(path)
    else:
        try:
            frame = _texts(pd.read_csv(path, float_precision="round_trip" if round_trip else None, sep=sep),
                           unescape_cell)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
            raise damaged(path, "workflow file", error) from error
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise InputError(
            f"{path}: missing column(s) {missing}; fix: regenerate it with the workflow rule that writes it"
        )
    return frame


def log_to(path: str | Path | None) -> logging.Logger:
    """Logger for a workflow script: to the rule's log file, or stderr when run by hand.

    The one logging entry point of every workflow script. It also installs an exception hook, so a job that
    fails leaves its exception and traceback in its own log (Snakemake points users there), while the console
    gets one line: an `InputError` is the user's to fix and its message says how; anything else is a bug
    whose traceback is in the log. A job killed from outside (exit status -9 or 137: out of memory, or the
    cluster's time limit) can write nothing; Snakemake's message gives that status."""
    logger = logging.getLogger("storyeval")
    logger.setLevel(logging.INFO)
    for previous in logger.handlers:  # the package's own call at import, inside a job (storyeval/__init__.py)
        previous.close()
    logger.handlers.clear()
    handler = logging.FileHandler(path, mode="w") if path else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    if path:
        sys.excepthook = functools.partial(log_failure, logger, str(path))
        faulthandler.enable(handler.stream)  # a crash (segfault, abort) leaves the Python stack in the log too
    return logger


def log_failure(logger: logging.Logger, path: str, kind, error, trace) -> None:
    """sys.excepthook of a workflow script (see `log_to`): traceback to the log, one line to the console."""
    logger.error("failed: %s: %s", kind.__name__, error, exc_info=(kind, error, trace))
    for handler in logger.handlers:
        handler.flush()
    what = str(error) if isinstance(error, InputError) else f"{kind.__name__}: {error}"
    print(f"storyeval: {what} (traceback in {path})", file=sys.stderr)


SAFETENSORS_METADATA_KEY = "storyeval"  # the JSON header storyeval writes into its safetensors files


NUMPY_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "U8": "u1", "BOOL": "?"}


def read_safetensors(
    path: str | Path, framework: str, what: str, missing_fix: str, unreadable_fix: str | None, mapped: bool = False
) -> tuple[dict, dict]:
    """Tensors and the parsed storyeval JSON header ({} when absent) of a safetensors file; clear errors naming
    `what` (e.g. "embedding cache") when the file is missing or not safetensors; `unreadable_fix` None: a file the
    workflow rebuilds, deleted when damaged (`damaged`).

    `mapped` (numpy): read-only memory maps instead of copies, so only the pages a reader touches are read.
    Why by hand: safetensors' numpy API copies whole tensors (the 6 GB hanna-llm embedding cache took 27 s to
    load for metrics that read one layer of a fraction of its texts). The format is an 8-byte little-endian
    header length, a JSON header giving each tensor's dtype, shape and byte range, then the bytes; safetensors
    itself opens and validates the file first."""
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} {path} does not exist; fix: {missing_fix}")
    try:
        with safe_open(str(path), framework=framework) as handle:
            header = (handle.metadata() or {}).get(SAFETENSORS_METADATA_KEY)
            tensors = map_tensors(path) if mapped else {name: handle.get_tensor(name) for name in handle.keys()}
        content = json.loads(header) if header else {}
    except (SafetensorError, KeyError, ValueError, OSError) as error:
        if unreadable_fix is None:
            raise damaged(path, what, error) from error
        raise InputError(f"{what} {path} is not a safetensors file ({error}); fix: {unreadable_fix}") from error
    return tensors, content


def map_tensors(path: Path) -> dict:
    """Read-only numpy memory maps of a validated safetensors file's tensors (see `read_safetensors`)."""
    import numpy as np

    with open(path, "rb") as file:
        length = int.from_bytes(file.read(8), "little")
        header = json.loads(file.read(length))
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, shape = np.dtype(NUMPY_DTYPES[entry["dtype"]]), tuple(entry["shape"])
        begin, end = entry["data_offsets"]
        tensors[name] = (
            np.memmap(path, dtype, "r", 8 + length + begin, shape) if end > begin else np.zeros(shape, dtype)
        )
    return tensors
