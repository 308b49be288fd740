"""The job server: light script jobs run in forks of one interpreter that has imported their modules once.

A fresh interpreter importing pandas, scipy.stats, matplotlib and this package costs a script job 0.6-1.8 CPU-s,
more than most analysis, table and figure jobs compute (docs/performance.md). So a local run starts one server
(the Snakefile's `onstart`, `start`): it imports every module that the scripts which hand off import at their top,
then forks a child per job. Each job stays a Snakemake job of its own, with its process, log, benchmark, exit
status and single-rule rerun: the script's first import (`storyeval.workflow.handoff`) connects to the server,
passes its standard streams, working directory, environment and the path of Snakemake's copy of the script, and
waits; the child runs that copy as `__main__`, as a fresh interpreter would, and the process exits with the
child's status. Where there is no server (cluster jobs, a job with more than one thread, `STORYEVAL_NO_JOB_SERVER`
set, a server that cannot be reached), the script goes on in its own interpreter. The jobs that import torch have
a server of their own (`TORCH`; their scripts import `storyeval.workflow.handoff_torch` first), on the CPU only.

Why fork rather than run jobs in Snakemake's threads (`run:` with `--use-threads`): jobs set process-wide state
(matplotlib's rcParams, logging handlers, the exception hook, numpy's error state), and a child starts from the
server's state, untouched by earlier jobs. Python's own forkserver (multiprocessing) starts children from a bare
interpreter and takes no file descriptors from a client; this one does both.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import importlib
import os
import pickle
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ADDRESS = "STORYEVAL_JOB_SERVER"  # the server's socket, in the environment Snakemake's jobs inherit
OPT_OUT = "STORYEVAL_NO_JOB_SERVER"  # set (non-empty): every job in its own interpreter
ACCOUNTING = "STORYEVAL_JOB_ACCOUNTING"  # a file: each handed-off job appends its CPU seconds (bench/)
HANDOFF = "storyeval.workflow.handoff"
SOCKET_NAME = "jobs.sock"
_LENGTH = struct.Struct("!I")
_RESULT = struct.Struct("!id")  # exit status (negative: killed by that signal), CPU seconds of the child
_PID = struct.Struct("!i")  # the child's process ID, sent as soon as it is forked
# What Snakemake's shell sets for a one-thread job (snakemake/shell.py): the server imports numpy's BLAS with them.
ONE_THREAD = ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


# Libraries the handed-off jobs import where they compute (the metric modules import them lazily, so a job in its
# own interpreter pays only for what it uses): POT (its numpy backend: POT_BACKEND_DISABLE_PYTORCH, set for every
# job by the workflow), the compiled transport solvers, NLTK's METEOR and stemmers, sacreBLEU.
LAZY_IMPORTS = ("ot", "storyeval.neural.ot", "storyeval.neural.transport", "storyeval.neural.simplex",
                "nltk.translate.meteor_score", "nltk.stem.porter", "nltk.stem.snowball", "sacrebleu.metrics",
                "scipy.linalg", "scipy.spatial.distance", "sklearn.preprocessing")
# What a torch job imports beyond its script's top when it loads an encoder (3.8 CPU-s with torch): transformers'
# model and tokenizer machinery, the BERT classes of the bundled model, the Rust tokenizers.
TORCH_IMPORTS = ("transformers", "transformers.modeling_utils", "transformers.generation.utils",
                 "transformers.models.auto.modeling_auto", "transformers.models.auto.tokenization_auto",
                 "transformers.models.bert.modeling_bert", "transformers.models.bert.tokenization_bert_fast",
                 "tokenizers", "storyeval.neural.models")


@dataclass(frozen=True)
class Pool:
    """A kind of server: the hand-off module its scripts import first, the variable that gives jobs its address,
    the fewest jobs worth its own imports, the libraries it imports beyond its scripts' tops, and the packages it
    leaves to the jobs that import them."""

    name: str
    handoff: str
    address: str
    min_jobs: int
    libraries: tuple[str, ...]
    left_to_jobs: tuple[str, ...] = ()

    def preloads(self, module: str) -> bool:
        return not any(module == package or module.startswith(f"{package}.") for package in self.left_to_jobs)


# Light jobs (pandas, scipy, matplotlib, the package): the server's imports cost ~2 CPU-s, a job's own ~0.4-1.4.
# Torch jobs (the embedding pass, StoryER): torch and transformers cost each ~5 CPU-s; a server of their own, so
# that the light jobs' forks do not carry torch. Fewer jobs than `min_jobs`, and a server costs more than it saves.
# StoryER's modules set MKL's strict reproducible mode at import, which MKL reads at its first matrix product: a
# server that imported them would pass it to every torch child, and the embedding pass, which runs without it,
# would compute other last bits. They are left to the StoryER jobs, whose own import sets it before MKL starts.
LIGHT = Pool("light", HANDOFF, ADDRESS, 3, LAZY_IMPORTS)
TORCH = Pool("torch", "storyeval.workflow.handoff_torch", "STORYEVAL_TORCH_JOB_SERVER", 2, TORCH_IMPORTS,
             ("storyeval.learned",))
POOLS = {pool.name: pool for pool in (LIGHT, TORCH)}
MIN_JOBS = LIGHT.min_jobs
_servers: dict[str, subprocess.Popen] = {}  # the ones this Snakemake process started, by pool


def handing_off(scripts: Path, job_scripts: list[str | None], pool: Pool = LIGHT) -> int:
    """How many of the run's jobs (their `script:` paths; None for other jobs) run a script that hands off to
    `pool`."""
    hands_off = {path.name for path in scripts.glob("*.py") if pool.handoff in script_imports(path)}
    return sum(1 for script in job_scripts if script and Path(script).name in hands_off)


def torch_forks_safely(device: str) -> bool:
    """Whether torch jobs may run in forks of a server that imported torch: on the CPU. A process that has
    initialised CUDA cannot fork a child that uses it, and a GPU's driver may be initialised by an import; so
    with `device: auto` only where no GPU device node exists (NVIDIA's, AMD's)."""
    if device == "cpu":
        return True
    return device == "auto" and not any(Path(node).exists() for node in ("/dev/nvidiactl", "/dev/kfd"))


def start(scripts: Path, local: bool, job_scripts: list[str | None], torch_jobs: bool = False) -> None:
    """Start a server for the light jobs of this run (and one for its torch jobs, where `torch_jobs` says they may
    fork: torch_forks_safely) and point the jobs at them, unless jobs run elsewhere, the user opted out or too few
    jobs would hand off (Pool.min_jobs). A server listens before it imports, so a job that comes early waits for
    the imports, no longer."""
    if not local or os.environ.get(OPT_OUT):
        return
    for pool in (LIGHT, TORCH) if torch_jobs else (LIGHT,):
        if pool.name not in _servers and handing_off(scripts, job_scripts, pool) >= pool.min_jobs:
            _start(scripts, pool)


def _start(scripts: Path, pool: Pool) -> None:
    folder = Path(tempfile.mkdtemp(prefix="storyeval-jobs-"))  # short: a socket's path has at most 107 bytes
    address = folder / SOCKET_NAME
    env = dict(os.environ, **dict.fromkeys(ONE_THREAD, "1"))
    for other in POOLS.values():
        env.pop(other.address, None)
    server = subprocess.Popen([sys.executable, "-m", "storyeval.workflow.jobserver", str(address), str(scripts),
                               pool.name], env=env, stdin=subprocess.DEVNULL)
    if not listening(server, address):
        return
    _servers[pool.name] = server
    os.environ[pool.address] = str(address)
    atexit.register(stop)  # a run that ends without onsuccess or onerror (an interrupt)


def listening(server: subprocess.Popen, address: Path) -> bool:
    """Wait until a just-started server binds its socket (within ~50 ms: an import of this module), so that no
    client finds none; a server that ended or never bound is killed, and False."""
    for _ in range(500):
        if address.exists() or server.poll() is not None:
            break
        time.sleep(0.01)
    if not address.exists():
        server.kill()
        return False
    return True


def stop() -> None:
    """End the servers (their running children with them) and remove their sockets; waiting for them counts
    their CPU time and their children's in the run's own (`time make reproduce`)."""
    for pool in POOLS.values():
        os.environ.pop(pool.address, None)
    while _servers:
        _, server = _servers.popitem()
        if server.poll() is not None:
            continue
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# ---------------------------------------------------------------- the job's side


def hand_off(main, pool: Pool = LIGHT) -> int | None:
    """Run the script job whose `__main__` module is `main` in `pool`'s server: its exit status, or None when the
    job should run here (no server, no `snakemake` object, more than one thread, a server that cannot be
    reached)."""
    address = os.environ.get(pool.address)
    job = getattr(main, "snakemake", None)
    script = getattr(main, "__real_file__", None)  # Snakemake's copy of the script, preamble included
    if not address or job is None or script is None or getattr(job, "threads", 1) != 1:
        return None
    client = connect(address)
    if client is None:
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    result = submit(client, os.path.abspath(script), None, os.getcwd(), dict(os.environ), (0, 1, 2))
    if result is None:
        print("storyeval: the job server ended before this job did; rerun it, or set STORYEVAL_NO_JOB_SERVER=1",
              file=sys.stderr)
        return 1
    status, cpu = result
    if os.environ.get(ACCOUNTING):
        account(os.environ[ACCOUNTING], job.rule, job.wildcards, cpu, _own_cpu())
    if status < 0:  # killed by a signal (out of memory: SIGKILL): this process ends the same way, for Snakemake
        if -status not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


def connect(address: str) -> socket.socket | None:
    """A connection to the server at `address`, or None where none listens."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(address)
    except OSError:
        client.close()
        return None
    return client


