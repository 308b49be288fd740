import numpy as np
import pandas as pd
import pytest
from scipy.stats import f_oneway

from storyeval.data.hanna import read_rater_ratings
from storyeval.errors import InputError
from storyeval.stats.icc import icc, icc_table, intraclass_correlations, judge_ratings, positional_judges

# Shrout & Fleiss (1979), Table 1: 6 targets x 4 judges.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
# Their Table 2 ICCs; bounds, F and p as printed by R psych::ICC on the same data.
PUBLISHED = {
    "ICC1": (0.17, -0.133, 0.72), "ICC2": (0.29, 0.019, 0.76), "ICC3": (0.71, 0.342, 0.95),
    "ICC1k": (0.44, -0.884, 0.91), "ICC2k": (0.62, 0.071, 0.93), "ICC3k": (0.91, 0.676, 0.99),
}
RELEASED = "/work/shared/data/hanna/hanna_metric_scores_llm.csv"


def long_form(matrix: np.ndarray, seed: int = 0) -> pd.DataFrame:
    n, k = matrix.shape
    frame = pd.DataFrame(
        {"story_id": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n), "rating": matrix.ravel()}
    )
    return frame.sample(frac=1.0, random_state=seed)  # row order must not matter


@pytest.mark.parametrize(
    "table",
    [
        lambda: intraclass_correlations(SHROUT_FLEISS),
        lambda: icc(long_form(SHROUT_FLEISS)),
        lambda: intraclass_correlations(SHROUT_FLEISS[::-1, ::-1]),  # target and rater order must not matter
    ],
)
def test_shrout_fleiss_published_example(table):
    result = table().set_index("form")
    for form, (value, low, high) in PUBLISHED.items():
        assert result.loc[form, "icc"] == pytest.approx(value, abs=0.005)
        assert result.loc[form, "ci_low"] == pytest.approx(low, abs=0.0005)
        assert result.loc[form, "ci_high"] == pytest.approx(high, abs=0.005)
    assert result.loc["ICC1", "F"] == pytest.approx(1.79, abs=0.005)
    assert result.loc["ICC2", "F"] == pytest.approx(11.03, abs=0.005)
    assert result.loc["ICC1", "p"] == pytest.approx(0.164769, abs=5e-7)
    assert result.loc["ICC3", "p"] == pytest.approx(0.000135, abs=5e-7)
    assert list(result["df2"]) == [18, 15, 15, 18, 15, 15]


def independent_forms(x: np.ndarray) -> dict[str, float]:
    """ICC1/ICC1k from scipy's one-way ANOVA F, ICC3k as Cronbach's alpha, ICC2 from a least-squares residual."""
    n, k = x.shape
    f_one = f_oneway(*x).statistic  # groups = targets: F = MSR / MSW
    alpha = k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
    design = np.hstack([np.kron(np.eye(n), np.ones((k, 1))), np.kron(np.ones((n, 1)), np.eye(k)[:, 1:])])
    residual = x.ravel() - design @ np.linalg.lstsq(design, x.ravel(), rcond=None)[0]
    mse = residual @ residual / ((n - 1) * (k - 1))
    msr, msc = k * x.mean(axis=1).var(ddof=1), n * x.mean(axis=0).var(ddof=1)
    return {
        "ICC1": (f_one - 1) / (f_one + k - 1),
        "ICC1k": 1 - 1 / f_one,
        "ICC3k": alpha,
        "ICC2": (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n),
    }


def test_forms_match_an_independent_decomposition():
    x = np.random.default_rng(3).integers(1, 6, size=(30, 3)).astype(float) + np.arange(30)[:, None] % 4
    result = intraclass_correlations(x).set_index("form")["icc"]
    for form, value in independent_forms(x).items():
        assert result[form] == pytest.approx(value, rel=1e-10)
    assert result["ICC1"] != pytest.approx(result["ICC3"])


def test_released_positional_raters_icc_table():
    ratings = read_rater_ratings(RELEASED)
    table = icc_table(ratings, layout="position", forms=("ICC2k", "ICC1k", "ICC3k"))
    assert list(table["criterion"].unique()) == [
        "Relevance",
        "Coherence",
        "Empathy",
        "Surprise",
        "Engagement",
        "Complexity",
    ]
    assert set(table["layout"]) == {"rater positions (released file)"}
    assert ((table["ci_low"] < table["icc"]) & (table["icc"] < table["ci_high"])).all()
    coherence = ratings[ratings["criterion"] == "Coherence"]
    matrix = coherence.pivot(index="story_id", columns="rater", values="rating").to_numpy()
    expected = independent_forms(matrix)
    got = table[table["criterion"] == "Coherence"].set_index("form")["icc"]
    assert got["ICC1k"] == pytest.approx(expected["ICC1k"], rel=1e-10)
    assert got["ICC3k"] == pytest.approx(expected["ICC3k"], rel=1e-10)


