"""Human agreement beside every metric: Krippendorff's alpha, the human ceiling and the Alternative Annotator Test.

Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"), interval and ordinal,
from the `krippendorff` package on a raters x stories reliability matrix (NaN where a rater did not rate a story):
alpha needs no complete design, so a crowd worker who rated some stories only counts where they rated.

The human ceiling, compared as the metric is: a metric is correlated with the mean of all R ratings of a story, so
the ceiling is the agreement of that mean with the mean of another panel of R raters (the panel's reliability).
Persons (`layout` "rater"): each rater's ratings against the mean of the other raters of the same stories (leave
one rater out), correlated exactly as storyeval correlates a metric with the human mean (stats.correlation.LEVELS:
per prompt across systems and averaged at story level, over the system means at system level; one correlation over
all stories where a set is pooled), averaged over the raters (`unstepped`), then stepped up to R raters
(`panel_reliability`: the Spearman-Brown step, Spearman 1910, Brown 1910). Per-story positions (`layout`
"position": rater 2 of one story is not rater 2 of the next, so nobody can be left out) split each story's ratings
at random into two halves (SPLITS seeded splits), correlate the halves' means the same way and step up from the
halves' sizes to R. Where the correlation before the step is <= 0 it is kept unstepped (raters that disagree have
no reliability to step up). The Spearman-Brown step assumes exchangeable raters and is exact for Pearson's r; for
Spearman and Kendall it is the usual approximation.

The Alternative Annotator Test lives in storyeval.stats.alttest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.criteria import ordered_criteria
from storyeval.errors import InputError
from storyeval.stats.correlation import LEVELS

ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")  # krippendorff's levels of measurement
RATER_LAYOUTS = {
    "position": "judge slots: the released file's rater positions, not the same person across stories",
    "rater": "rater ids of the dataset file",
}
CEILING_COLUMNS = ["level", "coefficient", "ceiling", "ceiling_method", "unstepped", "panel", "raters", "min",
                   "max"]
CEILING_METHODS = {
    "rater": "one rater against the mean of the others, Spearman-Brown stepped up to the panel",
    "position": "split halves of each story's ratings (positions are not persons), Spearman-Brown stepped up to "
                "the panel",
}
SPLITS = 20  # random splits of each story's positions averaged for a position ceiling


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


def panel_reliability(r, a, b, panel):
    """The reliability of the mean of `panel` exchangeable raters from the correlation `r` of two means of `a` and
    `b` raters (one rater against the other R - 1: a = 1, b = R - 1; two halves: a = b = R / 2). Under exchangeable
    raters of single-rater reliability x, a mean of k raters has reliability k x / (1 + (k - 1) x) (Spearman-Brown)
    and r^2 is the product of the two means' reliabilities; solved for x (the positive root of a quadratic), then
    stepped to `panel`. A correlation <= 0 is returned as it is."""
    r, a, b, panel = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (r, a, b, panel)))
    r2 = np.where(r > 0, r, 0.0) ** 2
    quadratic, linear = r2 * (a - 1) * (b - 1) - a * b, r2 * (a + b - 2)  # quadratic < 0, constant term r2 >= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        single = (-linear - np.sqrt(linear**2 - 4 * quadratic * r2)) / (2 * quadratic)
        stepped = panel * single / (1 + (panel - 1) * single)
    return np.where(r > 0, stepped, r)


def split_halves(cube: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(mean of one random half of each story's ratings, mean of the other half), both [..., 1]; NaN where a story
    has fewer than two ratings. Positions are exchangeable slots, so each story is split on its own."""
    present = np.isfinite(cube)
    keys = np.where(present, rng.random(cube.shape), 2.0)
    place = np.argsort(np.argsort(keys, axis=-1), axis=-1)
    first = present & (place < present.sum(axis=-1, keepdims=True) // 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        halves = [np.where(side, cube, 0.0).sum(axis=-1, keepdims=True) / side.sum(axis=-1, keepdims=True)
                  for side in (first, present & ~first)]
    return tuple(np.where(np.isfinite(half), half, np.nan) for half in halves)


