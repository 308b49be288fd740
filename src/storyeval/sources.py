"""The storyeval source files a piece of code depends on: the rerun triggers of the workflow's rules.

Snakemake reruns a rule when its parameters change; a rule that carries the sha256 of every storyeval module
its code imports (directly or through one another) reruns when any of them is edited, also where file mtimes
say nothing (an input outside the working directory). Imports are read from the sources (`ast`), those inside
functions included; modules that code loads by name at run time (the metric catalog's `load`) are not seen,
so the metric rules add their metric's module as a root. Modules are found as files under the package,
without importing them (every Snakemake start parses the rules, and importing e.g. the torch-based modules
to locate them cost seconds).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


class Described(dict):
    """A rule parameter that Snakemake's report lists by what it is, not as a dump: Snakemake compares parameters
    by repr (a dict's, so a change still reruns the rule) and its report shows them by str."""

    description = "a mapping"

    def __str__(self) -> str:
        return self.description


class Digests(Described):
    """{script or module: sha256} of a rule (its `sources` parameter): editing a file reruns the rule."""

    def __str__(self) -> str:
        return f"sha256 of its script and {len(self) - 1} storyeval modules (a change reruns it)"


class Facts(Described):
    """The caption sentences of a score set (storyeval.plots.pages.caption_facts)."""

    description = "the captions' sentences on this score set, as computed (caption_facts)"


class Specs(Described):
    """{figure name: spec} of a figure job."""

    def __str__(self) -> str:
        return ", ".join(self)


def module_sources(*roots: str) -> dict[str, str]:
    """{module or script path: source file} of the roots (module names, or paths of .py scripts) and of every
    storyeval module they import, directly or through another; sorted by key."""
    found, pending = {}, list(roots)
    while pending:
        root = pending.pop()
        if root in found:
            continue
        found[root] = root if root.endswith(".py") else str(module_file(root))
        pending += file_imports(found[root])
    return dict(sorted(found.items()))


@cache
def module_file(module: str) -> Path | None:
    """The source file of a storyeval module (`storyeval.neural.ot` -> .../neural/ot.py, a package -> its
    __init__.py), or None when there is none (an attribute, not a module)."""
    path = PACKAGE.joinpath(*module.split(".")[1:])
    for candidate in ([path.with_suffix(".py")] if path != PACKAGE else []) + [path / "__init__.py"]:
        if candidate.is_file():
            return candidate
    return None


@cache
def file_imports(path: str) -> tuple[str, ...]:
    """`storyeval_imports` of a file, read and parsed once per process."""
    return tuple(storyeval_imports(Path(path).read_text(encoding="utf-8")))


# How a job is run, not what it computes: editing the job server reruns no job.
NOT_COMPUTATION = frozenset({"storyeval.workflow.handoff", "storyeval.workflow.handoff_torch"})


# An import statement, from its first line to its end: continuation lines after a backslash, or a parenthesised
# list of names. Only these are parsed: parsing every module whole (`ast.parse`) cost each Snakemake start 0.2 CPU-s.
CONTINUED = r"(?:[ \t]|\\\n)"
IMPORT_STATEMENT = re.compile(rf"^[ \t]*(?:import|from[ \t]+[\w.]+{CONTINUED}+import)[ \t](?:[^\n(\\]|\\\n)*"
                              r"(?:\([^)]*\)[^\n]*)?", re.MULTILINE)
# Where a statement may import storyeval: a line's start, or after a colon or semicolon (`try: import storyeval`).
MAY_IMPORT = re.compile(r"(?:^|[;:])[ \t]*(?:import[ \t][^\n]*\bstoryeval\b|from[ \t]+storyeval\b)", re.MULTILINE)


def import_statements(source: str) -> list[ast.stmt] | None:
    """The statements of a source that may import storyeval, found by IMPORT_STATEMENT and parsed one by one; None
    where the pattern cannot vouch for them: a statement it cut short (a ")" in a comment), prose that reads like
    one, an import after a colon or semicolon."""
    matches = [match for match in IMPORT_STATEMENT.finditer(source) if "storyeval" in match.group()]
    if not all(any(match.start() <= hit.start() < match.end() for match in matches)
               for hit in MAY_IMPORT.finditer(source)):
        return None
    try:
        return [node for match in matches for node in ast.parse(match.group().strip()).body]
    except SyntaxError:
        return None


def storyeval_imports(source: str) -> list[str]:
    """The storyeval modules a source imports (`from storyeval.neural import ot` names the module `ot`), but for
    the job server's hand-off (NOT_COMPUTATION). Statements inside functions count; so does a docstring line that
    reads as an import of an existing module (a rerun trigger too many, never one too few)."""
    found = import_statements(source)
    if found is None:
        found = list(statements(ast.parse(source).body))
    modules = []
    for node in found:
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names
                        if alias.name.split(".")[0] == "storyeval" and alias.name not in NOT_COMPUTATION]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] == "storyeval":
            modules.append(node.module)
            if getattr(module_file(node.module), "name", None) == "__init__.py":  # the names may be its modules
                modules += [f"{node.module}.{alias.name}" for alias in node.names
                            if module_file(f"{node.module}.{alias.name}") is not None]
    return [module for module in modules if module_file(module) is not None]


def statements(nodes: list[ast.AST]):
    """Every statement of a body, nested ones included: where imports can be. Walking only these instead of every
    expression node (ast.walk) takes a third off the start-up digest of the workflow's ~190 sources."""
    for node in nodes:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                yield from statements(children)
