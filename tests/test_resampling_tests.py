"""PERM-BOTH, BOOT-BOTH, clusters, pairwise accuracy, SPA and BH, each against an independent computation."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from storyeval.errors import InputError
from storyeval.stats import fdr, pairwise, permutation

pytestmark = [
    pytest.mark.filterwarnings("ignore:An input array is constant"),
    pytest.mark.filterwarnings("ignore:Mean of empty slice"),
]


def _data(seed, prompts=6, systems=4, metrics=3):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, (prompts, systems)).astype(float)
    scores = human[..., None] * rng.uniform(0, 1, metrics) + rng.normal(size=(prompts, systems, metrics))
    return human, scores


def _r(coefficient, grouping, metric, human):
    """Grouped correlation by scipy loops, independent of storyeval.stats.grouping."""
    f = {
        "pearson": lambda x, y: stats.pearsonr(x, y).statistic,
        "kendall": lambda x, y: stats.kendalltau(x, y).statistic,
    }[coefficient]
    if grouping == "none":
        return f(metric.ravel(), human.ravel())
    if grouping == "item":
        return np.nanmean([f(m, h) for m, h in zip(metric, human)])
    return f(metric.mean(axis=0), human.mean(axis=0))


@pytest.mark.parametrize("grouping", ["none", "item", "system"])
@pytest.mark.parametrize("coefficient", ["pearson", "kendall"])
def test_perm_both_equals_a_loop_over_the_same_swaps(grouping, coefficient):
    human, scores = _data(5)
    table = permutation.perm_both(
        human, scores, ["a", "b", "c"], grouping, coefficient, n_permutations=40, seed=9, block=15
    )
    z = stats.zscore(scores.reshape(-1, 3), axis=0).reshape(scores.shape)
    masks = permutation.swap_masks(40, *human.shape, 9)
    for (i, j), name in zip([(0, 1), (0, 2), (1, 2)], ["ab", "ac", "bc"]):
        observed = _r(coefficient, grouping, z[..., i], human) - _r(coefficient, grouping, z[..., j], human)
        null = [
            _r(coefficient, grouping, np.where(w, z[..., j], z[..., i]), human)
            - _r(coefficient, grouping, np.where(w, z[..., i], z[..., j]), human)
            for w in masks
        ]
        row = table[(table.metric_a == name[0]) & (table.metric_b == name[1])].iloc[0]
        back = table[(table.metric_a == name[1]) & (table.metric_b == name[0])].iloc[0]
        assert row.delta == pytest.approx(observed, abs=1e-12) and back.delta == pytest.approx(-observed, abs=1e-12)
        assert row.p == (np.sum(np.asarray(null) >= observed - 1e-12) + 1) / 41  # Phipson & Smyth's (k + 1) / (n + 1)
        assert back.p == (np.sum(np.asarray(null) <= observed + 1e-12) + 1) / 41
        assert row.permutations == 40 and row.p_min == 1 / 41


@pytest.mark.parametrize("coefficient", ["pearson", "kendall"])
def test_system_perm_systems_swaps_the_system_means(coefficient):
    """mt-metrics-eval's system-level null: z-scored system means, one swap per system, by a scipy loop."""
    human, scores = _data(11, prompts=7, systems=6)
    table = permutation.perm_both(human, scores, ["a", "b", "c"], "system", coefficient, n_permutations=60, seed=4,
                                  system_perm="systems")
    means, gold = scores.mean(axis=0), human.mean(axis=0)
    z = stats.zscore(means, axis=0)
    masks = permutation.swap_masks(60, 1, 6, 4)[:, 0]
    f = {"pearson": stats.pearsonr, "kendall": stats.kendalltau}[coefficient]
    for (i, j), name in zip([(0, 1), (0, 2), (1, 2)], ["ab", "ac", "bc"]):
        observed = f(z[:, i], gold).statistic - f(z[:, j], gold).statistic
        null = np.array([f(np.where(w, z[:, j], z[:, i]), gold).statistic
                         - f(np.where(w, z[:, i], z[:, j]), gold).statistic for w in masks])
        row = table[(table.metric_a == name[0]) & (table.metric_b == name[1])].iloc[0]
        assert row.delta == pytest.approx(observed, abs=1e-12)
        assert row.p == (np.sum(null >= observed - 1e-12) + 1) / 61
    cells = permutation.perm_both(human, scores, ["a", "b", "c"], "system", coefficient, n_permutations=60, seed=4)
    assert not np.array_equal(cells["p"], table["p"])  # the two nulls differ
    with pytest.raises(InputError, match="system_perm"):
        permutation.perm_both(human, scores, ["a", "b", "c"], "system", system_perm="prompts")


