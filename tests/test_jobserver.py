"""The job server (storyeval.workflow.jobserver): a job handed off runs in a fork of the server that already holds
the modules its script imports, with the job's streams, directory and environment, and ends with the job's status;
a job whose process is killed takes its child with it; without a server the script runs in its own process."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from storyeval.workflow import jobserver

from conftest import REPO

HANDOFF_LINE = "import storyeval.workflow.handoff  # noqa: F401\n"
TORCH_HANDOFF_LINE = "import storyeval.workflow.handoff_torch  # noqa: F401\n"


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A server for scripts in tmp_path/scripts (one that imports storyeval.grading at its top)."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    # a module that sets a variable at import, for a library it loads later (as storyeval.learned.embed: MKL's)
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "sets_at_import.py").write_text("import os\nos.environ.setdefault('STORYEVAL_SET_AT_IMPORT', 'yes')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(modules), os.environ.get("PYTHONPATH", "")]))
    (scripts / "grade.py").write_text(HANDOFF_LINE + "import sets_at_import\nfrom storyeval.grading import decimals\n")
    (scripts / "alone.py").write_text("import storyeval.audit\n")  # no hand-off: not preloaded
    monkeypatch.delenv(jobserver.OPT_OUT, raising=False)
    # recorded as unset (delenv alone records nothing where it is unset): a test's own setenv of the address is
    # then undone to unset, not to this server's address, after stop() below
    monkeypatch.setenv(jobserver.ADDRESS, "")
    monkeypatch.delenv(jobserver.ADDRESS)
    monkeypatch.setattr(jobserver, "_servers", {})
    jobserver.start(scripts, local=True, job_scripts=["../scripts/grade.py"] * jobserver.MIN_JOBS)
    assert os.environ.get(jobserver.ADDRESS)
    yield scripts
    jobserver.stop()


def job(tmp_path: Path, body: str, threads: int = 1, handoff: str = HANDOFF_LINE) -> types.SimpleNamespace:
    """A job's `__main__` as Snakemake's copy of a script makes it: its `snakemake` object and the copy's path."""
    script = tmp_path / "snakemake_copy.py"
    script.write_text(handoff + textwrap.dedent(body))
    snakemake = types.SimpleNamespace(threads=threads, rule="r", wildcards={"dataset": "d"})
    return types.SimpleNamespace(snakemake=snakemake, __real_file__=str(script))


def test_the_server_preloads_the_imports_of_the_scripts_that_hand_off(tmp_path):
    (tmp_path / "a.py").write_text('"""doc"""\n' + HANDOFF_LINE + "import json\nfrom storyeval.io import log_to\n"
                                   "def f():\n    import yaml\n")
    (tmp_path / "b.py").write_text("import torch\n")
    assert jobserver.handoff_imports(tmp_path) == ["json", "storyeval.io", "storyeval.io.log_to"]


def test_a_job_runs_in_a_fork_that_holds_its_modules_with_its_streams_directory_and_environment(
        server, tmp_path, monkeypatch, capfd):
    out = tmp_path / "out.txt"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STORYEVAL_TEST_VALUE", "planted")
    main = job(tmp_path, f"""
        import os, sys
        print("to stdout"); print("to stderr", file=sys.stderr)
        open({str(out)!r}, "w").write(" ".join([
            str("storyeval.grading" in sys.modules), str("storyeval.audit" in sys.modules), os.getcwd(),
            os.environ["STORYEVAL_TEST_VALUE"], str(os.environ.get({jobserver.ADDRESS!r})), __name__,
            str(os.getppid() != {os.getpid()}), os.environ.get("STORYEVAL_SET_AT_IMPORT", "unset")]))
        """)
    accounts = tmp_path / "accounts.tsv"
    monkeypatch.setenv(jobserver.ACCOUNTING, str(accounts))
    assert jobserver.hand_off(main) == 0
    assert out.read_text().split() == ["True", "False", str(tmp_path), "planted", "None", "__main__", "True", "yes"]
    captured = capfd.readouterr()
    assert "to stdout" in captured.out and "to stderr" in captured.err
    rule, wildcards, child_cpu, own_cpu = accounts.read_text().split("\t")
    assert (rule, wildcards) == ("r", "dataset=d") and float(child_cpu) >= 0 and float(own_cpu) > 0


