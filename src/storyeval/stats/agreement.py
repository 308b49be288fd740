"""Human agreement beside every metric: Krippendorff's alpha, the human ceiling and the Alternative Annotator Test.

Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"), interval and ordinal,
from the `krippendorff` package on a raters x stories reliability matrix (NaN where a rater did not rate a story):
alpha needs no complete design, so a crowd worker who rated some stories only counts where they rated.

The human ceiling: each rater's ratings against the mean of the other raters of the same stories (leave one rater
out), correlated exactly as storyeval correlates a metric with the human mean (stats.correlation.LEVELS: per
prompt across systems and averaged at story level, over the system means at system level; one correlation over
all stories where a set has fewer than three systems a prompt and is pooled); the ceiling is the mean of the
raters' coefficients. A metric's r near it agrees with the human mean as well as one more human would.

The Alternative Annotator Test (Calderon, Reichart & Dror, "The Alternative Annotator Test for LLM-as-a-Judge:
How to Statistically Justify Replacing Human Annotators with LLMs", ACL 2025; their code
github.com/nitaytech/AltTest, function alt_test): for each human annotator j, leave j out and ask per instance
whether the candidate (a metric or an LLM judge) or j aligns better with the remaining annotators (W_f: candidate
at least as well, W_h: j at least as well); one-sided one-sample t-test of the differences W_h - W_f against
the cost-benefit margin epsilon (H0: mean >= epsilon); Benjamini-Yekutieli over the annotators at level q; the
winning rate omega is the share of annotators whose null is rejected, and the candidate passes with omega >= 0.5;
the advantage probability rho is the mean over annotators of the mean W_f. As in their code, instances need
`min_humans` annotators (2) and an annotator `min_instances` instances (30, the t-test's normality) to be tested;
where nobody could be tested, `untested_reason` says why in words.
Alignment: a metric's scale is not the rating scale, so every candidate and annotator is replaced by its ranks
over the stories it scored (the paper's FAQ, "What if I care about ranking rather than exact scores?"), as
percentile ranks ((rank - 0.5) / count, ties averaged) so that annotators who rated different numbers of stories
share one scale; the alignment of a value with the remaining annotators is their negative RMSE (the paper's
neg_rmse; compared here by the mean squared difference, which orders the same).
The chance control: where annotators hardly agree with each other, a score that knows nothing represents them as
well as one of them does, and the test passes it; and a candidate with many tied scores sits mid-rank, which the
RMSE favours when annotators scatter. So each candidate is also tested in `chance_draws` shuffles of its own
scores over the rated stories (seeded): the same values and ties, no relation to the stories. `chance_passes`
counts the shuffles that pass: a candidate's pass means something only where its shuffles do not pass too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control, rankdata, ttest_1samp

from storyeval.criteria import ordered_criteria
from storyeval.errors import InputError
from storyeval.stats.correlation import LEVELS

ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")  # krippendorff's levels of measurement
RATER_LAYOUTS = {
    "position": "judge slots: the released file's rater positions, not the same person across stories",
    "rater": "rater ids of the dataset file",
}
CEILING_COLUMNS = ["level", "coefficient", "ceiling", "raters", "min", "max"]
ALT_TEST_COLUMNS = ["metric", "criterion", "omega", "rho", "passed", "epsilon", "annotators", "raters",
                    "chance_passes", "chance_draws", "untested_reason"]


def reliability_matrix(ratings: pd.DataFrame, rater: str = "rater") -> np.ndarray:
    """[raters, stories] of one criterion's long ratings (story_id, `rater`, rating), NaN where a rater did not
    rate a story."""
    if ratings.duplicated(["story_id", rater]).any():
        story, who = ratings.loc[ratings.duplicated(["story_id", rater]), ["story_id", rater]].iloc[0]
        raise InputError(f"ratings: story {story} has two ratings from {rater} {who!r} on one criterion; fix: "
                         "one rating per story, rater and criterion")
    return ratings.pivot(index=rater, columns="story_id", values="rating").to_numpy(dtype=float)


def krippendorff_alpha(matrix: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of a [raters, stories] matrix at a level of measurement; NaN where it is undefined (a
    single value observed, or no story rated twice)."""
    import krippendorff

    if level not in ALPHA_LEVELS:
        raise InputError(f"agreement: unknown level of measurement {level!r}; fix: choose from {ALPHA_LEVELS}")
    values = matrix[np.isfinite(matrix)]
    if np.unique(values).size < 2 or not (np.isfinite(matrix).sum(axis=0) >= 2).any():
        return np.nan
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def rater_cube(ratings: pd.DataFrame, stories: pd.DataFrame, prompts: list, systems: list,
               rater: str = "rater") -> tuple[np.ndarray, list]:
    """([P, S, R] ratings of one criterion, the R raters): each rater's ratings on the analysis grid (`stories`:
    story_id, prompt_id, system as the cubes lay them out), NaN where the rater did not rate the story; stories
    off the grid (the reference system's) are left out."""
    placed = ratings.merge(stories[stories["system"].isin(systems)], on="story_id")
    raters = sorted(placed[rater].unique(), key=str)
    values = np.full((len(prompts), len(systems), len(raters)), np.nan)
    if len(placed):
        index = tuple(pd.Index(axis).get_indexer(placed[column])
                      for axis, column in ((prompts, "prompt_id"), (systems, "system"), (raters, rater)))
        values[index] = placed["rating"].to_numpy(dtype=float)
    return values, raters


