"""Load a dataset's tidy tables and one score set as analysis cubes."""

from __future__ import annotations

from storyeval.criteria import ordered_criteria
from storyeval.data.scoreset import Cube, analysed_systems, build_cube
from storyeval.io import read_table


def load_cubes(paths, reference_system: str | None) -> tuple[Cube, Cube]:
    """(human criteria cube, metric cube) over the analysed systems; `paths` has stories, human, scores, registry."""
    stories = read_table(paths["stories"], ["story_id", "prompt_id", "system"])
    human = read_table(paths["human"], ["story_id", "criterion", "score"])
    scores = read_table(paths["scores"], ["story_id", "metric", "value"])
    registry = read_table(paths["registry"], ["slug", "order"]).sort_values("order")
    systems = analysed_systems(stories, reference_system)
    criteria = ordered_criteria(human["criterion"])
    return (
        build_cube(stories, human, "criterion", "score", criteria, systems, str(paths["human"])),
        build_cube(stories, scores, "metric", "value", list(registry["slug"]), systems, str(paths["scores"])),
    )
