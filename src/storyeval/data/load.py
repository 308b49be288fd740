"""Load a dataset's tidy tables and one score set as analysis cubes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.criteria import ordered_criteria
from storyeval.data.scoreset import MIN_SYSTEMS, Cube, analysed_systems, analysis_stories, build_cube, pooled
from storyeval.errors import InputError
from storyeval.io import read_table


def exact_means(ratings: pd.DataFrame, rounded: pd.DataFrame) -> pd.DataFrame:
    """Per-story mean ratings at full precision (story_id, criterion, score): the float mean of the raters'
    integers, which is what HANNA's released file holds and its notebook averaged (human_scores.csv keeps 10
    digits). Checked against `rounded` (human_scores.csv)."""
    exact = ratings.groupby(["story_id", "criterion"], sort=False)["rating"].mean().rename("score").reset_index()
    both = exact.merge(rounded, on=["story_id", "criterion"], suffixes=("", "_csv"))
    if len(both) != len(rounded) or not np.allclose(both["score"], both["score_csv"], rtol=1e-9, atol=0):
        raise InputError("rater_ratings.csv: its per-story means do not match human_scores.csv; fix: regenerate both "
                         "with rule normalise_hanna")
    return exact


def needs_exact_means(system_ties: str, system_backend: str) -> bool:
    """Whether the system level (storyeval.stats.correlation.system_level) computes on the authors' last bits,
    which the exact per-story means carry and human_scores.csv's 10 digits do not: their float ties of system
    means (`system_ties` authors), or scipy's coefficients on their means (`system_backend` scipy)."""
    return system_ties == "authors" or system_backend == "scipy"


def reanalysis_recomputes(reanalysis_ties: str, analysis_ties: str) -> bool:
    """Whether Mendras & Nietge's tables need their own system level (analysis.system_variant) rather than the
    analysis'. Here, not in analysis.py, so that the rule files read it without importing scipy.stats."""
    return reanalysis_ties != analysis_ties


def human_cube(paths, stories: pd.DataFrame, systems: list[str], exact: bool = False) -> Cube:
    """The per-story human scores over `systems`: human_scores.csv, or (`exact`, see `needs_exact_means`) the
    exact means of rater_ratings.csv (`paths` ratings)."""
    human = read_table(paths["human"], ["story_id", "criterion", "score"], round_trip=True)
    source = paths["human"]
    if exact:
        if "ratings" not in paths.keys():
            raise InputError("exact per-story means: they need rater_ratings.csv; fix: pass it as input `ratings`")
        human = exact_means(read_table(paths["ratings"], ["story_id", "criterion", "rater", "rating"]), human)
        source = paths["ratings"]
    return build_cube(stories, human, "criterion", "score", ordered_criteria(human["criterion"]), systems, str(source))


def analysis_grid(stories: pd.DataFrame, reference_system: str | None, grid: bool = False
                  ) -> tuple[pd.DataFrame, list[str]]:
    """(stories, systems) as the cubes lay them out: the analysed systems (the reference removed); fewer than
    MIN_SYSTEMS systems a prompt are pooled (`scoreset.pooled`) unless `grid` asks for the prompt x system grid."""
    stories = analysis_stories(stories)
    systems = analysed_systems(stories, reference_system)
    if len(systems) < MIN_SYSTEMS and not grid:
        stories = pooled(stories[stories["system"].isin(systems)])
        systems = list(stories["system"])
    return stories, systems


def load_cubes(paths, reference_system: str | None, exact: bool = False, grid: bool = False
               ) -> tuple[Cube | None, Cube]:
    """(human criteria cube, metric cube) over the analysed systems; `paths` has stories, scores, registry and,
    for a set with human ratings, human (else the human cube is None); `exact`: `human_cube`. Fewer than
    MIN_SYSTEMS systems a prompt are pooled (`scoreset.pooled`) unless `grid` asks for the prompt x system grid
    (the paired comparisons)."""
    # stories.csv is in the analysis layout already; a set without ratings reads its texts (texts.parquet)
    stories, systems = analysis_grid(read_table(paths["stories"], ["story_id", "prompt_id", "system"]),
                                     reference_system, grid)
    scores = read_table(paths["scores"], ["story_id", "metric", "value"])
    registry = read_table(paths["registry"], ["slug", "order"]).sort_values("order")
    metrics = build_cube(stories, scores, "metric", "value", list(registry["slug"]), systems, str(paths["scores"]))
    if "human" not in paths.keys():
        return None, metrics
    return human_cube(paths, stories, systems, exact), metrics
