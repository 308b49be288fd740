"""Config files are data: refuse what would make reading one run code, or lose a value silently.

Snakemake reads a config file with YTE (`__use_yte__: true` evaluates the file's Python expressions) through
PyYAML's FullLoader (which resolves `!!python/name:` tags to any loaded module's objects); a mapping that
repeats a key keeps the last value without a word (two datasets of one name: the first is lost). The workflow
checks `config.yaml` with `check_config_file` before its `configfile:` directive reads it, and every
`--configfile` too, although Snakemake has read those already when the workflow starts (docs/bad-input.md). So
the Makefile's targets check every config file they pass (CONFIG=...) before Snakemake starts:
`python -m storyeval.configfiles FILE...` prints one line per refused file and exits with status 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from storyeval.errors import InputError

MERGE = "tag:yaml.org,2002:merge"
# Values a YAML data file may expand to, aliases (*name) expanded: config.yaml holds 571, the papers' printed
# numbers 2,211. Nine nested aliases of nine items each (a 1.3 kB "billion laughs") expand to 10**9: every reader
# that walks the values (the schema check, a copy, a message quoting one) would fill memory.
MAX_VALUES = 100_000


def expanded(node: yaml.Node, sizes: dict[int, int], open_: set[int]) -> int:
    """How many values `node` holds with every alias expanded, each shared node counted once per use but computed
    once (memoised in `sizes`); a node inside itself (a recursive alias) expands without end."""
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_:
        raise yaml.composer.ComposerError(None, None, "an alias refers to a node that holds it (a recursive "
                                          "structure, which expands without end)", node.start_mark)
    open_.add(id(node))
    children = node.value if isinstance(node, yaml.SequenceNode) else [
        child for pair in node.value for child in pair] if isinstance(node, yaml.MappingNode) else []
    sizes[id(node)] = 1 + sum(expanded(child, sizes, open_) for child in children)
    open_.discard(id(node))
    return sizes[id(node)]


class DataLoader(yaml.SafeLoader):
    """PyYAML's safe loader (plain data only: a `!!python/...` tag is an error) that refuses repeated keys, and
    a document whose aliases expand it beyond MAX_VALUES values (refused as composed, before any value is built)."""

    def compose_document(self) -> yaml.Node:
        node = super().compose_document()
        count = expanded(node, {}, set())
        if count > MAX_VALUES:
            raise yaml.composer.ComposerError(
                None, None, f"its aliases (*name) expand it to {count:,} values, over the limit of {MAX_VALUES:,} "
                "(an alias bomb?)", node.start_mark)
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                continue  # unhashable: the base class refuses it
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice in one mapping (the last would win silently)",
                    key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def check_config_file(path: str | Path, shown: str | None = None) -> None:
    """Refuse a config file that is not plain YAML data: a `!!python/...` tag, YTE templating
    (`__use_yte__`), a key repeated in one mapping, or content that is not a mapping of keys. `shown`: the
    file's name in the message (default: `path`)."""
    shown = shown or str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{shown}: not readable as UTF-8 text ({error}); fix: give a YAML config file") from None
    try:
        content = yaml.load(text, Loader=DataLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, " if mark else ""
        problem = " ".join(f"{error.context or ''} {error.problem or ''}".split())
        tag = next((word.strip("'") for word in problem.split() if "python/" in word), None)
        if tag:
            raise InputError(f"{shown}: {where}the tag !!{tag.removeprefix('tag:yaml.org,2002:')} makes YAML import "
                             "or run Python; fix: write the value itself (a config file is data)") from None
        if "expand" in problem:
            raise InputError(f"{shown}: {problem}; fix: write the values out, without aliases that nest "
                             "(a config file is data)") from None
        if "given twice" in problem:
            raise InputError(f"{shown}: {where}{problem}; fix: keep one of them, or give the second its own name "
                             "(two datasets need two names)") from None
        raise InputError(f"{shown}: {where}not a YAML config file ({problem}); fix: correct that line "
                         "(a config file passed by mistake? `--configfile` takes every word after it until "
                         "the next option: end its list with --)") from None
    except yaml.YAMLError as error:
        raise InputError(f"{shown}: not a YAML config file ({' '.join(str(error).split())}); fix: correct it") from None
    if content is None:
        return
    if not isinstance(content, dict):
        raise InputError(f"{shown}: holds a {type(content).__name__}, not a mapping of config keys; fix: give a "
                         "config file here (`--configfile` takes every word after it until the next option: put "
                         "targets first, or end its list with --)")
    if "__use_yte__" in content:
        raise InputError(f"{shown}: __use_yte__ makes Snakemake evaluate the file's Python expressions (YTE "
                         "templating); fix: remove it and write the values out (a config file is data)")


def main(paths: list[str]) -> int:
    """Check each config file; one line on stderr per refused one. Exit status 1 if any is refused."""
    refused = 0
    for path in paths:
        try:
            check_config_file(path)
        except InputError as error:
            print(f"storyeval: {error}", file=sys.stderr)
            refused = 1
    return refused


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
