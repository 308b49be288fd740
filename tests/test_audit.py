"""storyeval.audit's matching rules and the paper-exact switches, on small made-up inputs."""

import numpy as np
import pandas as pd
import pytest

from storyeval import audit
from storyeval.data.load import exact_means
from storyeval.errors import InputError
from storyeval.stats.correlation import system_level
from storyeval.stats.ranking import borda_points, introsort_argsort


def test_printed_precision_is_the_most_decimals_of_a_column():
    assert audit.decimals([0.18, 0.1, 4.17]) == 2
    assert audit.decimals([1237, 1198]) == 0
    assert audit.decimals([42.6, 38.1, None]) == 1


def test_grade_number_exact_rounding_rules_and_missing():
    assert audit.grade_number(58, 58.43, 0) == "exact"
    assert audit.grade_number(42.6, 42.549, 1) == "within"  # half up through two decimals: 42.55 -> 42.6
    assert audit.grade_number(0.13, 0.125, 2) == "within"  # half up where round() goes to even
    assert audit.grade_number(0.48, 0.33, 2) == "differs"
    assert audit.grade_number(0.48, None, 2) == "differs"


def test_grade_ranked_same_tie_at_cut_and_different():
    ranking = audit.Ranked(["A", "B", "C", "D"], [60.0, 55.0, 55.0, 50.0])
    assert audit.grade_ranked(ranking, 1, "A", 60.0, 1) == ("exact", "A 60.0")
    assert audit.grade_ranked(ranking, 2, "C", 55.0, 1) == ("within", "B 55.0")  # C ties with B
    assert audit.grade_ranked(ranking, 2, "D", 55.0, 1)[0] == "differs"
    assert audit.grade_ranked(ranking, 3, "Z", None, 1) == ("differs", "C")
    assert audit.grade_ranked(ranking, 5, "A", None, 1) == ("differs", "–")


def test_grade_ranked_family_names_pick_the_variant_by_value():
    ranking = audit.Ranked(["Bary-SD", "Bary-W", "BERT F1"], [90.01, 89.96, 88.7])
    assert audit.grade_ranked(ranking, 2, "Bary", 90.0, 1, family=True)[0] == "exact"
    assert audit.grade_ranked(ranking, 3, "BERT", 88.7, 1, family=True)[0] == "exact"
    assert audit.grade_ranked(ranking, 1, "BERT", 90.0, 1, family=True)[0] == "differs"


def test_status_names_switches_data_limits_or_unexplained():
    assert audit.status("exact", "any", []) == ("exact", "")
    assert audit.status("differs", "any", ["analysis.borda_ties"])[0] == "explained deviation"
    assert "quicksort" in audit.status("differs", "any", ["analysis.borda_ties"])[1]
    assert audit.status("differs", "hanna_tab3_icc2k", [])[0] == "explained deviation"
    assert audit.status("differs", "storyer_tab3", ["analysis.borda_ties"])[0] == "not computed"  # nothing to compare
    assert audit.status("differs", "made_up", [])[0] == "unexplained"


def test_authors_ties_keep_the_last_bit_merged_ties_do_not():
    # Equal in exact arithmetic, 0.6000000000000001 and 0.6 in floats.
    x = np.array([[0.1, 0.3], [0.2, 0.2], [0.3, 0.1]])[:, :, None]
    y = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])[:, :, None]
    merged = system_level(x, y, "kendall")[0]
    authors = system_level(x, y, "kendall", ties="authors", backend="scipy")[0]
    assert np.isnan(merged[0, 0]) and authors[0, 0] == -1.0


def test_introsort_sorts_and_orders_ties_deterministically():
    rng = np.random.default_rng(0)
    for size in (5, 17, 40, 200):
        values = rng.integers(0, 5, size).astype(float)
        order = introsort_argsort(values)
        assert sorted(order) == list(range(size)) and np.all(np.diff(values[order]) >= 0)
    assert list(introsort_argsort([1.0, np.nan, 0.0])) == [2, 0, 1]
    small = [2.0, 1.0, 1.0, 1.0]
    assert list(introsort_argsort(small)) == [1, 2, 3, 0]  # insertion sort below 17 values: stable


def test_ordinal_borda_points_are_distinct_ranks_average_ones_share():
    values = np.array([0.5, 0.2, 0.5, 0.9])
    assert sorted(borda_points(values, "ordinal")) == [0, 1, 2, 3]
    assert list(borda_points(values, "average")) == [1.5, 0, 1.5, 3]


