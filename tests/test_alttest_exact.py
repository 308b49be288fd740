"""The Alternative Annotator Test in exact arithmetic, its margin by the raters' kind, and its permutation control
(storyeval.stats.alttest)."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata, ttest_1samp
from test_agreement import rejected_share

from storyeval.errors import InputError
from storyeval.stats.alttest import (
    CONSTANT_REASON,
    MIN_DRAWS,
    Margin,
    across_epsilons,
    alt_test,
    chance_draws,
    chance_p,
    criterion_rows,
    verdicts,
)

from conftest import mirror_or_skip


def exact_reference(humans: np.ndarray, candidate: np.ndarray, epsilon: float, q: float = 0.05,
                    min_instances: int = 30, min_humans: int = 2) -> tuple[float, float, int]:
    """Calderon et al.'s alt_test loop (github.com/nitaytech/AltTest, alt_test_example.ipynb: neg_rmse, their t-test
    and Benjamini-Yekutieli step-up) on percentile ranks held as Fractions: every tie is a tie. Also returns how
    many instance comparisons were exact ties."""
    columns = np.column_stack([humans, candidate])
    ranks = [[None if not np.isfinite(v) else Fraction(int(2 * r - 1), 2 * int(np.isfinite(col).sum()))
              for v, r in zip(col, rankdata(col, nan_policy="omit"))] for col in columns.T]
    h, c = ranks[:-1], ranks[-1]
    kept = [i for i in range(len(c)) if c[i] is not None and sum(col[i] is not None for col in h) >= min_humans]
    p_values, advantages, ties = [], [], 0
    for j, own in enumerate(h):
        instances = [i for i in kept if own[i] is not None]
        if len(instances) < min_instances:
            continue
        llm, human = [], []
        for i in instances:
            rest = [col[i] for k, col in enumerate(h) if k != j and col[i] is not None]
            human_score = sum((own[i] - a) ** 2 for a in rest)  # the RMSE's order: the sums' order
            llm_score = sum((c[i] - a) ** 2 for a in rest)
            ties += human_score == llm_score
            llm.append(int(llm_score <= human_score))
            human.append(int(human_score <= llm_score))
        p_values.append(ttest_1samp(np.subtract(human, llm), epsilon, alternative="less").pvalue)
        advantages.append(np.mean(llm))
    return rejected_share(p_values, q), float(np.mean(advantages)), ties


def likert(rng, n=60, raters=4, spread=1):
    """Integer ratings around a 1-3 truth: many exact ties between a candidate and a rater."""
    truth = rng.integers(1, 4, size=n)
    return truth, np.clip(truth[:, None] + rng.integers(-spread, spread + 1, size=(n, raters)), 1, 5).astype(float)


@pytest.mark.parametrize("seed", range(6))
def test_ties_are_decided_as_the_reference_decides_them_in_exact_arithmetic(seed):
    """Integer ratings, a judge on the same scale and a gap in one rater (two denominators): ties are frequent,
    and omega and rho equal the reference loop's on Fractions (the reference code itself, run on integer ranks in
    a scratch directory, agrees: the closing note of this change)."""
    rng = np.random.default_rng(seed)
    truth, humans = likert(rng)
    humans[:8, 1] = np.nan
    candidates = np.column_stack([np.clip(truth + rng.integers(-1, 2, size=len(truth)), 1, 5),
                                  rng.integers(1, 6, size=len(truth)), humans[:, 0]]).astype(float)
    got = alt_test(humans, candidates, (0.2, 0.1))
    total_ties = 0
    for k in range(candidates.shape[1]):
        omega, rho, ties = exact_reference(humans, candidates[:, k], 0.2)
        total_ties += ties
        assert got.loc[k, "omega"] == omega and got.loc[k, "rho"] == pytest.approx(rho, abs=1e-15)
        low = exact_reference(humans, candidates[:, k], 0.1)[0]
        assert ("0.1" in got.loc[k, "passes_at"].split()) == (low >= 0.5)
    assert total_ties > 20  # the case is about ties


def test_pds_gpt4_human_likeness_is_decided_exactly():
    """PDS, GPT-4's human_likeness against the 5 participants: exact omega 0.0 at epsilon 0.1 (a float formula gave
    0.2), as the reference code and the Fraction loop give."""
    from storyeval.datasets.pds import load, released

    mirror = mirror_or_skip("pds", "gpt-4_annotations.csv", "PDS")
    paths = [str(mirror / name) for name in ("study_stories.csv", "human_annotations.csv")]
    data = load(paths, "pds")
    scores, _ = released([paths[0], str(mirror / "gpt-3.5_annotations.csv"), str(mirror / "gpt-4_annotations.csv")],
                         "pds", data.texts)
    ratings = data.ratings[data.ratings["criterion"] == "human_likeness"]
    humans = ratings.pivot(index="story_id", columns=ratings.columns[2], values="rating")
    judge = scores[scores["metric"] == "gpt-4-mop-human-likeness"].set_index("story_id")["value"]
    candidate = judge.reindex(humans.index).to_numpy(float)[:, None]
    got = alt_test(humans.to_numpy(float), candidate, 0.1)
    omega, rho, ties = exact_reference(humans.to_numpy(float), candidate[:, 0], 0.1)
    assert got.loc[0, "omega"] == omega == 0.0 and got.loc[0, "rho"] == pytest.approx(rho) and ties > 0


def test_a_constant_candidate_never_passes():
    """Raters that hardly agree: a score that gives every story 3 passes the bare test (omega 1 at epsilon 0.2),
    and is left untested with its reason; a signal column beside it still counts."""
    rng = np.random.default_rng(7)
    truth = rng.normal(size=80)
    humans = np.round(truth[:, None] * 0.2 + rng.normal(size=(80, 4)))
    candidates = np.column_stack([np.full(80, 3.0), truth])
    assert alt_test(humans, candidates[:, :1], 0.2).loc[0, "passed"]  # what the bare test says
    rows = criterion_rows(humans, candidates, Margin.of("expert", None, 0.1), 0.05, 30, 2, 99, 0)
    assert bool(rows.loc[0, "constant"]) and np.isnan(rows.loc[0, "omega"]) and not rows.loc[0, "passed"]
    table = rows.assign(untested_reason=[CONSTANT_REASON, ""])
    assert verdicts(table).tolist()[0] == "untested" and np.isnan(rows.loc[0, "chance_p"])
    assert rows.loc[1, "annotators"] == 4 and rows.loc[1, "chance_draws"] == 99


def test_the_permutation_p_value_beats_chance_only_with_signal_and_is_calibrated_without():
    """A candidate equal to the raters' common truth beats all 199 shuffles (p = 1 / 200); pure-noise candidates
    get p-values on the grid k / 200 that fall at or below 0.05 about 5 % of the time."""
    rng = np.random.default_rng(11)
    truth = rng.normal(size=60)
    humans = np.round(truth[:, None] + rng.normal(scale=0.8, size=(60, 3)))
    noise = rng.normal(size=(60, 40))
    p = chance_p(humans, np.column_stack([truth, noise]), MIN_DRAWS, seed=5)
    assert p[0] == 1 / (MIN_DRAWS + 1)
    assert np.allclose(p * (MIN_DRAWS + 1), np.round(p * (MIN_DRAWS + 1)))
    assert (p[1:] <= 0.05).mean() <= 0.15 and p[1:].mean() == pytest.approx(0.5, abs=0.12)
    np.testing.assert_array_equal(p, chance_p(humans, np.column_stack([truth, noise]), MIN_DRAWS, seed=5))


def test_enough_shuffles_for_the_corrected_threshold():
    assert chance_draws(2, 0.05, "auto") == MIN_DRAWS
    assert chance_draws(60, 0.05, "auto") == 1199  # 1 / 1200 <= 0.05 / 60
    assert 1 / (chance_draws(97, 0.01, "auto") + 1) <= 0.01 / 97
    assert chance_draws(60, 0.05, 25) == 25


def test_epsilon_by_the_raters_kind_or_set():
    assert Margin.of("crowd", None, 0.3).epsilon == 0.1 and Margin.of("skilled", None, 0.3).epsilon == 0.15
    assert Margin.of("expert", None, 0.3).epsilon == 0.2 and "expert" in Margin.of("expert", None, 0.3).source
    assert Margin.of("crowd", 0.05, 0.3).epsilon == 0.05 and "entry" in Margin.of("crowd", 0.05, 0.3).source
    assert Margin.of("", None, 0.3).epsilon == 0.3 and "not declared" in Margin.of(None, None, 0.3).source
    with pytest.raises(InputError, match="rater_kind: 'students'.*fix: declare one of crowd, skilled, expert"):
        Margin.of("students", None, 0.1)
    assert across_epsilons("0.15 0.2", 0.15) == "passes at 0.15, 0.2; fails at 0.1"
    assert across_epsilons("0.1 0.15 0.2", 0.1) == "" and across_epsilons("", 0.1) == ""
    assert across_epsilons(np.nan, 0.1) == "" and across_epsilons(0.2, 0.2) == "passes at 0.2; fails at 0.1, 0.15"


def test_a_pass_beyond_chance_needs_the_corrected_p():
    table = pd.DataFrame({"omega": [1.0, 1.0, 0.2, np.nan], "passed": [True, True, False, False],
                          "beats_chance": [True, False, False, False]})
    assert verdicts(table).tolist() == ["passes", "passes, not beyond chance", "fails", "untested"]
