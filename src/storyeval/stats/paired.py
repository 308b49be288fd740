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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.stats.resampling import prompt_resamples, resample_counts

COLUMNS = ["metric", "criterion", "lower_is_better", "prompts", "pairs", "dropped", "human_ties", "metric_ties",
           "accuracy", "accuracy_low", "accuracy_high", "calibrated", "calibrated_low", "calibrated_high", "epsilon"]


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


def paired_accuracy(metrics: np.ndarray, human: np.ndarray, metric_names: Sequence[str],
                    criteria: Sequence[str], lower: Sequence[bool], seed: int, n_resamples: int,
                    confidence: float = 0.95) -> pd.DataFrame:
    """Pairwise accuracy of each metric against each criterion over the story pairs within prompts.

    `metrics` [P, S, A] and `human` [P, S, B] on the prompt x system grid (S >= 2); `lower`: per metric, whether
    lower is better (its scores are negated first). One row per metric x criterion: prompts, pairs, human_ties,
    metric_ties (at epsilon 0), accuracy and its interval, calibrated (tie-calibrated accuracy), epsilon and its
    interval. Pairs where a story has no value (NaN) are dropped: `pairs` counts those left, `dropped` the others;
    NaN with none left.
    """
    metrics, human = np.asarray(metrics, dtype=float), np.asarray(human, dtype=float)
    if metrics.ndim != 3 or human.shape[:2] != metrics.shape[:2] or metrics.shape[1] < 2:
        raise InputError(f"paired accuracy: need [prompts, systems >= 2, columns] arrays on one grid, got "
                         f"{metrics.shape} and {human.shape}; fix: give each prompt one story of each system")
    oriented = np.where(np.asarray(lower, dtype=bool)[None, None, :], -metrics, metrics)
    dx_all, dy_all = story_pairs(oriented), story_pairs(human)
    prompts, pairs = dx_all.shape[:2]
    counts = resample_counts(prompt_resamples(prompts, n_resamples, seed), prompts)  # [R, P]
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows = []
    for b, criterion in enumerate(criteria):
        dy = dy_all[:, :, b]
        for a, metric in enumerate(metric_names):
            dx = dx_all[:, :, a]
            valid = ~np.isnan(dx) & ~np.isnan(dy)  # [P, E]
            total = int(valid.sum())
            row = {"metric": metric, "criterion": criterion, "lower_is_better": bool(lower[a]), "prompts": prompts,
                   "pairs": total, "dropped": prompts * pairs - total, "human_ties": int((dy[valid] == 0).sum()),
                   "metric_ties": int((dx[valid] == 0).sum())}
            if total == 0:
                rows.append(row | dict.fromkeys(["accuracy", "accuracy_low", "accuracy_high", "calibrated",
                                                 "calibrated_low", "calibrated_high", "epsilon"], np.nan))
                continue
            candidates, agree = agreements(dx, dy)
            whole = agree.sum(axis=1) / total  # [C]
            with np.errstate(invalid="ignore", divide="ignore"):  # a resample of prompts without a valid pair: NaN
                resampled = counts @ agree.T / (counts @ valid.sum(axis=1))[:, None]  # [R, C]
            best = int(np.argmax(whole))  # the first maximum: the smallest best epsilon
            kept = resampled[~np.isnan(resampled[:, 0])] if not np.isnan(resampled[:, 0]).all() else resampled
            plain_low, plain_high = np.quantile(kept[:, 0], tails)
            low, high = np.quantile(kept.max(axis=1), tails)
            rows.append(row | {"accuracy": whole[0], "accuracy_low": plain_low, "accuracy_high": plain_high,
                               "calibrated": whole[best], "calibrated_low": low, "calibrated_high": high,
                               "epsilon": candidates[best]})
    return pd.DataFrame(rows, columns=COLUMNS)