def test_pearson_fast_path_equals_swapped_recomputation():
    human, scores = _data(6, prompts=9, systems=5, metrics=4)
    scores[2, :, 1] = 0.5  # a prompt where one metric is constant: no r there
    z = permutation.standardized(scores)
    first, second = np.triu_indices(4, k=1)
    swap = permutation.swap_masks(30, 9, 5, 1)[..., None]
    for grouping in ["none", "item", "system"]:
        fast = permutation.pearson_null(z, human[..., None], first, second, swap, grouping)
        a, b = z[..., first], z[..., second]
        slow = (
            permutation.batch_correlation(np.where(swap, b, a), human[..., None], grouping, "pearson")
            - permutation.batch_correlation(np.where(swap, a, b), human[..., None], grouping, "pearson")
        )[..., 0]
        np.testing.assert_allclose(fast, slow, atol=1e-10)


def test_perm_both_p_agrees_with_scipy_exact_permutation_test():
    # PERM-BOTH swaps a and b within each cell: scipy's "samples" permutation of paired data, exact for 2^12 swaps.
    human, scores = _data(7, prompts=3, systems=4, metrics=2)
    z = stats.zscore(scores.reshape(-1, 2), axis=0)
    g = human.ravel()

    def r(v):
        return np.array([stats.pearsonr(row, g).statistic for row in np.atleast_2d(v)])

    def delta(a, b, axis=-1):
        return r(a) - r(b)

    exact = stats.permutation_test(
        (z[:, 0], z[:, 1]),
        delta,
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative="greater",
    ).pvalue
    ours = permutation.perm_both(human, scores, ["a", "b"], "none", n_permutations=20000, seed=3).iloc[0].p
    assert abs(ours - exact) < 4 * np.sqrt(exact * (1 - exact) / 20000) + 1e-9


def test_permutation_p_is_never_zero_and_matches_scipy_random_permutations():
    """A metric far better than another: no permutation reaches the observed delta, p = 1 / (n + 1), not 0, as
    scipy.stats.permutation_test gives for random (not exhaustive) permutations (Phipson & Smyth 2010)."""
    rng = np.random.default_rng(21)
    human = rng.normal(size=(40, 5))
    scores = np.stack([human + rng.normal(scale=0.1, size=human.shape), rng.normal(size=human.shape)], axis=-1)
    table = permutation.perm_both(human, scores, ["good", "noise"], "none", n_permutations=300, seed=2)
    good = table.set_index("metric_a").loc["good"]
    assert good.p == 1 / 301 == good.p_min and (table["p"] > 0).all()
    z = stats.zscore(scores.reshape(-1, 2), axis=0)
    scipy_p = stats.permutation_test(
        (z[:, 0], z[:, 1]),
        lambda a, b, axis=-1: np.array([stats.pearsonr(row, human.ravel()).statistic for row in np.atleast_2d(a)])
        - np.array([stats.pearsonr(row, human.ravel()).statistic for row in np.atleast_2d(b)]),
        permutation_type="samples", vectorized=True, n_resamples=300, alternative="greater", random_state=0,
    ).pvalue
    assert scipy_p == good.p
    early = permutation.perm_both(human, scores, ["good", "noise"], "none", n_permutations=300, seed=2, block=100,
                                  early_stop=(0.02, 0.5))
    assert (early["permutations"] == 100).all() and (early["p_min"] == 1 / 101).all() and (early["p"] > 0).all()


