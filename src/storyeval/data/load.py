"""Load a dataset's tidy tables and one score set as analysis cubes."""

from __future__ import annotations

from storyeval.criteria import ordered_criteria
from storyeval.data.scoreset import Cube, analysed_systems, build_cube
from storyeval.io import read_table


def load_cubes(paths, reference_system: str | None) -> tuple[Cube | None, Cube]:
    """(human criteria cube, metric cube) over the analysed systems; `paths` has stories, scores, registry and,
    for a set with human ratings, human (else the human cube is None)."""
    stories = read_table(paths["stories"], ["story_id", "prompt_id", "system"])
    scores = read_table(paths["scores"], ["story_id", "metric", "value"])
    registry = read_table(paths["registry"], ["slug", "order"]).sort_values("order")
    systems = analysed_systems(stories, reference_system)
    metrics = build_cube(stories, scores, "metric", "value", list(registry["slug"]), systems, str(paths["scores"]))
    if "human" not in paths.keys():
        return None, metrics
    human = read_table(paths["human"], ["story_id", "criterion", "score"])
    criteria = ordered_criteria(human["criterion"])
    return build_cube(stories, human, "criterion", "score", criteria, systems, str(paths["human"])), metrics
