"""The rerun triggers of the workflow's rules (`storyeval.sources`): every storyeval module a script or module
imports, directly, through another, inside a function, or as `from <package> import <module>`."""

import ast

from storyeval.sources import NOT_COMPUTATION, PACKAGE, module_file, module_sources, storyeval_imports

from conftest import REPO


def test_imports_of_every_form_are_found_and_others_ignored():
    source = ("import numpy\nimport storyeval.errors\nfrom storyeval.neural import ot, parallel\n"
              "from storyeval.io import write_csv\n\ndef later():\n    from storyeval.metrics.catalog import entry\n")
    assert sorted(storyeval_imports(source)) == ["storyeval.errors", "storyeval.io", "storyeval.metrics.catalog",
                                                 "storyeval.neural", "storyeval.neural.ot", "storyeval.neural.parallel"]


def test_a_script_reaches_the_modules_under_its_imports(tmp_path):
    script = tmp_path / "rule.py"
    script.write_text("from storyeval.metrics.baryscore import compute\n", encoding="utf-8")
    found = module_sources(str(script))
    assert found[str(script)] == str(script)
    # baryscore imports storyeval.neural.ot, which imports the simplex inside a function
    assert {"storyeval.metrics.baryscore", "storyeval.neural.ot", "storyeval.neural.simplex"} <= set(found)
    assert "storyeval.metrics.chrf" not in found
    assert list(found) == sorted(found)


def test_how_a_job_runs_is_no_rerun_trigger():
    """A script's first line hands its job to a job server (storyeval.workflow.jobserver): editing the server
    reruns no job, whichever server the script goes to."""
    scripts = sorted((REPO / "workflow/scripts").glob("*.py"))
    assert {"storyeval.workflow.handoff", "storyeval.workflow.handoff_torch"} <= {
        line.split()[1] for script in scripts for line in script.read_text().splitlines()[:12]
        if line.startswith("import storyeval.workflow.handoff")}
    assert not any("storyeval.workflow.jobserver" in module_sources(str(script)) for script in scripts)


def walked_imports(source: str) -> list[str]:
    """The oracle: every import node of the whole module (`ast.walk`), under the same rules."""
    modules = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names
                        if alias.name.startswith("storyeval") and alias.name not in NOT_COMPUTATION]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.startswith("storyeval"):
            modules += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names
                                        if module_file(f"{node.module}.{alias.name}") is not None]
    return sorted(modules)


def test_reading_only_the_import_statements_finds_what_parsing_every_module_finds():
    sources = [*PACKAGE.rglob("*.py"), *(REPO / "workflow" / "scripts").glob("*.py")]
    assert len(sources) > 150
    for path in sources:
        source = path.read_text(encoding="utf-8")
        assert sorted(storyeval_imports(source)) == walked_imports(source), path


def test_continued_commented_and_quoted_imports():
    continued = ("import numpy, storyeval.errors\nfrom storyeval.io \\\n    import write_csv\n"
                 "from storyeval.neural import (\n    ot,\n    parallel,\n)\n")
    found = ["storyeval.errors", "storyeval.io", "storyeval.neural", "storyeval.neural.ot", "storyeval.neural.parallel"]
    assert sorted(storyeval_imports(continued)) == found
    # a ")" in a comment cuts the pattern's statement short, prose can start with "import", and an import can
    # follow a colon: the whole module is parsed instead
    for changed in (continued.replace("    ot,\n", "    ot,  # the (optimal) transport\n"),
                    '"""A module.\n\nimport storyeval is how it starts.\n"""\n' + continued,
                    continued.replace("import numpy, storyeval.errors", "try: import storyeval.errors\nfinally: pass")):
        assert sorted(storyeval_imports(changed)) == found
    quoted = 'def f():\n    """Use it as:\n\n    from storyeval.stats import williams\n    """\n'
    assert storyeval_imports(quoted) == ["storyeval.stats", "storyeval.stats.williams"]  # a trigger too many
    assert storyeval_imports(quoted.replace("stats import williams", "nowhere import x")) == []
