"""The Alternative Annotator Test in exact arithmetic, its margin by the raters' kind, and a permutation control.

The test (Calderon, Reichart & Dror, "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically
Justify Replacing Human Annotators with LLMs", ACL 2025; their code github.com/nitaytech/AltTest, function
alt_test): for each human annotator j, leave j out and ask per instance whether the candidate (a metric or an LLM
judge) or j aligns better with the remaining annotators (W_f: candidate at least as well, W_h: j at least as
well); one-sided one-sample t-test of W_h - W_f against the cost-benefit margin epsilon (H0: mean >= epsilon);
Benjamini-Yekutieli over the annotators at level q; the winning rate omega is the share of annotators whose null
is rejected, the candidate passes with omega >= 0.5; the advantage probability rho is the mean over annotators
of the mean W_f. As in their code, instances need `min_humans` annotators and an annotator `min_instances`
instances to be tested.

Alignment: a metric's scale is not the rating scale, so every column is replaced by its percentile ranks over the
stories it scored ((rank - 0.5) / count, ties averaged; the paper's FAQ on ranking) and aligned by negative RMSE
(their neg_rmse). **Ties are decided exactly**: a percentile rank is the rational (2 rank - 1) / (2 count) with an
integer numerator, so all columns are put on one integer grid (the least common multiple of their denominators)
and the comparison of the two mean squared differences is that of |m c - S| with |m h - S|, m the remaining
annotators and S the sum of their values: integers, no rounding (numpy int64 where it cannot overflow, Python
integers otherwise). A float formula breaks exact ties by rounding error, and a tie decides both W_f and W_h.

The margin epsilon: the paper's rule of thumb is 0.1 for crowd workers, 0.15 for skilled annotators (students,
trained workers) and 0.2 for experts (RATER_KINDS). A dataset declares its raters' kind or sets epsilon; every
candidate is also tested at the three rule-of-thumb values, and `passes_at` lists where it passes.

The chance control: a candidate may pass only because the annotators hardly agree (a score that knows nothing then
represents them as well as one of them does), or because its tied scores sit mid-rank. Its scores are shuffled
over the rated stories (same values and ties, no relation to the stories) `draws` times, and the permutation
p-value of its rho is (1 + shuffles with rho at least the observed) / (1 + draws) (Phipson & Smyth 2010, "Permutation
P-values Should Never Be Zero"), Benjamini-Hochberg adjusted over the criterion's candidates. A pass counts only
where that adjusted p is at most q. `auto` draws: enough that a candidate no shuffle matches can clear the
smallest Benjamini-Hochberg threshold q / K alone (draws + 1 >= K / q), at least MIN_DRAWS. A candidate that gives
every story one score is not tested at all: its shuffles are itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control, rankdata, ttest_1samp

from storyeval.errors import InputError
from storyeval.stats.fdr import bh_adjust

RATER_KINDS = {"crowd": 0.1, "skilled": 0.15, "expert": 0.2}  # Calderon et al. 2025, FAQ "How to set epsilon?"
EPSILONS = tuple(RATER_KINDS.values())
MIN_DRAWS = 199  # p-values in steps of 0.005 at least
MAX_DRAWS = 20000  # the schema's bound on agreement.alt_test.chance_draws, "auto" included
CHUNK = 2**22  # instance x column cells of one block of shuffles (int64: 32 MiB a block and array)
POSITION_REASON = ("untested: raters here are per-story positions, not persons (the test leaves one person out and "
                   "asks whether the candidate could replace that person)")
CONSTANT_REASON = "untested: the candidate gives every rated story the same score (its shuffles are itself)"


@dataclass(frozen=True)
class Margin:
    """The alt-test's epsilon for a dataset and where it comes from, in words."""

    epsilon: float
    source: str  # "skilled raters", "set by the dataset entry", "the default, the raters' kind not declared"

    @classmethod
    def of(cls, kind: str | None, epsilon: float | None, default: float) -> Margin:
        """The entry's epsilon, else its raters' kind's (RATER_KINDS), else `default`."""
        if epsilon is not None:
            return cls(float(epsilon), "set by the dataset entry")
        if kind:
            if kind not in RATER_KINDS:
                raise InputError(f"rater_kind: {kind!r} is no kind of rater; fix: declare one of "
                                 f"{', '.join(RATER_KINDS)}, or set alt_test_epsilon")
            return cls(RATER_KINDS[kind], f"{kind} raters")
        return cls(float(default), "the default, the raters' kind not declared")


