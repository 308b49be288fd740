"""Where the neural jobs run, as the scheduler sees them: whether a job holds the machine's GPU, and how many
threads StoryER's jobs ask for. Read at the workflow's start-up, so nothing here imports torch (1-2 s).

- GPU. A neural job declares the resource `gpu` (profiles/default lets one job at a time hold it, so two jobs
  never share one card's memory). A job that will run on the CPU holds no GPU: on a machine without one, the
  declaration made every neural job wait for the one before it (a fresh `make reproduce` on 2 cores ran one
  job at a time for 631 of its 739 s).
- Threads. StoryER's jobs keep about one core busy when given two (a fresh `make reproduce`, quiet 2-core
  machine: training 75 CPU-s in 70 s, its heads train on one thread; scoring hanna-llm 80 CPU-s in 63 s), and
  a job of two threads runs alone on 2 cores. On fewer than 4 cores they take one thread and run beside the
  statistics. The embedding pass keeps two (1.47 cores busy): it lies on the longest path, before BaryScore.
  The numbers do not depend on it: StoryER's vectors come from MKL's strict mode (`storyeval.learned.embed`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

# NVIDIA's control device and AMD ROCm's kernel driver: present wherever torch's CUDA (or ROCm) runtime can
# see a GPU.
GPU_DEVICE_FILES = ("/dev/nvidiactl", "/dev/kfd")
HIDDEN = ("", "-1")  # CUDA_VISIBLE_DEVICES values that hide every GPU
FEW_CORES = 4


def gpu_visible(device_files: Iterable[str] = GPU_DEVICE_FILES, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a job started here could see a GPU (without importing torch to ask it)."""
    if environ.get("CUDA_VISIBLE_DEVICES") in HIDDEN:
        return False
    return any(Path(file).exists() for file in device_files)


def gpu_jobs(device: str | None, visible: bool) -> int:
    """The `gpu` resource of a neural job under the config's `device`: 1 where it runs on a GPU, 0 on the CPU.
    `auto` runs on a GPU exactly when one is visible (`storyeval.neural.device.choose_device`)."""
    if device in (None, "", "auto"):
        return int(visible)
    return int(str(device) != "cpu")


def storyer_threads(cores: int | None) -> int:
    """Threads of StoryER's jobs (training, scoring, evaluation, reasons): 2, or 1 where the run has fewer than
    FEW_CORES cores. `None` (no local core count, as on a cluster): 2."""
    return 2 if cores is None or cores >= FEW_CORES else 1
