"""Paired accuracy within prompts (Deutsch et al. 2023's acc with ties) and the confound flags."""

import numpy as np
import pandas as pd
import pytest

from storyeval.stats.confounds import LENGTH, confound_table, disagree, flagged, warnings_of, within_system
from storyeval.stats.kendall import calibrate, kendall
from storyeval.stats.paired import paired_accuracy


def accuracy(metric, human, lower=(False,), resamples=200):
    """paired_accuracy of [P, S] arrays, one metric and one criterion: its one row."""
    return paired_accuracy(np.asarray(metric, float)[..., None], np.asarray(human, float)[..., None], ["m"], ["c"],
                           lower, seed=1, n_resamples=resamples).iloc[0]


def test_a_hand_computed_case():
    """Five prompts, two stories each. Human differences (first - second): +1, -1, 0, +2, 0; metric: +0.5, -0.1,
    0, -0.3, +0.05. At epsilon 0: prompts 1 and 2 agree, 3 both tie, 4 and 5 do not -> 3/5. Calibrated: epsilon
    0.05 ties prompt 5 (a human tie) -> 4/5; 0.1 also ties prompt 2 (lost) -> 3/5; 0.3 ties prompt 4 (no gain);
    0.5 loses prompt 1. So 4/5 at 0.05."""
    human = [[2, 1], [1, 2], [3, 3], [4, 2], [1, 1]]
    metric = [[0.5, 0.0], [0.0, 0.1], [0.2, 0.2], [0.0, 0.3], [0.05, 0.0]]
    row = accuracy(metric, human)
    assert row["accuracy"] == pytest.approx(3 / 5)
    assert row["calibrated"] == pytest.approx(4 / 5) and row["epsilon"] == pytest.approx(0.05)
    assert (row["pairs"], row["human_ties"], row["metric_ties"]) == (5, 2, 1)
    assert row["accuracy_low"] <= row["accuracy"] <= row["accuracy_high"]
    assert row["calibrated_low"] <= row["calibrated"] <= row["calibrated_high"]
    # Lower is better: the same scores negated give the same accuracy.
    negated = accuracy(-np.asarray(metric), human, lower=(True,))
    same = ["accuracy", "calibrated", "epsilon"]
    assert negated[same].tolist() == row[same].tolist()


def test_agrees_with_the_kendall_module_on_three_systems():
    rng = np.random.default_rng(0)
    human = rng.integers(1, 4, size=(30, 3, 2)).astype(float)
    metrics = np.round(human[..., :1] + rng.normal(0, 0.7, size=(30, 3, 3)), 1)
    table = paired_accuracy(metrics, human, ["a", "b", "c"], ["x", "y"], [False] * 3, seed=3, n_resamples=50)
    value, epsilon = calibrate(metrics, human, "acc23")
    plain = kendall(metrics, human, "acc23").mean(axis=0)
    assert np.allclose(table["calibrated"], value.T.ravel()) and np.allclose(table["epsilon"], epsilon.T.ravel())
    assert np.allclose(table["accuracy"], plain.T.ravel())


def test_the_human_score_itself_negated_and_constant():
    rng = np.random.default_rng(2)
    human = rng.integers(1, 6, size=(40, 2)).astype(float)
    ties = np.mean(human[:, 0] == human[:, 1])
    assert 0 < ties < 1
    assert accuracy(human, human)["accuracy"] == 1 and accuracy(human, human)["calibrated"] == 1
    untied = human[human[:, 0] != human[:, 1]]
    assert accuracy(-untied, untied)["accuracy"] == 0 and accuracy(-untied, untied)["calibrated"] == 0
    constant = accuracy(np.zeros_like(human), human)  # every pair a metric tie: right exactly on the human ties
    assert constant["accuracy"] == pytest.approx(ties) and constant["calibrated"] == pytest.approx(ties)


