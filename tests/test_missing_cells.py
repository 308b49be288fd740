"""Missing cells (a judge's unparsable answer, a metric without a value for a story): the cubes keep them as NaN,
each statistic uses the cells it has, counts what it dropped, and a column with too few values is refused."""

import logging
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from storyeval.config import ConfigSources, take_whole
from storyeval.data.scoreset import MIN_CELLS, build_cube
from storyeval.errors import InputError
from storyeval.stats import kendall, paired, pairwise, permutation
from storyeval.stats.bootstrap import pairwise_labels
from storyeval.stats.correlation import MIN_ITEMS, correlate, system_level
from storyeval.stats.grouping import grouped_table
from storyeval.stats.topk import topk_table
from storyeval.stats.williams import williams_inputs
from storyeval.workflow import judges
from storyeval.workflow.selection import DatasetNote


def gappy(seed: int = 0, shape=(6, 8, 3)) -> np.ndarray:
    values = np.random.default_rng(seed).normal(size=shape)
    if shape[-1] > 1:
        values[0, 2, 1] = values[3, 1, 1] = np.nan
    if shape[-1] > 2:
        values[4, 0, 2] = np.nan
        values[1, :, 2] = np.nan  # a prompt without any value of column 2
    return values


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_each_pair_is_correlated_over_the_items_both_have(coefficient):
    x, y = gappy(1), gappy(2, (6, 8, 2))
    function = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[coefficient]
    r = correlate(x, y, coefficient)
    for g, a, b in np.ndindex(r.shape):
        both = np.isfinite(x[g, :, a]) & np.isfinite(y[g, :, b])
        expected = function(x[g, both, a], y[g, both, b])[0] if both.sum() >= MIN_ITEMS else np.nan
        assert r[g, a, b] == pytest.approx(expected, abs=1e-12, nan_ok=True)
    complete = correlate(x[..., :1], y[..., :1], coefficient)  # complete pairs: the vectorised path, bit for bit
    np.testing.assert_array_equal(r[..., :1, :1], complete)


def test_kendall_variants_count_the_pairs_both_columns_have():
    x, y = gappy(3), np.round(gappy(4, (6, 8, 2)))
    for variant in kendall.VARIANTS:
        r = correlate(x, y, kendall.variant_function(variant))
        for g, a, b in np.ndindex(r.shape):
            both = np.isfinite(x[g, :, a]) & np.isfinite(y[g, :, b])
            expected = kendall.kendall(x[g, both, a][:, None], y[g, both, b][:, None], variant)[0, 0] \
                if both.sum() >= MIN_ITEMS else np.nan
            assert r[g, a, b] == pytest.approx(expected, nan_ok=True), variant


def test_system_means_use_the_prompts_a_system_has():
    x, y = gappy(5), gappy(6, (6, 8, 1))
    r, n = system_level(x, y, "pearson")
    means = np.nanmean(x, axis=0)
    assert r[1, 0] == pytest.approx(stats.pearsonr(means[:, 1], np.nanmean(y, axis=0)[:, 0])[0])
    assert n.tolist() == [[8], [8], [8]]
    table = grouped_table(SimpleNamespace(values=y, names=["h"]), SimpleNamespace(values=x, names=list("abc")),
                          ["none", "item", "system"], ["pearson"])
    assert table.groupby("metric")["missing"].first().tolist() == [0, 2, 9]  # stories dropped per metric
    item = table[table["grouping"] == "item"].set_index("metric")["n"]
    assert item.tolist() == [6, 6, 5]  # prompt 1 has no value of c


def stories_and_scores(missing: int):
    stories = pd.DataFrame({"story_id": [f"s{k}" for k in range(12)], "prompt_id": np.repeat(range(4), 3),
                            "system": ["a", "b", "c"] * 4})
    scores = pd.DataFrame({"story_id": stories["story_id"], "metric": "judge", "value": np.arange(12.0)})
    scores.loc[: missing - 1, "value"] = np.nan
    return stories, scores


def test_the_cube_keeps_missing_cells_and_refuses_a_column_with_too_few(caplog):
    stories, scores = stories_and_scores(2)
    with caplog.at_level(logging.WARNING):
        cube = build_cube(stories, scores, "metric", "value", ["judge"], ["a", "b", "c"], "scores.parquet")
    assert cube.missing.tolist() == [2] and np.isnan(cube.values[0, :2, 0]).all()
    assert "scores.parquet: 2 of 12 cells without a value (NaN), each statistic uses the cells it has: judge 2" \
        in caplog.text
    stories, scores = stories_and_scores(12 - MIN_CELLS + 1)
    with pytest.raises(InputError, match=r"judge' has a value for 2 of 12 stories, fewer than the 3 any statistic"):
        build_cube(stories, scores, "metric", "value", ["judge"], ["a", "b", "c"], "scores.parquet")


