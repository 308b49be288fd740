import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr, rankdata, ttest_1samp

from storyeval.data.hanna import read_rater_ratings
from storyeval.stats.agreement import (
    agreement_table,
    human_ceiling,
    krippendorff_alpha,
    leave_one_out,
    panel_reliability,
    rater_cube,
    reliability_matrix,
)
from storyeval.stats.alttest import Margin, alt_test, alt_test_table, rank_numerators
from storyeval.stats.icc import icc

LEVELS, COEFFICIENTS = ["story", "system"], ["pearson", "spearman", "kendall"]


def long_ratings(matrix: np.ndarray, criterion: str = "Coherence") -> pd.DataFrame:
    """[raters, stories] -> long (story_id, criterion, rater, rating), NaN cells dropped."""
    raters, stories = np.nonzero(np.isfinite(matrix))
    return pd.DataFrame({"story_id": [f"s{k:03d}" for k in stories], "criterion": criterion,
                         "rater": [f"r{k:02d}" for k in raters], "rating": matrix[raters, stories]})


def grid(prompts: int, systems: int) -> tuple[pd.DataFrame, list[str]]:
    names = [f"m{k}" for k in range(systems)]
    stories = pd.DataFrame([{"story_id": f"s{p * systems + k:03d}", "prompt_id": p, "system": name}
                            for p in range(prompts) for k, name in enumerate(names)])
    return stories, names


def test_alpha_by_hand_two_raters_four_stories():
    # Interval alpha = 1 - D_o / D_e (Krippendorff 2011). Values 1,2,3,4 and 1,2,3,5: the only disagreement is
    # (4, 5): D_o = 2 * 1^2 / 8 values; D_e = sum over ordered value pairs of squared differences / (8 * 7), and
    # that sum is 2 * (n sum v^2 - (sum v)^2) = 2 * (8 * 69 - 21^2) = 222. alpha = 1 - (2 / 8) / (222 / 56).
    matrix = reliability_matrix(long_ratings(np.array([[1, 2, 3, 4], [1, 2, 3, 5]], float)))
    assert krippendorff_alpha(matrix, "interval") == pytest.approx(1 - (2 / 8) / (222 / 56), rel=1e-12)
    assert krippendorff_alpha(np.array([[1, 2, 3.0], [1, 2, 3]]), "ordinal") == pytest.approx(1.0)
    assert np.isnan(krippendorff_alpha(np.array([[3, 3, np.nan], [3, np.nan, 3]]), "interval"))  # one value


def test_alpha_of_krippendorffs_example_with_missing_values():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with missing data (4
    # observers, 12 units; the krippendorff package's docstring cites it): nominal 0.743, ordinal 0.815,
    # interval 0.849, ratio 0.797. Fed as a long table (rows shuffled) so that the pivot is checked too.
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
                     [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan]])
    matrix = reliability_matrix(long_ratings(data).sample(frac=1.0, random_state=3))
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
    for level, value in published.items():
        assert krippendorff_alpha(matrix, level) == pytest.approx(value, abs=5e-4), level


def test_leave_one_out_means_of_the_other_raters_of_the_same_story():
    cube = np.array([[[1.0, 3.0, np.nan], [2.0, np.nan, np.nan]]])  # story 2 has one rating: no ceiling there
    own, others = leave_one_out(cube)
    np.testing.assert_array_equal(own[0, 0], [1, 3, np.nan])
    np.testing.assert_array_equal(others[0, 0], [3, 1, np.nan])
    assert np.isnan(own[0, 1]).all() and np.isnan(others[0, 1]).all()


def test_identical_raters_reach_one_and_independent_raters_zero():
    rng = np.random.default_rng(0)
    quality = rng.normal(size=(40, 6, 1))
    identical = human_ceiling(np.repeat(quality, 3, axis=-1), LEVELS, COEFFICIENTS)
    np.testing.assert_allclose(identical["ceiling"], 1.0)
    assert (identical["raters"] == 3).all()
    independent = human_ceiling(rng.normal(size=(300, 6, 4)), ["story"], COEFFICIENTS)
    # per prompt r over 6 systems, averaged over 300 prompts and 4 raters: standard error about 0.45 / sqrt(1200)
    assert independent["unstepped"].abs().max() < 0.06
    assert ((independent["min"] <= independent["unstepped"]) & (independent["unstepped"] <= independent["max"])).all()