def leave_one_out(cube: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each rater's ratings, the mean of the other raters of the same story), both [..., R] and NaN where the
    rater did not rate the story or nobody else did."""
    present = np.isfinite(cube)
    own = np.where(present, cube, 0.0)
    others = present.sum(axis=-1, keepdims=True) - present
    kept = present & (others > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (own.sum(axis=-1, keepdims=True) - own) / others
    return np.where(kept, cube, np.nan), np.where(kept, mean, np.nan)


def human_ceiling(cube: np.ndarray, levels: list[str], coefficients: list[str], system_ties: str = "merged",
                  system_backend: str = "vectorised") -> pd.DataFrame:
    """Per level and coefficient: the mean over raters of each rater's correlation with the mean of the others
    (`leave_one_out`), computed as stats.correlation.LEVELS computes a metric's; raters (those with a defined
    coefficient), min, max. `cube` is [P, S, R] (`rater_cube`)."""
    own, others = leave_one_out(cube)
    scored = [k for k in range(cube.shape[-1]) if np.isfinite(own[..., k]).sum() >= 3]  # fewer: no coefficient
    rows = []
    for level in levels:
        extra = {"ties": system_ties, "backend": system_backend} if level == "system" else {}
        for coefficient in coefficients:
            r = np.array([LEVELS[level](own[..., [k]], others[..., [k]], coefficient, **extra)[0][0, 0]
                          for k in scored])
            r = r[np.isfinite(r)]
            rows.append({"level": level, "coefficient": coefficient, "ceiling": r.mean() if len(r) else np.nan,
                         "raters": len(r), "min": r.min() if len(r) else np.nan,
                         "max": r.max() if len(r) else np.nan})
    return pd.DataFrame(rows, columns=CEILING_COLUMNS)


def agreement_table(ratings: pd.DataFrame, stories: pd.DataFrame, systems: list, levels: list[str],
                    coefficients: list[str], layout: str, alpha_levels: tuple[str, ...] = ("interval", "ordinal"),
                    system_ties: str = "merged", system_backend: str = "vectorised") -> pd.DataFrame:
    """Long table, one row per criterion, level and coefficient: criterion, alpha_<level> of each of
    `alpha_levels` (over every rated story, as the ICC), n_raters and n_stories (how many raters and stories
    alpha counts), level, coefficient, ceiling, raters, min, max (over the
    analysed stories `stories`/`systems`: data.load.analysis_grid), layout (RATER_LAYOUTS), note (why a criterion
    has no ceiling, or which stories it left out)."""
    if layout not in RATER_LAYOUTS:
        raise InputError(f"agreement: unknown rater layout {layout!r}; fix: choose from {sorted(RATER_LAYOUTS)}")
    analysed = stories[stories["system"].isin(systems)]
    prompts = sorted(analysed["prompt_id"].unique())
    frames = []
    for criterion in ordered_criteria(ratings["criterion"]):
        subset = ratings[ratings["criterion"] == criterion]
        matrix = reliability_matrix(subset)
        alphas = {f"alpha_{level}": krippendorff_alpha(matrix, level) for level in alpha_levels}
        alphas.update(n_raters=matrix.shape[0], n_stories=matrix.shape[1])
        cube, _ = rater_cube(subset, stories, prompts, systems)
        counts = np.isfinite(cube).sum(axis=-1)[np.isfinite(cube).any(axis=-1)]
        if not len(counts) or counts.max() < 2:
            note = "no ceiling: fewer than 2 raters per story"
            table = pd.DataFrame([{"level": level, "coefficient": coefficient, "raters": 0}
                                  for level in levels for coefficient in coefficients], columns=CEILING_COLUMNS)
        else:
            single = int((counts < 2).sum())
            note = f"{single} of {len(counts)} stories with one rating left out" if single else ""
            table = human_ceiling(cube, levels, coefficients, system_ties, system_backend)
        frames.append(table.assign(criterion=criterion, **alphas, layout=RATER_LAYOUTS[layout], note=note))
    columns = ["criterion", *[f"alpha_{level}" for level in alpha_levels], "n_raters", "n_stories", *CEILING_COLUMNS,
               "layout", "note"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def percentile_ranks(values: np.ndarray) -> np.ndarray:
    """Each column's values as (rank - 0.5) / count over the cells it has (ties averaged), NaN where it has none."""
    values = np.asarray(values, dtype=float)
    count = np.isfinite(values).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rankdata(values, axis=0, nan_policy="omit") - 0.5) / count


