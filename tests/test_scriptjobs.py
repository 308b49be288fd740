"""Script jobs that Snakemake sends to the job server itself (storyeval.workflow.scriptjobs): the child runs
Snakemake's copy of the script with the environment Snakemake's shell would have given it, a failure is the
shell's CalledProcessError, a benchmark samples the child, and every job the hand-off would not take goes to the
shell."""

import os
import subprocess
import types

import pytest
from snakemake.benchmark import BenchmarkRecord
from test_jobserver import HANDOFF_LINE, TORCH_HANDOFF_LINE, server  # noqa: F401 (the fixture)

from storyeval.workflow import jobserver, scriptjobs


def script_job(tmp_path, body: str, **settings) -> tuple[types.SimpleNamespace, str]:
    """A snakemake.script.PythonScript as Snakemake builds it for a job, and the path of its copy of the script."""
    source = HANDOFF_LINE + body
    copy = tmp_path / "copy.py"
    copy.write_text(source)
    job = dict(source=source, threads=1, conda_env=None, container_img=None, env_modules=None, shadow_dir=None,
               resources={"tmpdir": str(tmp_path / "job-tmp")}, bench_record=None, rulename="r",
               wildcards={"dataset": "d"})
    return types.SimpleNamespace(**{**job, **settings}), str(copy)


def test_the_first_import_names_the_server():
    assert scriptjobs.handoff_pool('"""doc"""\n' + HANDOFF_LINE + "import pandas\n") is jobserver.LIGHT
    assert scriptjobs.handoff_pool(TORCH_HANDOFF_LINE + "import torch\n") is jobserver.TORCH
    assert scriptjobs.handoff_pool("import json\n" + HANDOFF_LINE) is None  # not first: the script does not hand off
    assert scriptjobs.handoff_pool("from os import path\n") is None
    assert scriptjobs.handoff_pool("print(1)\n") is None


@pytest.mark.usefixtures("server")
def test_a_job_runs_in_the_server_with_the_environment_of_snakemakes_shell(tmp_path, monkeypatch, capfd):
    out, accounts = tmp_path / "out.txt", tmp_path / "accounts.tsv"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(jobserver.ACCOUNTING, str(accounts))
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    job, copy = script_job(tmp_path, f"""
import os, sys
print("to stdout"); print("to stderr", file=sys.stderr)
names = ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "TMPDIR", "TEMP", {jobserver.ADDRESS!r}]
open({str(out)!r}, "w").write(" ".join([*(str(os.environ.get(name)) for name in names), os.getcwd(),
                                        str("storyeval.grading" in sys.modules), str(os.getppid() != {os.getpid()})]))
""")
    assert scriptjobs.run_in_server(job, copy)
    tmpdir = str(tmp_path / "job-tmp")
    assert out.read_text().split() == ["1", "1", tmpdir, tmpdir, "None", str(tmp_path), "True", "True"]
    captured = capfd.readouterr()
    assert "to stdout" in captured.out and "to stderr" in captured.err
    rule, wildcards, child_cpu, own_cpu = accounts.read_text().split("\t")
    assert (rule, wildcards, float(own_cpu)) == ("r", "dataset=d", 0.0) and float(child_cpu) > 0


@pytest.mark.usefixtures("server")
def test_a_failure_is_the_shells_error_and_a_benchmark_samples_the_child(tmp_path, monkeypatch):
    job, copy = script_job(tmp_path, "import sys; sys.exit(3)")
    with pytest.raises(subprocess.CalledProcessError) as failed:
        scriptjobs.run_in_server(job, copy)
    assert failed.value.returncode == 3 and copy in failed.value.cmd
    pid_file = tmp_path / "pid"
    job, copy = script_job(tmp_path, f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                     "time.sleep(0.2)\n", bench_record=BenchmarkRecord())
    watched = []
    real_sampled = scriptjobs.sampled
    monkeypatch.setattr(scriptjobs, "sampled", lambda pid, record: (watched.append(pid), real_sampled(pid, record))[1])
    assert scriptjobs.run_in_server(job, copy)
    assert watched == [int(pid_file.read_text())]
    assert job.bench_record.max_rss > 0 and job.bench_record.running_time > 0


def test_a_child_gone_before_its_first_sample_leaves_its_running_time():
    record = BenchmarkRecord()
    gone = subprocess.Popen(["true"])
    gone.wait()
    with scriptjobs.sampled(gone.pid, record):
        pass
    assert record.running_time is not None and record.max_rss is None


@pytest.mark.usefixtures("server")
def test_jobs_the_hand_off_would_not_take_go_to_the_shell(tmp_path, monkeypatch):
    for settings in [dict(threads=2), dict(conda_env="envs/core.yaml"), dict(container_img="image.sif"),
                     dict(shadow_dir="shadow"), dict(source="import json\n")]:
        job, copy = script_job(tmp_path, "raise SystemExit(5)\n", **settings)
        assert not scriptjobs.run_in_server(job, copy), settings
    monkeypatch.setenv(jobserver.ADDRESS, str(tmp_path / "no-server.sock"))
    assert not scriptjobs.run_in_server(*script_job(tmp_path, ""))
    monkeypatch.delenv(jobserver.ADDRESS)
    assert not scriptjobs.run_in_server(*script_job(tmp_path, ""))


def test_snakemakes_script_jobs_are_submitted_once_installed(monkeypatch):
    from snakemake.script import PythonScript

    monkeypatch.setattr(PythonScript, "execute_script", PythonScript.execute_script)  # restored after
    assert scriptjobs.submit_script_jobs() and scriptjobs.submit_script_jobs()
    assert PythonScript.execute_script.runs_in_server
    assert os.environ.get(jobserver.ADDRESS) is None  # no server here: every job goes to the shell