def test_ceiling_with_gaps_matches_a_rater_by_rater_scipy_computation():
    # A crowd: 12 workers, each story rated by 2-4 of them (a few by one), quality + worker noise.
    rng = np.random.default_rng(1)
    stories, systems = grid(30, 5)
    quality = rng.normal(size=len(stories))
    matrix = np.full((12, len(stories)), np.nan)
    for story in range(len(stories)):
        raters = rng.choice(12, size=rng.integers(1, 5), replace=False)
        matrix[raters, story] = np.round(quality[story] + rng.normal(scale=0.7, size=len(raters)))
    ratings = long_ratings(matrix)
    table = agreement_table(ratings, stories, systems, LEVELS, COEFFICIENTS, "rater").set_index(["level",
                                                                                                 "coefficient"])
    ones = int((np.isfinite(matrix).sum(axis=0) == 1).sum())
    assert ones > 0 and table["note"].iloc[0] == f"{ones} of {len(stories)} stories with one rating left out"
    assert table["layout"].iloc[0] == "rater ids of the dataset file"
    # independently: each worker's ratings against the others' mean of the same stories, Pearson per prompt
    # (scipy, at least 3 systems with both), averaged over the prompts with a coefficient, then over workers
    wide = ratings.pivot(index="story_id", columns="rater", values="rating").join(stories.set_index("story_id"))
    workers, per_worker = sorted(ratings["rater"].unique()), []
    for worker in workers:
        others = wide[[w for w in workers if w != worker]]
        pair = pd.DataFrame({"x": wide[worker], "y": others.mean(axis=1), "prompt": wide["prompt_id"]}).dropna()
        r = [pearsonr(g["x"], g["y"])[0] for _, g in pair.groupby("prompt")
             if len(g) >= 3 and g["x"].std() > 0 and g["y"].std() > 0]
        if r:
            per_worker.append(np.mean(r))
    story = table.loc[("story", "pearson")]
    assert story["raters"] == len(per_worker)
    assert story["unstepped"] == pytest.approx(np.mean(per_worker), rel=1e-10)
    assert story["min"] == pytest.approx(min(per_worker)) and story["max"] == pytest.approx(max(per_worker))
    counts = np.isfinite(matrix).sum(axis=0)
    assert story["panel"] == pytest.approx(counts[counts >= 2].mean())  # stepped up to the panel that metrics see
    assert story["ceiling"] == pytest.approx(panel_reliability(np.mean(per_worker), 1, story["panel"] - 1,
                                                               story["panel"]))
    assert (table["ceiling"] > 0.4).all()  # planted: the quality signal dominates the worker noise
    assert table["alpha_interval"].iloc[0] == pytest.approx(krippendorff_alpha(matrix, "interval"))


def test_a_criterion_with_one_rater_per_story_has_no_ceiling_and_says_why():
    stories, systems = grid(10, 4)
    matrix = np.full((3, len(stories)), np.nan)
    matrix[np.arange(len(stories)) % 3, np.arange(len(stories))] = np.arange(len(stories)) % 5
    table = agreement_table(long_ratings(matrix), stories, systems, LEVELS, COEFFICIENTS, "rater")
    assert len(table) == 6 and table["ceiling"].isna().all() and (table["raters"] == 0).all()
    assert set(table["note"]) == {"no ceiling: fewer than 2 raters per story"}
    assert table["alpha_interval"].isna().all()  # no story rated twice: alpha undefined too


def official_alt_test(humans, candidate, epsilon, q=0.05, min_instances=30, min_humans=2):
    """Calderon et al.'s alt_test (github.com/nitaytech/AltTest, alt_test_example.ipynb), loop by loop, with the
    neg-RMSE of percentile ranks as its scoring function and their own Benjamini-Yekutieli step-up."""
    ranks = [rankdata(column, nan_policy="omit") for column in np.column_stack([humans, candidate]).T]
    counts = [np.isfinite(column).sum() for column in np.column_stack([humans, candidate]).T]
    h = np.column_stack([(r - 0.5) / n for r, n in zip(ranks[:-1], counts[:-1])])
    c = (ranks[-1] - 0.5) / counts[-1]
    present = np.isfinite(h)
    kept = (present.sum(axis=1) >= min_humans) & np.isfinite(c)
    p_values, advantages = [], []
    for j in range(h.shape[1]):
        instances = np.flatnonzero(present[:, j] & kept)
        if len(instances) < min_instances:
            continue
        llm, human = [], []
        for i in instances:
            rest = [h[i, k] for k in range(h.shape[1]) if k != j and present[i, k]]
            human_score = -np.sqrt(np.mean([(h[i, j] - a) ** 2 for a in rest]))
            llm_score = -np.sqrt(np.mean([(c[i] - a) ** 2 for a in rest]))
            llm.append(1 if llm_score >= human_score else 0)
            human.append(1 if human_score >= llm_score else 0)
        p_values.append(ttest_1samp(np.subtract(human, llm), epsilon, alternative="less").pvalue)
        advantages.append(np.mean(llm))
    return rejected_share(p_values, q), float(np.mean(advantages))


