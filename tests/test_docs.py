"""Docs that run: every shell and Python snippet of README.md and docs/ is executed here, in a scratch copy of
the repository, or carries a marker that says why not (`<!-- not run: ... -->`) or which test runs it
(`<!-- run by: ... -->`) on the line before its fence. Workflow and make commands run as dry runs (`-n`): the
command line, its targets and the DAG are checked, the minutes of work are `make reproduce`'s."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

import snakemake_server
from conftest import REPO, SHARED
from workflow_helpers import copy_checkout

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"(?:^<!-- (?P<marker>[^>]*) -->\n)?^```(?P<language>\w*)\n(?P<code>.*?)^```", re.S | re.M)
SHELL, PYTHON = ("bash", "sh", "shell", "console"), ("python", "py")
BIN = Path(sys.executable).parent


def snippets(language: tuple[str, ...]) -> list[tuple[str, str | None, str]]:
    """(page:line, marker, code) of every fenced block in `language`."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match["language"] in language:
                where = f"{page.relative_to(REPO)}:{text[:match.start('code')].count(chr(10))}"
                found.append((where, match["marker"], match["code"]))
    return found


def runnable(language):
    return [pytest.param(code, id=where) for where, marker, code in snippets(language) if marker is None]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """The tracked files of the repository, with the data mirror beside them where this machine has one."""
    root = tmp_path_factory.mktemp("docs")
    copy_checkout(root / "repo")
    if SHARED.is_dir():
        (root / "shared").symlink_to(SHARED)
    return root / "repo"


def environment(scratch: Path) -> dict:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(scratch / "src"),
                MPLBACKEND="Agg")


def test_every_snippet_runs_or_says_why_not():
    for where, marker, _ in snippets(SHELL + PYTHON):
        assert marker is None or re.match(r"(not run: \S.{10,}|run by: test_\w+)$", marker), (where, marker)
    assert len(runnable(SHELL)) >= 5 and len(runnable(PYTHON)) >= 3


@pytest.mark.parametrize("code", runnable(PYTHON))
def test_python_snippet_runs(code, scratch):
    result = subprocess.run([sys.executable, "-c", code], cwd=scratch, env=environment(scratch),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]


def dry_run(line: str) -> list[str] | None:
    """A documented command as a dry run: snakemake and make with -n (placeholder N cores: 1); None: a comment."""
    words = shlex.split(line, comments=True)
    if not words:
        return None
    words = ["1" if word == "N" else word for word in words]
    if words[0] == "snakemake":
        return [str(BIN / "snakemake"), "-n", *words[1:]]
    if words[0] == "make":
        return ["make", "-n", *words[1:]]
    return words


@pytest.mark.parametrize("code", runnable(SHELL))
def test_shell_snippet_runs(code, scratch):
    for line in code.splitlines():
        command = dry_run(line)
        if command is None:
            continue
        env = environment(scratch)
        if Path(command[0]).name == "snakemake":  # as in a user's checkout: the Snakefile finds its package itself
            del env["PYTHONPATH"]
        result = snakemake_server.run(command, scratch, env, timeout=600)
        assert result.returncode == 0, (line, (result.stdout + result.stderr)[-3000:])


def test_adding_a_metric_as_contributing_says(scratch, tmp_path):
    """docs/contributing.md, "Adding a metric": its module and its test, and nothing else, give a metric that
    its test passes and the workflow correlates with the example dataset's criteria."""
    section = (REPO / "docs/contributing.md").read_text(encoding="utf-8").split("## Adding a metric")[1]
    module, test = [match["code"] for match in FENCE.finditer(section.split("\n## ")[0])][:2]
    (scratch / "src/storyeval/metrics/wordcount.py").write_text(module)
    (scratch / "tests/test_metrics_wordcount.py").write_text(test)
    env = environment(scratch)
    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                             "tests/test_metrics_wordcount.py", "tests/test_metrics_catalog.py"], cwd=scratch,
                            env=env, capture_output=True, text=True, timeout=600)
    assert tested.returncode == 0, tested.stdout[-3000:]
    example = yaml.safe_load((scratch / "config/examples/wide.yaml").read_text())
    example["datasets"]["example"]["metrics"] = ["wordcount", "chrf"]
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(example))
    target = "results/example/computed/correlations.csv"
    result = subprocess.run([str(BIN / "snakemake"), "--cores", "2", "--configfile", str(tmp_path / "run.yaml"),
                             "--", target], cwd=scratch, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    table = pd.read_csv(scratch / target)
    rows = table[(table["kind"] == "metric_criterion") & (table["x"] == "word-count")]
    assert set(rows["y"]) == {"Fluency", "Plot", "Delight"} and rows["r"].notna().all()
    assert (rows.query("coefficient == 'pearson' and level == 'system'")["r"] > 0.5).all()  # the planted length


def test_adding_a_dataset_as_contributing_says(scratch, tmp_path):
    """docs/contributing.md, "Adding a dataset": its data, module and test, and one config entry, give a dataset
    kind whose test passes and whose stories the workflow scores and correlates with its criterion."""
    section = (REPO / "docs/contributing.md").read_text(encoding="utf-8").split("## Adding a dataset")[1]
    blocks = {match["language"]: match["code"] for match in FENCE.finditer(section.split("\n## ")[0])}
    data, module, test = [match["code"] for match in FENCE.finditer(section.split("\n## ")[0])
                          if match["language"] == "python"][:3]
    env = environment(scratch)
    written = subprocess.run([sys.executable, "-c", data], cwd=scratch, env=env, capture_output=True, text=True)
    assert written.returncode == 0, written.stderr[-3000:]
    (scratch / "src/storyeval/datasets/fables.py").write_text(module)
    (scratch / "tests/test_dataset_fables.py").write_text(test)
    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                             "tests/test_dataset_fables.py"], cwd=scratch, env=env, capture_output=True, text=True,
                            timeout=600)
    assert tested.returncode == 0, tested.stdout[-3000:]
    (scratch / "fables.yaml").write_text(blocks["yaml"])
    target = "results/fables/computed/correlations.csv"
    result = subprocess.run([str(BIN / "snakemake"), "--cores", "2", "--configfile", "fables.yaml", "--", target],
                            cwd=scratch, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (scratch / "resources/fables/fables.jsonl").is_file()  # fetched from the mirror, its sha256 checked
    table = pd.read_csv(scratch / target)
    rows = table[(table["kind"] == "metric_criterion") & (table["y"] == "Moral") & (table["coefficient"] == "pearson")]
    assert rows.set_index("x").loc["text-length", "r"] > 0.9  # the planted length
