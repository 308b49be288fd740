"""Intraclass correlations with F-test confidence intervals (HANNA Tab. 3, Chhun et al. 2022).

Shrout & Fleiss (1979) forms from the two-way ANOVA of a complete
targets x raters matrix, with the confidence intervals of McGraw & Wong (1996)
exactly as pingouin.intraclass_corr (and R psych::ICC) compute them. pingouin
is not installed (it pulls statsmodels and xarray for one ANOVA), so the mean
squares are written here with numpy and the F quantiles come from scipy.stats.f.

Which form: HANNA reports ICC2k (two-way random, absolute agreement, mean of
k raters). It assumes the same k raters rate every story; mTurk raters differ
from story to story (the released file only has positions 1-3), which is the
one-way random design, ICC1k. Tables therefore report both.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import f

from storyeval.criteria import CRITERIA, ordered_criteria
from storyeval.errors import InputError

FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
LAYOUTS = {"worker": "worker-id judges (raw annotation file)", "position": "rater positions (released file)",
           "rater": "judge slots of each criterion's raters (dataset file; the log says how)"}


def rating_matrix(ratings: pd.DataFrame, target: str, rater: str, rating: str, source: str = "ratings") -> np.ndarray:
    """Pivot a long table into [targets, raters]; every target must be rated once by every rater."""
    missing = [column for column in (target, rater, rating) if column not in ratings.columns]
    if missing:
        raise InputError(f"{source}: columns {missing} are missing; fix: pass a long table (target, rater, rating)")
    if ratings.duplicated([target, rater]).any():
        raise InputError(f"{source}: a {target} has two ratings from the same {rater}; fix: one rating per pair")
    matrix = ratings.pivot(index=target, columns=rater, values=rating).to_numpy(dtype=float)
    if np.isnan(matrix).any():
        raise InputError(
            f"{source}: {int(np.isnan(matrix).any(axis=1).sum())} {target}s lack a rating from some {rater}; "
            "fix: complete targets x raters (the ANOVA forms need a balanced design)"
        )
    if min(matrix.shape) < 2 or np.ptp(matrix) == 0:
        raise InputError(f"{source}: need >= 2 {target}s and {rater}s and non-constant ratings; fix: check the input")
    return matrix


def intraclass_correlations(matrix: np.ndarray, level: float = 0.95) -> pd.DataFrame:
    """The six Shrout-Fleiss forms of a [n targets, k raters] matrix: form, icc, ci_low, ci_high, F, df1, df2, p."""
    x = np.asarray(matrix, dtype=float)
    n, k = x.shape
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_error = ((x - grand) ** 2).sum() - ss_rows - ss_cols
    df_rows, df_error, df_within = n - 1, (n - 1) * (k - 1), n * (k - 1)
    msr, msc, mse = ss_rows / df_rows, ss_cols / (k - 1), ss_error / df_error
    msw = (ss_cols + ss_error) / df_within
    icc1 = (msr - msw) / (msr + (k - 1) * msw)
    icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    icc3 = (msr - mse) / (msr + (k - 1) * mse)
    f1, f3 = msr / msw, msr / mse
    q = (1 + level) / 2
    # One-way (1) and consistency (3) forms: exact F bounds.
    f1_low, f1_high = f1 / f.ppf(q, df_rows, df_within), f1 * f.ppf(q, df_within, df_rows)
    f3_low, f3_high = f3 / f.ppf(q, df_rows, df_error), f3 * f.ppf(q, df_error, df_rows)
    # Absolute agreement (2): Satterthwaite degrees of freedom v (McGraw & Wong 1996, case 2A).
    fj = msc / mse
    b = n * (1 + (k - 1) * icc2) - k * icc2
    v = df_error * (k * icc2 * fj + b) ** 2 / (df_rows * k**2 * icc2**2 * fj**2 + b**2)
    f2_high, f2_low = f.ppf(q, df_rows, v), f.ppf(q, v, df_rows)
    l2 = n * (msr - f2_high * mse) / (f2_high * (k * msc + (k * n - k - n) * mse) + n * msr)
    u2 = n * (f2_low * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f2_low * msr)

    def single(low: float, high: float) -> tuple[float, float]:
        return (low - 1) / (low + k - 1), (high - 1) / (high + k - 1)

    def spearman_brown(r: float) -> float:
        return k * r / (1 + (k - 1) * r)

    bounds = [
        single(f1_low, f1_high),
        (l2, u2),
        single(f3_low, f3_high),
        (1 - 1 / f1_low, 1 - 1 / f1_high),
        (spearman_brown(l2), spearman_brown(u2)),
        (1 - 1 / f3_low, 1 - 1 / f3_high),
    ]
    values = [icc1, icc2, icc3, (msr - msw) / msr, (msr - mse) / (msr + (msc - mse) / n), (msr - mse) / msr]
    p1, p3 = f.sf(f1, df_rows, df_within), f.sf(f3, df_rows, df_error)
    return pd.DataFrame(
        {
            "form": FORMS,
            "icc": values,
            "ci_low": [low for low, _ in bounds],
            "ci_high": [high for _, high in bounds],
            "F": [f1, f3, f3] * 2,
            "df1": df_rows,
            "df2": [df_within, df_error, df_error] * 2,
            "p": [p1, p3, p3] * 2,
        }
    )


def icc(
    ratings: pd.DataFrame,
    target: str = "story_id",
    rater: str = "rater",
    rating: str = "rating",
    level: float = 0.95,
    source: str = "ratings",
) -> pd.DataFrame:
    """All six forms from a long table (target, rater, rating); see `intraclass_correlations`."""
    return intraclass_correlations(rating_matrix(ratings, target, rater, rating, source), level)


def positional_judges(
    annotations: pd.DataFrame, story: str = "Story ID", worker: str = "Worker ID", slots: str = "ABC"
) -> pd.DataFrame:
    """HANNA's judge layout (the authors' notebook): `annotations` plus a `judge` column (A, B, C).

    The three most frequent workers own slots A, B, C (frequency ties: the
    smaller worker id first). Any other worker takes the first slot still
    empty in the story, in row order. Deterministic for a given row order.
    """
    for column in (story, worker):
        if column not in annotations.columns:
            raise InputError(f"annotations: no {column!r} column; fix: use the raw annotation file with Worker IDs")
    counts = annotations[worker].astype(str).value_counts().rename_axis("w").reset_index()
    counts = counts.sort_values(["count", "w"], ascending=[False, True])
    owner = dict(zip(counts["w"].head(len(slots)), slots))
    judge = pd.Series("", index=annotations.index, dtype=object)
    for key, rows in annotations.groupby(story, sort=False):
        workers = rows[worker].astype(str)
        if len(rows) > len(slots) or workers.duplicated().any():
            raise InputError(
                f"annotations: story {key!r} has {len(rows)} ratings by {workers.nunique()} workers; "
                f"fix: at most {len(slots)} ratings, each by a different worker"
            )
        taken = {index: owner[name] for index, name in workers.items() if name in owner}
        free = iter(slot for slot in slots if slot not in taken.values())
        judge[rows.index] = [taken.get(index) or next(free) for index in rows.index]
    return annotations.assign(judge=judge)


def rater_judges(ratings: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Long ratings (story_id, criterion, rater id, rating) with, criterion by criterion, each rater id replaced by
    a judge slot (`positional_judges`, one slot per rating of the story rated most often on that criterion):
    raters who each rate some of the stories become the k judges of a one-way design (Shrout & Fleiss 1979,
    case 1), and a criterion's raters need not be another's. The ANOVA needs every story rated k times: where
    stories have different numbers of ratings on a criterion, each keeps its first k by slot (k = the fewest any
    story has, stories with one rating left out). Returns the judged ratings and one line per criterion saying
    what was done, or why it has no ICC (fewer than 2 stories with 2 ratings)."""
    judged, notes = [], []
    for criterion in ordered_criteria(ratings["criterion"]):
        subset = ratings[ratings["criterion"] == criterion]
        counts = subset.groupby("story_id")["rater"].nunique()
        kept = counts[counts >= 2]
        if len(kept) < 2:
            notes.append(f"criterion {criterion!r}: no ICC, fewer than 2 stories have 2 ratings")
            continue
        k = int(kept.min())
        subset = subset[subset["story_id"].isin(kept.index)]
        slots = [f"J{index + 1}" for index in range(int(kept.max()))]
        pairs = positional_judges(subset[["story_id", "rater"]].drop_duplicates(), "story_id", "rater", slots)
        subset = subset.merge(pairs, on=["story_id", "rater"])
        if kept.min() == kept.max() and len(kept) == len(counts):
            notes.append(f"criterion {criterion!r}: {k} ratings a story by {subset['rater'].nunique()} raters, as "
                         f"judge slots J1-J{k}")
        else:
            order = subset["judge"].map({slot: index for index, slot in enumerate(slots)})
            rank = order.groupby(subset["story_id"]).rank(method="first").astype(int)
            subset = subset[rank <= k]
            subset = subset.assign(judge="J" + rank[subset.index].astype(str))
            left = len(counts) - len(kept)
            notes.append(f"criterion {criterion!r}: stories have {counts.min()}-{counts.max()} ratings; ICC on "
                         f"the first {k} of each of {len(kept)} stories"
                         + (f" ({left} with one rating left out)" if left else ""))
        judged.append(subset.drop(columns="rater").rename(columns={"judge": "rater"}))
    columns = ["story_id", "criterion", "rater", "rating"]
    return (pd.concat(judged, ignore_index=True)[columns] if judged else pd.DataFrame(columns=columns)), notes


