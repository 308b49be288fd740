"""storyeval.plan: HANNA's figures and tables, which ones a dataset's shape allows, and their families."""

import pytest

from storyeval import plan
from storyeval.criteria import CRITERIA
from storyeval.errors import InputError

HANNA = {"levels": ["story", "system"], "criteria": CRITERIA, "systems": True, "raters": True, "subset": True,
         "topk": True, "reanalyses": True, "paired": False}
FLAT = {**HANNA, "levels": ["story"], "criteria": ["Overall"], "systems": False, "raters": False, "subset": False,
        "topk": False}


def test_hannas_figures_are_numbered_one_to_thirty_eight_with_subset_twins():
    figures = plan.figures_of(CRITERIA)
    numbers = sorted({name[3:5] for name in figures if name.startswith("fig")})
    assert numbers == [f"{n:02d}" for n in range(1, 39)]
    assert "fig27_williams_story_relevance" in figures and "fig38_williams_system_complexity" in figures
    assert len([name for name in figures if name.endswith("_subset")]) == 2 + 2 + 1 + 12
    other = plan.figures_of(["Plot", "Flow"])
    assert "williams_story_plot" in other and not any(name.startswith("fig27") for name in other)


def test_a_dataset_gets_the_figures_and_tables_its_shape_allows():
    figures = plan.figures_of(["Overall"])
    kept = [name for name, spec in figures.items() if plan.wanted_figure(spec, FLAT)]
    assert all("system" not in name and "subset" not in name for name in kept)
    assert not any(figures[name]["kind"] in ("criteria", "bootstrap_f1", "topk", "violins") for name in kept)
    assert "williams_story_overall" in kept
    assert all(plan.wanted_figure(spec, HANNA) for spec in plan.figures_of(CRITERIA).values())
    assert not plan.wanted_table("tab9_top5_system", FLAT) and plan.wanted_table("tab8_top5_story", FLAT)
    assert plan.wanted_table("tab3_icc", {**FLAT, "raters": True})
    assert not plan.wanted_table("tab4_system_means", {**FLAT, "raters": True})
    paired = {**FLAT, "raters": True, "paired": True}  # two systems a prompt: means, violins, paired comparisons
    assert plan.wanted_table("tab4_system_means", paired)
    assert plan.wanted_figure(figures["fig09_rating_violins"], paired)
    assert not plan.wanted_figure(figures["fig26_bootstrap_f1"], paired)
    assert plan.stats_tables(paired)[-5:] == ["paired_accuracy", "agreement", "alt_test", "icc", "system_means"]
    assert plan.stats_tables(FLAT) == ["correlations", "confounds", "top_metrics", "borda", "williams", "kemeny",
                                       "kemeny_summary", *plan.REANALYSES]


def test_families_are_made_whole_or_refused():
    figures = plan.figures_of(CRITERIA)
    families = {}
    for name, spec in figures.items():
        families.setdefault(plan.figure_family(spec), []).append(name)
    assert sorted(families["williams_story"])[0] == "fig27_williams_story_relevance"
    assert families["systems"] == ["fig26_bootstrap_f1"] and families["violins"] == ["fig09_rating_violins"]
    assert plan.whole_families(families["topk"], families, "figure") == ["fig08_topk_systems"]
    with pytest.raises(InputError, match=r"family criteria_story: only \['fig01_criteria_story_kendall'\] wanted"):
        plan.whole_families(["fig01_criteria_story_kendall"], families, "figure")
    costs = {family: plan.family_cost({name: figures[name] for name in names}) for family, names in families.items()}
    assert max(costs, key=costs.get) in ("metric_metric_story", "williams_story")  # the longest start first