def test_bootstrap_means_over_the_drawn_prompts_a_system_has():
    values = gappy(7, (10, 4, 3))
    labels = pairwise_labels(values, 200, seed=3, confidence=0.9)
    draws = np.random.default_rng(3).integers(0, 10, size=(200, 10))
    for k in range(3):
        with warnings.catch_warnings():  # a draw without a value of a system: NaN, it decides nothing
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.array([[np.nanmean(values[draw, s, k]) for s in range(4)] for draw in draws])
        i, j = np.triu_indices(4, k=1)
        first = (means[:, i] - means[:, j] > 1e-10 * np.nanmax(np.abs(values[..., k]))).mean(axis=0) >= 0.9
        second = (means[:, i] - means[:, j] < -1e-10 * np.nanmax(np.abs(values[..., k]))).mean(axis=0) >= 0.9
        np.testing.assert_array_equal(labels[:, k], np.where(first, 1, np.where(second, 2, 0)))


def test_topk_ranks_systems_by_the_cells_they_have():
    human, metrics = gappy(8, (6, 5, 1)), gappy(9, (6, 5, 3))
    human[0, 0, 0] = np.nan
    table = topk_table(human, metrics, list("abc"), ["h"], list("ABCDE"), [5, 4])
    kept = np.argsort(-np.round(np.nanmean(human[..., 0], axis=0), 2), kind="stable")[:4]
    expected = stats.spearmanr(np.nanmean(metrics[..., 2], axis=0)[kept], np.nanmean(human[..., 0], axis=0)[kept])[0]
    assert table.query("k == 4 and metric == 'c'")["r"].item() == pytest.approx(expected)
    assert table.drop_duplicates("metric")["missing"].tolist() == [0, 2, 6]


def test_perm_both_tests_a_gappy_pair_on_the_cells_both_have():
    human, metrics = gappy(10, (6, 5, 1))[..., 0], gappy(11, (6, 5, 3))
    table = permutation.perm_both(human, metrics, list("abc"), "item", "pearson", 200, seed=4)
    alone = permutation.perm_both(human, metrics[..., :2], list("ab"), "item", "pearson", 200, seed=4)
    # the shared swap masks: a pair's test does not depend on the other columns, gappy or not
    both_ways = table.merge(alone, on=["metric_a", "metric_b"], suffixes=("", "_alone"))
    assert len(both_ways) == 2 and np.allclose(both_ways["p"], both_ways["p_alone"])
    assert np.allclose(both_ways["delta"], both_ways["delta_alone"])
    both = ~np.isnan(metrics[..., 1]) & ~np.isnan(metrics[..., 2])
    z = permutation.standardized(metrics)
    b, c = np.where(both, z[..., 1], np.nan), np.where(both, z[..., 2], np.nan)
    delta = (correlate(b[..., None], human[..., None], "pearson") - correlate(c[..., None], human[..., None],
                                                                              "pearson"))[:, 0, 0]
    row = table[(table["metric_a"] == "b") & (table["metric_b"] == "c")]
    assert row["delta"].item() == pytest.approx(np.nanmean(delta))
    assert ((table["p"] > 0) & (table["p"] <= 1)).all()
    intervals = permutation.boot_both(human[..., None], metrics, list("abc"), ["h"], "none", "pearson", 50, seed=1)
    assert intervals["missing"].tolist() == [0, 2, 6] and intervals[["ci_low", "ci_high"]].notna().all().all()


def test_pairwise_accuracy_and_soft_pairwise_accuracy_skip_missing_cells():
    human, metrics = gappy(12, (6, 4, 1)), gappy(13, (6, 4, 3))
    accuracy = pairwise.pairwise_accuracy(human, metrics)
    means = np.nanmean(metrics, axis=0)
    i, j = np.triu_indices(4, k=1)
    agree = np.sign(means[i, 1] - means[j, 1]) == np.sign(np.nanmean(human, axis=0)[i, 0] - np.nanmean(human,
                                                                                                      axis=0)[j, 0])
    assert accuracy[1, 0] == pytest.approx(agree.mean())
    p = pairwise.pairwise_pvalues(metrics, 100, seed=2)
    flips = np.where(np.random.default_rng(2).random((100, 6)) < 0.5, -1.0, 1.0)
    for pair, (s, t) in enumerate(zip(i, j)):
        d = metrics[:, s, 2] - metrics[:, t, 2]
        d = np.where(np.isnan(d), 0.0, d)
        expected = ((flips @ d >= d.sum() - 1e-10 * np.nansum(np.abs(metrics[..., 2]))).sum() + 1) / 101
        assert p[pair, 2] == pytest.approx(expected)


