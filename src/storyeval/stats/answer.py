"""Which metric agrees with the humans, answered with the statistic the study's design calls for
(storyeval.stats.design), with baselines, the human ceiling like for like, and how sure the answer is.

Per level and criterion, every metric and judge (oriented: higher is better, so a lower-is-better metric's r is
negated) gets Pearson r under the design's statistic, a percentile bootstrap interval that resamples what the
design lets vary (blocks; prompts, the writers fixed; or stories within each writer), and:

- **baselines** in the same statistic: which writer wrote the story (each story scored by its writer's mean
  rating over the writer's other stories, or other blocks: a fair predictor) and Text length where the score set
  has it. A metric whose interval of the difference to the writer baseline does not lie above 0 adds nothing
  within this design; within writers the writer baseline is 0 by construction;
- **the human ceiling**: the raters split in halves, each half's story (or writer) scores correlated under the
  same statistic, Spearman-Brown corrected to the full panel: the agreement a second panel of as many raters
  would reach. Per-story positions are split story by story (a slot is no person), persons in groups within
  their group;
- **certainty**: the top cluster holds the best column and every column whose bootstrap difference to it is not
  significant (one-sided, Benjamini-Hochberg over the cell's columns, the family said beside); a cell whose top
  cluster holds more than half its columns is undecided;
- **direction**: a column whose interval lies below 0 after orientation correlates against its declared
  direction, and is flagged wherever it is ranked.

The intervals resample stories or blocks, never single ratings; with two writers no resampling varies the
writers, and the summary says what the interval does not cover.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from storyeval.stats.correlation import correlate
from storyeval.stats.design import Design, eta_squared, given_prompts, statistic_words, story_statistic
from storyeval.stats.fdr import bh_adjust

LENGTH = "text-length"


@dataclass(frozen=True)
class Settings:
    seed: int = 0
    resamples: int = 1000
    splits: int = 20  # random rater splits averaged for the ceiling
    alpha: float = 0.05
    confidence: float = 0.95


def _scaled(values: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to max |value| 1 (their correlations unchanged; no cancellation or underflow)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column without values stays NaN
        centred = values - np.nanmean(values, axis=0, keepdims=True)
        scale = np.nanmax(np.abs(centred), axis=0, keepdims=True)
    return centred / np.where(scale > 0, scale, 1.0)


def weighted_r(x: np.ndarray, y: np.ndarray, weights: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Pearson r of every column of `x` [n, A] with `y` [n] under each row of story `weights` [R, n] (bootstrap
    multiplicities), after removing each group's weighted mean from both (`groups` [n] integer codes; one code:
    the plain weighted r). Pairs where either side is NaN are dropped column by column. -> [R, A]"""
    x0, y0, both = _paired(x, y)
    cov = np.zeros((weights.shape[0], x0.shape[1]))
    vx, vy = np.zeros_like(cov), np.zeros_like(cov)
    for code in np.unique(groups):
        rows = groups == code
        w = weights[:, rows]
        moments = _centred(w @ both[rows], w @ x0[rows], w @ y0[rows], w @ (x0[rows] * y0[rows]),
                           w @ x0[rows] ** 2, w @ y0[rows] ** 2)
        cov, vx, vy = cov + moments[0], vx + moments[1], vy + moments[2]
    return _r(cov, vx, vy)


def block_r(x: np.ndarray, y: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """[G, A]: Pearson r within each block (NaN where a block has fewer than 3 stories with values): weighted_r
    with one 0/1 weight row a block, from each block's sums, so time and memory grow with the stories, not
    with blocks x stories."""
    x0, y0, both = _paired(x, y)
    order = np.argsort(blocks, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(np.asarray(blocks)[order]) != 0])

    def sums(values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values[order], starts, axis=0)

    count = sums(both.astype(float))
    values = _r(*_centred(count, sums(x0), sums(y0), sums(x0 * y0), sums(x0**2), sums(y0**2)))
    values[count < 3] = np.nan
    return values


