"""The storyeval source files a piece of code depends on: the rerun triggers of the workflow's rules.

Snakemake reruns a rule when its parameters change; a rule that carries the sha256 of every storyeval module
its code imports (directly or through one another) reruns when any of them is edited, also where file mtimes
say nothing (an input outside the working directory). Imports are read from the sources (`ast`), those inside
functions included; modules that code loads by name at run time (the metric catalog's `load`) are not seen,
so the metric rules add their metric's module as a root.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path


def module_sources(*roots: str) -> dict[str, str]:
    """{module or script path: source file} of the roots (module names, or paths of .py scripts) and of every
    storyeval module they import, directly or through another; sorted by key."""
    found, pending = {}, list(roots)
    while pending:
        root = pending.pop()
        if root in found:
            continue
        found[root] = root if root.endswith(".py") else importlib.util.find_spec(root).origin
        pending += storyeval_imports(Path(found[root]).read_text(encoding="utf-8"))
    return dict(sorted(found.items()))


def storyeval_imports(source: str) -> list[str]:
    """The storyeval modules a source imports (`from storyeval.neural import ot` names the module `ot`)."""
    modules = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names if alias.name.split(".")[0] == "storyeval"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] == "storyeval":
            modules.append(node.module)
            if importlib.util.find_spec(node.module).submodule_search_locations:  # a package: names may be modules
                modules += [f"{node.module}.{alias.name}" for alias in node.names
                            if importlib.util.find_spec(f"{node.module}.{alias.name}") is not None]
    return modules