def _by_rejections(p: np.ndarray, q: float) -> int:
    """How many of one family's p-values Benjamini-Yekutieli rejects at level q (scipy's adjusted p <= q equals
    their step-up rule; statsmodels is not needed for it). A test without a p-value (a zero-variance tie at
    epsilon) cannot reject: p = 1."""
    return int((false_discovery_control(np.nan_to_num(p, nan=1.0), method="by") <= q).sum()) if len(p) else 0


def alt_test(humans: np.ndarray, candidates: np.ndarray, epsilon: float, q: float = 0.05, min_instances: int = 30,
             min_humans: int = 2) -> pd.DataFrame:
    """The alt-test of every candidate column: `humans` [n, R] (NaN where an annotator did not rate an
    instance), `candidates` [n, K] higher-is-better (NaN where a candidate has no value). Returns omega, rho,
    passed, annotators (those tested) and instances (the most any annotator shares with the candidate) per
    candidate, in column order (module docstring)."""
    h, c = percentile_ranks(humans), percentile_ranks(candidates)
    present = np.isfinite(h)
    rated = present.sum(axis=1) >= min_humans  # instances with too few annotators are dropped (their code)
    hz = np.where(present, h, 0.0)
    n_annotators, n_candidates = h.shape[1], c.shape[1]
    p_values = np.full((n_annotators, n_candidates), np.nan)
    advantage = np.full((n_annotators, n_candidates), np.nan)
    instances = np.zeros(n_candidates, dtype=int)
    for j in range(n_annotators):
        others = present.copy()
        others[:, j] = False
        weight = others.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):  # the remaining annotators' mean and mean square
            first, second = ((hz**power * weight).sum(axis=1, keepdims=True) / weight.sum(axis=1, keepdims=True)
                             for power in (1, 2))
        # mean squared difference of a value to the remaining annotators, from those moments (no loop over them)
        human, machine = (np.maximum(v**2 - 2 * v * first + second, 0.0) for v in (hz[:, [j]], c))
        valid = (present[:, j] & rated)[:, None] & np.isfinite(c)
        candidate_wins = np.where(valid, machine <= human, np.nan)
        diff = np.where(valid, (human <= machine).astype(float) - candidate_wins, np.nan)
        instances = np.maximum(instances, valid.sum(axis=0))
        tested = valid.sum(axis=0) >= min_instances
        if tested.any():
            with np.errstate(invalid="ignore", divide="ignore"):
                p = ttest_1samp(diff[:, tested], epsilon, axis=0, alternative="less", nan_policy="omit").pvalue
            p_values[j, tested] = np.where(np.isfinite(p), p, 1.0)
            advantage[j, tested] = np.nanmean(candidate_wins[:, tested], axis=0)
    rows = []
    for k in range(n_candidates):
        tested = np.isfinite(advantage[:, k])
        omega = _by_rejections(p_values[tested, k], q) / tested.sum() if tested.any() else np.nan
        rows.append({"omega": omega, "rho": advantage[tested, k].mean() if tested.any() else np.nan,
                     "passed": bool(omega >= 0.5), "annotators": int(tested.sum()), "instances": int(instances[k])})
    return pd.DataFrame(rows, columns=["omega", "rho", "passed", "annotators", "instances"])