def test_early_stopping_stops_exactly_the_pairs_outside_the_window():
    rng = np.random.default_rng(8)
    human = rng.integers(1, 6, (30, 6)).astype(float)
    names = [f"m{k}" for k in range(6)]
    scores = np.stack([human + rng.normal(scale=s, size=human.shape) for s in (0.5, 0.55, 0.6, 0.7, 1.0, 5.0)], axis=-1)
    early = permutation.perm_both(
        human, scores, names, "none", n_permutations=400, seed=1, block=50, early_stop=(0.02, 0.5)
    )
    first_block = permutation.perm_both(human, scores, names, "none", n_permutations=50, seed=1, block=50)
    better = first_block[first_block["delta"] >= 0]
    outside = (better["p"] < 0.02) | (better["p"] > 0.5)
    used = early.set_index(["metric_a", "metric_b"])["permutations"]
    stopped = used.loc[list(zip(better.metric_a, better.metric_b))].to_numpy() == 50
    assert outside.any() and (~outside).any()
    np.testing.assert_array_equal(stopped, outside.to_numpy())
    full = permutation.perm_both(human, scores, names, "none", n_permutations=400, seed=1, block=50)
    assert (full["permutations"] == 400).all()
    kept = early["permutations"] == 400  # pairs that ran to the end have the full run's p
    np.testing.assert_array_equal(early.loc[kept, "p"], full.loc[kept, "p"])


