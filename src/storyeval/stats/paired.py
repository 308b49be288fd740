"""Paired comparisons within prompts: which story of a prompt wins, per humans and per metric.

With two (or few) systems per prompt a correlation across systems within a prompt has two points (+-1 whatever
the data), and one correlation over all stories mixes the prompts and the systems. What such data do answer is
the paired question: on each prompt, does the metric prefer the story the raters preferred? Over the n(n-1)/2
story pairs of each prompt this is the pairwise accuracy with ties of Deutsch, Foster & Freitag (EMNLP 2023,
"Ties Matter", Eq. 5): a pair counts as correct when metric and humans order it the same way or both tie it.
A metric difference |d| <= epsilon counts as a metric tie; `accuracy` uses epsilon 0, `calibrated` the epsilon
that maximises the accuracy over all pairs (their tie calibration, as mt-metrics-eval's tau optimisation: the
candidates are 0 and the |d| of the pairs humans tie, the smallest best one wins). Human ties are exact (means
of integer ratings).

The interval is a percentile bootstrap over prompts (pairs of one prompt share its prompt, so they are drawn
together), one seeded draw for all metrics; the calibrated accuracy re-chooses its epsilon in every resample, as
the statistic does (Deutsch et al. 2023, Sec. 5: calibrating on the test data flatters a metric; the interval
carries that choice). storyeval.stats.kendall.calibrate gives the same point values; here the accuracy of
every candidate epsilon is kept per prompt, so that a resample's best is one matrix product.

Baselines, from the same pairs. Chance: a constant metric ties every pair and scores the share of human ties t
(Deutsch et al. 2023), a random tie-free metric (1 - t) / 2; the chance level is the larger. The better system:
each story scored by its system's mean human score over the other prompts (leave-one-prompt-out, so no story
predicts itself); a metric that does not beat it adds nothing beyond knowing which system wrote the story.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.stats.resampling import prompt_resamples, resample_counts

COLUMNS = ["metric", "criterion", "lower_is_better", "prompts", "pairs", "dropped", "human_ties", "metric_ties",
           "accuracy", "accuracy_low", "accuracy_high", "calibrated", "calibrated_low", "calibrated_high", "epsilon",
           "chance", "system_accuracy", "beats_chance", "beats_system"]
SCORED = ["accuracy", "accuracy_low", "accuracy_high", "calibrated", "calibrated_low", "calibrated_high", "epsilon"]
# The baselines' rows (baselines): slug -> label.
BASELINES = {"baseline_constant": "baseline: constant (ties)", "baseline_coin": "baseline: coin (no ties)",
             "baseline_system": "baseline: better system"}


def story_pairs(values: np.ndarray) -> np.ndarray:
    """[P, S, K] -> [P, E, K]: the difference (first minus second) of each of the E = S(S-1)/2 story pairs of a
    prompt."""
    i, j = np.triu_indices(values.shape[1], k=1)
    return values[:, i, :] - values[:, j, :]


def agreements(dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(candidate epsilons [C], per-prompt agreements [C, P]) of one metric's pair differences `dx` [P, E]
    against the humans' `dy` [P, E]: at each candidate, how many pairs of each prompt agree (same sign, a
    metric tie being |dx| <= epsilon). The candidates are 0 and the |dx| of the human ties: only there can a
    larger epsilon gain a pair (a pair the humans order is at best kept), so the best epsilon is among them. A
    pair where either side has no value (NaN) agrees at no epsilon."""
    candidates = np.unique(np.concatenate([[0.0], np.abs(dx[(dy == 0) & ~np.isnan(dx)])]))
    metric_sign = np.where(np.abs(dx)[None] <= candidates[:, None, None], 0.0, np.sign(dx)[None])
    return candidates, (metric_sign == np.sign(dy)[None]).sum(axis=-1)


