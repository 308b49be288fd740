"""Pairwise accuracy of system rankings (Kocmi et al., WMT 2021) and soft pairwise accuracy (Thompson et al., WMT 2024).

A system's score is its mean over the prompts (means equal up to float
rounding made equal: correlation.merge_float_ties).

- Pairwise accuracy: the share of the S(S-1)/2 system pairs that the metric
  orders as the human criterion does (sign of the difference; a tie agrees
  only with a tie, as mt-metrics-eval's Agreement).
- Soft pairwise accuracy (SPA): 1 - the mean over pairs of |p_human - p_metric|,
  where p is the p-value of "system i beats system j" in a paired permutation
  test over the prompts: each permutation swaps the two systems' scores on
  every prompt with probability 1/2 (a sign flip of the per-prompt
  difference), p = (k + 1) / (n + 1) with k of the n permutations whose summed
  difference >= the observed one (Thompson et al. 2024, Sec. 3; mt-metrics-eval
  pce.py, with Phipson & Smyth's (2010) +1 so that no p is 0). One
  seeded draw of flips serves every pair, the criterion and every metric, as
  in pce.py, so the two p-values of a pair share their permutations.

Missing cells (NaN): a system's mean is over the prompts where it has a value; a pair of systems is tested on
the prompts where both have one; a pair without both means counts for neither accuracy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.data.scoreset import Cube
from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.stats.bootstrap import TIE_RTOL, system_pairs
from storyeval.stats.correlation import cell_means, merge_float_ties
from storyeval.stats.permutation import permutation_p


def _check(values: np.ndarray, what: str) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.ndim != 3 or values.shape[1] < 2 or np.isinf(values).any():
        raise InputError(
            f"{what}: need a [prompt, system >= 2, column] cube without infinite values, got {values.shape}; "
            "fix: drop the columns that have them"
        )
    return values


def pairwise_accuracy(human: np.ndarray, metrics: np.ndarray) -> np.ndarray:
    """[M, C] share of system pairs ordered alike by each metric (`metrics` [P, S, M]) and criterion ([P, S, C])."""
    human, metrics = _check(human, "pairwise_accuracy"), _check(metrics, "pairwise_accuracy")
    first, second = system_pairs(human.shape[1])

    def signs(values):
        means = merge_float_ties(cell_means(values))
        return np.sign(means[first] - means[second])

    metric_signs, human_signs = signs(metrics)[:, :, None], signs(human)[:, None, :]
    both = ~np.isnan(metric_signs) & ~np.isnan(human_signs)
    if both.all():
        return (metric_signs == human_signs).mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((metric_signs == human_signs) & both).sum(axis=0) / both.sum(axis=0)


def pairwise_pvalues(values: np.ndarray, n_permutations: int = 1000, seed: int = 0) -> np.ndarray:
    """[pairs, K] p-values of "system i beats system j" (pairs i < j, bootstrap.system_pairs) for `values` [P, S, K].

    Paired permutation test over prompts (module docstring); flips from np.random.default_rng(seed).
    A permuted difference within TIE_RTOL x the column's summed |scores| of the observed one counts as >=.
    """
    values = _check(values, "pairwise_pvalues")
    if n_permutations < 1:
        raise InputError(f"pairwise_pvalues: need >= 1 permutation, got {n_permutations}")
    prompts, systems, columns = values.shape
    check_draws(n_permutations, prompts, systems, columns, "meta.n_permutations")
    flips = np.where(np.random.default_rng(seed).random((n_permutations, prompts)) < 0.5, -1.0, 1.0)
    first, second = system_pairs(systems)
    present = ~np.isnan(values)
    zeroed = np.where(present, values, 0.0)
    tolerance = TIE_RTOL * np.abs(zeroed).sum(axis=(0, 1))
    if present.all():
        # The summed difference of i and j after flips f is f @ (x_i - x_j): one product for every system at once.
        partial = (flips @ values.reshape(prompts, -1)).reshape(n_permutations, systems, columns)
        totals = values.sum(axis=0)
        null, observed = partial[:, first] - partial[:, second], totals[first] - totals[second]
    else:  # each pair's differences on the prompts where both systems have a value (0 elsewhere: flips keep it 0)
        both = present[:, first] & present[:, second]
        differences = np.where(both, zeroed[:, first] - zeroed[:, second], 0.0)  # [P, pairs, K]
        null = (flips @ differences.reshape(prompts, -1)).reshape(n_permutations, *differences.shape[1:])
        observed = differences.sum(axis=0)
    return permutation_p((null >= observed - tolerance).sum(axis=0), n_permutations)


def soft_pairwise_accuracy(
    human: np.ndarray, metrics: np.ndarray, n_permutations: int = 1000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(SPA [M, C], p_human [pairs, C], p_metric [pairs, M]) for `metrics` [P, S, M], `human` [P, S, C]."""
    if np.shape(human)[:2] != np.shape(metrics)[:2]:
        raise InputError(
            f"soft_pairwise_accuracy: cubes {np.shape(human)} and {np.shape(metrics)} differ in prompts/systems"
        )
    p = pairwise_pvalues(np.concatenate([human, metrics], axis=-1), n_permutations, seed)
    p_human, p_metric = p[:, : np.shape(human)[-1]], p[:, np.shape(human)[-1] :]
    return 1 - np.abs(p_metric[:, :, None] - p_human[:, None, :]).mean(axis=0), p_human, p_metric


def pairwise_table(human: Cube, metrics: Cube, n_permutations: int = 1000, seed: int = 0) -> pd.DataFrame:
    """metric, criterion, pairwise_accuracy, soft_pairwise_accuracy (metrics oriented higher-is-better)."""
    accuracy = pairwise_accuracy(human.values, metrics.values)
    soft, _, _ = soft_pairwise_accuracy(human.values, metrics.values, n_permutations, seed)
    metric, criterion = np.meshgrid(metrics.names, human.names, indexing="ij")
    return pd.DataFrame(
        {
            "metric": metric.ravel(),
            "criterion": criterion.ravel(),
            "pairwise_accuracy": accuracy.ravel(),
            "soft_pairwise_accuracy": soft.ravel(),
        }
    )
