"""Run-time device choice for the neural metrics: CUDA when present, else CPU; an explicit setting wins."""

from __future__ import annotations

import torch

from storyeval.errors import InputError
from storyeval.neural.placement import AUTO


def choose_device(override: str | None = None) -> torch.device:
    """`None`/"auto": cuda if torch sees a GPU, else cpu; otherwise the named device ("cpu", "cuda", "cuda:1")."""
    if override in AUTO:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(str(override))
    except (RuntimeError, ValueError) as error:
        raise InputError(
            f"neural device {override!r} is not a torch device ({error}); fix: use auto, cpu or cuda"
        ) from error
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(
            f"neural device {override!r} asked for, but torch sees no CUDA GPU; fix: set the device to auto or cpu"
        )
    return device
