"""The rerun triggers of the workflow's rules (`storyeval.sources`): every storyeval module a script or module
imports, directly, through another, inside a function, or as `from <package> import <module>`."""

from storyeval.sources import module_sources, storyeval_imports


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