def shuffled(scores: np.ndarray, rated: np.ndarray, draws: int, seed: int) -> list[np.ndarray]:
    """`draws` copies of `scores` [n, K] whose rows are permuted among the `rated` rows (one permutation a draw,
    from `seed`): each column keeps its values and ties and loses its relation to the stories."""
    rng, rows = np.random.default_rng(seed), np.flatnonzero(rated)
    copies = []
    for _ in range(draws):
        copy = scores.copy()
        copy[rows] = scores[rng.permutation(rows)]
        copies.append(copy)
    return copies


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


def alt_test_table(ratings: pd.DataFrame, stories: pd.DataFrame, meta, epsilon: float, q: float = 0.05,
                   min_instances: int = 30, min_annotators: int = 3, min_humans: int = 2, chance_draws: int = 10,
                   seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """The alt-test of every metric and judge of `meta` (stats.meta.MetaSet: oriented higher-is-better, a judge
    against the criteria it rates; `stories` laid out as its cubes, data.load.analysis_grid) on each criterion
    rated by at least `min_annotators` annotators (the paper asks three), each beside `chance_draws` shuffles of
    its scores (the chance control, module docstring; drawn from `seed`, the same for every criterion). Returns
    (metric, label, family, criterion, omega, rho, passed, epsilon, annotators (tested), raters (of the
    criterion), chance_passes, chance_draws, untested_reason (why in words, "" where tested); one line per
    criterion saying what was tested or why not)."""
    frames, notes = [], []
    for criterion in meta.human.names:
        subset = ratings[ratings["criterion"] == criterion]
        _, candidates = meta.cubes(criterion)
        cube, raters = rater_cube(subset, stories, meta.human.prompts, meta.human.systems)
        count = len(candidates.names)
        flat = cube.reshape(-1, cube.shape[-1])
        present = np.isfinite(flat)
        most = int((present & (present.sum(axis=1, keepdims=True) >= min_humans)).sum(axis=0).max(initial=0))
        if len(raters) < min_annotators:
            reason = untested_reason(len(raters), most, 0, min_annotators, min_instances, min_humans)
            notes.append(f"criterion {criterion!r}: no alt-test, {reason}")
            frames.append(pd.DataFrame({"metric": candidates.names, "criterion": criterion, "omega": np.nan,
                                        "rho": np.nan, "passed": False, "epsilon": epsilon, "annotators": 0,
                                        "raters": len(raters), "chance_passes": 0, "chance_draws": chance_draws,
                                        "untested_reason": reason}))
            continue
        scores = candidates.values.reshape(len(flat), -1)
        tested = alt_test(flat, np.column_stack([scores, *shuffled(scores, present.any(axis=1), chance_draws, seed)]),
                          epsilon, q, min_instances, min_humans)
        table = tested.iloc[:count].copy()
        table.insert(0, "metric", candidates.names)
        table.insert(1, "criterion", criterion)
        table.insert(5, "epsilon", epsilon)
        chance = tested["passed"].to_numpy()[count:].reshape(chance_draws, count).sum(axis=0)
        reasons = [untested_reason(len(raters), most, row.instances, min_annotators, min_instances, min_humans)
                   if row.annotators == 0 else "" for row in table.itertuples()]
        table = table.assign(raters=len(raters), chance_passes=chance, chance_draws=chance_draws,
                             untested_reason=reasons)
        frames.append(table)
        hollow = int((table["passed"] & (chance > 0)).sum())
        warning = (f"; {hollow} of them pass in a shuffle of their scores too (chance_passes): there the annotators "
                   "agree too little for a pass to mean more than chance" if hollow else "")
        untested = table.loc[table["annotators"] == 0, "untested_reason"]
        warning += "".join(f"; {n} {reason}" for reason, n in untested.value_counts(sort=False).items())
        notes.append(f"criterion {criterion!r}: {len(raters)} annotators ({table['annotators'].max()} with "
                     f"{min_instances} stories or more tested), {int(table['passed'].sum())} of {len(table)} "
                     f"candidates pass (epsilon {epsilon}){warning}")
    if not frames:
        return meta.labelled(pd.DataFrame(columns=ALT_TEST_COLUMNS)), notes
    return meta.labelled(pd.concat(frames, ignore_index=True)[ALT_TEST_COLUMNS]), notes