def test_the_interval_is_seeded():
    human = np.random.default_rng(4).integers(1, 6, size=(25, 2))
    metric = human + np.random.default_rng(5).normal(0, 1, size=(25, 2))
    assert accuracy(metric, human).equals(accuracy(metric, human))


def system_driven(n=60, seed=0):
    """Two systems: system B's stories are longer and rated higher, but within each system length and rating
    are independent; a quality metric tracks the rating within systems."""
    rng = np.random.default_rng(seed)
    system = np.repeat(["A", "B"], n)
    rating = np.where(system == "B", 4.0, 2.0) + rng.normal(0, 0.3, 2 * n)
    length = np.where(system == "B", 400.0, 200.0) + rng.normal(0, 10, 2 * n)
    quality = rating + rng.normal(0, 0.1, 2 * n)
    return system, rating, length, quality


def test_a_pooled_correlation_driven_by_the_system_is_flagged():
    system, rating, length, quality = system_driven()
    metrics, human = np.column_stack([length, quality]), rating[:, None]
    within, count = within_system(metrics, human, system, "pearson")
    assert count == 2 and abs(within[0, 0]) < 0.3 and within[1, 0] > 0.9
    pooled = np.corrcoef(np.column_stack([metrics, human]).T)[:2, 2]
    assert pooled[0] > 0.9  # length "predicts" the rating over the pool
    assert disagree(pooled, within[:, 0], 0.2).tolist() == [True, False]
    table = confound_table(metrics, human, system, [LENGTH, "quality"], ["rating"], ["pearson", "spearman"], 0.2,
                           0.8)
    words = table.query("coefficient == 'pearson'").set_index("metric")["confound"].to_dict()
    assert words == {LENGTH: "system", "quality": "length"}  # quality tracks the systems' lengths too
    assert np.allclose(table.query("coefficient == 'pearson'")["pooled_r"], pooled)
    lines = warnings_of(table)
    assert any(line.startswith(f"confound: {LENGTH} x rating (pearson): pooled +0.9") for line in lines)
    top = pd.DataFrame({"level": "story", "coefficient": "pearson", "metric": [LENGTH, "quality", "other"],
                        "criterion": "rating"})
    shown = flagged(top, table, {"metric": "metric", "criterion": "criterion", "coefficient": "coefficient"})
    assert shown["confound"].tolist() == ["system", "length", ""]
    lenient = confound_table(metrics, human, np.arange(len(system)), [LENGTH, "quality"], ["rating"], ["pearson"],
                             0.2, 0.99)  # each story its own system: no within-system value; a higher length limit
    assert (lenient["confound"] == "").all() and lenient["within_r"].isna().all()


def test_no_flag_where_pooled_and_within_agree():
    rng = np.random.default_rng(1)
    system = np.repeat(["A", "B", "C"], 40)
    rating = rng.normal(3, 1, 120)  # no system effect
    metric = rating + rng.normal(0, 0.5, 120)
    within, count = within_system(metric[:, None], rating[:, None], system, "spearman")
    pooled = np.corrcoef(metric, rating)[0, 1]
    assert count == 3 and not disagree(np.array([pooled]), within[:, 0], 0.2).any()


def test_the_confound_keys_are_schema_checked():
    import yaml
    from snakemake.utils import validate

    from conftest import REPO

    schema = str(REPO / "workflow/schemas/config.schema.yaml")
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    del config["stats"]["confound_margin"], config["stats"]["length_confound"]
    validate(config, schema)
    assert (config["stats"]["confound_margin"], config["stats"]["length_confound"]) == (0.2, 0.8)
    for key, value in (("confound_margin", -0.1), ("length_confound", 1.5)):
        with pytest.raises(Exception, match="minimum|maximum"):
            validate({**config, "stats": {**config["stats"], key: value}}, schema)


def test_a_sign_flip_counts_only_away_from_zero():
    pooled, within = np.array([0.013, 0.15, 0.5, np.nan]), np.array([-0.003, -0.02, 0.25, 0.1])
    assert disagree(pooled, within, 0.2).tolist() == [False, True, True, False]