def human_ceiling(cube: np.ndarray, levels: list[str], coefficients: list[str], system_ties: str = "merged",
                  system_backend: str = "vectorised", layout: str = "rater", seed: int = 0) -> pd.DataFrame:
    """Per level and coefficient the human ceiling (module docstring): `unstepped`, the mean correlation before the
    Spearman-Brown step (over the raters left out, or the splits), `ceiling` after it to `panel` raters (the mean
    number of ratings of the stories rated twice or more), ceiling_method, raters (persons with a coefficient, or
    positions), min and max of the unstepped correlations. `cube` is [P, S, R] (`rater_cube`)."""
    counts = np.isfinite(cube).sum(axis=-1)
    panel = counts[counts >= 2].mean() if (counts >= 2).any() else np.nan
    if layout == "position":
        rng = np.random.default_rng(seed)
        pairs = [split_halves(cube, rng) for _ in range(SPLITS)]
        sizes = (np.floor(counts[counts >= 2] / 2).mean(), np.ceil(counts[counts >= 2] / 2).mean())
        raters = int(counts.max(initial=0))
    else:
        own, others = leave_one_out(cube)
        pairs = [(own[..., [k]], others[..., [k]]) for k in range(cube.shape[-1])
                 if np.isfinite(own[..., k]).sum() >= 3]  # fewer: no coefficient
        sizes = (1.0, panel - 1)
    rows = []
    for level in levels:
        extra = {"ties": system_ties, "backend": system_backend} if level == "system" else {}
        for coefficient in coefficients:
            r = np.array([LEVELS[level](x, y, coefficient, **extra)[0][0, 0] for x, y in pairs])
            r = r[np.isfinite(r)]
            mean = r.mean() if len(r) else np.nan
            rows.append({"level": level, "coefficient": coefficient, "unstepped": mean,
                         "ceiling": float(panel_reliability(mean, *sizes, panel)), "ceiling_method":
                         CEILING_METHODS[layout], "panel": panel,
                         "raters": raters if layout == "position" and len(r) else len(r),
                         "min": r.min() if len(r) else np.nan, "max": r.max() if len(r) else np.nan})
    return pd.DataFrame(rows, columns=CEILING_COLUMNS)


def agreement_table(ratings: pd.DataFrame, stories: pd.DataFrame, systems: list, levels: list[str],
                    coefficients: list[str], layout: str, alpha_levels: tuple[str, ...] = ("interval", "ordinal"),
                    system_ties: str = "merged", system_backend: str = "vectorised") -> pd.DataFrame:
    """Long table, one row per criterion, level and coefficient: criterion, alpha_<level> of each of
    `alpha_levels` (over every rated story, as the ICC), n_raters and n_stories (how many raters and stories
    alpha counts), level, coefficient and the human ceiling's columns (`human_ceiling`, over the analysed stories
    `stories`/`systems`: data.load.analysis_grid), layout (RATER_LAYOUTS), note (why a criterion has no ceiling,
    or which stories it left out)."""
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
            table = pd.DataFrame([{"level": level, "coefficient": coefficient, "raters": 0,
                                   "ceiling_method": CEILING_METHODS[layout]}
                                  for level in levels for coefficient in coefficients], columns=CEILING_COLUMNS)
        else:
            single = int((counts < 2).sum())
            note = f"{single} of {len(counts)} stories with one rating left out" if single else ""
            table = human_ceiling(cube, levels, coefficients, system_ties, system_backend, layout)
        frames.append(table.assign(criterion=criterion, **alphas, layout=RATER_LAYOUTS[layout], note=note))
    columns = ["criterion", *[f"alpha_{level}" for level in alpha_levels], "n_raters", "n_stories", *CEILING_COLUMNS,
               "layout", "note"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