def submit(client: socket.socket, script: str, argv: list[str] | None, cwd: str, env: dict[str, str],
           fds: tuple[int, int, int], timeout: float | None = None, watch=None) -> tuple[int, float] | None:
    """Run the Python file `script` (`argv` its sys.argv; default [script]) in a fork of the server `client` is
    connected to, its standard streams the descriptors `fds`: the child's exit status (negative: killed by that
    signal) and CPU seconds, or None when the server ended first. After `timeout` seconds, TimeoutError; closing
    the connection, which this does, makes the server end the child. `watch(pid)`: a context manager held while
    the child runs (a benchmark's sampling of it)."""
    with client:
        request = pickle.dumps({"script": script, "argv": argv, "cwd": cwd, "env": env, "umask": _umask()})
        socket.send_fds(client, [b"j"], list(fds))
        client.sendall(_LENGTH.pack(len(request)) + request)
        client.settimeout(timeout)
        started = _receive(client, _PID.size)
        if started is None:
            return None
        with watch(_PID.unpack(started)[0]) if watch else contextlib.nullcontext():
            reply = _receive(client, _RESULT.size)
    return None if reply is None else _RESULT.unpack(reply)


def account(path: str, rule: str, wildcards, cpu: float, own: float) -> None:
    """One line: the rule, its wildcards, the child's CPU seconds and the submitting process's own (the
    hand-off's cost; 0 where Snakemake submitted the job itself, storyeval.workflow.scriptjobs)."""
    wildcards = ",".join(f"{key}={value}" for key, value in wildcards.items())
    with open(path, "a") as accounts:  # one write of one short line: appends of parallel jobs do not mix
        accounts.write(f"{rule}\t{wildcards}\t{cpu:.3f}\t{own:.3f}\n")


