"""Read released pickles without executing code: a restricted unpickler shared by every loader.

Plain `pickle.load` calls any global a pickle names (e.g. `os.system`). `load_restricted` resolves
only the globals of an explicit table, each mapped to an inert stand-in chosen by the caller (by
default the builtins list, tuple, dict, str, int and float, all that StoryER's files need: containers
and numbers need no global in pickle protocols 2-5); anything else, persistent ids included, stops
the load with one InputError naming the file and the global. `storyeval.metrics.s3` passes the table
of S3's scikit-learn pickles.
"""

from __future__ import annotations

import io
import pickle
import reprlib
from collections.abc import Mapping
from pathlib import Path

from storyeval.errors import InputError

PLAIN_TYPES = {"list": list, "tuple": tuple, "dict": dict, "str": str, "int": int, "float": float}
# Python 3 names, and Python 2's (protocols 0-2 of Python 2)
PLAIN = {(module, name): value for module in ("builtins", "__builtin__") for name, value in PLAIN_TYPES.items()}
MAX_DEPTH = 100  # the released files nest 3 deep; Python's repr and == recurse once per level


SHORT = reprlib.Repr()
SHORT.maxlevel, SHORT.maxstring, SHORT.maxother = 2, 40, 40


def brief(value: object, width: int = 60) -> str:
    """A loaded value shown in an error: `str` of a structure of shared references grows with its paths (40
    levels of 10 references to one list: 10**40 characters); this stops at two levels and a few items."""
    return SHORT.repr(value)[:width]


class RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, handle: io.BufferedIOBase, source: str, allowed: Mapping[tuple[str, str], object],
                 encoding: str):
        super().__init__(handle, encoding=encoding)
        self.source = source
        self.allowed = allowed

    def find_class(self, module: str, name: str):
        if (module, name) not in self.allowed:
            names = ", ".join(sorted({n for _, n in self.allowed})) if self.allowed is PLAIN else ", ".join(
                sorted(f"{m}.{n}" for m, n in self.allowed))
            raise InputError(f"{self.source}: the pickle names the global {module}.{name}; only {names} are "
                             "allowed; fix: use the released file (its checksum is pinned)")
        return self.allowed[module, name]

    def persistent_load(self, pid):
        raise InputError(f"{self.source}: the pickle uses a persistent id; fix: use the released file")


def load_restricted(path: str | Path, allowed: Mapping[tuple[str, str], object] = PLAIN,
                    encoding: str = "utf-8") -> object:
    """Unpickle `path` resolving only the globals of `allowed` ((module, name) -> stand-in); any malformed
    pickle is one InputError. `encoding` decodes Python 2 byte strings ("latin1" for pickles holding
    numpy arrays, as numpy documents).

    The bytes are unpickled from memory, so a declared length beyond the file's end reads as truncated instead
    of allocating it; a structure nested deeper than MAX_DEPTH is refused (later code would hit RecursionError)."""
    source = str(path)
    data = Path(path).read_bytes()
    handle = io.BytesIO(data)
    try:
        loaded = RestrictedUnpickler(handle, source, allowed, encoding).load()
    except InputError:
        raise
    except UnicodeDecodeError as error:
        raise InputError(f"{source}: a pickled string is not valid {error.encoding} ({error.reason}), near byte "
                         f"{handle.tell()}; fix: use the released file") from error
    except Exception as error:  # the C unpickler raises many types (and MemoryError) on malformed data
        reason = " ".join(str(error).split()) or type(error).__name__
        if isinstance(error, MemoryError):
            reason = "it declares a length beyond memory"
        raise InputError(f"{source}: not a readable pickle ({reason}), near byte {handle.tell()} of {len(data)}; "
                         "fix: fetch the released file again") from error
    check_depth(loaded, source)
    return loaded


def check_depth(value: object, source: str) -> None:
    """Refuse containers nested deeper than MAX_DEPTH, or containing themselves. Each container is visited once
    (its height memoised by identity), so a pickle of shared references costs its size, not its paths."""
    top = list(value.values()) if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else []
    for index, child in enumerate(top):
        if container_height(child, {}, source, index) + 1 > MAX_DEPTH:
            raise InputError(f"{source}: containers nested deeper than {MAX_DEPTH} levels, in top-level item "
                             f"{index}; fix: fetch the released file again")


def container_height(value: object, heights: dict[int, int], source: str, index: int) -> int:
    """Levels of containers from `value` down (0 for a leaf), without recursion; `heights` memoises by id."""
    if not isinstance(value, (list, tuple, dict)):
        return 0
    open_ = set()  # containers whose children are still being measured: meeting one again is a cycle
    pending = [value]
    while pending:
        item = pending[-1]
        key = id(item)
        if key in heights:
            pending.pop()
            continue
        children = [c for c in ([*item.keys(), *item.values()] if isinstance(item, dict) else item)
                    if isinstance(c, (list, tuple, dict))]
        unmeasured = [c for c in children if id(c) not in heights]
        if key not in open_:
            open_.add(key)
            if any(id(c) in open_ for c in unmeasured):
                raise InputError(f"{source}: a container holds itself, in top-level item {index}; "
                                 "fix: fetch the released file again")
            pending += unmeasured
            continue
        pending.pop()
        open_.discard(key)
        heights[key] = 1 + max((heights[id(c)] for c in children), default=0)
        if heights[key] > MAX_DEPTH:  # stop early: a deep chain need not be walked to its end
            return heights[key]
    return heights[id(value)]