def judge_ratings(
    annotations: pd.DataFrame, story: str = "Story ID", worker: str = "Worker ID", criteria: list[str] = CRITERIA
) -> pd.DataFrame:
    """Raw annotations (one row per rating) -> long (story_id, criterion, rater = judge A/B/C, rating)."""
    missing = [criterion for criterion in criteria if criterion not in annotations.columns]
    if missing:
        raise InputError(f"annotations: criterion columns {missing} are missing; fix: use the raw annotation file")
    judged = positional_judges(annotations, story, worker)
    table = judged.melt(id_vars=[story, "judge"], value_vars=list(criteria), var_name="criterion", value_name="rating")
    return table.rename(columns={story: "story_id", "judge": "rater"})[["story_id", "criterion", "rater", "rating"]]


def icc_table(
    ratings: pd.DataFrame,
    layout: str,
    forms: tuple[str, ...] = ("ICC2k", "ICC1k"),
    level: float = 0.95,
    rater: str = "rater",
) -> pd.DataFrame:
    """Tab. 3: per criterion the chosen forms: criterion, form, icc, ci_low, ci_high, layout.

    `ratings` is long (story_id, criterion, `rater`, rating); `layout` is
    'worker' (judges A/B/C from `judge_ratings`) or 'position' (the
    released rater positions 1-3).
    """
    if layout not in LAYOUTS:
        raise InputError(f"icc_table: unknown layout {layout!r}; fix: use one of {sorted(LAYOUTS)}")
    unknown = [form for form in forms if form not in FORMS]
    if unknown:
        raise InputError(f"icc_table: unknown forms {unknown}; fix: choose from {FORMS}")
    frames = []
    for criterion in ordered_criteria(ratings["criterion"]):
        subset = ratings[ratings["criterion"] == criterion]
        table = (
            icc(subset, rater=rater, level=level, source=f"ratings of {criterion}").set_index("form").loc[list(forms)]
        )
        frames.append(table.reset_index()[["form", "icc", "ci_low", "ci_high"]].assign(criterion=criterion))
    if not frames:  # no criterion has an ICC (rater_judges says why)
        return pd.DataFrame(columns=["criterion", "form", "icc", "ci_low", "ci_high", "layout"])
    frame = pd.concat(frames, ignore_index=True).assign(layout=LAYOUTS[layout])
    return frame[["criterion", "form", "icc", "ci_low", "ci_high", "layout"]]
