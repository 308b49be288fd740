"""Benchmark of a dry run's cost: wall and CPU seconds of `snakemake -n` for an own dataset of a few hundred
stories (written by storyeval.examples.rated_stories into a temporary folder), and of the default workflow,
with the start-up lines each prints (what a user sees before the first job). Run from the repository root,
inside the environment:
    python bench/bench_dry_run.py [--prompts 60] [--repeats 3]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from storyeval.data.fetch import sha256sum
from storyeval.examples import rated_stories

REPO = Path(__file__).resolve().parents[1]


def own_config(folder: Path, prompts: int) -> tuple[Path, int]:
    """An own dataset in layout wide (`prompts` x 5 systems stories, 3 raters, three criteria, the default
    model-free metrics) and its number of stories."""
    table, frame = folder / "bench.csv", rated_stories(prompts=prompts)
    frame.to_csv(table, index=False, lineterminator="\n")
    entry = {"kind": "table", "path": str(table), "sha256": sha256sum(table), "scale": [1, 5], "integer": True,
             "columns": {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text",
                         "reference": "human_story", "rater": "annotator",
                         "criteria": {"Fluency": "fluency", "Plot": "plot_score", "Delight": "delight"}}}
    config = folder / "bench.yaml"
    config.write_text(yaml.safe_dump({"datasets": {"bench": entry}}))
    return config, frame["id"].nunique()


def dry_run(*arguments: str) -> tuple[float, float, list[str]]:
    """(wall s, CPU s of Snakemake and its children, the storyeval start-up lines) of one dry run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", *arguments], cwd=REPO,
                            capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        raise SystemExit(result.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("storyeval:")]
    return wall, cpu, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=60, help="prompts of the own dataset (5 stories each)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        config, stories = own_config(Path(folder), args.prompts)
        runs = {f"own dataset, {stories} stories": ("--configfile", str(config), "--", "dataset_bench"),
                "default workflow": ()}
        for name, arguments in runs.items():
            measured = [dry_run(*arguments) for _ in range(args.repeats)]
            walls, cpus = [wall for wall, _, _ in measured], [cpu for _, cpu, _ in measured]
            print(f"{name}: wall {min(walls):.2f}-{max(walls):.2f} s, CPU {min(cpus):.2f}-{max(cpus):.2f} s "
                  f"({args.repeats} dry runs)")
            print("\n".join(f"    {line}" for line in measured[0][2]))


if __name__ == "__main__":
    main()
