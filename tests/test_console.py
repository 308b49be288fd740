"""A quiet console: start-up notes once per run, the same in its dry run (none on --lint: tests/test_workflow.py),
no "Shell command: None"."""

from conftest import REPO
from workflow_helpers import make_workdir, run_snakemake


def storyeval_lines(result):
    return [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("storyeval:")]


def test_a_run_says_its_notes_once_and_no_empty_shell_commands(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path)
    result = run_snakemake(
        workdir,
        "--workflow-profile",
        str(REPO / "profiles/default"),
        "--cores",
        "1",
        "results/hanna/released/metrics.csv",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = storyeval_lines(result)
    # The raw annotations skipped, once; the metrics left out of hanna-llm (a model role without a model) are not
    # this run's: no job of hanna-llm is in its DAG (tests/test_metric_selection.py hears them where one is).
    assert len(lines) == len(set(lines)) and any("raw-annotation outputs" in line for line in lines), lines
    assert not [line for line in lines if "hanna-llm" in line], lines
    assert "Shell command" not in result.stdout + result.stderr
    planned = run_snakemake(workdir, "-n", "--forceall", "results/hanna/released/metrics.csv")
    assert planned.returncode == 0 and storyeval_lines(planned) == lines, storyeval_lines(planned)
