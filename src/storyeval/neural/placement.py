"""Where the neural jobs run, as the scheduler sees them: whether a job holds the machine's GPU, and how many
threads (or worker processes) it asks for. Read at the workflow's start-up, so nothing here imports torch (1-2 s).

- GPU. A neural job declares the resource `gpu` (profiles/default lets one job at a time hold it, so two jobs
  never share one card's memory). A job that will run on the CPU holds no GPU: on a machine without one, the
  declaration made every neural job wait for the one before it (a fresh `make reproduce` on 2 cores ran one
  job at a time for 631 of its 739 s).
- Threads. On fewer than 4 cores every neural job takes one thread, so no job waits for the whole machine:
  Snakemake starts a ready job on any free core and reserves none, so a two-thread job (the embedding pass,
  BaryScore) waited until no one-thread job was left running (the embedding pass started at 115 s, after
  StoryER's training). One thread is also the cheaper way to spend a core on this 2-core machine: BaryScore on
  48 hanna-llm pairs took 20.3 CPU-s in one process and 29.8 CPU-s in two (15.3 s wall), the two contending
  for the shared cache; the embedding pass's forward kept about 1.5 of its 2 threads busy. The numbers do not
  depend on it (bit for bit the same scores from 1 and 2 processes; StoryER's vectors come from MKL's strict
  mode, `storyeval.learned.embed`).
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
AUTO = (None, "", "auto")  # device settings that mean: the GPU where one is visible, else the CPU


def gpu_visible(device_files: Iterable[str] = GPU_DEVICE_FILES, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a job started here could see a GPU (without importing torch to ask it)."""
    if environ.get("CUDA_VISIBLE_DEVICES") in HIDDEN:
        return False
    return any(Path(file).exists() for file in device_files)


def gpu_jobs(device: str | None, visible: bool) -> int:
    """The `gpu` resource of a neural job under the config's `device`: 1 where it runs on a GPU, 0 on the CPU.
    `auto` runs on a GPU exactly when one is visible (`storyeval.neural.device.choose_device`)."""
    if device in AUTO:
        return int(visible)
    return int(str(device) != "cpu")


def job_threads(cores: int | None) -> int:
    """Threads of a neural job (the embedding pass, the neural metrics, StoryER's jobs): 2, or 1 where the run
    has fewer than FEW_CORES cores. `None` (no local core count, as on a cluster): 2."""
    return 2 if cores is None or cores >= FEW_CORES else 1