def test_incomplete_or_bad_input_raises():
    frame = long_form(SHROUT_FLEISS)
    with pytest.raises(InputError, match="lack a rating"):
        icc(frame.iloc[1:])
    with pytest.raises(InputError, match="two ratings"):
        icc(pd.concat([frame, frame.iloc[:1]]))
    with pytest.raises(InputError, match="unknown layout"):
        icc_table(frame.assign(criterion="Coherence"), layout="judges")


def test_positional_judges_rule():
    rows = [  # w1 x3, w2 x2, w3 x2, others once; w3 beats w4 on count, w2 beats w3 by id
        ("s1", "w1"),
        ("s1", "w2"),
        ("s1", "w3"),
        ("s2", "x"),
        ("s2", "w2"),
        ("s2", "w3"),  # x fills A
        ("s3", "y"),
        ("s3", "z"),
        ("s3", "w1"),  # y -> B, z -> C
        ("s4", "w4"),
        ("s4", "w1"),
        ("s4", "q"),  # w4 -> B, q -> C
    ]
    frame = pd.DataFrame(rows, columns=["Story ID", "Worker ID"])
    judges = positional_judges(frame)["judge"].tolist()
    assert judges == ["A", "B", "C", "A", "B", "C", "B", "C", "A", "B", "A", "C"]
    with pytest.raises(InputError, match="each by a different worker"):
        positional_judges(pd.concat([frame, frame.iloc[:1]]))


def test_worker_layout_end_to_end():
    rng = np.random.default_rng(4)
    workers = [["w1", "w2", "w3"]] * 5 + [["x", "w2", "w1"], ["w3", "y", "z"]]
    slots = [["A", "B", "C"]] * 5 + [["C", "B", "A"], ["C", "A", "B"]]  # others take the first free slot
    rows = [
        {
            "Story ID": f"s{s}",
            "Worker ID": w,
            "Coherence": float(rng.integers(1, 6)),
            "Empathy": float(rng.integers(1, 6)),
        }
        for s, story_workers in enumerate(workers)
        for w in story_workers
    ]
    ratings = judge_ratings(pd.DataFrame(rows), criteria=["Coherence", "Empathy"])
    table = icc_table(ratings, layout="worker", forms=("ICC2k",))
    assert list(table["criterion"]) == ["Coherence", "Empathy"]
    assert set(table["layout"]) == {"worker-id judges (raw annotation file)"}
    matrix = np.zeros((7, 3))
    for row, slot in zip(rows, [slot for story in slots for slot in story]):
        matrix[int(row["Story ID"][1:]), "ABC".index(slot)] = row["Coherence"]
    expected = intraclass_correlations(matrix).set_index("form").loc["ICC2k", "icc"]
    assert table.loc[0, "icc"] == pytest.approx(expected, rel=1e-12)


def test_rater_judges_per_criterion_with_other_raters_and_gaps():
    """Each criterion's own raters (a crowdsourcing task per criterion) become its judges; where stories have
    different numbers of ratings, each keeps its first k and the note says so; a criterion rated once a story
    has no ICC, in one line."""
    from storyeval.stats.icc import rater_judges

    plot = long_form(SHROUT_FLEISS).assign(criterion="Plot", rater=lambda f: "w" + f["rater"].astype(str))
    flow = long_form(SHROUT_FLEISS[:, :3][::-1]).assign(criterion="Flow", rater=lambda f: "v" + f["rater"].astype(str))
    judged, notes = rater_judges(pd.concat([plot, flow], ignore_index=True))
    assert notes == ["criterion 'Flow': 3 ratings a story by 3 raters, as judge slots J1-J3",
                     "criterion 'Plot': 4 ratings a story by 4 raters, as judge slots J1-J4"]
    assert set(judged.groupby("criterion")["rater"].nunique()) == {3, 4}
    table = icc_table(judged, "rater", forms=("ICC1k",)).set_index("criterion")["icc"]
    assert table["Plot"] == pytest.approx(PUBLISHED["ICC1k"][0], abs=0.005)
    expected = intraclass_correlations(SHROUT_FLEISS[:, :3]).set_index("form").loc["ICC1k", "icc"]
    assert table["Flow"] == pytest.approx(expected, abs=1e-12)
    gapped = plot[~((plot["story_id"] == 0) & (plot["rater"] != "w0")) & ~((plot["story_id"] == 1) &
                                                                          (plot["rater"] == "w3"))]
    once = plot[plot["rater"] == "w1"].assign(criterion="Once")
    judged, notes = rater_judges(pd.concat([gapped, once], ignore_index=True))
    assert notes == ["criterion 'Once': no ICC, fewer than 2 stories have 2 ratings", "criterion 'Plot': stories "
                     "have 1-4 ratings; ICC on the first 3 of each of 5 stories (1 with one rating left out)"]
    assert set(judged.groupby("story_id").size()) == {3} and set(judged["rater"]) == {"J1", "J2", "J3"}
    assert np.isfinite(icc_table(judged, "rater")["icc"]).all()
