"""Benchmark: the released-score path (HANNA's analysis: statistics, tables, figures and their pages) at k times
HANNA's stories, so that a user can predict a run on their data (docs/performance.md, "Scaling").

HANNA's released files hold, per system, a list of 96 values (one per prompt) in each cell. A k-times file holds
k * 96 prompts: the real prompts k times over, the metric values of each copy after the first moved by a seeded
relative jitter of 1e-9 (no ties the real data lack; the statistics' work is the same), the ratings as they are.
Where k * 96 values a cell would put a line over the readers' limit (storyeval.limits.MAX_LINE: from about 38x),
the file holds the 11 systems s times over instead (the smallest divisor s of k that fits; copies named
"<system> (copy c)", jittered alike) with k / s times the prompts: k times the stories either way.
Each size runs the workflow's analysis_targets(RUN, "hanna", "released") from nothing in a scratch copy of the
working tree (bench_workflow_analysis.py), with the raw annotation file off (it holds HANNA's 1,056 stories only).
Per size: wall and CPU seconds (Snakemake, the job server and every job), and the rules whose jobs spent the most
CPU seconds (the job server's accounting, storyeval.workflow.jobserver.ACCOUNTING).

    python bench/bench_scaling.py [--sizes 1 10 100] [--cores 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_workflow_analysis import REPO, run_workflow, scratch_workspace  # noqa: E402

from storyeval.limits import MAX_LINE  # noqa: E402

MIRROR = REPO.parent / "shared/data/hanna"
SCALED = ("scores", "scores_llm")  # the pinned files (config.yaml hanna.files) a size scales
CRITERIA = {"Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"}


def scaled_cell(values: list, copies: int, rng: np.random.Generator, jitter: bool, first_too: bool) -> str:
    """A cell's per-prompt list, `copies` times; where `jitter`, the copies after the first jittered (the first
    too where `first_too`: a copied system's)."""
    base = np.asarray(values, dtype=float)
    parts = [base * (1 + 1e-9 * rng.standard_normal(base.size)) if jitter and (copy or first_too) else base
             for copy in range(copies)]
    return json.dumps(np.concatenate(parts).tolist())


def system_copies(table: pd.DataFrame, copies: int) -> int:
    """The smallest divisor s of `copies` such that copies / s times the prompts keep every line within
    MAX_LINE: a line's bytes per copy of the prompts measured on the real rows with every value jittered."""
    rng = np.random.default_rng(0)
    longest = max(sum(len(scaled_cell(json.loads(cell), 1, rng, True, True)) + 1 for cell in row[1:])
                  for row in table.itertuples(index=False))
    return next(s for s in range(1, copies + 1) if copies % s == 0 and longest * copies // s < MAX_LINE)


def scale_file(source: Path, target: Path, copies: int, seed: int) -> str:
    """Write the k-times file; its sha256."""
    table = pd.read_csv(source, dtype=str, keep_default_na=False)
    systems, originals = system_copies(table, copies), len(table)
    table = pd.concat([table.assign(Model=table.Model + (f" (copy {copy})" if copy else ""))
                       for copy in range(systems)], ignore_index=True)
    rng = np.random.default_rng(seed)
    for column in table.columns[1:]:
        rater = column.split(" ")[0] == "Human" or column in CRITERIA
        table[column] = [scaled_cell(json.loads(cell), copies // systems, rng, not rater, index >= originals)
                         for index, cell in enumerate(table[column])]
    table.to_csv(target, index=False)
    return hashlib.sha256(target.read_bytes()).hexdigest()


def mirror(root: Path, copies: int) -> dict:
    """A mirror directory with the k-times files (the others linked); the config that points the run at it."""
    pinned = yaml.safe_load((REPO / "config.yaml").read_text())["hanna"]["files"]
    folder = root / f"mirror-{copies}x"
    folder.mkdir(parents=True, exist_ok=True)
    for entry in pinned.values():
        if not (folder / entry["path"]).exists() and (MIRROR / entry["path"]).exists():
            os.symlink(MIRROR / entry["path"], folder / entry["path"])
    files = {}
    for key in SCALED:
        target = folder / pinned[key]["path"]
        target.unlink()
        files[key] = {"sha256": scale_file(MIRROR / pinned[key]["path"], target, copies, seed=copies)}
    return {"data": {"mirrors": {"hanna": [str(folder)]}}, "hanna": {"files": files, "annotations": "skip"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="scratch directory to use and keep (default: a temporary one)")
    args = parser.parse_args()
    root, work = scratch_workspace(args.keep, "bench_scaling_")
    print("| stories | wall s | CPU s | CPU s per 1,000 stories | most CPU (rule: CPU s) |\n|---:|---:|---:|---:|---|")
    for copies in args.sizes:
        config = root / f"scaling-{copies}x.yaml"
        config.write_text(yaml.safe_dump(mirror(root, copies)))
        shutil.rmtree(work / "resources", ignore_errors=True)  # the previous size's fetched copies
        accounts = work / "accounts.tsv"
        accounts.unlink(missing_ok=True)
        os.environ["STORYEVAL_JOB_ACCOUNTING"] = str(accounts)
        wall, cpu = run_workflow(work, args.cores, "--configfile", str(config))
        jobs = pd.read_csv(accounts, sep="\t", names=["rule", "wildcards", "cpu", "own"])
        top = jobs.groupby("rule").cpu.sum().sort_values(ascending=False).head(3)
        stories = 1056 * copies
        print(f"| {stories:,} | {wall:.1f} | {cpu:.1f} | {1000 * cpu / stories:.1f} | "
              + ", ".join(f"{rule}: {seconds:.1f}" for rule, seconds in top.items()) + " |", flush=True)
    if not args.keep:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