def test_exit_statuses_and_failures_are_the_jobs(server, tmp_path, capfd):
    assert jobserver.hand_off(job(tmp_path, "import sys; sys.exit(3)")) == 3
    assert jobserver.hand_off(job(tmp_path, "raise ValueError('planted failure')")) == 1
    assert "ValueError: planted failure" in capfd.readouterr().err


def test_a_job_with_more_threads_or_without_a_server_runs_in_its_own_process(server, tmp_path, monkeypatch):
    assert jobserver.hand_off(job(tmp_path, "", threads=2)) is None
    monkeypatch.delenv(jobserver.ADDRESS)
    assert jobserver.hand_off(job(tmp_path, "")) is None
    monkeypatch.setenv(jobserver.ADDRESS, str(tmp_path / "no-server.sock"))
    assert jobserver.hand_off(job(tmp_path, "")) is None


def test_opting_out_a_cluster_or_too_few_jobs_start_no_server(tmp_path, monkeypatch):
    (tmp_path / "grade.py").write_text(HANDOFF_LINE)
    (tmp_path / "alone.py").write_text("import json\n")
    monkeypatch.setattr(jobserver, "_servers", {})
    monkeypatch.delenv(jobserver.ADDRESS, raising=False)
    monkeypatch.delenv(jobserver.OPT_OUT, raising=False)
    enough = ["../scripts/grade.py"] * jobserver.MIN_JOBS
    few = enough[1:] + ["../scripts/alone.py", None]
    assert jobserver.handing_off(tmp_path, enough) == jobserver.MIN_JOBS
    assert jobserver.handing_off(tmp_path, few) == jobserver.MIN_JOBS - 1
    jobserver.start(tmp_path, local=True, job_scripts=few)
    jobserver.start(tmp_path, local=False, job_scripts=enough)
    monkeypatch.setenv(jobserver.OPT_OUT, "1")
    jobserver.start(tmp_path, local=True, job_scripts=enough)
    assert jobserver._servers == {} and jobserver.ADDRESS not in os.environ


def test_torch_jobs_run_in_forks_of_a_server_that_holds_torch(tmp_path, monkeypatch):
    """Scripts that import storyeval.workflow.handoff_torch go to a server of their own, which imported torch and
    transformers' model classes: only where torch may fork (the CPU) and two such jobs make it worth its start."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "encode.py").write_text(TORCH_HANDOFF_LINE + "import torch\n")
    monkeypatch.setattr(jobserver, "_servers", {})
    monkeypatch.delenv(jobserver.OPT_OUT, raising=False)
    for pool in jobserver.POOLS.values():
        monkeypatch.delenv(pool.address, raising=False)
    two = ["../scripts/encode.py"] * jobserver.TORCH.min_jobs
    jobserver.start(scripts, local=True, job_scripts=two[1:], torch_jobs=True)
    jobserver.start(scripts, local=True, job_scripts=two, torch_jobs=False)
    assert jobserver._servers == {}
    jobserver.start(scripts, local=True, job_scripts=two, torch_jobs=True)
    try:
        assert set(jobserver._servers) == {"torch"} and jobserver.ADDRESS not in os.environ
        out = tmp_path / "out.txt"
        main = job(tmp_path, f"""
            import sys
            held = [name in sys.modules for name in ("torch", "transformers.models.bert.modeling_bert")]
            import torch
            open({str(out)!r}, "w").write(" ".join(map(str, [*held, torch.ones(2).sum().item()])))
            """, handoff=TORCH_HANDOFF_LINE)
        assert jobserver.hand_off(main, jobserver.TORCH) == 0
        assert out.read_text().split() == ["True", "True", "2.0"]
    finally:
        jobserver.stop()
    assert jobserver._servers == {} and jobserver.TORCH.address not in os.environ


def test_the_torch_server_leaves_mkls_reproducible_mode_to_the_jobs_that_set_it():
    """StoryER's modules set MKL_CBWR at import; preloaded, every torch child would run MKL in strict mode and the
    embedding pass, which runs without it alone, would cache other last bits. The real scripts' preload."""
    probe = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from storyeval.workflow import jobserver
        scripts = Path({str(REPO / "workflow/scripts")!r})
        env = jobserver.preload(jobserver.handoff_imports(scripts, jobserver.TORCH.handoff), jobserver.TORCH)
        print(json.dumps([sorted(env), "torch" in sys.modules, "storyeval.learned.embed" in sys.modules]))
    """)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                            env={key: value for key, value in os.environ.items() if key != "MKL_CBWR"})
    assert result.returncode == 0, result.stderr
    env, has_torch, has_embed = json.loads(result.stdout.splitlines()[-1])
    assert has_torch and not has_embed and "MKL_CBWR" not in env


def test_torch_forks_only_on_the_cpu():
    assert jobserver.torch_forks_safely("cpu")
    assert not jobserver.torch_forks_safely("cuda") and not jobserver.torch_forks_safely("cuda:1")
    assert jobserver.torch_forks_safely("auto") == (not any(Path(node).exists() for node in ("/dev/nvidiactl",
                                                                                            "/dev/kfd")))


CLIENT = """
import sys, types
from storyeval.workflow import jobserver
main = types.SimpleNamespace(snakemake=types.SimpleNamespace(threads=1, rule="r", wildcards={}),
                             __real_file__=sys.argv[1])