def test_paired_accuracy_counts_the_pairs_it_dropped():
    human, metrics = np.round(gappy(14, (5, 3, 1)) * 2), gappy(15, (5, 3, 3))
    table = paired.paired_accuracy(metrics, human, list("abc"), ["h"], [False] * 3, seed=0, n_resamples=50)
    assert table["pairs"].tolist() == [15, 11, 10] and table["dropped"].tolist() == [0, 4, 5]
    assert table["accuracy"].notna().all()


def test_williams_n_counts_the_items_all_three_have():
    human, metrics = gappy(16, (6, 5, 1)), gappy(17, (6, 5, 3))
    r_mc, r_mm, n = williams_inputs(human, metrics, "story", "pooled")
    present_h = np.isfinite(human.reshape(30, 1))
    present_m = np.isfinite(metrics.reshape(30, 3))
    assert n[1, 2, 0] == (present_m[:, 1] & present_m[:, 2] & present_h[:, 0]).sum()
    assert williams_inputs(human[..., :1], metrics[..., :1], "story", "pooled")[2] == 30  # complete: a number


def test_a_layered_config_names_the_judged_datasets_whole(tmp_path):
    base, layer = tmp_path / "config.yaml", tmp_path / "mine.yaml"
    base.write_text("judges:\n  datasets:\n    hanna: {}\n    hanna-llm: {}\n")
    layer.write_text("judges:\n  datasets:\n    mine: {criteria: {Flow: how it reads}}\n")
    merged = {"judges": {"datasets": {"hanna": {}, "hanna-llm": {}, "mine": {"criteria": {"Flow": "how it reads"}}}}}
    take_whole(merged, ConfigSources((str(base), str(layer))))
    assert list(merged["judges"]["datasets"]) == ["mine"]
    kept = {"judges": {"datasets": {"hanna": {}, "hanna-llm": {}}, "models": {}}}
    take_whole(kept, ConfigSources((str(base), str(tmp_path / "unrelated.yaml"))))
    assert list(kept["judges"]["datasets"]) == ["hanna", "hanna-llm"]


def test_startup_speaks_only_of_the_judge_jobs_and_datasets_of_the_dag():
    cost = [judges.JobCost({}, dataset, "tiny", "geval", {}) for dataset in ("mine", "hanna-llm")]
    jobs = [SimpleNamespace(wildcards_dict={"dataset": "mine", "judge": "tiny", "template": "geval"},
                            rule=SimpleNamespace(name="llm_judge"), output=["results/mine/computed/judges/x.parquet"]),
            SimpleNamespace(wildcards_dict={"dataset": "hanna-llm"}, rule=SimpleNamespace(name="merge_scores"),
                            output=["results/hanna-llm/computed/scores.parquet"])]
    assert judges.asked(["a note", *cost], jobs) == ["a note", cost[0]]
    about = [DatasetNote("bleu left out (wp200): no reference text", ["wp200"]),
             DatasetNote("perplexity left out (hanna-llm, wp200): no model", ["hanna-llm", "wp200"])]
    assert judges.asked(about, jobs) == about[1:]  # a line about datasets the run does not touch is not said
    assert judges.asked(["a note", *about], []) == ["a note"]


def test_a_constant_column_is_no_scale_without_a_warning(recwarn):
    metrics = gappy(18, (5, 5, 4))
    metrics[..., 0] = 3.0
    metrics[..., 2] = 1e9 + np.where(np.isnan(metrics[..., 2]), np.nan, 1e-8)  # equal up to rounding
    z = permutation.standardized(metrics)
    assert np.isnan(z[..., [0, 2]]).all() and np.nanstd(z[..., 1]) == pytest.approx(1)
    human = np.random.default_rng(19).normal(size=(5, 5))
    table = permutation.perm_both(human, metrics, list("abcd"), "none", "pearson", 20, seed=0)
    intervals = permutation.boot_both(human[..., None], metrics, list("abcd"), ["h"], "item", "pearson", 20, seed=0)
    undefined = table["metric_a"].isin(["a", "c"]) | table["metric_b"].isin(["a", "c"])
    assert table.loc[undefined, "p"].isna().all() and table.loc[~undefined, "p"].between(0, 1).all()
    assert (~undefined).sum() == 2  # b against d, both ways
    assert intervals.loc[0, ["ci_low", "ci_high"]].isna().all()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_column_constant_where_it_has_values_is_named_constant():
    from storyeval.analysis import constant_columns
    from storyeval.data.scoreset import Cube

    values = gappy(20, (6, 4, 3))
    values[..., 2] = np.where(np.isnan(values[..., 2]), np.nan, 3.0)  # a judge that answers 3 when it answers
    assert constant_columns(Cube(values, list(range(6)), list("ABCD"), list("abc"))) == ["c"]