def test_read_paper_values_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match="audit.paper_values"):
        audit.read_paper_values(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tab: {rows: [[1]]}\n")
    with pytest.raises(InputError, match="tab has neither"):
        audit.read_paper_values(bad)


def test_items_refuse_a_table_without_reader():
    with pytest.raises(InputError, match="no audit reader"):
        audit.items({"made_up": {"cells": []}})


def test_layered_profile_overrides_switches(tmp_path):
    profile = tmp_path / "profile.yaml"
    profile.write_text("analysis: {borda_ties: ordinal}\n")
    config = {"analysis": {"system_ties": "merged", "system_coefficients": "vectorised", "borda_ties": "average",
                           "orientation": "oriented", "system_means_unit": "story"},
              "reanalysis": {"top_k_metrics": None, "system_ties": "merged"}}
    values = audit.switch_values(audit.layered(config, profile))
    assert values["analysis.borda_ties"] == "ordinal" and config["analysis"]["borda_ties"] == "average"
    with pytest.raises(InputError, match="paper-exact profile"):
        audit.layered(config, tmp_path / "absent.yaml")


def test_exact_human_means_checked_against_the_rounded_table():
    ratings = pd.DataFrame(
        {"story_id": ["s"] * 3, "criterion": ["Relevance"] * 3, "rater": [1, 2, 3], "rating": [3, 4, 4]}
    )
    rounded = pd.DataFrame({"story_id": ["s"], "criterion": ["Relevance"], "score": [3.666666667]})
    assert exact_means(ratings, rounded)["score"].iloc[0] == 11 / 3
    with pytest.raises(InputError, match="rater_ratings.csv"):
        exact_means(ratings, rounded.assign(score=3.0))


def test_tab4_asterisk_tie_at_printed_precision():
    means = pd.DataFrame({"system": ["Human", "A", "B"], "criterion": ["Empathy"] * 3, "mean": [3.2, 2.4722, 2.4701]})
    spec = {
        "columns": ["system", "Empathy"],
        "rows": [["A", 2.47], ["B", 2.47]],
        "asterisk": [["A", "Empathy"], ["B", "Empathy"]],
    }
    inputs = audit.Inputs(None, None, None, None, means, None, "Human", ())
    grades = [item.grade({}, inputs)[0] for item in audit.hanna_tab4("t", spec)]
    assert grades == ["exact", "exact", "exact", "within"]


def _inputs(human_rounded, human_exact, metrics, registry=None):
    return audit.Inputs({False: human_rounded, True: human_exact}, metrics, registry, None, None, None, "Human", ())


DEFAULT_TIES = {"analysis.system_ties": "merged", "analysis.system_coefficients": "vectorised"}


def test_ties_claim_holds_only_when_the_run_ties_the_exact_equal_means(hanna_cubes):
    """HANNA's Complexity has exact ties of system means that its float means break; the claim 'ties merged' is true
    of full-precision per-story means and false of means rounded to 10 digits, as human_scores.csv once held."""
    human, metrics = hanna_cubes
    exact = audit.likert_system_means(human)
    complexity = human.names.index("Complexity")
    tied = {(human.systems[a], human.systems[b]) for a in range(10) for b in range(a + 1, 10)
            if exact[a][complexity] == exact[b][complexity]}
    assert tied == {("BertGeneration", "RoBERTa"), ("GPT", "TD-VAE")}
    assert exact[human.systems.index("GPT")][complexity] * 144 == 359
    claims = audit._ties_claims(_inputs(human, human, metrics), DEFAULT_TIES, {}, {})
    assert claims == {"analysis.system_ties": True, "reanalysis.system_ties": True}
    rounded = audit.Cube(np.vectorize(lambda v: float(f"{v:.10g}"))(human.values), human.prompts, human.systems,
                         human.names)
    claims = audit._ties_claims(_inputs(rounded, human, metrics), DEFAULT_TIES, {}, {})
    assert claims["analysis.system_ties"] is False


def test_swap_evidence_finds_the_printed_kendall_that_its_spearman_contradicts(hanna_cubes, released):
    """Tab. 9, Complexity, system level: Novelty-1's printed Kendall 67.42 and Spearman 87.54 fit no ordering of
    the systems; chrF's printed 67.42 is the data's."""
    human, metrics = hanna_cubes
    complexity = audit.authors_means(human.values)[:, human.names.index("Complexity")]

    def means(slug):
        return audit.authors_means(metrics.values)[:, metrics.names.index(slug)]

    evidence = audit.swap_evidence(means("novelty-1"), complexity, 67.42, 87.54)
    assert "11 swaps" in evidence and "tau-c is 72.00" in evidence
    assert audit.swap_evidence(means("novelty-1"), complexity, 71.91, 87.54) == ""  # the data's own pair
    assert audit.swap_evidence(means("chrf"), complexity, 67.42, 82.68) == ""


def test_the_audit_opens_with_one_row_per_paper_table():
    table = pd.DataFrame({"paper": ["HANNA Tab. 4", "StoryER Tab. 3", "HANNA Tab. 4", "StoryER Tab. 3"],
                          "status": ["exact", "not computed", "within printed precision", "not computed"]})
    summary = audit.per_table(table)
    assert summary.columns.tolist() == ["paper", "numbers", "exact", "within", "explained", "unexplained",
                                        "not computed"]
    assert summary.values.tolist() == [["HANNA Tab. 4", 2, 1, 1, 0, 0, 0], ["StoryER Tab. 3", 2, 0, 0, 0, 0, 2]]
    assert audit.headline(table).endswith("0 unexplained, 2 not computed (paper-exact profile)")