sys.exit(jobserver.hand_off(main))
"""


def client(tmp_path: Path, body: str) -> subprocess.Popen:
    script = tmp_path / "snakemake_copy.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.Popen([sys.executable, "-c", CLIENT, str(script)], stderr=subprocess.PIPE, text=True)


def wait_for(path: Path) -> str:
    for _ in range(500):
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def test_a_child_killed_by_a_signal_ends_its_job_the_same_way(server, tmp_path):
    process = client(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert process.wait(timeout=60) == -signal.SIGKILL, process.stderr.read()


def test_killing_a_job_kills_its_child(server, tmp_path):
    pid_file = tmp_path / "pid"
    process = client(tmp_path, f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
                               "time.sleep(300)")
    child = int(wait_for(pid_file))
    process.kill()
    process.wait()
    assert ends(child), "the child outlived its job"


def ends(pid: int, seconds: float = 10) -> bool:
    """Whether process `pid` is gone (its parent reaped it) within `seconds`."""
    for _ in range(int(seconds / 0.02)):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def test_stopping_the_server_removes_its_socket(server):
    address = Path(os.environ[jobserver.ADDRESS])
    jobserver.stop()
    assert not address.exists() and not address.parent.exists() and jobserver.ADDRESS not in os.environ


def test_a_server_stopped_as_soon_as_it_binds_removes_its_socket(tmp_path):
    """start() returns once the socket exists, so stop()'s SIGTERM can come while the server is still being built:
    the socket and its folder go all the same."""
    address = tmp_path / "folder" / jobserver.SOCKET_NAME
    address.parent.mkdir()
    stopped_after_bind = textwrap.dedent(f"""
        import os, signal
        from storyeval.workflow import jobserver
        built = jobserver.Server.__init__
        def init(self, address):
            built(self, address)
            os.kill(os.getpid(), signal.SIGTERM)
        jobserver.Server.__init__ = init
        jobserver.main([{str(address)!r}, {str(tmp_path)!r}])
    """)
    result = subprocess.run([sys.executable, "-c", stopped_after_bind], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert not address.exists() and not address.parent.exists()


def test_a_program_runs_with_its_arguments_and_is_ended_after_its_timeout(server, tmp_path):
    """`submit`: any Python file as a program, with its sys.argv and the caller's descriptors for its streams (the
    tests' Snakemake runs, tests/snakemake_server.py); past its timeout the server ends it."""
    program, pid = tmp_path / "program.py", tmp_path / "pid"
    program.write_text(f"import os, sys, time\nprint(sys.argv[1:])\nif sys.argv[1] == 'wait':\n"
                       f"    open({str(pid)!r}, 'w').write(str(os.getpid()))\n    time.sleep(60)\n")
    address = os.environ[jobserver.ADDRESS]
    with open(tmp_path / "out", "w+") as out, open(os.devnull) as nothing:
        streams = (nothing.fileno(), out.fileno(), out.fileno())
        status, _ = jobserver.submit(jobserver.connect(address), str(program), [str(program), "a", "b c"],
                                     str(tmp_path), dict(os.environ), streams)
        assert status == 0 and (tmp_path / "out").read_text() == "['a', 'b c']\n"
        with pytest.raises(TimeoutError):
            jobserver.submit(jobserver.connect(address), str(program), [str(program), "wait"], str(tmp_path),
                             dict(os.environ), streams, timeout=2)
    assert ends(int(wait_for(pid))), "the program outlived its timeout"  # the server ended and reaped it