def rejected_share(p_values, q: float) -> float:
    """The share of the p-values that Benjamini-Yekutieli at level q rejects (the reference's multiple testing)."""
    m = len(p_values)
    order = np.argsort(p_values)
    thresholds = np.arange(1, m + 1) / m * q / np.sum(1 / np.arange(1, m + 1))
    below = np.flatnonzero(np.array(p_values)[order] <= thresholds)
    return (below.max() + 1 if len(below) else 0) / m


def annotated(rng, instances=120, annotators=5, noise=0.6, gaps=0.0):
    truth = rng.normal(size=instances)
    humans = np.round(truth[:, None] + rng.normal(scale=noise, size=(instances, annotators)))
    humans[rng.random(humans.shape) < gaps] = np.nan
    return truth, humans


@pytest.mark.parametrize("gaps", [0.0, 0.2])
def test_alt_test_matches_the_authors_loop(gaps):
    rng = np.random.default_rng(2)
    truth, humans = annotated(rng, gaps=gaps)
    candidates = np.column_stack([truth + rng.normal(scale=s, size=len(truth)) for s in (0.2, 0.8, 2.0)])
    candidates[rng.random(candidates.shape) < gaps / 4] = np.nan  # a judge's unparsable answers
    got = alt_test(humans, candidates, epsilon=0.1)
    for k in range(candidates.shape[1]):
        omega, rho = official_alt_test(humans, candidates[:, k], epsilon=0.1)
        assert got.loc[k, "omega"] == pytest.approx(omega) and got.loc[k, "rho"] == pytest.approx(rho)
    assert got["annotators"].eq(5).all()


def test_a_human_twin_passes_and_noise_fails():
    rng = np.random.default_rng(4)
    truth, humans = annotated(rng, instances=200, annotators=4)
    twin = humans[:, 0]  # a held-out annotator's twin: ties with it, and is one of the others when another is out
    noise = rng.normal(size=len(truth))
    result = alt_test(humans, np.column_stack([twin, noise, 10 * twin - 3, truth]), epsilon=0.1)
    assert result["passed"].tolist() == [True, False, True, True]  # ranks: a monotone rescaling changes nothing
    assert result.loc[0, "omega"] == 1 and result.loc[1, "omega"] == 0
    assert result.loc[0, "rho"] == result.loc[2, "rho"] and result.loc[1, "rho"] < 0.3


def test_one_more_annotator_is_as_good_as_a_human():
    """An annotator like the others wins or ties as often as the held-out one: rho = (1 + P(tie)) / 2 by
    exchangeability (whether it passes is a question of power: more instances, or a larger epsilon)."""
    rng = np.random.default_rng(4)
    truth, humans = annotated(rng, instances=600, annotators=4)
    another = np.round(truth + rng.normal(scale=0.6, size=len(truth)))
    result = alt_test(humans, another[:, None], epsilon=0.1)
    assert 0.45 < result.loc[0, "rho"] < 0.6


def test_an_annotator_with_too_few_instances_is_not_tested():
    rng = np.random.default_rng(5)
    truth, humans = annotated(rng, instances=60, annotators=3)
    humans[40:, 2] = np.nan  # 40 instances left
    result = alt_test(humans, truth[:, None], epsilon=0.1, min_instances=50)
    assert result.loc[0, "annotators"] == 2
    assert np.isnan(alt_test(humans[:20], truth[:20, None], epsilon=0.1).loc[0, "omega"])  # nobody has 30


def test_percentile_ranks_share_one_scale_whatever_the_count():
    numerators, denominators = rank_numerators(np.array([[1.0, 5.0], [2.0, np.nan], [2.0, 7.0], [4.0, np.nan]]))
    ranks = numerators / denominators  # exact rationals (2 rank - 1) / (2 count)
    np.testing.assert_allclose(ranks[:, 0], [0.125, 0.5, 0.5, 0.875])
    np.testing.assert_allclose(ranks[[0, 2], 1], [0.25, 0.75])
    assert denominators.tolist() == [8, 4] and numerators.dtype.kind == "i"