def system_scores(human: np.ndarray) -> np.ndarray:
    """[P, S, B] -> [P, S, B]: each story's system mean over the other prompts (leave-one-prompt-out, NaN skipped;
    NaN where the system has no other rated prompt; rounded to 12 places, so equal means tie exactly)."""
    present = ~np.isnan(human)
    total = np.nansum(human, axis=0, keepdims=True) - np.where(present, human, 0.0)
    count = present.sum(axis=0, keepdims=True) - present
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.round(total / np.maximum(count, 1), 12), np.nan)


def system_pairs(human: np.ndarray) -> np.ndarray:
    """[P, E, B] the better system's pair differences (system_scores); a pair without a system mean is a tie."""
    return np.nan_to_num(story_pairs(system_scores(human)))


def scored(dx: np.ndarray, dy: np.ndarray, valid: np.ndarray, counts: np.ndarray, tails: list[float]) -> dict:
    """Accuracy, tie-calibrated accuracy, epsilon and their bootstrap intervals (`counts` [R, P]) of pair
    differences `dx` against `dy` [P, E] over the `valid` pairs (at least one)."""
    candidates, agree = agreements(dx, dy)
    whole = agree.sum(axis=1) / valid.sum()  # [C]
    with np.errstate(invalid="ignore", divide="ignore"):  # a resample of prompts without a valid pair: NaN
        resampled = counts @ agree.T / (counts @ valid.sum(axis=1))[:, None]  # [R, C]
    best = int(np.argmax(whole))  # the first maximum: the smallest best epsilon
    kept = resampled[~np.isnan(resampled[:, 0])] if not np.isnan(resampled[:, 0]).all() else resampled
    plain_low, plain_high = np.quantile(kept[:, 0], tails)
    low, high = np.quantile(kept.max(axis=1), tails)
    return {"accuracy": whole[0], "accuracy_low": plain_low, "accuracy_high": plain_high, "calibrated": whole[best],
            "calibrated_low": low, "calibrated_high": high, "epsilon": candidates[best]}


