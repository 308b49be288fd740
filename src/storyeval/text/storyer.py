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
    """Unpickle `path` admitting only plain containers, str and numbers."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            return RestrictedUnpickler(handle, source).load()
    except InputError:
        raise
    except UnicodeDecodeError as error:
        raise InputError(f"{source}: a pickled string is not valid UTF-8 ({error}); fix: use the released file") from error
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError) as error:
        raise InputError(f"{source}: not a readable pickle ({error}); fix: fetch the released file again") from error