def _paired(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`x` [n, A] and `y` [n] scaled (_scaled), each column's pairs with a NaN on either side set to 0, and
    the mask of the pairs kept [n, A]."""
    x, y = _scaled(np.asarray(x, float)), _scaled(np.asarray(y, float)[:, None])[:, 0]
    both = np.isfinite(x) & np.isfinite(y)[:, None]
    return np.where(both, x, 0.0), np.where(both, y[:, None], 0.0), both


def _centred(count, sx, sy, sxy, sxx, syy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Covariance and variances times the weight, from weighted sums (count: the weight of the kept pairs)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(count > 0, count, 1.0)
        return sxy - sx * sy / safe, sxx - sx**2 / safe, syy - sy**2 / safe


def _r(cov: np.ndarray, vx: np.ndarray, vy: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(vx * vy)
    r[(vx <= 1e-12) | (vy <= 1e-12)] = np.nan
    return np.clip(r, -1.0, 1.0)


SYSTEM_WRITERS = 4  # r over 3 writers' means has one degree of freedom: no interval says anything there
CHUNK = 20_000_000  # story weights held at once (160 MB): bounds memory on large sets, whatever the resamples
# r that differ by less are tied: two metrics with the same per-block r (ROUGE-4 recall and F-score where no
# 4-gram matches) differ by the summation order's last bits, which must not decide a rank or a bootstrap p
TIE_DECIMALS = 12


def resample_weights(unit: np.ndarray, strata: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """[R, n] multiplicities of the stories when the `unit`s (integer codes [n]: a story, a prompt) are drawn with
    replacement within each stratum (`strata` [n]; one code: no strata)."""
    weights = np.zeros((resamples, len(unit)))
    for stratum in np.unique(strata):
        units = np.unique(unit[strata == stratum])
        drawn = rng.integers(0, len(units), size=(resamples, len(units)))
        counts = np.zeros((resamples, len(units)))
        np.add.at(counts, (np.arange(resamples)[:, None], drawn), 1.0)
        index = np.searchsorted(units, unit[strata == stratum])
        weights[:, strata == stratum] = counts[:, index]
    return weights


def resampled(statistic, unit: np.ndarray, strata: np.ndarray, resamples: int, rng: np.random.Generator
              ) -> np.ndarray:
    """[1 + R, A]: `statistic` (story weights [k, n] -> [k, A]) on the sample itself (row 0), then on `resamples`
    resamples, computed CHUNK story weights at a time."""
    rows = max(1, CHUNK // len(unit))
    parts = [statistic(np.ones((1, len(unit))))]
    for start in range(0, resamples, rows):
        parts.append(statistic(resample_weights(unit, strata, min(rows, resamples - start), rng)))
    return np.concatenate(parts)


def nanmean_rows(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted mean over axis 0 of `values` [G, A] for each row of `weights` [R, G], NaNs left out."""
    present = np.isfinite(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights @ np.where(present, values, 0.0)) / (weights @ present)


def writer_means(x: np.ndarray, writers: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[R, S, A] weighted means of the columns of `x` [n, A] per writer (codes 0..S-1), NaNs left out."""
    present = np.isfinite(x)
    x0 = np.where(present, x, 0.0)
    means = []
    for code in range(int(writers.max()) + 1):
        rows = writers == code
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append((weights[:, rows] @ x0[rows]) / (weights[:, rows] @ present[rows]))
    return np.stack(means, axis=1)


def over_writers(values: np.ndarray, writer: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[R, A] r over the writers' weighted means of the columns of `values` [n, A + 1] (the last: the humans')."""
    means = writer_means(values, writer, weights)  # [R, S, A + 1]: correlate batches the resamples
    return correlate(means[..., :-1], means[..., -1:], "pearson")[..., 0]


def spearman_brown(r: np.ndarray | float) -> np.ndarray | float:
    """The reliability of the full panel from the correlation of its two halves; a correlation <= 0 is kept as it
    is (halves that disagree have no reliability to step up: 2r / (1 + r) would go below -1)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.asarray(r) > 0, 2 * np.asarray(r) / (1 + np.asarray(r)), r)


def rater_halves(ratings: pd.DataFrame, story: np.ndarray, design: Design, groups: dict, rng: np.random.Generator
                 ) -> np.ndarray:
    """One random split of the raters: True for half A, per rating (`story`: each rating's story as an integer
    code). Positions are split story by story (a slot is no person), persons within their group (or all
    together)."""
    if design.layout == "position":
        order = rng.permutation(len(ratings))
        by_story = np.lexsort((order, story))  # each story's ratings in drawn order
        sorted_story = story[by_story]
        first = np.searchsorted(sorted_story, sorted_story)  # where the story's ratings start
        rank = np.empty(len(ratings), int)
        rank[by_story] = np.arange(len(ratings)) - first + 1
        return rank <= np.bincount(story)[story] // 2
    raters = pd.unique(ratings["rater"])
    block = pd.Series([groups.get(rater, 0) for rater in raters], index=raters)
    half = {}
    for _, members in block.groupby(block):
        shuffled = rng.permutation(members.index.to_numpy())
        half.update({rater: index < len(shuffled) // 2 for index, rater in enumerate(shuffled)})
    return ratings["rater"].map(half).astype(bool).to_numpy()


def split_scores(ratings: pd.DataFrame, story_ids: Sequence, design: Design, groups: dict, splits: int,
                 rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """`splits` pairs of half-panel story scores (aligned to `story_ids`; NaN where a half has no rating)."""
    index = pd.Index(story_ids).get_indexer(ratings["story_id"])
    kept = index >= 0
    ratings, index = ratings[kept], index[kept]
    values = ratings["rating"].to_numpy(float)
    pairs = []
    for _ in range(splits):
        half = rater_halves(ratings, index, design, groups, rng)
        means = []
        for side in (half, ~half):
            total = np.bincount(index[side], values[side], minlength=len(story_ids))
            count = np.bincount(index[side], minlength=len(story_ids))
            with np.errstate(invalid="ignore", divide="ignore"):
                means.append(np.where(count > 0, total / np.maximum(count, 1), np.nan))
        pairs.append((means[0], means[1]))
    return pairs


def orient(registry: pd.DataFrame) -> np.ndarray:
    """+1 for a higher-is-better column, -1 for a lower-is-better one."""
    return np.where(registry["direction"].to_numpy() == "lower", -1.0, 1.0)


def applies(registry: pd.DataFrame, criterion: str) -> np.ndarray:
    """Which columns are meta-evaluated against `criterion`: every metric; a judge against the criterion it rated
    (and its Average against each, storyeval.data.hanna_judges)."""
    if "criterion" not in registry:
        return np.ones(len(registry), bool)
    rated = registry["criterion"]
    return (rated.isna() | rated.isin([criterion, "Average"])).to_numpy()


class Cell:
    """One level x criterion: the columns' r under one statistic, its resamples and the verdicts."""

    def __init__(self, draws: np.ndarray, names: list[str], alpha: float, confidence: float):
        self.draws, self.names = draws, names  # [R, A]: row 0 the sample's own value
        self.r = draws[0]
        self.ranked_r = np.round(self.r, TIE_DECIMALS)  # what ranks and picks the best: ties to TIE_DECIMALS
        tail = (1 - confidence) / 2 * 100
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column without r in any resample: NaN, as meant
            self.low, self.high = np.nanpercentile(draws[1:], [tail, 100 - tail], axis=0)
        finite = np.isfinite(self.r)
        self.best = int(np.argmax(np.where(finite, self.ranked_r, -np.inf))) if finite.any() else -1
        p = np.full(len(names), np.nan)
        if self.best >= 0:
            worse = np.round(draws[1:, self.best][:, None] - draws[1:], TIE_DECIMALS) <= 0
            p = (worse.sum(axis=0) + 1) / (len(draws[1:]) + 1)  # the bootstrap's one-sided p of "not worse"
            p[~finite] = np.nan
            p[self.best] = np.nan
        self.p = bh_adjust(p)
        self.top = finite & ((self.p >= alpha) | (np.arange(len(names)) == self.best))
        self.family = int(finite.sum())
        self.baseline = np.full(len(draws), np.nan)  # the writer baseline's resamples, where the level has one

    def beats(self, other: np.ndarray) -> np.ndarray:
        """Whether each column's bootstrap difference to `other` [R] (a baseline) lies above 0."""
        if not np.isfinite(other[0]):
            return np.full(len(self.names), False)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            low = np.nanpercentile(self.draws[1:] - other[1:, None], 2.5, axis=0)
        return low > 0


def _codes(values) -> np.ndarray:
    return pd.factorize(pd.Series(values), sort=True)[0]


def design_answer(stories: pd.DataFrame, human: pd.DataFrame, ratings: pd.DataFrame | None,
                  scores: pd.DataFrame, registry: pd.DataFrame, design: Design, blocks: pd.Series,
                  writers: pd.Series, groups: dict, settings: Settings = Settings()
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows: level, criterion, metric, label, kind, r, ci_low, ci_high, rank, top, against, beats_writer,
    beats_length; summary: one row a level and criterion) for the analysed `stories` (their `writers` and
    `blocks` aligned, NaN where none), `human` (story_id, criterion, score), `ratings` (story_id, criterion,
    rater, rating; None without per-rater ratings), `scores` (story_id, metric, value) and the `registry`
    (slug, label, family, direction)."""
    rng = np.random.default_rng(settings.seed)
    ids = stories["story_id"].to_numpy()
    registry = registry.reset_index(drop=True)
    wide = scores.pivot_table(index="story_id", columns="metric", values="value", aggfunc="first")
    x = wide.reindex(index=ids, columns=registry["slug"]).to_numpy(dtype=float) * orient(registry)
    writer = _codes(writers) if writers.notna().all() and design.writers else np.zeros(len(ids), int)
    block = _codes(blocks) if design.blocks else None
    prompts = given_prompts(stories)
    paired = design.prompts >= 2 and prompts.notna().all()
    rows, summary = [], []
    for criterion in pd.unique(human["criterion"]):
        y = human[human["criterion"] == criterion].set_index("story_id")["score"].reindex(ids).to_numpy(float)
        share = eta_squared(y, writer) if design.writers else float("nan")
        statistic = story_statistic(design, share)
        kept = applies(registry, criterion)
        loo = (leave_out_means(y, writer, block if statistic == "item" else None) if design.writers >= 2
               else np.full(len(y), np.nan))  # no writers named: no writer baseline
        columns = np.column_stack([x[:, kept], loo if statistic != "within" else np.zeros(len(y))])
        names = [*registry.loc[kept, "slug"], "baseline: which writer"]
        if statistic == "item":
            unit, unit_words = block, f"the {len(np.unique(block))} {design.blocks}s"
            per_block = block_r(columns, y, block)
            draws = resampled(partial(nanmean_rows, per_block), np.arange(per_block.shape[0]),
                              np.zeros(per_block.shape[0], int), settings.resamples, rng)
        else:
            if statistic == "within" and paired:
                unit, strata, unit_words = _codes(prompts), np.zeros(len(y), int), (
                    f"the {design.prompts} prompts (the {design.writers} writers fixed: the interval does not cover "
                    "which writers were sampled)")
            elif design.writers:
                unit, strata, unit_words = np.arange(len(y)), writer, (
                    "stories within each writer" + (f" (the {design.writers} writers fixed: the interval does not "
                                                    "cover which writers were sampled)" if design.writers <= 3
                                                    else ""))
            else:
                unit, strata, unit_words = np.arange(len(y)), np.zeros(len(y), int), "stories"
            grouped = writer if statistic == "within" else np.zeros(len(y), int)
            draws = resampled(partial(weighted_r, columns, y, groups=grouped), unit, strata, settings.resamples,
                              rng)
        # the writer baseline is resampled with the metrics (paired differences) but never competes with them
        cell = Cell(draws[:, :-1], names[:-1], settings.alpha, settings.confidence)
        cell.baseline = np.zeros(len(draws)) if statistic == "within" else draws[:, -1]  # 0 by construction
        ceiling = story_ceiling(ratings, criterion, ids, design, groups, writer, block, statistic, settings, rng)
        pooled = weighted_r(np.column_stack([x[:, kept], loo]), y, np.ones((1, len(y))), np.zeros(len(y), int))[0]
        rows.append(cell_rows(cell, registry[kept], "story", criterion, statistic, pooled[:-1]))
        summary.append(cell_summary(cell, registry[kept], "story", criterion, statistic,
                                    statistic_words(statistic, design, len(np.unique(block)) if block is not None
                                                    else 0),
                                    unit_words, design, ceiling, pooled[-1], share, kendall_best(
                                        x[:, kept], y, writer, block, statistic, registry[kept])))
        if design.writers >= SYSTEM_WRITERS:
            system_draws = resampled(partial(over_writers, np.column_stack([x[:, kept], y]), writer),
                                     np.arange(len(y)), writer, settings.resamples, rng)
            system = Cell(system_draws, list(registry.loc[kept, "slug"]), settings.alpha, settings.confidence)
            ceiling = system_ceiling(ratings, criterion, ids, design, groups, writer, settings, rng)
            rows.append(cell_rows(system, registry[kept], "system", criterion, "system", None))
            summary.append(cell_summary(system, registry[kept], "system", criterion, "system",
                                        statistic_words("system", design, 0),
                                        "stories within each writer (the raters fixed)", design, ceiling, np.nan,
                                        share, None))
    return pd.concat(rows, ignore_index=True), pd.DataFrame(summary)


def leave_out_means(y: np.ndarray, writer: np.ndarray, block: np.ndarray | None) -> np.ndarray:
    """Each story's writer's mean rating over the writer's other stories (other blocks, where the statistic
    correlates within blocks): which writer wrote it, as a fair predictor."""
    frame = pd.DataFrame({"y": y, "writer": writer, "block": block if block is not None else np.arange(len(y))})
    total = frame.groupby("writer")["y"].transform("sum")
    count = frame.groupby("writer")["y"].transform("count")
    own = frame.groupby(["writer", "block"])["y"].transform("sum")
    own_count = frame.groupby(["writer", "block"])["y"].transform("count")
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((total - own) / (count - own_count)).to_numpy(float)


def story_ceiling(ratings, criterion, ids, design, groups, writer, block, statistic, settings, rng) -> float:
    """The split-half ceiling under the story-level statistic (NaN without per-rater ratings)."""
    rated = None if ratings is None else ratings[ratings["criterion"] == criterion]
    if rated is None or rated.empty or design.raters < 2:
        return float("nan")
    values = []
    for a, b in split_scores(rated, ids, design, groups, settings.splits, rng):
        if statistic == "item":
            values.append(np.nanmean(block_r(a[:, None], b, block)))
        else:
            groups_of = writer if statistic == "within" else np.zeros(len(a), int)
            values.append(weighted_r(a[:, None], b, np.ones((1, len(a))), groups_of)[0, 0])
    return float(spearman_brown(np.nanmean(values))) if np.isfinite(values).any() else float("nan")


def system_ceiling(ratings, criterion, ids, design, groups, writer, settings, rng) -> float:
    """The split-half ceiling over the writers' means."""
    rated = None if ratings is None else ratings[ratings["criterion"] == criterion]
    if rated is None or rated.empty or design.raters < 2:
        return float("nan")
    values = []
    for a, b in split_scores(rated, ids, design, groups, settings.splits, rng):
        means = writer_means(np.column_stack([a, b]), writer, np.ones((1, len(a))))[0]
        values.append(correlate(means[:, :1], means[:, 1:], "pearson")[0, 0])
    return float(spearman_brown(np.nanmean(values))) if np.isfinite(values).any() else float("nan")


def kendall_best(x, y, writer, block, statistic, registry) -> tuple[str, float] | None:
    """(label, tau) of the best column by Kendall's tau-b under the same statistic (within: the mean over
    writers of each writer's tau), to say where the coefficients disagree."""
    if statistic == "item":
        parts = [correlate(x[block == code], y[block == code][:, None], "kendall")[:, 0] for code in np.unique(block)]
    elif statistic == "within":
        parts = [correlate(x[writer == code], y[writer == code][:, None], "kendall")[:, 0]
                 for code in np.unique(writer) if (writer == code).sum() >= 3]
    else:
        parts = [correlate(x, y[:, None], "kendall")[:, 0]]
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column with no tau anywhere: NaN, as meant
        tau = np.nanmean(np.stack(parts), axis=0)
    if not np.isfinite(tau).any():
        return None
    best = int(np.nanargmax(tau))
    return registry["label"].iloc[best], float(tau[best])


def cell_rows(cell: Cell, registry: pd.DataFrame, level: str, criterion: str, statistic: str,
              pooled: np.ndarray | None) -> pd.DataFrame:
    """One row per column of the cell (the writer baseline included at story level)."""
    count = len(registry)
    r = cell.ranked_r[:count]
    order = np.argsort(np.where(np.isfinite(r), -r, np.inf), kind="stable")
    rank = np.empty(count, int)
    rank[order] = np.arange(1, count + 1)
    slugs = list(registry["slug"])
    length = cell.draws[:, slugs.index(LENGTH)] if LENGTH in slugs else np.full(len(cell.draws), np.nan)
    kind = np.where(registry["family"].to_numpy() == "llm-judge", "LLM judge", "metric")
    with np.errstate(invalid="ignore"):
        frame = pd.DataFrame({
            "level": level, "criterion": criterion, "statistic": statistic, "metric": slugs,
            "label": registry["label"].to_numpy(), "kind": kind, "direction": registry["direction"].to_numpy(),
            "r": cell.r[:count], "ci_low": cell.low[:count], "ci_high": cell.high[:count],
            "pooled_r": np.nan if pooled is None else pooled, "rank": rank, "p_vs_best_bh": cell.p[:count],
            "top": cell.top[:count], "against_direction": cell.high[:count] < 0,
            "beats_writer": versus(cell, cell.baseline, count, level),
            "beats_length": versus(cell, length, count, level),
        })
    frame.loc[frame["metric"] == LENGTH, "beats_length"] = pd.NA  # Text length is the baseline itself
    return frame.sort_values("rank", kind="stable")


def versus(cell: Cell, baseline: np.ndarray, count: int, level: str) -> pd.api.extensions.ExtensionArray:
    """Whether each column beats `baseline` (its resamples), NA where the level has no such baseline."""
    if level != "story" or not np.isfinite(baseline[0]):
        return pd.array([pd.NA] * count, dtype="boolean")
    return pd.array(cell.beats(baseline)[:count], dtype="boolean")


def cell_summary(cell: Cell, registry: pd.DataFrame, level: str, criterion: str, statistic: str, words: str,
                 unit: str, design: Design, ceiling: float, writer_pooled: float, share: float,
                 by_kendall: tuple[str, float] | None) -> dict:
    """The answer of one level x criterion, as a row; `verdict` in words."""
    count = len(registry)
    finite = np.isfinite(cell.r[:count])
    labels = registry["label"].to_numpy()
    kinds = np.where(registry["family"].to_numpy() == "llm-judge", "LLM judge", "metric")
    slugs = list(registry["slug"])

    def best_of(kind: str) -> int:
        candidates = np.flatnonzero(finite & (kinds == kind))
        return int(candidates[np.argmax(cell.r[candidates])]) if candidates.size else -1

    metric, judge = best_of("metric"), best_of("LLM judge")
    top_size = int(cell.top[:count].sum())
    undecided = top_size > max(1, cell.family // 2)
    writer_r = cell.baseline[0]
    length_r = cell.r[slugs.index(LENGTH)] if LENGTH in slugs else np.nan
    against = [f"{labels[i]} {cell.r[i] * (-1 if registry['direction'].iloc[i] == 'lower' else 1):+.2f}"
               for i in np.flatnonzero(cell.high[:count] < 0)]
    best = cell.best
    verdict = verdict_words(cell, best, labels, undecided, top_size, writer_r, level, statistic)
    row = {
        "level": level, "criterion": criterion, "statistic": statistic, "statistic_words": words,
        "resampled": unit, "stories": design.stories, "writers": design.writers,
        "blocks": design.groups if design.blocks == "group" else design.prompts, "raters": design.raters,
        "writer_share": share, "columns": cell.family, "top_size": top_size,
        "decided": not undecided and best >= 0 and cell.low[best] > 0,
        "best": labels[best] if best >= 0 else "", "best_r": cell.r[best] if best >= 0 else np.nan,
        "best_low": cell.low[best] if best >= 0 else np.nan, "best_high": cell.high[best] if best >= 0 else np.nan,
        "best_metric": labels[metric] if metric >= 0 else "",
        "best_metric_r": cell.r[metric] if metric >= 0 else np.nan,
        "best_judge": labels[judge] if judge >= 0 else "", "best_judge_r": cell.r[judge] if judge >= 0 else np.nan,
        "ceiling": ceiling, "writer_baseline": writer_r, "writer_baseline_pooled": writer_pooled,
        "length_baseline": length_r, "against_direction": "; ".join(against),
        "kendall_best": by_kendall[0] if by_kendall else "",
        "kendall_best_tau": by_kendall[1] if by_kendall else np.nan,
        "verdict": verdict,
    }
    return row


def verdict_words(cell: Cell, best: int, labels, undecided: bool, top_size: int, writer_r: float, level: str,
                  statistic: str) -> str:
    """The cell's answer in one phrase."""
    if best < 0:
        return "no column has a correlation here"
    if not cell.low[best] > 0:
        return (f"no metric agrees: the best, {labels[best]} ({cell.r[best]:+.2f}), has an interval reaching 0"
                + (" within writers" if statistic == "within" else ""))
    if undecided:
        return f"undecided: {top_size} of {cell.family} columns are not significantly below the best"
    if level == "story" and np.isfinite(writer_r) and not cell.beats(cell.baseline)[best]:
        return f"{labels[best]} leads but does not beat knowing which writer wrote the story ({writer_r:+.2f})"
    return f"{labels[best]} leads" + (f" with {top_size - 1} other{'s' * (top_size > 2)} tied" if top_size > 1
                                      else "")