def _own_cpu() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _receive(connection: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


# ---------------------------------------------------------------- the server


def script_imports(script: Path) -> list[str]:
    """The modules a script file imports at its top (source_imports)."""
    return source_imports(script.read_text(), str(script))


def source_imports(source: str, filename: str = "<script>") -> list[str]:
    """The modules a script's source imports at its top (absolute imports), in order; `from package import name`
    gives the package and package.name, which may be a module or not."""
    names = []
    for node in ast.parse(source, filename).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return names


def handoff_imports(scripts: Path, handoff: str = HANDOFF) -> list[str]:
    """The modules the scripts that hand off (to the server of `handoff`) import at their top, in order of first
    use."""
    modules: dict[str, None] = {}
    for script in sorted(scripts.glob("*.py")):
        names = script_imports(script)
        if handoff in names:
            modules.update(dict.fromkeys(name for name in names if name != handoff))
    return list(modules)


def preload(modules: list[str], pool: Pool = LIGHT) -> dict[str, str]:
    """Import what the jobs will: what a job imports from here on is already there. A name that is no module is
    skipped; a module that fails is left to fail in the job that imports it, with that job's message and log.
    Returns the environment variables the imports set (a module may set one for a library it loads later: MKL's
    reproducible mode), which each job gets as its own import would have set them."""
    before = dict(os.environ)
    # POT imports torch unless its numpy backend is chosen: the light server's lazy imports only then
    lazy = [] if pool is LIGHT and "POT_BACKEND_DISABLE_PYTORCH" not in os.environ else list(pool.libraries)
    for module in filter(pool.preloads, ["snakemake.script", "snakemake.logging", "snakemake.iocontainers", *modules,
                                         *lazy]):
        with contextlib.suppress(Exception):
            importlib.import_module(module)
    return {key: value for key, value in os.environ.items() if before.get(key) != value}


class Server:
    """Accepts jobs on a UNIX socket and forks a child for each; reports each child's exit status to its job
    and ends a child whose job went away (Snakemake killed it). Single-threaded: it forks, so it holds no
    threads and no locks another thread could hold."""

    def __init__(self, address: Path):
        self.import_env: dict[str, str] = {}
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(address))
        self.listener.listen(64)
        self.address = address
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self.children: dict[int, tuple[socket.socket, int]] = {}  # pid -> (the job's connection, pidfd)
        self.parent = os.getppid()

    def serve(self) -> None:
        try:
            while os.getppid() == self.parent:  # Snakemake gone without stopping it: so is the server
                for key, _ in self.selector.select(timeout=1.0):
                    kind, pid = key.data
                    if kind == "accept":
                        self._accept()
                    elif kind == "exit":
                        self._reap(pid)
                    else:  # the job's connection: readable only when the job has gone
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGTERM)
                        self.selector.unregister(key.fileobj)
        finally:
            for pid in list(self.children):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            remove_socket(self.address)

    def _accept(self) -> None:
        connection, _ = self.listener.accept()
        connection.settimeout(30)
        try:
            _, fds, _, _ = socket.recv_fds(connection, 1, 3)
            header = _receive(connection, _LENGTH.size)
            body = _receive(connection, _LENGTH.unpack(header)[0]) if header else None
        except OSError:
            connection.close()
            return
        if body is None or len(fds) != 3:
            connection.close()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self._close_for_child(connection)
            _run_job(pickle.loads(body), fds, self.import_env)  # never returns
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):  # a job gone already: its connection is seen readable below
            connection.sendall(_PID.pack(pid))
        pidfd = os.pidfd_open(pid)
        self.children[pid] = (connection, pidfd)
        self.selector.register(pidfd, selectors.EVENT_READ, ("exit", pid))
        self.selector.register(connection, selectors.EVENT_READ, ("job", pid))

    def _reap(self, pid: int) -> None:
        connection, pidfd = self.children.pop(pid)
        _, status, usage = os.wait4(pid, 0)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(connection)
        with contextlib.suppress(OSError), connection:
            connection.sendall(_RESULT.pack(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime))

    def _close_for_child(self, own: socket.socket) -> None:
        """In a new child: close the server's sockets and descriptors, its own job's connection too (the server
        answers the job)."""
        self.selector.close()
        self.listener.close()
        for connection, pidfd in self.children.values():
            connection.close()
            os.close(pidfd)
        own.close()