def checked(metrics: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both as float arrays on one prompt x system grid with at least two systems, or an InputError."""
    metrics, human = np.asarray(metrics, dtype=float), np.asarray(human, dtype=float)
    if metrics.ndim != 3 or human.shape[:2] != metrics.shape[:2] or metrics.shape[1] < 2:
        raise InputError(f"paired accuracy: need [prompts, systems >= 2, columns] arrays on one grid, got "
                         f"{metrics.shape} and {human.shape}; fix: give each prompt one story of each system")
    return metrics, human


def paired_accuracy(metrics: np.ndarray, human: np.ndarray, metric_names: Sequence[str],
                    criteria: Sequence[str], lower: Sequence[bool], seed: int, n_resamples: int,
                    confidence: float = 0.95) -> pd.DataFrame:
    """Pairwise accuracy of each metric against each criterion over the story pairs within prompts.

    `metrics` [P, S, A] and `human` [P, S, B] on the prompt x system grid (S >= 2); `lower`: per metric, whether
    lower is better (its scores are negated first). One row per metric x criterion: prompts, pairs, human_ties,
    metric_ties (at epsilon 0), accuracy and its interval, calibrated (tie-calibrated accuracy), epsilon and its
    interval; on the same pairs, the chance level and the better system's accuracy (module docstring), and
    beats_chance / beats_system: the accuracy's interval lies above that value. Pairs where a story has no value
    (NaN) are dropped: `pairs` counts those left, `dropped` the others; NaN with none left.
    """
    metrics, human = checked(metrics, human)
    oriented = np.where(np.asarray(lower, dtype=bool)[None, None, :], -metrics, metrics)
    dx_all, dy_all, dz_all = story_pairs(oriented), story_pairs(human), system_pairs(human)
    prompts, pairs = dx_all.shape[:2]
    counts = resample_counts(prompt_resamples(prompts, n_resamples, seed), prompts)  # [R, P]
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows = []
    for b, criterion in enumerate(criteria):
        dy = dy_all[:, :, b]
        system = np.sign(dz_all[:, :, b]) == np.sign(dy)  # [P, E]: the better system orders the pair as humans do
        for a, metric in enumerate(metric_names):
            dx = dx_all[:, :, a]
            valid = ~np.isnan(dx) & ~np.isnan(dy)  # [P, E]
            total = int(valid.sum())
            row = {"metric": metric, "criterion": criterion, "lower_is_better": bool(lower[a]), "prompts": prompts,
                   "pairs": total, "dropped": prompts * pairs - total, "human_ties": int((dy[valid] == 0).sum()),
                   "metric_ties": int((dx[valid] == 0).sum())}
            if total == 0:
                rows.append(row | dict.fromkeys([*SCORED, "chance", "system_accuracy"], np.nan)
                            | {"beats_chance": False, "beats_system": False})
                continue
            values = scored(dx, dy, valid, counts, tails)
            ties = row["human_ties"] / total
            chance, better = max(ties, (1 - ties) / 2), (system & valid).sum() / total
            rows.append(row | values | {"chance": chance, "system_accuracy": better,
                                        "beats_chance": bool(values["accuracy_low"] > chance),
                                        "beats_system": bool(values["accuracy_low"] > better)})
    return pd.DataFrame(rows, columns=COLUMNS)


def baselines(human: np.ndarray, criteria: Sequence[str], seed: int, n_resamples: int,
              confidence: float = 0.95) -> pd.DataFrame:
    """The baselines' rows (BASELINES) per criterion over the pairs the humans rate, in paired_accuracy's columns
    and with its bootstrap draw: a constant metric (accuracy = the share t of human ties), a random tie-free metric
    (its expected accuracy (1 - t) / 2; tie-calibrated, a random metric ties every pair or none, whichever scores
    more: the chance level) and the better system."""
    human = checked(human, human)[1]  # the grid's checks
    dy_all, dz_all = story_pairs(human), system_pairs(human)
    prompts, pairs = dy_all.shape[:2]
    counts = resample_counts(prompt_resamples(prompts, n_resamples, seed), prompts)
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows = []
    for b, criterion in enumerate(criteria):
        dy = dy_all[:, :, b]
        valid = ~np.isnan(dy)
        total = int(valid.sum())
        base = {"criterion": criterion, "lower_is_better": False, "prompts": prompts, "pairs": total,
                "dropped": prompts * pairs - total, "human_ties": int((dy[valid] == 0).sum())}
        empty = dict.fromkeys(SCORED, np.nan)
        if total == 0:
            rows += [base | empty | {"metric": slug, "metric_ties": 0} for slug in BASELINES]
            continue
        untied = (valid & (dy != 0)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            coin = (counts @ untied / (counts @ valid.sum(axis=1))) / 2  # [R]
        coin = coin[~np.isnan(coin)]
        chance = np.maximum(coin, 1 - 2 * coin)  # a resample's tie share is 1 - 2 coin
        coin_low, coin_high = np.quantile(coin, tails)
        chance_low, chance_high = np.quantile(chance, tails)
        accuracy = untied.sum() / total / 2
        dz = dz_all[:, :, b]
        rows += [base | scored(np.zeros_like(dy), dy, valid, counts, tails)
                 | {"metric": "baseline_constant", "metric_ties": total},
                 base | empty | {"metric": "baseline_coin", "metric_ties": 0, "accuracy": accuracy,
                                 "accuracy_low": coin_low, "accuracy_high": coin_high,
                                 "calibrated": max(accuracy, 1 - 2 * accuracy), "calibrated_low": chance_low,
                                 "calibrated_high": chance_high},
                 base | scored(dz, dy, valid, counts, tails)
                 | {"metric": "baseline_system", "metric_ties": int((dz[valid] == 0).sum())}]
    return pd.DataFrame(rows, columns=COLUMNS).astype({"beats_chance": object, "beats_system": object})
