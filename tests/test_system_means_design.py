"""Tab. 4's design on planted data: the story as the interval's unit (a rater's ratings of one story are not
independent draws), a mean over the criteria only on one scale, the systems best first where the table is shown, and
the audit's Tab. 4 under either unit (Chhun et al. 2022, Tab. 4)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from storyeval import audit
from storyeval.analysis import system_means
from storyeval.criteria import AVERAGE, SCALED_AVERAGE
from storyeval.tables import best_first, tab4_note, tab4_system_means

# 3 systems x 5 stories x 2 raters; each story's two ratings are its planted mean -/+ 0.5.
STORY_MEANS = {"A": [2.5, 3.0, 3.5, 2.0, 4.0], "B": [4.0, 4.5, 3.5, 4.0, 5.0], "C": [1.5, 2.0, 1.0, 2.5, 1.5]}


def planted(criteria=("Relevance", "Coherence"), shift=None):
    """Stories and rater ratings with STORY_MEANS on every criterion (times `shift[criterion]` where given)."""
    stories, rows = [], []
    for system, means in STORY_MEANS.items():
        for index, mean in enumerate(means):
            story = f"{system}{index}"
            stories.append({"story_id": story, "system": system})
            for criterion in criteria:
                factor = (shift or {}).get(criterion, 1)
                rows += [(story, criterion, rater, factor * (mean + offset))
                         for rater, offset in ((1, -0.5), (2, 0.5))]
    return pd.DataFrame(stories), pd.DataFrame(rows, columns=["story_id", "criterion", "rater", "rating"])


def scipy_interval(values, level=0.95):
    values = np.asarray(values, dtype=float)
    low, high = stats.t.interval(level, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    return values.mean(), low, high


def test_the_default_interval_is_over_the_story_means():
    stories, ratings = planted()
    means = system_means(stories, ratings).set_index(["criterion", "system"])
    for system, planted_means in STORY_MEANS.items():
        row = means.loc[("Relevance", system)]
        assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx(scipy_interval(planted_means), abs=1e-12)
        assert row["n"] == 5 and row["unit"] == "story"


def test_the_rating_unit_keeps_hannas_interval_over_the_ratings():
    stories, ratings = planted()
    means = system_means(stories, ratings, unit="rating").set_index(["criterion", "system"])
    for system, planted_means in STORY_MEANS.items():
        values = [mean + offset for mean in planted_means for offset in (-0.5, 0.5)]
        row = means.loc[("Coherence", system)]
        assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx(scipy_interval(values), abs=1e-12)
        assert row["n"] == 10 and row["unit"] == "rating"
    story = system_means(stories, ratings).set_index(["criterion", "system"])
    # Ten ratings as if independent: a narrower interval than the five stories give, around the same mean.
    assert (means["ci_high"] - means["ci_low"] < story["ci_high"] - story["ci_low"]).all()
    assert np.allclose(means["mean"], story["mean"])
    with pytest.raises(ValueError, match="use one of story, rating"):
        system_means(stories, ratings, unit="rater")


def test_unequal_raters_weigh_each_story_once():
    stories, ratings = planted(("Relevance",))
    extra = pd.DataFrame([("A4", "Relevance", rater, 5.0) for rater in (3, 4, 5, 6)], columns=ratings.columns)
    ratings = pd.concat([ratings, extra], ignore_index=True)  # story A4 (planted mean 4.0) gets four 5s more
    means = system_means(stories, ratings).set_index(["criterion", "system"])
    story_means = STORY_MEANS["A"][:4] + [(3.5 + 4.5 + 4 * 5.0) / 6]
    assert means.loc[("Relevance", "A"), "mean"] == pytest.approx(np.mean(story_means))
    by_rating = system_means(stories, ratings, unit="rating").set_index(["criterion", "system"])
    of_a = ratings[ratings["story_id"].str.startswith("A")]["rating"]
    assert by_rating.loc[("Relevance", "A"), "mean"] == pytest.approx(of_a.mean())
    assert by_rating.loc[("Relevance", "A"), "mean"] > means.loc[("Relevance", "A"), "mean"]


def test_one_scale_keeps_the_plain_average():
    stories, ratings = planted(("Relevance", "Coherence", "Empathy"))
    means = system_means(stories, ratings)
    assert AVERAGE in set(means["criterion"]) and SCALED_AVERAGE not in set(means["criterion"])
    average = means[means["criterion"] == AVERAGE].set_index("system")["mean"]
    assert average.to_dict() == pytest.approx({system: np.mean(values) for system, values in STORY_MEANS.items()})


def test_a_total_beside_items_averages_the_criteria_scaled_to_0_1():
    """A 0-100 total beside 0-10 items: no plain Average; each criterion scaled to [0, 1] by its range first."""
    stories, ratings = planted(("Total", "Plot", "Style"), shift={"Total": 20, "Plot": 2, "Style": 2})
    means = system_means(stories, ratings)
    assert AVERAGE not in set(means["criterion"]) and SCALED_AVERAGE in set(means["criterion"])
    bounds = ratings.groupby("criterion")["rating"].agg(["min", "max"])
    scaled = ratings.assign(rating=(ratings["rating"] - ratings["criterion"].map(bounds["min"]))
                            / ratings["criterion"].map(bounds["max"] - bounds["min"]))
    expected = scaled.merge(stories).groupby(["system", "story_id"])["rating"].mean().groupby("system").mean()
    got = means[means["criterion"] == SCALED_AVERAGE].set_index("system")["mean"]
    assert got.to_dict() == pytest.approx(expected.to_dict()) and got.between(0, 1).all()
    table = tab4_system_means(means)
    assert list(table.columns) == ["System", "Plot", "Style", "Total", SCALED_AVERAGE]
    assert "scaled to [0, 1]" in tab4_note(means)


def test_a_declared_scale_puts_every_criterion_on_it():
    stories, ratings = planted(("Total", "Plot"), shift={"Total": 20, "Plot": 2})
    means = system_means(stories, ratings, scale=[0, 100])
    assert AVERAGE in set(means["criterion"]) and SCALED_AVERAGE not in set(means["criterion"])


def test_a_criterion_without_spread_beside_other_scales_leaves_the_average_out():
    stories, ratings = planted(("Total", "Plot"), shift={"Total": 20})
    ratings.loc[ratings["criterion"] == "Plot", "rating"] = 3.0
    means = system_means(stories, ratings)
    assert set(means["criterion"]) == {"Total", "Plot"}
    assert list(tab4_system_means(means).columns) == ["System", "Plot", "Total"]
    assert "no Average" in tab4_note(means)


def test_the_table_lists_the_systems_best_first_and_the_csv_keeps_the_stories_order():
    stories, ratings = planted()
    means = system_means(stories, ratings)
    assert list(dict.fromkeys(means["system"])) == ["A", "B", "C"]  # system_means.csv: the stories file's order
    table = tab4_system_means(means, "Human")
    assert list(table["System"]) == ["B", "A", "C"]  # by Average: 4.2, 3.0, 1.7
    assert table.columns[-1] == AVERAGE and tab4_note(means) == "; intervals over story means; systems best first"
    no_average = means[means["criterion"] != AVERAGE]
    assert best_first(no_average) == ["B", "A", "C"]  # by the mean rank over the criteria
    assert tab4_note(system_means(stories, ratings, unit="rating")).startswith("; intervals over the individual")


def test_hanna_likert_criteria_keep_the_plain_average(hanna_mirror, released):
    from storyeval.data.hanna import read_rater_ratings

    ratings = read_rater_ratings(hanna_mirror / "hanna_metric_scores_llm.csv", released.human_scores)
    means = system_means(released.stories, ratings)
    assert set(means["criterion"]) >= {AVERAGE} and SCALED_AVERAGE not in set(means["criterion"])
    table = tab4_system_means(means, "Human")
    assert table["System"].iloc[0] == "Human" and table.columns[-1] == AVERAGE


def _audit_inputs(stories, ratings, reference="C"):
    fallback = system_means(stories, ratings)
    return audit.Inputs(None, None, None, None, fallback, None, reference, (), stories, ratings)


def test_the_audit_grades_tab4_under_each_unit_and_names_the_switch_only_where_it_holds():
    """Printed as the rating unit gives them: exact under paper-exact (rating); under the default (story) the
    switch explains the deviation only where stories have unequal numbers of raters."""
    stories, ratings = planted(("Relevance",))
    extra = pd.DataFrame([("A4", "Relevance", rater, 5.0) for rater in (3, 4, 5, 6)], columns=ratings.columns)
    ratings = pd.concat([ratings, extra], ignore_index=True)
    inputs = _audit_inputs(stories, ratings)
    by_rating = system_means(stories, ratings, unit="rating").set_index(["criterion", "system"])["mean"]
    printed = round(float(by_rating[("Relevance", "A")]), 2)
    spec = {"columns": ["system", "Relevance"], "rows": [["A", printed]]}
    item = audit.hanna_tab4("t", spec)[0]
    cache = {}
    for unit, grade in (("rating", "exact"), ("story", "differs")):
        means = cache.setdefault(unit, system_means(stories, ratings, unit=unit))
        assert item.grade({"system_means": means}, inputs)[0] == grade, unit
    assert audit._unit_claim(inputs, {}, {}, {}) is True
    assert audit._unit_claim(_audit_inputs(*planted()), {}, {}, {}) is False  # two raters everywhere
    assert audit.status("differs", "t", ["analysis.system_means_unit"])[1].startswith("HANNA's Tab. 4 averages")


def test_the_paper_exact_profile_sets_the_rating_unit_and_the_default_is_the_story():
    from pathlib import Path

    import yaml

    repo = Path(__file__).resolve().parents[1]
    schema = yaml.safe_load((repo / "workflow/schemas/config.schema.yaml").read_text(encoding="utf-8"))
    assert audit.schema_defaults(schema)["analysis.system_means_unit"] == "story"
    profile = yaml.safe_load((repo / "config/paper-exact.yaml").read_text(encoding="utf-8"))
    assert profile["analysis"]["system_means_unit"] == "rating"
    assert yaml.safe_load((repo / "config.yaml").read_text(encoding="utf-8"))["analysis"]["system_means_unit"] == \
        "story"


def test_hannas_printed_tab4_grades_alike_under_both_units(hanna_mirror, released):
    """Every story of HANNA has three raters: the story unit changes Tab. 4's intervals, not a printed mean or
    star, so the audit's Tab. 4 statuses are the same under the default and the paper-exact profile."""
    from storyeval.data.hanna import read_rater_ratings

    ratings = read_rater_ratings(hanna_mirror / "hanna_metric_scores_llm.csv", released.human_scores)
    inputs = _audit_inputs(released.stories, ratings, "Human")
    spec = audit.read_paper_values(audit.Path(audit.__file__).with_name("printed_numbers.yaml"))
    items = audit.hanna_tab4("hanna_tab4_system_means", spec["hanna_tab4_system_means"])
    means = {unit: system_means(released.stories, ratings, unit=unit) for unit in ("story", "rating")}
    grades = {unit: [item.grade({"system_means": means[unit]}, inputs) for item in items] for unit in means}
    assert grades["story"] == grades["rating"]
    assert {grade for grade, _ in grades["rating"]} <= {"exact", "within"} and len(items) == 11 * 7 + 8
    assert audit._unit_claim(inputs, {}, {}, {}) is False