def _run_job(request: dict, fds: list[int], import_env: dict[str, str]) -> None:
    """In the forked child: become the job (its streams, directory, environment) and run Snakemake's copy of
    the script as `__main__`, as `python script` would; exit with its status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for number in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    addresses = {pool.address for pool in POOLS.values()}  # the job's own hand-off import finds no server: runs here
    os.environ.update({**import_env, **{key: value for key, value in request["env"].items() if key not in addresses}})
    tempfile.tempdir = None  # TMPDIR may be the job's own (Snakemake's tmpdir resource)
    status = run_script(request["script"], request.get("argv"))
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()  # what an interpreter runs at its end: logging's flush among them
    os._exit(status)


def run_script(path: str, argv: list[str] | None = None) -> int:
    """Run a script file as `__main__`, `argv` (default: [path]) its sys.argv; its exit status. An exception goes
    to `sys.excepthook`, the job's own where the script installed one (storyeval.io.log_to: the traceback to the
    rule's log)."""
    import types

    main = types.ModuleType("__main__")
    main.__file__ = path
    sys.modules["__main__"] = main
    sys.argv = argv or [path]
    try:
        exec(compile(Path(path).read_bytes(), path, "exec"), main.__dict__)
    except SystemExit as end:
        if end.code is None or isinstance(end.code, int):
            return end.code or 0
        print(end.code, file=sys.stderr)
        return 1
    except BaseException:
        if sys.excepthook is sys.__excepthook__:  # failed before the script's log_to: log as a fresh job would
            import storyeval

            storyeval.log_a_jobs_failure(main)
        try:
            sys.excepthook(*sys.exc_info())
        except Exception:
            traceback.print_exc()
        return 1
    return 0


def remove_socket(address: Path) -> None:
    """Remove the socket and its folder, whichever of them exists."""
    with contextlib.suppress(OSError):
        address.unlink()
    with contextlib.suppress(OSError):
        address.parent.rmdir()


def main(argv: list[str]) -> None:
    address, scripts = Path(argv[0]), Path(argv[1])
    pool = POOLS[argv[2] if len(argv) > 2 else LIGHT.name]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop(): the cleanup below runs, also mid-import
    try:
        # stop() may come as soon as the socket is bound (start() returns then), before the server is built
        server = Server(address)
        server.import_env = preload(handoff_imports(scripts, pool.handoff), pool)
    except SystemExit:
        remove_socket(address)
        raise
    server.serve()


if __name__ == "__main__":
    main(sys.argv[1:])
