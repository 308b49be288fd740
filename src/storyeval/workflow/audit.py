"""The reproduction audit's files (storyeval.audit): the papers' printed numbers, the paper-exact profile and the
released-score analysis it compares them with."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from storyeval.errors import InputError

BASE = "results/hanna"


def audit_file(config: Mapping, key: str, repository: str | Path) -> str:
    """A file named by config audit.<key>: relative to the working directory, else to the repository."""
    path = Path(config["audit"][key])
    if not path.is_absolute() and not path.exists() and (Path(repository) / path).exists():
        path = Path(repository) / path
    return str(path)


def inputs(config: Mapping, repository: str | Path, origin: str = "config.yaml") -> dict:
    """The audit's inputs; its paper values must be there (`origin`: where audit.paper_values was set)."""
    paper_values = audit_file(config, "paper_values", repository)
    if not Path(paper_values).is_file():
        raise InputError(f"{origin} audit.paper_values: {paper_values} is not there; fix: point it at the "
                         "papers' printed numbers (src/storyeval/printed_numbers.yaml in the repository)")
    return {
        "paper_values": paper_values,
        "profile": audit_file(config, "profile", repository),
        "schema": str(Path(repository) / "workflow/schemas/config.schema.yaml"),
        "stories": f"{BASE}/data/stories.csv",
        "ratings": f"{BASE}/data/rater_ratings.csv",
        "human": f"{BASE}/data/human_scores.csv",
        "scores": f"{BASE}/released/scores.parquet",
        "registry": f"{BASE}/released/metrics.csv",
        "correlations": f"{BASE}/released/correlations.csv",
        "system_means": f"{BASE}/released/system_means.csv",
        "icc": f"{BASE}/released/icc.csv",
    }


def printed_datasets(run) -> list[str]:
    """The datasets of the run whose kind declares printed numbers (storyeval.audit_datasets)."""
    from storyeval.datasets import describe

    return [name for name in run.text_datasets if describe(run.config["datasets"][name], name).printed]


def printed_inputs(run) -> list[str]:
    """The result files the datasets' printed numbers are compared with."""
    from storyeval.audit_datasets import result_files
    from storyeval.datasets import describe

    return [path for name in printed_datasets(run)
            for path in result_files(name, describe(run.config["datasets"][name], name).printed)]
