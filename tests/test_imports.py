"""The package's modules import each other without a circle (at module level or inside functions): config, the
datasets, the metric catalog, the registry, the names checks and the loaders each stand on modules below them."""

import ast
import sys

from conftest import REPO

PACKAGE = REPO / "src"
# Lazy pairs that pick an implementation at call time (a served judge or an in-process one; a model's weights
# hashed by the embedding cache that loads it); each is two modules of one subpackage.
ALLOWED = [{"storyeval.judges.http", "storyeval.judges.rate"},
           {"storyeval.neural.embeddings", "storyeval.neural.models"}]


def import_graph() -> dict[str, set[str]]:
    """module -> the storyeval modules it imports anywhere in its code (a submodule's import imports its
    packages too)."""
    modules = {".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__"): path
               for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("storyeval"):
                parts = node.module.split(".")
                found |= {".".join(parts[:k]) for k in range(2, len(parts) + 1)}
                found |= {f"{node.module}.{alias.name}" for alias in node.names}
        graph[name] = {other for other in found & set(modules)
                       if other != name and not name.startswith(f"{other}.")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan 1972)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    index, low, stack, found = {}, {}, [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = {stack.pop()}
            while node not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others():
    found = circles(import_graph())
    assert [component for component in found if component not in ALLOWED] == []


def test_the_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
