"""The tests' Snakemake runs in forks of one interpreter that imported Snakemake once (storyeval's job server).

A test suite starts Snakemake a hundred times, and each start imports Snakemake, its plugins and pandas before it
reads the Snakefile: 0.9 of a small dry run's 1.7 CPU-s (docs/performance.md). So each pytest worker starts one
server (`run`, the first time) that has imported those, and each run is a fork of it that runs Snakemake's own
console script with the test's arguments, directory, environment and files for its output: the same program as
`snakemake ...` in a new process. The package itself (storyeval) is not kept: a run imports it from the
Snakefile's checkout, as a new process would.

    python tests/snakemake_server.py SOCKET    # the server; `run` starts it
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import locale
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")  # the console script a run's fork runs as its program
OPT_OUT = "STORYEVAL_TESTS_NO_SNAKEMAKE_SERVER"  # set: every run in a new interpreter, as a user's would
# What a Snakemake start imports before the Snakefile's own code (found with sys.modules after a dry run).
PRELOAD = ("snakemake.cli", "snakemake.api", "snakemake.workflow", "snakemake.dag",
           "snakemake.scheduling.job_scheduler", "snakemake.executors.local", "snakemake.executors.dryrun",
           "snakemake.report", "snakemake.profiles", "snakemake.assets", "snakemake.storage",
           "snakemake_executor_plugin_slurm", "pandas", "numpy", "yaml", "jsonschema", "fastjsonschema", "requests",
           "charset_normalizer", "nbformat", "traitlets", "docutils.core", "jinja2", "pygments.formatters",
           "pygments.lexers", "smart_open", "PIL.Image", "yte", "platformdirs", "dpath", "pyarrow.pandas_compat")

_server: dict[str, object] = {}  # this process's server and its socket


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """`subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)`; a command of
    this environment's Snakemake runs in a fork of this process's server (where one runs)."""
    from storyeval.workflow import jobserver

    client = jobserver.connect(_address()) if forks(command, env) else None
    if client is None:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, open(os.devnull, "rb") as nothing:
        try:
            result = jobserver.submit(client, command[0], list(command), str(cwd), dict(env),
                                      (nothing.fileno(), out.fileno(), err.fileno()), timeout)
        except TimeoutError:
            raise subprocess.TimeoutExpired(command, timeout, _text(out), _text(err)) from None
        if result is None:
            raise RuntimeError("the tests' Snakemake server ended before its run did")
        return subprocess.CompletedProcess(command, result[0], _text(out), _text(err))


def forks(command: list[str], env: dict[str, str]) -> bool:
    """Whether a fork of the server runs `command` as a new process would: it is this environment's Snakemake, and
    the variables an interpreter reads at its start (PYTHONPATH, PYTHONHASHSEED, ...) are the server's."""
    if os.environ.get(OPT_OUT) or Path(command[0]).resolve() != SNAKEMAKE.resolve():
        return False
    return all(env.get(key) == os.environ.get(key) for key in {*env, *os.environ} if key.startswith("PYTHON"))


def _text(file) -> str:
    """What `text=True` makes of a process's output: the locale's encoding, universal newlines."""
    file.seek(0)
    text = file.read().decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _address() -> str:
    from storyeval.workflow import jobserver

    if "address" not in _server:
        folder = Path(tempfile.mkdtemp(prefix="snakemake-runs-"))
        address = folder / "runs.sock"
        env = {key: value for key, value in os.environ.items() if not key.startswith("STORYEVAL_")}
        server = subprocess.Popen([sys.executable, __file__, str(address)], env=env, stdin=subprocess.DEVNULL)
        jobserver.listening(server, address)  # one that never binds: runs connect to nothing, in new processes
        _server.update(address=str(address), process=server)
        atexit.register(_stop)
    return _server["address"]


def _stop() -> None:
    server = _server["process"]
    server.terminate()
    server.wait()


def main(address: str) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from storyeval.workflow import jobserver

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # serve()'s cleanup: its runs and its socket
    server = jobserver.Server(Path(address))
    for module in PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(module)
    # The runs import the package from their Snakefile's checkout, as a new interpreter would
    for name in [name for name in sys.modules if name == "storyeval" or name.startswith("storyeval.")]:
        del sys.modules[name]
    sys.path.remove(str(REPO / "src"))
    server.serve()


if __name__ == "__main__":
    main(sys.argv[1])
