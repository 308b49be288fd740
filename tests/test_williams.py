import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from storyeval.errors import InputError
from storyeval.stats.williams import williams_inputs, williams_table, williams_test


def scalar_williams(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Independent scalar computation via the determinant of the 3x3 correlation matrix."""
    det = np.linalg.det(np.array([[1, r12, r13], [r12, 1, r23], [r13, r23, 1]]))
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / (2 * det * (n - 1) / (n - 3) + rbar**2 * (1 - r23) ** 3))
    return t, 1 - stats.t.cdf(t, n - 3)


def test_williams_matches_a_hand_checked_example():
    t, p = williams_test(0.8867, 0.7730, 0.9387, 10)
    assert float(t) == pytest.approx(1.9994, abs=1e-4)
    assert float(p) == pytest.approx(0.0428, abs=1e-4)


def test_broadcast_matches_scalar_formula():
    rng = np.random.default_rng(1)
    data = rng.normal(size=(5, 4, 3, 40))
    data[:, :, 1:] += rng.uniform(-1, 1, (5, 4, 2, 1)) * data[:, :, :1]  # varied, valid correlation matrices
    r = np.array([[np.corrcoef(cell) for cell in row] for row in data])
    r12, r13, r23 = r[..., 0, 1], r[..., 0, 2], r[..., 1, 2]
    n = np.array([10, 20, 96, 960])
    t, p = williams_test(r12, r13, r23, n)
    assert t.shape == p.shape == (5, 4)
    for i in range(5):
        for j in range(4):
            expected_t, expected_p = scalar_williams(r12[i, j], r13[i, j], r23[i, j], n[j])
            assert t[i, j] == pytest.approx(expected_t, rel=1e-9)
            assert p[i, j] == pytest.approx(expected_p, rel=1e-7, abs=1e-12)


def test_identities_equal_and_swapped():
    t, p = williams_test(0.5, 0.5, 0.3, 30)
    assert float(t) == 0.0 and float(p) == pytest.approx(0.5)
    t_ab, p_ab = williams_test(0.7, 0.4, 0.5, 30)
    t_ba, p_ba = williams_test(0.4, 0.7, 0.5, 30)
    assert float(t_ab) == pytest.approx(-float(t_ba)) and float(p_ab) + float(p_ba) == pytest.approx(1.0)
    assert float(p_ab) < 0.05 < float(p_ba)


def test_bad_input_raises():
    with pytest.raises(InputError, match="n must be > 3"):
        williams_test(0.5, 0.4, 0.3, 3)
    with pytest.raises(InputError, match="outside"):
        williams_test(1.5, 0.4, 0.3, 10)
    with pytest.raises(InputError, match="shapes"):
        williams_table(np.zeros((3, 2)), np.eye(3), 10, ["a", "b"], ["c1", "c2"], "system")


def test_table_orients_by_signs_and_matches_scalar():
    metrics, criteria = ["m1", "m2", "m3"], ["c1", "c2"]
    r_mc = np.array([[0.8, -0.6], [-0.5, 0.4], [0.3, np.nan]])
    r_mm = np.array([[1.0, -0.4, 0.2], [-0.4, 1.0, 0.1], [0.2, 0.1, 1.0]])
    table = williams_table(r_mc, r_mm, 12, metrics, criteria, "system", orientation="absolute")
    assert len(table) == 3 * 2 * 2
    assert list(table.columns) == [
        "level",
        "criterion",
        "metric_a",
        "metric_b",
        "r_a",
        "r_b",
        "r_ab",
        "ranked_r_a",
        "ranked_r_b",
        "r_ab_oriented",
        "n",
        "t",
        "p",
    ]
    row = table[(table.criterion == "c1") & (table.metric_a == "m1") & (table.metric_b == "m2")].iloc[0]
    # m2 is negatively correlated with c1: flip it, and its correlation with m1 (-0.4) becomes +0.4.
    assert row.r_ab_oriented == pytest.approx(0.4)
    assert (row.t, row.p) == pytest.approx(scalar_williams(0.8, 0.5, 0.4, 12))
    row = table[(table.criterion == "c2") & (table.metric_a == "m2") & (table.metric_b == "m1")].iloc[0]
    assert row.r_ab_oriented == pytest.approx(0.4)  # -0.4 * (+1) * (-1)
    assert (row.t, row.p) == pytest.approx(scalar_williams(0.4, 0.6, 0.4, 12))
    nan_rows = table[(table.criterion == "c2") & ((table.metric_a == "m3") | (table.metric_b == "m3"))]
    assert len(nan_rows) == 4 and nan_rows.p.isna().all()
    assert table.loc[table.criterion == "c1", "p"].notna().all()
    # Oriented by the registry: m2 lower-is-better. On c1 its r -0.5 is agreement (0.5), on c2 its r 0.4 is
    # disagreement (-0.4), which the test takes as is instead of as |r|.
    oriented = williams_table(r_mc, r_mm, 12, metrics, criteria, "system", ["higher", "lower", "higher"])
    row = oriented[(oriented.criterion == "c1") & (oriented.metric_a == "m1") & (oriented.metric_b == "m2")].iloc[0]
    assert (row.ranked_r_b, row.r_ab_oriented) == pytest.approx((0.5, 0.4))
    assert (row.t, row.p) == pytest.approx(scalar_williams(0.8, 0.5, 0.4, 12))
    row = oriented[(oriented.criterion == "c2") & (oriented.metric_a == "m2") & (oriented.metric_b == "m1")].iloc[0]
    assert (row.ranked_r_a, row.ranked_r_b, row.r_ab_oriented) == pytest.approx((-0.4, -0.6, 0.4))
    assert (row.t, row.p) == pytest.approx(scalar_williams(-0.4, -0.6, 0.4, 12))
    with pytest.raises(InputError, match="direction"):
        williams_table(r_mc, r_mm, 12, metrics, criteria, "system")


def test_inputs_modes_against_scipy():
    rng = np.random.default_rng(2)
    human = rng.normal(size=(6, 5, 2))
    metrics = human[..., :1] + rng.normal(size=(6, 5, 3))
    r_mc, r_mm, n = williams_inputs(human, metrics, "story", "pooled")
    assert n == 30
    assert r_mc[1, 0] == pytest.approx(stats.pearsonr(metrics[..., 1].ravel(), human[..., 0].ravel())[0])
    r_mc, r_mm, n = williams_inputs(human, metrics, "story", "per_prompt")
    assert n == 5
    per_prompt = [stats.pearsonr(metrics[i, :, 2], metrics[i, :, 0])[0] for i in range(6)]
    assert r_mm[2, 0] == pytest.approx(np.mean(per_prompt))
    r_mc, r_mm, n = williams_inputs(human, metrics, "system", "pooled")
    assert n == 5
    assert r_mc[0, 1] == pytest.approx(stats.pearsonr(metrics[..., 0].mean(0), human[..., 1].mean(0))[0])
    with pytest.raises(InputError, match="story_mode"):
        williams_inputs(human, metrics, "story", "mean")


def test_full_size_table_vectorised():
    rng = np.random.default_rng(3)
    r_mc = rng.uniform(-0.9, 0.9, (72, 6))
    r_mm = np.corrcoef(rng.normal(size=(72, 200)))
    table = williams_table(r_mc, r_mm, 10, [f"m{i}" for i in range(72)], [f"c{i}" for i in range(6)], "story",
                           orientation="absolute")
    assert len(table) == 72 * 71 * 6
    row = table.iloc[12345]
    a, b, c = int(row.metric_a[1:]), int(row.metric_b[1:]), int(row.criterion[1:])
    oriented = r_mm[a, b] * np.sign(r_mc[a, c]) * np.sign(r_mc[b, c])
    assert (row.t, row.p) == pytest.approx(scalar_williams(abs(r_mc[a, c]), abs(r_mc[b, c]), oriented, 10))


def test_williams_figure_matrix_shows_raw_or_bh_adjusted_p():
    """figures.p_values: raw p as the paper, or bh, adjusted within one level and criterion (williams_bh.csv)."""
    from scipy.stats import false_discovery_control

    from storyeval.plots.heatmaps import williams_matrix
    from storyeval.stats.fdr import with_bh

    rng = np.random.default_rng(5)
    human, metrics = rng.normal(size=(6, 10, 2)), rng.normal(size=(6, 10, 4))
    names, criteria = ["m0", "m1", "m2", "m3"], ["Relevance", "Coherence"]
    tables = [williams_table(*williams_inputs(human, metrics, level), names, criteria, level, ["higher"] * 4)
              for level in ("story", "system")]
    table = with_bh(pd.concat(tables, ignore_index=True), "p", ["level", "criterion"])
    order = ["m2", "m0", "m3", "m1"]
    rows = table[(table["level"] == "system") & (table["criterion"] == "Coherence")]
    raw = williams_matrix(table, "system", "Coherence", order)
    adjusted = williams_matrix(table, "system", "Coherence", order, "bh")
    expected = dict(zip(zip(rows["metric_a"], rows["metric_b"]), false_discovery_control(rows["p"])))
    for a, b in itertools.permutations(order, 2):
        assert raw.loc[a, b] == rows.set_index(["metric_a", "metric_b"]).loc[(a, b), "p"]
        assert adjusted.loc[a, b] == pytest.approx(expected[(a, b)], rel=1e-12)
    assert list(adjusted.index) == order and np.isnan(np.diag(adjusted.to_numpy())).all()
    assert (adjusted.to_numpy() >= raw.to_numpy() - 1e-15)[~np.eye(4, dtype=bool)].all()
    with pytest.raises(InputError, match="williams_bh.csv"):
        williams_matrix(table.drop(columns="p_bh"), "system", "Coherence", order, "bh")
