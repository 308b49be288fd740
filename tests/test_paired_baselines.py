"""The paired accuracy's baselines: chance with ties and the better system (storyeval.stats.paired)."""

import numpy as np
import pandas as pd
import pytest

from storyeval.plots.pages import paired_view
from storyeval.stats.paired import BASELINES, baselines, paired_accuracy, system_scores


def planted(seed=0):
    """2 systems x 50 prompts, mean ratings in thirds (3 raters): system A's story is rated higher on 45 prompts,
    tied on 3, lower on 2."""
    rng = np.random.default_rng(seed)
    b = rng.integers(3, 10, size=50) / 3
    gap = np.concatenate([rng.integers(1, 4, size=45), np.zeros(3), -rng.integers(1, 3, size=2)]) / 3
    human = np.column_stack([b + gap, b])[:, :, None]  # [P, S, 1]: system A first
    return human, rng


def table(metrics, human, names):
    return paired_accuracy(np.stack(metrics, axis=-1), human, names, ["q"], [False] * len(names), seed=7,
                           n_resamples=500).set_index("metric")


def test_is_system_a_equals_the_system_baseline_and_does_not_beat_it():
    human, _ = planted()
    is_a = np.tile([1.0, 0.0], (50, 1))
    row = table([is_a], human, ["is_a"]).loc["is_a"]
    assert row["accuracy"] == pytest.approx(45 / 50) and row["system_accuracy"] == row["accuracy"]
    assert not row["beats_system"] and row["beats_chance"]
    assert row["chance"] == pytest.approx(max(3 / 50, 47 / 100))
    reference = baselines(human, ["q"], seed=7, n_resamples=500).set_index("metric")
    system = reference.loc["baseline_system"]
    # The same pairs, the same bootstrap draw: the baseline row is the "is A" metric's row.
    same = ["accuracy", "accuracy_low", "accuracy_high", "pairs", "human_ties"]
    assert system[same].tolist() == row[same].tolist()


def test_a_metric_tracking_quality_within_prompts_beats_it():
    human, rng = planted()
    quality = human[..., 0] + rng.normal(0, 0.01, size=(50, 2)) * (human[:, :1, 0] != human[:, 1:, 0])
    row = table([quality], human, ["quality"]).loc["quality"]
    assert row["accuracy"] == 1 and row["accuracy_low"] > row["system_accuracy"] == pytest.approx(0.9)
    assert row["beats_system"] and row["beats_chance"]
    noise = table([rng.normal(size=(50, 2))], human, ["noise"]).loc["noise"]
    assert not noise["beats_system"]


def test_a_constant_metric_equals_the_ties_baseline_exactly():
    human, _ = planted()
    constant = table([np.full((50, 2), 3.0)], human, ["constant"]).loc["constant"]
    reference = baselines(human, ["q"], seed=7, n_resamples=500).set_index("metric")
    ties = reference.loc["baseline_constant"]
    scored = ["accuracy", "accuracy_low", "accuracy_high", "calibrated", "calibrated_low", "calibrated_high"]
    assert constant[scored].tolist() == ties[scored].tolist() and ties["accuracy"] == 3 / 50
    assert not constant["beats_chance"] and not constant["beats_system"]
    coin = reference.loc["baseline_coin"]
    assert coin["accuracy"] == pytest.approx(47 / 100) and coin["accuracy_low"] <= coin["accuracy"] <= coin[
        "accuracy_high"]
    assert coin["calibrated"] == pytest.approx(47 / 100) and list(reference.index) == list(BASELINES)
    assert coin["calibrated_low"] <= coin["calibrated"] <= coin["calibrated_high"]


def test_the_system_scores_leave_the_prompt_out():
    human = np.array([[[1.0], [5.0]], [[3.0], [np.nan]], [[5.0], [2.0]]])
    scores = system_scores(human)[..., 0]
    assert scores[:, 0].tolist() == [4.0, 3.0, 2.0]
    assert scores[:, 1].tolist() == [2.0, 3.5, 5.0]
    alone = system_scores(np.array([[[1.0], [2.0]], [[np.nan], [3.0]]]))[..., 0]
    assert np.isnan(alone[0, 0]) and alone[1, 0] == 1.0  # on prompt 0, system A has no other rated prompt


def test_the_page_lists_the_metrics_then_the_baselines():
    human, rng = planted()
    measured = table([np.tile([1.0, 0.0], (50, 1)), human[..., 0]], human, ["is_a", "quality"]).reset_index()
    reference = baselines(human, ["q"], seed=7, n_resamples=500)
    frame = pd.concat([measured.assign(label=measured["metric"]),
                       reference.assign(label=reference["metric"].map(BASELINES))], ignore_index=True)
    shown = paired_view(frame)
    assert shown["Metric"].tolist() == ["quality", "is_a", *BASELINES.values()]
    assert shown["Beats better system"].tolist() == ["yes", "no", "", "", ""]


def test_with_mostly_tied_humans_chance_is_the_tie_share():
    human, _ = planted()
    human[:30, 1] = human[:30, 0]  # 30 more ties: 33 of the 50 pairs, 15 left where A wins
    is_a = table([np.tile([1.0, 0.0], (50, 1))], human, ["is_a"]).loc["is_a"]
    coin = baselines(human, ["q"], seed=7, n_resamples=500).set_index("metric").loc["baseline_coin"]
    assert is_a["chance"] == pytest.approx(33 / 50) and coin["accuracy"] == pytest.approx(17 / 100)
    assert coin["calibrated"] == pytest.approx(33 / 50)  # tie-calibrated, a random metric ties everything
    assert is_a["accuracy"] == pytest.approx(15 / 50) and not is_a["beats_chance"]
