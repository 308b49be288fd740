"""Read StoryER's released pickles without executing code (spec section 5).

Plain `pickle.load` calls any global a pickle names (e.g. `os.system`). The
unpickler here resolves no global except the builtins list, tuple, dict, str,
int and float; anything else, persistent ids included, stops the load with an
InputError naming the file and the global. Containers and numbers need no
global at all in pickle protocols 2-5, so the released files load unchanged.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

from storyeval.errors import InputError

ALLOWED = {("builtins", name) for name in ("list", "tuple", "dict", "str", "int", "float")}
ALLOWED |= {("__builtin__", name) for name in ("list", "tuple", "dict", "str", "int", "float")}  # protocol 0-2 of Python 2
MAX_DEPTH = 100  # the released files nest 3 deep; Python's repr and == recurse once per level


class RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, handle: io.BufferedIOBase, source: str):
        super().__init__(handle, encoding="utf-8")
        self.source = source

    def find_class(self, module: str, name: str):
        if (module, name) not in ALLOWED:
            raise InputError(
                f"{self.source}: the pickle names the global {module}.{name}; only builtins list, tuple, dict, "
                "str, int and float are allowed; fix: use the released file (its checksum is pinned)"
            )
        return super().find_class(module, name)

    def persistent_load(self, pid):
        raise InputError(f"{self.source}: the pickle uses a persistent id; fix: use the released file")


def load_restricted(path: str | Path) -> object:
    """Unpickle `path` admitting only plain containers, str and numbers; any malformed pickle is one InputError.

    The bytes are unpickled from memory, so a declared length beyond the file's end reads as truncated instead
    of allocating it; a structure nested deeper than MAX_DEPTH is refused (later code would hit RecursionError)."""
    source = str(path)
    data = Path(path).read_bytes()
    handle = io.BytesIO(data)
    try:
        loaded = RestrictedUnpickler(handle, source).load()
    except InputError:
        raise
    except UnicodeDecodeError as error:
        raise InputError(f"{source}: a pickled string is not valid UTF-8 ({error.reason}), near byte "
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
    """Refuse containers nested deeper than MAX_DEPTH (walked without recursion)."""
    top = list(value.values()) if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else []
    pending = [(child, 2, index) for index, child in enumerate(top)]
    while pending:
        item, depth, index = pending.pop()
        if isinstance(item, (list, tuple, dict)):
            if depth > MAX_DEPTH:
                raise InputError(f"{source}: containers nested deeper than {MAX_DEPTH} levels, in top-level item "
                                 f"{index}; fix: fetch the released file again")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            pending += [(child, depth + 1, index) for child in children]
