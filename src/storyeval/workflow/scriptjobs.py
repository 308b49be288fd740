"""Script jobs sent to the job server by Snakemake itself (the Snakefile's `onstart`).

A script job that hands off (storyeval.workflow.handoff) still costs a shell and an interpreter: Snakemake's thread
for the job starts `python <Snakemake's copy of the script>`, whose preamble unpickles the `snakemake` object and
whose first import connects to the server and waits (0.07-0.09 CPU-s a job, 34 of the default run's ~950). Where a
server runs, that thread now submits the same copy to the server itself, with the environment the shell would
have given the job (its threads' variables, its tmpdir), Snakemake's own streams and directory, and waits for the
child's status as it waited for the shell's: a failure is the same CalledProcessError, and a `benchmark:` samples
the child itself, where it sampled the waiting hand-off before.

Jobs the hand-off would not take (more than one thread, no server) and jobs Snakemake runs in an environment of
its own (conda, a container, environment modules, a shadow directory) go through Snakemake's shell as before; so
does every job where this Snakemake lacks the method replaced here (its scripts then hand off from their own
interpreters).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
import time
from functools import lru_cache

from storyeval.workflow import jobserver

# What Snakemake's shell sets for a job (snakemake/shell.py): its threads for the BLAS libraries, its tmpdir.
TMPDIR_VARIABLES = ("TMPDIR", "TMP", "TEMPDIR", "TEMP")


def submit_script_jobs() -> bool:
    """Replace how Snakemake runs a Python script job with `run_in_server` where it applies (once per process);
    whether it is in place."""
    try:
        from snakemake.script import PythonScript
    except ImportError:
        return False
    shell_run = getattr(PythonScript, "execute_script", None)
    if shell_run is None:
        return False
    if getattr(shell_run, "runs_in_server", False):
        return True

    def execute_script(self, fname, edit=False):
        if edit or not run_in_server(self, fname):
            shell_run(self, fname, edit)

    execute_script.runs_in_server = True
    PythonScript.execute_script = execute_script
    return True


@lru_cache(maxsize=256)
def handoff_pool(source: str) -> jobserver.Pool | None:
    """The server a script's first import hands it to (its hand-off module), or None."""
    first = jobserver.source_imports(source)[:1]
    return next((pool for pool in jobserver.POOLS.values() if first == [pool.handoff]), None)


def job_environment(threads: int, tmpdir: str | None) -> dict[str, str]:
    """The environment Snakemake's shell gives a job: Snakemake's own, its threads for the BLAS libraries (the
    variables of jobserver.ONE_THREAD), its tmpdir resource."""
    env = dict(os.environ, **dict.fromkeys(jobserver.ONE_THREAD, str(threads)))
    if tmpdir:
        env.update(dict.fromkeys(TMPDIR_VARIABLES, str(tmpdir)))
    return env


def run_in_server(script, fname: str) -> bool:
    """Run Snakemake's copy `fname` of a script job (a snakemake.script.PythonScript) in the server its first
    import names; False where this does not apply (module docstring) and the shell should run it."""
    pool = handoff_pool(script.source)
    address = pool and os.environ.get(pool.address)
    own_environment = script.conda_env or script.container_img or script.env_modules or script.shadow_dir
    if not address or script.threads != 1 or own_environment:
        return False
    client = jobserver.connect(address)
    if client is None:
        return False
    from snakemake.exceptions import WorkflowError

    sys.stdout.flush()
    sys.stderr.flush()
    env = job_environment(script.threads, script.resources.get("tmpdir"))
    watch = None if script.bench_record is None else lambda pid: sampled(pid, script.bench_record)
    result = jobserver.submit(client, os.path.abspath(fname), None, os.getcwd(), env, (0, 1, 2), watch=watch)
    if result is None:
        raise WorkflowError("storyeval: the job server ended before this job did; rerun it, or set "
                            f"{jobserver.OPT_OUT}=1")
    status, cpu = result
    if os.environ.get(jobserver.ACCOUNTING):
        jobserver.account(os.environ[jobserver.ACCOUNTING], script.rulename, script.wildcards, cpu, 0.0)
    if status:
        raise subprocess.CalledProcessError(status, f"{sys.executable} {shlex.quote(fname)}")
    return True


@contextlib.contextmanager
def sampled(pid: int, record):
    """Snakemake's benchmark sampling of the server's child `pid` into `record`; a child that ended before its
    first sample (the server has reaped it) leaves its running time only."""
    import psutil
    from snakemake.benchmark import benchmarked

    start = time.time()
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(benchmarked(pid, record))
        except psutil.NoSuchProcess:
            stack.callback(lambda: setattr(record, "running_time", time.time() - start))
        yield
