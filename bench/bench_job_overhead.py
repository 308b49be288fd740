"""Benchmark: what a script job pays before its own work, per rule, in its own interpreter, handed off to the job
server (storyeval.workflow.jobserver) and submitted to it by Snakemake (storyeval.workflow.scriptjobs).

In its own interpreter a job pays Python's start, Snakemake's preamble (unpickling its `snakemake` object) and
its script's top-level imports. Handed off, it pays Python's start, the preamble and the hand-off in its own
process, and a fork and exit of the server's child that holds the imports. Submitted by Snakemake, it pays the
submission in Snakemake's thread and the child. All are measured here on an empty job body, in CPU seconds (user
+ system of every process involved), the median of --repeat runs.

    python bench/bench_job_overhead.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from storyeval.workflow import jobserver, scriptjobs  # noqa: E402

SCRIPTS = REPO / "workflow/scripts"
# What Snakemake's copy of a script runs before the script (snakemake.script.PythonScript.generate_preamble).
PREAMBLE = ("import sys; import pickle; from snakemake.logging import logger; "
            "from snakemake.iocontainers import Snakemake\n")
CLIENT = """
import sys, types
from snakemake.logging import logger
from snakemake.iocontainers import Snakemake
from storyeval.workflow import jobserver
main = types.SimpleNamespace(snakemake=types.SimpleNamespace(threads=1, rule="bench", wildcards={}),
                             __real_file__=sys.argv[1])
sys.exit(jobserver.hand_off(main))
"""


def rules_of_scripts() -> dict[str, list[str]]:
    """{script stem: the rules that run it}, read from the rule files (a script belongs to the rule above it)."""
    rules: dict[str, list[str]] = {}
    for path in sorted((REPO / "workflow/rules").glob("*.smk")):
        rule = "?"
        for line in path.read_text().splitlines():
            if match := re.match(r"\s*(?:rule|checkpoint) (\w+):", line):
                rule = match[1]
            elif match := re.search(r'"\.\./scripts/(\w+)\.py"', line):
                rules.setdefault(match[1], []).append(rule)
    return rules


def cpu_of(command: list[str], env: dict | None = None) -> float:
    """CPU seconds of a command and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def top_imports(script: Path) -> str:
    """Code importing what the script imports at its top (jobserver.script_imports: some names are no module)."""
    modules = [module for module in jobserver.script_imports(script) if module != jobserver.HANDOFF]
    return f"import importlib\nfor module in {modules!r}:\n    try:\n        importlib.import_module(module)\n" \
           "    except ImportError:\n        pass\n"


def fresh_cpu(script: Path, repeat: int) -> float:
    """A fresh interpreter running the preamble and the script's single-line top-level imports."""
    code = PREAMBLE + top_imports(script)
    env = dict(os.environ, **dict.fromkeys(jobserver.ONE_THREAD, "1"), PYTHONPATH=str(REPO / "src"))
    return float(np.median([cpu_of([sys.executable, "-c", code], env) for _ in range(repeat)]))


def served_cpu(script: Path, repeat: int, accounts: Path, body: Path) -> float:
    """The hand-off's process and the server's child, for a job whose script imports what `script` does."""
    body.write_text(top_imports(script))
    costs = []
    for _ in range(repeat):
        accounts.write_text("")
        env = dict(os.environ, **{jobserver.ACCOUNTING: str(accounts)})
        own = cpu_of([sys.executable, "-c", CLIENT, str(body)], env)
        child = float(accounts.read_text().split("\t")[2]) if accounts.read_text() else float("nan")
        costs.append(own + child)
    return float(np.median(costs))


def submitted_cpu(script: Path, repeat: int, accounts: Path, body: Path) -> float:
    """Snakemake's thread submitting the job (scriptjobs.run_in_server) and the server's child."""
    source = f"import {jobserver.HANDOFF}\n{top_imports(script)}"
    body.write_text(source)
    job = types.SimpleNamespace(source=source, threads=1, conda_env=None, container_img=None, env_modules=None,
                                shadow_dir=None, resources={}, bench_record=None, rulename="bench", wildcards={})
    os.environ[jobserver.ACCOUNTING] = str(accounts)
    costs = []
    try:
        for _ in range(repeat):
            accounts.write_text("")
            start = time.process_time()
            scriptjobs.run_in_server(job, str(body))
            costs.append(time.process_time() - start + float(accounts.read_text().split("\t")[2]))
    finally:
        del os.environ[jobserver.ACCOUNTING]
    return float(np.median(costs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rules = rules_of_scripts()
    handing_off = [path for path in sorted(SCRIPTS.glob("*.py")) if jobserver.HANDOFF in path.read_text()]
    os.environ["PYTHONPATH"] = str(REPO / "src")
    jobserver.start(SCRIPTS, local=True, job_scripts=[path.name for path in handing_off] * jobserver.MIN_JOBS)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            accounts, body = Path(scratch, "accounts.tsv"), Path(scratch, "job.py")
            served_cpu(handing_off[0], 1, accounts, body)  # the server's own imports, once
            print(f"{'script (rules)':60s} {'own interpreter':>16s} {'handed off':>11s} {'submitted':>10s}")
            rows = []
            for script in handing_off:
                rows.append((fresh_cpu(script, args.repeat), served_cpu(script, args.repeat, accounts, body),
                             submitted_cpu(script, args.repeat, accounts, body)))
                label = f"{script.stem} ({', '.join(rules.get(script.stem, ['?']))})"
                print(f"{label[:60]:60s} {rows[-1][0]:16.3f} {rows[-1][1]:11.3f} {rows[-1][2]:10.3f}")
    finally:
        jobserver.stop()
    fresh, served, submitted = np.array(rows).T
    print(f"median over {len(rows)} scripts: {np.median(fresh):.3f} CPU-s in its own interpreter, "
          f"{np.median(served):.3f} handed off to the job server (max {served.max():.3f}), "
          f"{np.median(submitted):.3f} submitted by Snakemake (max {submitted.max():.3f})")


if __name__ == "__main__":
    main()
