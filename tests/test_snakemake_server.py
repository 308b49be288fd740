"""The tests' Snakemake runs in forks of a server (tests/snakemake_server.py) give what new processes give."""

from __future__ import annotations

import os
import subprocess

import pytest

import snakemake_server
from workflow_helpers import SNAKEMAKE


def both(command: list[str], cwd, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, ...]:
    forked = snakemake_server.run(command, cwd, env, timeout=300)
    new = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return forked, new


@pytest.mark.parametrize("arguments", [
    ["--version"],
    ["-n", "--cores", "1"],  # no Snakefile here: Snakemake's own error
])
def test_a_forked_run_gives_a_new_processs_status_and_output(tmp_path, arguments):
    assert snakemake_server.forks([SNAKEMAKE], dict(os.environ))
    forked, new = both([SNAKEMAKE, *arguments], tmp_path, dict(os.environ))
    assert (forked.returncode, forked.stdout, forked.stderr) == (new.returncode, new.stdout, new.stderr)


def test_a_run_sees_its_own_directory_environment_and_package_checkout(tmp_path):
    """A Snakefile that imports a package `storyeval` of its own checkout gets that one, not the server's."""
    (tmp_path / "src/storyeval").mkdir(parents=True)
    (tmp_path / "src/storyeval/__init__.py").write_text("WHERE = 'this checkout'\n")
    (tmp_path / "Snakefile").write_text(
        "import os, sys\nsys.path.insert(0, os.path.join(workflow.basedir, 'src'))\nimport storyeval\n"
        "print(storyeval.WHERE, os.getcwd(), os.environ['PLANTED'])\n"
        "rule all:\n    output: 'out.txt'\n    shell: 'touch {output}'\n")
    forked, new = both([SNAKEMAKE, "-n", "--cores", "1"], tmp_path, dict(os.environ, PLANTED="planted value"))
    assert forked.returncode == new.returncode == 0, forked.stderr
    said = f"this checkout {tmp_path} planted value"  # the rest of a dry run's output has its time and run id
    assert forked.stdout.splitlines()[0] == new.stdout.splitlines()[0] == said


def test_only_this_environments_snakemake_with_the_servers_interpreter_settings_forks():
    env = dict(os.environ)
    assert not snakemake_server.forks(["make", "-n"], env)
    assert not snakemake_server.forks([SNAKEMAKE], dict(env, PYTHONPATH="/elsewhere"))
    assert not snakemake_server.forks([SNAKEMAKE], dict(env, PYTHONHASHSEED="3"))
