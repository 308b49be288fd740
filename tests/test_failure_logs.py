"""A failed job explains itself: its exception and traceback are in the rule's log, one line on the console."""

import subprocess
import sys

from conftest import REPO
from workflow_helpers import make_workdir, run_snakemake


def test_script_failure_lands_in_its_log(tmp_path):
    log = tmp_path / "job.log"
    script = (
        f"import sys; sys.path.insert(0, {str(REPO / 'src')!r})\n"
        "from storyeval.io import log_to\nfrom storyeval.errors import InputError\n"
        f"log = log_to({str(log)!r})\nlog.info('started')\n"
        "def inner():\n    raise InputError('scores.csv: column chrF holds inf; fix: restore the file')\ninner()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 1
    text = log.read_text()
    assert "started" in text and "Traceback" in text and "in inner" in text
    assert "InputError: scores.csv: column chrF holds inf; fix: restore the file" in text
    console = result.stderr.strip().splitlines()
    assert console == [f"storyeval: scores.csv: column chrF holds inf; fix: restore the file (traceback in {log})"]


def test_unexpected_error_is_named_on_the_console(tmp_path):
    log = tmp_path / "job.log"
    script = (
        f"import sys; sys.path.insert(0, {str(REPO / 'src')!r})\n"
        f"from storyeval.io import log_to\nlog_to({str(log)!r})\n{{}}['missing']\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 1
    assert "KeyError: 'missing'" in log.read_text() and "Traceback" in log.read_text()
    assert result.stderr.strip() == f"storyeval: KeyError: 'missing' (traceback in {log})"


def test_failed_workflow_job_leaves_its_traceback_in_the_rule_log(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path, datasets={}, **{"storyer_evaluator.reasons.datasets": []})
    damaged = workdir / "results/hanna/released/correlations.csv"
    damaged.parent.mkdir(parents=True)
    damaged.write_text("kind,level\nmetric_criterion,story\n")  # lacks the columns rankings reads
    result = run_snakemake(
        workdir,
        "--cores",
        "1",
        "--allowed-rules",
        "normalise_hanna",
        "fetch",
        "rankings",
        "confounds",
        "judge_scores",
        "design_answer",  # answer.csv: its design level (Tab. 5, 6) beside the papers'
        "--",
        "results/hanna/released/borda.csv",
    )
    assert result.returncode != 0
    log = (workdir / "logs/rankings/hanna/released.log").read_text()
    assert "Traceback" in log and "InputError" in log and "missing column(s)" in log
    assert "missing column(s)" in result.stderr and "traceback in logs/rankings/hanna/released.log" in result.stderr
    assert not (workdir / "results/hanna/released/borda.csv").exists()


def test_a_crash_leaves_the_python_stack_in_the_log(tmp_path):
    log = tmp_path / "job.log"
    script = (
        f"import sys; sys.path.insert(0, {str(REPO / 'src')!r})\n"
        f"from storyeval.io import log_to\nlog_to({str(log)!r})\n"
        "import ctypes\ndef crash():\n    ctypes.string_at(0)\ncrash()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode != 0
    text = log.read_text()
    assert "Fatal Python error: Segmentation fault" in text and "in crash" in text