def test_rater_cube_places_each_rating_on_the_analysis_grid():
    stories, systems = grid(2, 3)
    ratings = pd.DataFrame({"story_id": ["s000", "s004", "s004", "s999"], "rater": ["a", "a", "b", "b"],
                            "rating": [1.0, 2.0, 3.0, 4.0]})  # s999: off the grid (the reference system's)
    cube, raters = rater_cube(ratings, stories, [0, 1], systems)
    assert raters == ["a", "b"] and cube.shape == (2, 3, 2) and np.isfinite(cube).sum() == 3
    assert cube[0, 0, 0] == 1 and cube[1, 1, 0] == 2 and cube[1, 1, 1] == 3


def test_hanna_released_raters(hanna_mirror):
    """HANNA's released ratings (positions 1-3, every story rated three times): interval alpha is the one-way
    ICC(1) up to its O(1/n) small-sample term (n = 1,056 stories), and inside ICC(1)'s 95 % interval."""
    from storyeval.data.hanna import read_released_scores
    from storyeval.data.load import analysis_grid

    ratings = read_rater_ratings(hanna_mirror / "hanna_metric_scores_llm.csv")
    stories, systems = analysis_grid(read_released_scores(hanna_mirror / "hanna_metric_scores.csv").stories,
                                     "Human")
    table = agreement_table(ratings, stories, systems, LEVELS, COEFFICIENTS, "position")
    assert len(table) == 6 * 2 * 3 and table["layout"].str.startswith("judge slots").all()
    assert (table["raters"] == 3).all() and (table["note"] == "").all()
    for criterion, rows in table.groupby("criterion"):
        one_way = icc(ratings[ratings["criterion"] == criterion]).set_index("form").loc["ICC1"]
        alpha = rows["alpha_interval"].iloc[0]
        assert alpha == pytest.approx(one_way["icc"], abs=1e-3), criterion
        assert one_way["ci_low"] < alpha < one_way["ci_high"], criterion
    assert table["ceiling"].between(-1, 1).all() and (table["min"] <= table["max"]).all()
    # system means average 96 prompts x 3 raters: far more reliable than one rater of one story
    system = table[table["level"] == "system"].set_index(["criterion", "coefficient"])["ceiling"]
    story = table[table["level"] == "story"].set_index(["criterion", "coefficient"])["ceiling"]
    assert (system > story).all()


def test_the_chance_control_says_where_a_pass_means_nothing(tmp_path, hanna_mirror):
    """HANNA's released ratings and 72 metrics. As released (positions, not persons) nothing is tested. Treated as
    persons only to exercise the chance control on real data: on Coherence (alpha below 0) every metric passes
    the alt-test, ROUGE-4 (mostly 0: tied, mid-rank) too, though its shuffled scores do as well (a large permutation
    p); metrics with some signal beat their shuffles. The shuffles come from the seed: the same table twice."""
    from storyeval.data.hanna import read_released_scores
    from storyeval.data.load import analysis_grid
    from storyeval.stats.meta import load_meta

    released = read_released_scores(hanna_mirror / "hanna_metric_scores.csv")
    paths = {"stories": tmp_path / "stories.csv", "human": tmp_path / "human.csv", "scores": tmp_path / "scores.csv",
             "registry": tmp_path / "metrics.csv"}
    for key, frame in zip(paths, [released.stories, released.human_scores, released.scores, released.registry]):
        frame.to_csv(paths[key], index=False)
    ratings = read_rater_ratings(hanna_mirror / "hanna_metric_scores_llm.csv")
    stories, _ = analysis_grid(released.stories, "Human")
    meta = load_meta(paths, "Human")
    margin = Margin.of("crowd", None, 0.1)

    positions, notes = alt_test_table(ratings, stories, meta, margin, "position")
    assert positions["omega"].isna().all() and positions["untested_reason"].str.contains("not persons").all()
    assert all("no alt-test" in note for note in notes)
    table, _ = alt_test_table(ratings, stories, meta, margin, "rater", draws=99, seed=3)
    assert (table["chance_draws"] == 99).all() and table["chance_p"].dropna().between(0.01, 1).all()
    coherence, complexity = (table[table["criterion"] == name] for name in ("Coherence", "Complexity"))
    assert coherence["passed"].all() and 0 < coherence["beats_chance"].sum() < len(coherence)
    rouge = coherence.set_index("metric").loc["rouge-4-recall"]
    assert rouge["passed"] and rouge["chance_p"] > 0.3 and not rouge["beats_chance"]
    assert (complexity["passed"] & complexity["beats_chance"]).sum() >= 5
    again, _ = alt_test_table(ratings, stories, meta, margin, "rater", draws=99, seed=3)
    pd.testing.assert_frame_equal(table, again)
