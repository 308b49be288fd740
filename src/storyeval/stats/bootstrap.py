"""Paired bootstrap comparison of systems (Koehn 2004) and its agreement with humans (HANNA Fig. 7, 26).

As HANNA (Chhun et al. 2022) and its notebook. For each of the S(S-1)/2 system pairs, B
resamples of the prompt indices with replacement (the SAME indices for both
systems and for every criterion and metric); a system's score is its mean
over the resampled prompts. Label 1 if s1 > s2 in at least `confidence` of the
resamples, 2 if s2 > s1 in at least `confidence`, else 0. The criterion's
labels are the truth, a metric's the prediction: weighted F1 over the pairs.

Deviations from the authors' code: the RNG is
seeded (`np.random.default_rng(seed)`, indices drawn as one [B, P] block), and
with `orient=True` lower-is-better metrics are negated first (`orient=False`
compares raw values, the authors' way).
Floating-point ties: the same prompts summed in a different order can differ
in the last bits, so a resampled difference within `TIE_RTOL` x the column's
largest |value| counts as a tie (neither system wins), whatever the summation order.
Missing cells (NaN): a system's resampled score is its mean over the drawn prompts where it has a value; a
resample where a system has none decides nothing for its pairs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score

from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.stats.ranking import DIRECTIONS
from storyeval.stats.resampling import prompt_resamples, resample_counts

TIE_RTOL = 1e-10


def system_pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (first, second) of the S(S-1)/2 pairs, first < second, in itertools.combinations order."""
    return np.triu_indices(n_systems, k=1)


def pairwise_labels(values: np.ndarray, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> np.ndarray:
    """Labels [pairs, K] in {0, 1, 2} for `values` [P, S, K], higher = better in every column."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 3 or np.isinf(values).any():
        raise InputError(
            f"pairwise_labels: values {values.shape} must be a [prompt, system, variable] cube without infinite "
            "values; fix: drop the columns that have them"
        )
    if not 0.5 < confidence <= 1 or n_resamples < 1:
        raise InputError(
            f"pairwise_labels: confidence {confidence} must lie in (0.5, 1] and n_resamples {n_resamples} >= 1"
        )
    n_prompts, n_systems, n_columns = values.shape
    check_draws(n_resamples, n_prompts, n_systems, n_columns, "stats.n_resamples")
    counts = resample_counts(prompt_resamples(n_prompts, n_resamples, seed), n_prompts)
    # All resampled means at once: [B, P] @ [P, S*K] instead of a loop over resamples.
    present = ~np.isnan(values)
    flat = np.where(present, values, 0.0).reshape(n_prompts, -1)
    if present.all():
        means = counts @ flat / n_prompts
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            means = counts @ flat / (counts @ present.reshape(n_prompts, -1))
    means = means.reshape(n_resamples, n_systems, n_columns)
    first, second = system_pairs(n_systems)
    difference = means[:, first, :] - means[:, second, :]
    tolerance = TIE_RTOL * np.abs(np.where(present, values, 0.0)).max(axis=(0, 1))
    first_wins = (difference > tolerance).mean(axis=0) >= confidence
    second_wins = (difference < -tolerance).mean(axis=0) >= confidence
    return np.where(first_wins, 1, np.where(second_wins, 2, 0))


def oriented(metrics: np.ndarray, directions: list[str], orient: bool = True) -> np.ndarray:
    """Negate the lower-is-better columns of `metrics` [P, S, M] so that higher is better (if `orient`)."""
    if len(directions) != metrics.shape[-1] or not set(directions) <= set(DIRECTIONS):
        raise InputError(
            f"bootstrap: need one direction in {DIRECTIONS} per metric column ({metrics.shape[-1]}); fix: pass "
            "registry.direction"
        )
    sign = np.where(np.asarray(directions) == "lower", -1.0, 1.0) if orient else np.ones(len(directions))
    return metrics * sign


def f1_table(
    human_labels: np.ndarray, metric_labels: np.ndarray, metric_names: list[str], criterion_names: list[str]
) -> pd.DataFrame:
    """Weighted F1 (sklearn, zero_division=0) of each metric's pair labels against each criterion's: metric,
    criterion, f1."""
    rows = [
        {
            "metric": metric,
            "criterion": criterion,
            "f1": f1_score(human_labels[:, c], metric_labels[:, m], average="weighted", zero_division=0),
        }
        for m, metric in enumerate(metric_names)
        for c, criterion in enumerate(criterion_names)
    ]
    return pd.DataFrame(rows, columns=["metric", "criterion", "f1"])


def label_table(labels: np.ndarray, systems: list[str], names: list[str]) -> pd.DataFrame:
    """Long view of labels [pairs, K] for inspection: system_1, system_2, variable, label."""
    first, second = system_pairs(len(systems))
    frame = pd.DataFrame(labels, columns=names)
    frame.insert(0, "system_2", np.asarray(systems, dtype=object)[second])
    frame.insert(0, "system_1", np.asarray(systems, dtype=object)[first])
    return frame.melt(id_vars=["system_1", "system_2"], var_name="variable", value_name="label")


def bootstrap_labels(
    human: np.ndarray,
    metrics: np.ndarray,
    directions: list[str],
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    orient: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Labels of criteria [pairs, C] and metrics [pairs, M], all from one set of resamples."""
    if human.shape[:2] != metrics.shape[:2]:
        raise InputError(
            f"bootstrap: cubes {human.shape} and {metrics.shape} differ in prompts/systems; fix: build both on "
            "the same stories"
        )
    joined = np.concatenate([human, oriented(metrics, directions, orient)], axis=-1)
    labels = pairwise_labels(joined, n_resamples, seed, confidence)
    return labels[:, : human.shape[-1]], labels[:, human.shape[-1] :]


def bootstrap_f1(
    human: np.ndarray,
    metrics: np.ndarray,
    directions: list[str],
    metric_names: list[str],
    criterion_names: list[str],
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    orient: bool = True,
) -> pd.DataFrame:
    """HANNA Fig. 7/26: weighted F1 of every metric against every criterion (metric, criterion, f1, missing: the
    metric's cells without a value, which its system means leave out)."""
    if (metrics.shape[-1], human.shape[-1]) != (len(metric_names), len(criterion_names)):
        raise InputError("bootstrap_f1: names do not match the cubes' last axes; fix: pass Cube.names")
    human_labels, metric_labels = bootstrap_labels(human, metrics, directions, n_resamples, seed, confidence, orient)
    table = f1_table(human_labels, metric_labels, metric_names, criterion_names)
    return table.assign(missing=np.repeat(np.isnan(metrics).sum(axis=(0, 1)), len(criterion_names)))
