"""The human ceiling compared as a metric is: one rater against the others stepped up to the panel (persons), or
split halves of each story's ratings (positions), Spearman-Brown (storyeval.stats.agreement)."""

import numpy as np
import pytest

from storyeval.stats.agreement import CEILING_METHODS, human_ceiling, panel_reliability


def spearman_brown(x, k):
    return k * x / (1 + (k - 1) * x)


@pytest.mark.parametrize(("a", "b", "panel"), [(1, 3, 4), (2, 2, 4), (1, 4, 5), (3, 3, 6)])
def test_the_step_recovers_the_panel_reliability_of_exchangeable_raters(a, b, panel):
    for single in (0.1, 0.3, 0.7, 1.0):
        r = np.sqrt(spearman_brown(single, a) * spearman_brown(single, b))  # corr of two means of a and b raters
        assert panel_reliability(r, a, b, panel) == pytest.approx(spearman_brown(single, panel), rel=1e-12)
    assert panel_reliability(-0.2, 1, 3, 4) == -0.2 and panel_reliability(0.0, 1, 3, 4) == 0.0  # kept unstepped


def test_the_ceiling_is_what_a_second_panel_of_as_many_raters_reaches():
    """Planted: 5 exchangeable raters of single reliability 0.3 (panel reliability 0.68) on 40 prompts x 50
    systems. The ceiling, from one rater against the others (persons) or from split halves (positions), matches
    the correlation of the panel's mean with an independent second panel's mean, which is how a metric is
    compared; the unstepped one-vs-rest correlation is far lower."""
    rng = np.random.default_rng(3)
    prompts, systems, raters, single = 40, 50, 5, 0.3
    truth = rng.normal(size=(prompts, systems, 1))
    noise = np.sqrt((1 - single) / single)
    cube = truth + rng.normal(scale=noise, size=(prompts, systems, raters))
    second = truth + rng.normal(scale=noise, size=(prompts, systems, raters))
    target = np.mean([np.corrcoef(cube[p].mean(axis=-1), second[p].mean(axis=-1))[0, 1] for p in range(prompts)])
    assert target == pytest.approx(spearman_brown(single, raters), abs=0.03)
    persons = human_ceiling(cube, ["story"], ["pearson"], layout="rater").iloc[0]
    positions = human_ceiling(cube, ["story"], ["pearson"], layout="position").iloc[0]
    for row in (persons, positions):
        assert row["ceiling"] == pytest.approx(target, abs=0.03) and row["panel"] == raters
    assert persons["unstepped"] < target - 0.15 and persons["raters"] == raters
    assert persons["ceiling_method"] == CEILING_METHODS["rater"] and "split halves" in positions["ceiling_method"]
    assert positions["min"] <= positions["unstepped"] <= positions["max"]
    again = human_ceiling(cube, ["story"], ["pearson"], layout="position").iloc[0]
    assert again["ceiling"] == positions["ceiling"]  # seeded splits


def test_positions_of_unequal_counts_and_single_ratings():
    """Stories with 2 to 4 ratings in slots: the halves take floor and ceil of each story's count, a story rated
    once is left out; independent slots give a ceiling near 0."""
    rng = np.random.default_rng(4)
    cube = rng.normal(size=(200, 6, 4))
    counts = rng.integers(1, 5, size=(200, 6))
    cube[np.arange(4)[None, None, :] >= counts[..., None]] = np.nan
    row = human_ceiling(cube, ["story"], ["pearson", "kendall"], layout="position").iloc[0]
    assert row["panel"] == pytest.approx(counts[counts >= 2].mean())
    assert abs(row["unstepped"]) < 0.1 and row["raters"] == 4  # SE about 0.04 (200 prompts of 6 systems)
    assert row["unstepped"] < 0 and row["ceiling"] == row["unstepped"]  # (this seed) below 0: shown unstepped
