"""How OpenMP's wait policy changes the 2-thread torch encoder pass on a busy machine.

The learned evaluator's training starts by encoding its stories with the bundled MiniLM on the rule's threads
(2). This runs that pass over the first N training stories in fresh processes, with OMP_WAIT_POLICY unset
(libgomp spins while it waits) and PASSIVE (what the workflow sets, workflow/rules/common.smk), on 1 and 2 torch
threads, while `--burners` processes spin beside it (0: a quiet machine), and prints wall and CPU seconds.
Usage: python bench/bench_thread_wait.py [--stories 40] [--burners 2] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO.parent / "shared/data/storyer/train_rank_data_small.pkl"

ENCODE = """
import json, sys, time
import torch
torch.set_num_threads(int(sys.argv[1]))
from storyeval.learned.data import load_pairs
from storyeval.learned.embed import StoryEncoder, embed_texts
from storyeval.neural.paths import resolve_model_path
texts = sorted(set(load_pairs(sys.argv[2])["high"]))[: int(sys.argv[3])]
encoder = StoryEncoder(resolve_model_path("bundled"), policy="chunks")
wall, cpu = time.perf_counter(), time.process_time()
embed_texts(texts, encoder)
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))
"""


def spin(stop) -> None:
    while not stop.is_set():
        pass


def encode(threads: int, policy: str | None, stories: int) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    result = subprocess.run([sys.executable, "-c", ENCODE, str(threads), str(PAIRS), str(stories)], env=env,
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=40)
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=spin, args=(stop,), daemon=True) for _ in range(args.burners)]
    for process in burners:
        process.start()
    try:
        print(f"{args.stories} stories, {args.burners} spinning processes beside, load {os.getloadavg()[0]:.1f}")
        for repeat in range(args.repeats):
            for threads, policy in [(2, None), (2, "PASSIVE"), (1, None)]:
                times = encode(threads, policy, args.stories)
                print(f"run {repeat + 1}: {threads} thread(s), OMP_WAIT_POLICY {policy or 'unset'}: "
                      f"wall {times['wall']:.1f} s, CPU {times['cpu']:.1f} s")
    finally:
        stop.set()
        time.sleep(0.1)


if __name__ == "__main__":
    main()