def rank_numerators(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Percentile ranks as exact rationals: (numerators [n, K] int64, 0 where a cell has no value; denominators [K],
    2 x the column's count), so that rank (r - 0.5) / count = (2r - 1) / (2 count)."""
    values = np.asarray(values, dtype=float)
    ranks = rankdata(values, axis=0, nan_policy="omit")  # ties averaged: multiples of 0.5
    numerators = np.where(np.isfinite(values), np.rint(2 * np.nan_to_num(ranks) - 1), 0).astype(np.int64)
    return numerators, 2 * np.isfinite(values).sum(axis=0)


def on_grid(numerators: np.ndarray, denominators: np.ndarray, annotators: int) -> np.ndarray:
    """Every column on one integer grid (numerator x L / denominator, L the least common multiple of the
    denominators): int64 where the test's sums cannot overflow (|m c - S| + |m h - S| <= 2 annotators L), else
    Python integers."""
    scale = math.lcm(*(int(d) for d in denominators if d > 0)) if (denominators > 0).any() else 1
    factors = np.array([scale // int(d) if d > 0 else 0 for d in denominators], dtype=object)
    if 2 * (annotators + 1) * scale < 2**62:
        return numerators * factors.astype(np.int64)
    return numerators.astype(object) * factors


def _by_rejections(p: np.ndarray, q: float) -> int:
    """How many of one family's p-values Benjamini-Yekutieli rejects at level q (scipy's adjusted p <= q is their
    step-up rule). A test without a p-value (zero variance) cannot reject: p = 1."""
    return int((false_discovery_control(np.nan_to_num(p, nan=1.0), method="by") <= q).sum()) if len(p) else 0


@dataclass
class Wins:
    """Per annotator j and candidate k: instances compared, the candidate's wins (W_f) and the differences
    W_h - W_f ([R, n, K] for the t-tests of the observed candidates; None for shuffles)."""

    instances: np.ndarray  # [R, K]
    machine: np.ndarray  # [R, K] sum of W_f
    diff: np.ndarray | None  # [R, n, K], NaN where not compared


def wins(human_grid: np.ndarray, present: np.ndarray, machine_grid: np.ndarray, scored: np.ndarray,
         min_humans: int, keep_diff: bool) -> Wins:
    """W_f and W_h in exact integers for every annotator left out. With m remaining annotators of sum S, the mean
    squared difference of a value v to them is (v - S/m)^2 plus a constant, so the candidate c is at least as
    close as the annotator h exactly when |m c - S| <= |m h - S|: S - |m h - S| <= m c <= S + |m h - S|."""
    n, annotators = present.shape
    rated = present.sum(axis=1) >= min_humans
    own = np.where(present, human_grid, 0)
    total, count = own.sum(axis=1), present.sum(axis=1)
    instances = np.zeros((annotators, machine_grid.shape[1]), dtype=np.int64)
    machine = np.zeros_like(instances)
    diffs = np.full((annotators, n, machine_grid.shape[1]), np.nan) if keep_diff else None
    for j in range(annotators):
        rows = present[:, j] & rated
        remaining, others = (count[rows] - 1)[:, None], (total[rows] - own[rows, j])[:, None]
        reach = abs(remaining * own[rows, j][:, None] - others)
        scaled = remaining * machine_grid[rows]
        valid = scored[rows]
        inside, low, high = scaled >= others - reach, scaled <= others - reach, scaled >= others + reach
        candidate_wins = valid & inside & (scaled <= others + reach)
        instances[j] = valid.sum(axis=0)
        machine[j] = candidate_wins.sum(axis=0)
        if keep_diff:
            human_wins = valid & (low | high)
            diffs[j][rows] = np.where(valid, human_wins.astype(float) - candidate_wins, np.nan)
    return Wins(instances, machine, diffs)


def rho_fractions(result: Wins, min_instances: int) -> tuple[np.ndarray, np.ndarray]:
    """(numerator, denominator) of rho per candidate as Python integers, for exact comparisons: rho is the mean
    over the tested annotators of wins / instances, put over the least common multiple of the instance counts;
    denominator 0 where nobody was tested."""
    tested = result.instances >= min_instances
    counts = [int(value) for value in np.unique(result.instances[tested])]
    scale = math.lcm(*counts) if counts else 1
    factor = np.where(tested, scale // np.where(tested, result.instances, 1).astype(object), 0)
    return (result.machine.astype(object) * factor).sum(axis=0), tested.sum(axis=0).astype(object) * scale


def t_tests(diff: np.ndarray, tested: np.ndarray, epsilon: float) -> np.ndarray:
    """[R, K] p-values of their one-sided t-test of W_h - W_f against epsilon (scipy's ttest_1samp, as their code),
    NaN where untested: the columns without gaps on an annotator's instances in one vectorised call, the others
    one by one."""
    p = np.full(tested.shape, np.nan)
    for j in range(tested.shape[0]):
        rows = np.isfinite(diff[j]).any(axis=1)
        values = diff[j][rows]
        dense = tested[j] & np.isfinite(values).all(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            if dense.any():
                p[j, dense] = ttest_1samp(values[:, dense], epsilon, axis=0, alternative="less").pvalue
            for k in np.flatnonzero(tested[j] & ~dense):
                p[j, k] = ttest_1samp(values[np.isfinite(values[:, k]), k], epsilon, alternative="less").pvalue
    return p


def alt_test(humans: np.ndarray, candidates: np.ndarray, epsilon: float | tuple[float, ...], q: float = 0.05,
             min_instances: int = 30, min_humans: int = 2) -> pd.DataFrame:
    """The alt-test of every candidate column: `humans` [n, R] (NaN where an annotator did not rate an instance),
    `candidates` [n, K] higher-is-better (NaN where a candidate has no value). Returns per candidate omega, rho and
    passed at the first epsilon given, passes_at (the epsilons at which it passes, ascending), annotators (tested) and
    instances (the most any annotator shares with the candidate)."""
    epsilons = (epsilon,) if np.isscalar(epsilon) else tuple(epsilon)
    humans, candidates = np.asarray(humans, dtype=float), np.asarray(candidates, dtype=float)
    present = np.isfinite(humans)
    numerators, denominators = rank_numerators(np.column_stack([humans, candidates]))
    grid = on_grid(numerators, denominators, humans.shape[1])
    result = wins(grid[:, :humans.shape[1]], present, grid[:, humans.shape[1]:], np.isfinite(candidates),
                  min_humans, keep_diff=True)
    tested = result.instances >= min_instances
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = result.machine / np.where(tested, result.instances, 1)
    p_values = {value: t_tests(result.diff, tested, value) for value in epsilons}
    rows = []
    for k in range(candidates.shape[1]):
        who = np.flatnonzero(tested[:, k])
        omegas = [_by_rejections(p_values[value][who, k], q) / len(who) if len(who) else np.nan
                  for value in epsilons]
        rows.append({"omega": omegas[0], "rho": rates[who, k].mean() if len(who) else np.nan,
                     "passed": bool(omegas[0] >= 0.5),
                     "passes_at": " ".join(f"{value:g}" for value, omega in sorted(zip(epsilons, omegas))
                                           if omega >= 0.5),
                     "annotators": len(who), "instances": int(result.instances[:, k].max(initial=0))})
    return pd.DataFrame(rows, columns=["omega", "rho", "passed", "passes_at", "annotators", "instances"])


def chance_draws(candidates: int, q: float, draws: int | str) -> int:
    """The shuffles a candidate gets: `draws`, or for "auto" the fewest whose smallest p-value 1 / (draws + 1)
    clears Benjamini-Hochberg's smallest threshold q / candidates, at least MIN_DRAWS and at most MAX_DRAWS."""
    if draws != "auto":
        return int(draws)
    return min(MAX_DRAWS, max(MIN_DRAWS, math.ceil(candidates / q) - 1))


def chance_p(humans: np.ndarray, candidates: np.ndarray, draws: int, seed: int, min_instances: int = 30,
             min_humans: int = 2) -> np.ndarray:
    """The permutation p-value of each candidate's rho (module docstring): its scores shuffled over the rated
    stories `draws` times (one permutation of the rated rows a draw, from `seed`, the same for every candidate),
    in blocks of at most CHUNK cells; NaN where no annotator was tested or `draws` is 0."""
    humans, candidates = np.asarray(humans, dtype=float), np.asarray(candidates, dtype=float)
    present = np.isfinite(humans)
    annotators, count = humans.shape[1], candidates.shape[1]
    numerators, denominators = rank_numerators(np.column_stack([humans, candidates]))
    grid = on_grid(numerators, denominators, annotators)
    human_grid, machine_grid = grid[:, :annotators], grid[:, annotators:]
    scored = np.isfinite(candidates)
    observed = rho_fractions(wins(human_grid, present, machine_grid, scored, min_humans, False), min_instances)
    if not draws:
        return np.full(count, np.nan)
    rng, rated = np.random.default_rng(seed), np.flatnonzero(present.any(axis=1))
    at_least = np.zeros(count, dtype=np.int64)
    block = max(1, CHUNK // max(1, len(humans) * count))
    for start in range(0, draws, block):
        orders = [rng.permutation(rated) for _ in range(min(block, draws - start))]
        shuffled_grid, shuffled_scored = machine_grid.copy(), scored.copy()
        grids, scoreds = [], []
        for order in orders:
            shuffled_grid[rated], shuffled_scored[rated] = machine_grid[order], scored[order]
            grids.append(shuffled_grid.copy())
            scoreds.append(shuffled_scored.copy())
        drawn = rho_fractions(wins(human_grid, present, np.concatenate(grids, axis=1),
                                   np.concatenate(scoreds, axis=1), min_humans, False), min_instances)
        numerator, denominator = (part.reshape(len(orders), count) for part in drawn)
        # rho_b >= rho: cross-multiplied as integers (denominator 0: no annotator tested, never at least)
        at_least += ((numerator * observed[1] >= observed[0] * denominator) & (denominator > 0)).sum(axis=0)
    return np.where(observed[1] > 0, (1 + at_least) / (1 + draws), np.nan).astype(float)


def constant(candidates: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """Which candidate columns give every rated story they score one and the same value."""
    values = np.where(rated[:, None], candidates, np.nan)
    with np.errstate(invalid="ignore"):
        return np.nanmax(values, axis=0, initial=-np.inf) == np.nanmin(values, axis=0, initial=np.inf)


ALT_TEST_COLUMNS = ["metric", "criterion", "omega", "rho", "passed", "epsilon", "epsilon_source", "passes_at",
                    "annotators", "raters", "chance_p", "chance_q", "chance_draws", "beats_chance",
                    "untested_reason"]


def untested_reason(raters: int, most: int, instances: int, min_annotators: int = 3, min_instances: int = 30,
                    min_humans: int = 2) -> str:
    """Why the alt-test could not test a candidate on a criterion, in words: too few `raters`, no rater with
    `min_instances` stories that others rated too (`most`: the most any rater has), or the candidate scores too
    few of them (`instances`: the most any rater shares with it)."""
    if raters < min_annotators:
        return (f"untested: {raters} rater{'s' * (raters != 1)} rated this criterion, the test needs "
                f"{min_annotators} (min_annotators)")
    others = "another rater" if min_humans == 2 else f"{min_humans - 1} other raters"
    if most < min_instances:
        return (f"untested: each rater rated at most {most} stories that {others} rated too, the test needs "
                f"{min_instances} (min_instances)")
    return (f"untested: the candidate scores at most {instances} of a rater's stories that {others} rated too, "
            f"the test needs {min_instances} (min_instances)")


def criterion_rows(flat: np.ndarray, scores: np.ndarray, margin: Margin, q: float, min_instances: int,
                   min_humans: int, draws: int | str, seed: int) -> pd.DataFrame:
    """One criterion's rows (ALT_TEST_COLUMNS but metric, criterion, raters): `flat` [n, R] ratings, `scores`
    [n, K] the candidates; constant candidates untested."""
    present = np.isfinite(flat)
    rated = present.sum(axis=1) >= min_humans
    epsilons = (margin.epsilon, *(value for value in EPSILONS if value != margin.epsilon))
    table = alt_test(flat, scores, epsilons, q, min_instances, min_humans)
    flat_constant = constant(scores, rated)
    table.loc[flat_constant, ["omega", "rho"]] = np.nan
    table.loc[flat_constant, ["passed", "passes_at", "annotators"]] = [False, "", 0]
    count = chance_draws(int((~flat_constant).sum()), q, draws)
    tested = table["annotators"].to_numpy() > 0
    p = np.full(len(table), np.nan)
    if tested.any():
        p[tested] = chance_p(flat, scores[:, tested], count, seed, min_instances, min_humans)
    adjusted = bh_adjust(p)
    return table.assign(epsilon=margin.epsilon, epsilon_source=margin.source, chance_p=p, chance_q=adjusted,
                        chance_draws=count, beats_chance=np.nan_to_num(adjusted, nan=1.0) <= q,
                        constant=flat_constant)


def alt_test_table(ratings: pd.DataFrame, stories: pd.DataFrame, meta, margin: Margin, layout: str = "rater",
                   q: float = 0.05, min_instances: int = 30, min_annotators: int = 3, min_humans: int = 2,
                   draws: int | str = "auto", seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """The alt-test of every metric and judge of `meta` (stats.meta.MetaSet: oriented higher-is-better, a judge
    against the criteria it rates; `stories` laid out as its cubes, data.load.analysis_grid) on each criterion
    rated by at least `min_annotators` persons (the paper asks three), at `margin`, with the permutation control
    (module docstring). Raters that are per-story positions (`layout` "position") are not tested. Returns
    (ALT_TEST_COLUMNS with each metric's label and family, one line per criterion)."""
    from storyeval.stats.agreement import rater_cube

    frames, notes = [], []
    for criterion in meta.human.names:
        subset = ratings[ratings["criterion"] == criterion]
        _, candidates = meta.cubes(criterion)
        cube, raters = rater_cube(subset, stories, meta.human.prompts, meta.human.systems)
        flat = cube.reshape(-1, cube.shape[-1])
        present = np.isfinite(flat)
        most = int((present & (present.sum(axis=1, keepdims=True) >= min_humans)).sum(axis=0).max(initial=0))
        base = pd.DataFrame({"metric": candidates.names, "criterion": criterion, "raters": len(raters)})
        if layout == "position" or len(raters) < min_annotators:
            reason = (POSITION_REASON if layout == "position" else
                      untested_reason(len(raters), most, 0, min_annotators, min_instances, min_humans))
            notes.append(f"criterion {criterion!r}: no alt-test, {reason}")
            frames.append(base.assign(omega=np.nan, rho=np.nan, passed=False, epsilon=margin.epsilon,
                                      epsilon_source=margin.source, passes_at="", annotators=0, chance_p=np.nan,
                                      chance_q=np.nan, chance_draws=0, beats_chance=False, untested_reason=reason))
            continue
        rows = criterion_rows(flat, candidates.values.reshape(len(flat), -1), margin, q, min_instances, min_humans,
                              draws, seed)
        table = pd.concat([base, rows.drop(columns="instances")], axis=1)
        table["untested_reason"] = [
            CONSTANT_REASON if row.constant else
            untested_reason(len(raters), most, row.instances, min_annotators, min_instances, min_humans)
            if row.annotators == 0 else "" for row in rows.itertuples()]
        frames.append(table)
        passing, clean = int(table["passed"].sum()), int((table["passed"] & table["beats_chance"]).sum())
        untested = table.loc[table["annotators"] == 0, "untested_reason"].value_counts(sort=False)
        notes.append(f"criterion {criterion!r}: {len(raters)} annotators ({table['annotators'].max()} tested), "
                     f"epsilon {margin.epsilon:g} ({margin.source}): {passing} of {len(table)} candidates pass, "
                     f"{clean} of them beyond chance (permutation p of rho over {table['chance_draws'].iat[0]} "
                     f"shuffles, Benjamini-Hochberg at q {q:g})"
                     + "".join(f"; {count} {reason}" for reason, count in untested.items()))
    if not frames:
        return meta.labelled(pd.DataFrame(columns=ALT_TEST_COLUMNS)), notes
    return meta.labelled(pd.concat(frames, ignore_index=True)[ALT_TEST_COLUMNS]), notes


# A candidate's verdict: it passes and its permutation p (corrected) is at most q; it passes, but chance would
# pass as often (the corrected p above q); it fails; it was not tested (positions, too few raters or stories, a
# constant candidate).
PASSES, PASSES_CHANCE, FAILS, UNTESTED = ALT_VERDICTS = ("passes", "passes, not beyond chance", "fails", "untested")


def verdicts(table: pd.DataFrame) -> pd.Series:
    """Each alt_test.csv row's verdict (ALT_VERDICTS)."""
    passed = table["passed"].astype(bool)
    beyond = table["beats_chance"].astype(bool) if "beats_chance" in table else pd.Series(False, index=table.index)
    return pd.Series(np.select([table["omega"].isna(), passed & ~beyond, passed], [UNTESTED, PASSES_CHANCE, PASSES],
                               FAILS), index=table.index)


def across_epsilons(passes_at: str, epsilon: float) -> str:
    """Where the verdict changes with epsilon, in words ("passes from 0.15"; "" where it is the same at 0.1, 0.15
    and 0.2)."""
    at = {float(value) for value in ("" if pd.isna(passes_at) else str(passes_at)).split()}
    shown = sorted({*EPSILONS, float(epsilon)})
    if not at or at >= set(shown):
        return ""
    return "passes at " + ", ".join(f"{value:g}" for value in shown if value in at) + "; fails at " + ", ".join(
        f"{value:g}" for value in shown if value not in at)
