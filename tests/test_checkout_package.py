"""Jobs import the package of the checkout whose Snakefile runs, not the one `pip install -e` put on the path."""

import subprocess

from workflow_helpers import SNAKEMAKE, copy_checkout, make_workdir


def test_jobs_import_the_checkouts_own_package(tmp_path, hanna_mirror):
    checkout = copy_checkout(tmp_path / "checkout")
    marker = "this checkout's storyeval.stats.icc was imported"
    with (checkout / "src/storyeval/stats/icc.py").open("a") as module:  # only the icc job imports it
        module.write(f"\nraise ImportError({marker!r})\n")
    workdir = make_workdir(tmp_path / "run")
    result = subprocess.run([SNAKEMAKE, "-s", str(checkout / "Snakefile"), "--directory", str(workdir), "--cores", "1",
                             "--workflow-profile", "none", "results/hanna/released/icc.csv"],
                            cwd=workdir, capture_output=True, text=True, timeout=600)
    assert result.returncode != 0 and marker in result.stdout + result.stderr, result.stderr[-1500:]
    # The job failed while importing, before its script's log_to: its log holds the traceback all the same.
    log = (workdir / "logs/icc/hanna/released.log").read_text()
    assert "Traceback" in log and marker in log, log