def test_boot_both_equals_a_loop_over_the_same_resamples():
    human, scores = _data(10, prompts=7, systems=5, metrics=2)
    human2 = np.stack([human, human[::-1]], axis=-1)
    for grouping, coefficient in [("none", "pearson"), ("item", "kendall"), ("system", "pearson")]:
        table = permutation.boot_both(
            human2, scores, ["a", "b"], ["h1", "h2"], grouping, coefficient, 200, seed=4, level=0.9
        )
        prompts, systems = permutation.resample_indices(7, 5, 200, 4)
        for (m, name), (c, criterion) in itertools.product(enumerate("ab"), enumerate(["h1", "h2"])):
            draws = np.array(
                [
                    _r(coefficient, grouping, scores[np.ix_(p, s)][..., m], human2[np.ix_(p, s)][..., c])
                    for p, s in zip(prompts, systems)
                ]
            )
            row = table[(table.metric == name) & (table.criterion == criterion)].iloc[0]
            low, high = np.nanpercentile(draws, [5, 95])
            assert (row.ci_low, row.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
            assert row.r == pytest.approx(_r(coefficient, grouping, scores[..., m], human2[..., c]), abs=1e-12)
            assert row.resamples == np.isfinite(draws).sum()


def test_boot_both_of_one_group_is_the_bootstrap_of_its_stories():
    human, scores = _data(12, prompts=1, systems=30, metrics=2)
    table = permutation.boot_both(human[..., None], scores, ["a", "b"], ["c"], "none", n_resamples=200, seed=5)
    _, draws = permutation.resample_indices(1, 30, 200, 5)
    expected = [stats.pearsonr(scores[0, d, 0], human[0, d]).statistic for d in draws]
    assert table.loc[0, "ci_low"] == pytest.approx(np.nanquantile(expected, 0.025), abs=1e-12)
    with pytest.raises(InputError, match="need >= 2 prompts or >= 2 systems"):
        permutation.resample_indices(1, 1, 10, 0)


def test_boot_both_draws_give_scipy_bootstrap_percentile_intervals():
    # BOOT-BOTH's prompt draws are ordinary bootstrap draws: the percentile interval of a prompt mean
    # through resample_indices matches scipy.stats.bootstrap's (method="percentile") within Monte Carlo error.
    rng = np.random.default_rng(11)
    per_prompt = rng.normal(size=40)
    prompts, _ = permutation.resample_indices(40, 2, 3000, 2)
    ours = np.percentile(per_prompt[prompts].mean(axis=1), [2.5, 97.5])
    theirs = stats.bootstrap(
        (per_prompt,), np.mean, n_resamples=3000, method="percentile", random_state=2
    ).confidence_interval
    width = theirs.high - theirs.low
    assert abs(ours[0] - theirs.low) < 0.1 * width and abs(ours[1] - theirs.high) < 0.1 * width


def test_significance_clusters_follow_wmt_assign_ranks():
    # Sorted a > b > c > d; a beats c (p 0.01) but not b; c opens rank 2; d is beaten by c only -> rank 3.
    names = list("abcd")
    r = dict(zip(names, [0.9, 0.8, 0.7, 0.6]))
    p = {("a", "b"): 0.2, ("a", "c"): 0.01, ("a", "d"): 0.001, ("b", "c"): 0.3, ("b", "d"): 0.2, ("c", "d"): 0.04}
    rows = [
        {"metric_a": x, "metric_b": y, "r_a": r[x], "p": p.get((x, y), 1 - p.get((y, x), 0))}
        for x, y in itertools.permutations(names, 2)
    ]
    ranks = permutation.significance_clusters(pd.DataFrame(rows))

    def assign_ranks(order):  # independent restatement of mt-metrics-eval data.AssignRanks
        out, current, start = [], 1, 0
        for i, name in enumerate(order):
            if min([p.get((o, name), 1.0) for o in order[start:i]], default=1.0) <= 0.05:
                current, start = current + 1, i
            out.append(current)
        return out

    assert list(ranks["metric"]) == names
    assert list(ranks["rank"]) == assign_ranks(names)
    assert ranks["rank"].iloc[0] == 1 and ranks["rank"].is_monotonic_increasing


def test_resampling_refuses_bad_input():
    human, scores = _data(1)
    with pytest.raises(InputError, match="names"):
        permutation.perm_both(human, scores, ["a"], "none")
    with pytest.raises(InputError, match="tie-calibrated"):
        permutation.perm_both(human, scores, list("abc"), "none", "acc23")
    with pytest.raises(InputError, match="infinite"):  # missing (NaN) cells are dropped: test_missing_cells.py
        permutation.boot_both(human[..., None], scores * np.inf, list("abc"), ["h"], "none")


def test_pairwise_accuracy_equals_a_loop_over_system_pairs():
    human, scores = _data(12, prompts=5, systems=6, metrics=3)
    scores[..., 2] = np.round(scores[..., 2])
    ours = pairwise.pairwise_accuracy(human[..., None], scores)
    hm, mm = human.mean(axis=0), scores.mean(axis=0)
    for m in range(3):
        agree = [
            np.sign(np.round(hm[i] - hm[j], 12)) == np.sign(np.round(mm[i, m] - mm[j, m], 12))
            for i, j in itertools.combinations(range(6), 2)
        ]
        assert ours[m, 0] == pytest.approx(np.mean(agree))


def test_pairwise_pvalues_equal_a_loop_and_scipy_exact_test():
    human, scores = _data(13, prompts=10, systems=3, metrics=1)
    p = pairwise.pairwise_pvalues(scores, n_permutations=30000, seed=5)
    flips = np.where(np.random.default_rng(5).random((30000, 10)) < 0.5, -1.0, 1.0)
    for k, (i, j) in enumerate(itertools.combinations(range(3), 2)):
        diff = scores[:, i, 0] - scores[:, j, 0]
        assert p[k, 0] == (np.sum(flips @ diff >= diff.sum() - 1e-9) + 1) / 30001
        exact = stats.permutation_test(
            (scores[:, i, 0], scores[:, j, 0]),
            lambda a, b, axis=-1: np.sum(a - b, axis=axis),
            permutation_type="samples",
            n_resamples=np.inf,
            alternative="greater",
        ).pvalue
        assert abs(p[k, 0] - exact) < 4 * np.sqrt(exact * (1 - exact) / 30000) + 1e-9


def test_soft_pairwise_accuracy_is_one_minus_mean_p_gap():
    human, scores = _data(14, prompts=8, systems=4, metrics=2)
    spa, p_human, p_metric = pairwise.soft_pairwise_accuracy(human[..., None], scores, 500, seed=2)
    assert spa.shape == (2, 1)
    for m in range(2):
        assert spa[m, 0] == pytest.approx(1 - np.mean(np.abs(p_human[:, 0] - p_metric[:, m])))
    same, _, _ = pairwise.soft_pairwise_accuracy(human[..., None], human[..., None] * 3 + 1, 500, seed=2)
    assert same[0, 0] == 1.0  # a metric that is an increasing affine map of the human score has the same p-values


def test_bh_matches_the_step_up_formula_and_keeps_nan_and_families():
    rng = np.random.default_rng(15)
    p = rng.uniform(0, 0.2, 12)
    p[3] = np.nan
    finite = p[np.isfinite(p)]
    order = np.argsort(finite)
    m = len(finite)
    loop = np.empty(m)
    running = 1.0
    for rank in range(m, 0, -1):  # step-up: q_(k) = min over j >= k of p_(j) m / j
        running = min(running, finite[order[rank - 1]] * m / rank)
        loop[order[rank - 1]] = running
    adjusted = fdr.bh_adjust(p)
    assert np.isnan(adjusted[3])
    np.testing.assert_allclose(adjusted[np.isfinite(p)], loop)
    table = pd.DataFrame({"family": ["x"] * 6 + ["y"] * 6, "p": p})
    out = fdr.with_bh(table, "p", ["family"])
    assert list(out.columns) == ["family", "p", "p_bh"]
    np.testing.assert_allclose(out["p_bh"][6:], fdr.bh_adjust(p[6:]))
    with pytest.raises(InputError, match="no column"):
        fdr.with_bh(table, "pvalue")
    with pytest.raises(InputError, match="0, 1"):
        fdr.bh_adjust(np.array([0.5, 2.0]))


def test_the_early_stop_below_waits_for_a_p_that_bh_rejects():
    """Ten metrics on 400 stories (one group), one clearly the best: stopping at mt-metrics-eval's 0.02 after 100
    permutations leaves p = 1/101 for every clear pair, which BH over 90 tests lifts above 0.05, so every metric
    shares the top cluster; the BH-safe stop runs such pairs on and separates the best."""
    from storyeval.stats.meta import bh_safe_stop

    rng = np.random.default_rng(5)
    human = rng.normal(size=(1, 400))
    scores = rng.normal(size=(1, 400, 10))
    scores[..., 0] += 2 * human  # r about 0.9; the rest about 0
    names = [f"m{index}" for index in range(10)]

    def clusters(early_stop):
        tests = permutation.perm_both(human, scores, names, "none", n_permutations=1000, seed=0, block=100,
                                      early_stop=early_stop)
        ranks = permutation.significance_clusters(fdr.with_bh(tests, "p"), 0.05, "p_bh")
        return ranks.set_index("metric")["rank"]

    assert bh_safe_stop((0.02, 0.5), 0.05, 90) == (0.05 / 90, 0.5) and bh_safe_stop(None, 0.05, 90) is None
    assert (clusters((0.02, 0.5)) == 1).all()  # the fixed stop: nothing separated
    safe = clusters(bh_safe_stop((0.02, 0.5), 0.05, 90))
    assert safe["m0"] == 1 and (safe.drop("m0") > 1).all()
