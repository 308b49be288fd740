"""The Makefile: only `make env` (and the first build of a fresh machine) installs; the others check."""

import os
import shutil
import subprocess

from conftest import REPO


def scratch_with(tmp_path, environment: bool):
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy2(REPO / name, tmp_path / name)
    (tmp_path / "tools").mkdir()
    shutil.copy2(REPO / "tools/install_wordnet.sh", tmp_path / "tools")
    if environment:
        (tmp_path / ".venv/bin").mkdir(parents=True)
        for tool in ("snakemake", "python", "ruff", "snakefmt"):
            (tmp_path / ".venv/bin" / tool).write_text("#!/bin/sh\nexit 0\n")
            (tmp_path / ".venv/bin" / tool).chmod(0o755)
        stamp = tmp_path / ".venv/.storyeval-env"
        stamp.touch()
        os.utime(stamp, (1, 1))  # older than requirements.txt: an environment another checkout built
    return tmp_path


def make(tmp_path, *targets, dry=True):
    return subprocess.run(["make", *(["-n"] if dry else []), *targets], cwd=tmp_path, capture_output=True, text=True)


def test_an_existing_environment_is_never_reinstalled(tmp_path):
    scratch = scratch_with(tmp_path, environment=True)
    planned = make(scratch, "lint", "test", "test-slow", "report", "reproduce", "bench")
    assert planned.returncode == 0 and "pip install" not in planned.stdout, planned.stdout
    said = make(scratch, "lint", dry=False)
    assert said.returncode == 0 and "older than requirements.txt or pyproject.toml; run make env" in said.stdout
    assert "pip install" in make(scratch, "env").stdout  # make env is the one that installs


def test_without_an_environment_lint_says_run_make_env_and_test_builds_it(tmp_path):
    scratch = scratch_with(tmp_path, environment=False)
    refused = make(scratch, "lint", dry=False)
    assert refused.returncode != 0 and "no environment in .venv; run make env" in refused.stdout
    assert "make env" in make(scratch, "test").stdout  # a fresh machine: the first build
