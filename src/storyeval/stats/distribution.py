"""Distributional agreement of an LLM judge with the raters: on the stories with two or more ratings, how far the
judge's distribution over the ratings 1-5 (mode expected: p1..p5 of a judge job's details, storyeval.judges.rate)
lies from the histogram of the story's ratings.

The distance is the 1-Wasserstein (earth mover's) distance on the ordinal support 1..5 (Rubner, Tomasi & Guibas
2000, "The Earth Mover's Distance as a Metric for Image Retrieval", IJCV 40): the rating mass that has to move,
times how far, in rating points (0: the same distribution; 4: all mass on 1 against all mass on 5). Unlike the
divergences that compare a model's distribution with its annotators' (cross-entropy, Jensen-Shannon: Uma et al.
2021, "Learning from Disagreement: A Survey", JAIR 72), it counts a 4 against a 5 as nearer than a 1 against a 5.
`distance` is its mean over the stories.

The raters' ceiling (`raters_loo_distance`), leave one rater out: on each story, each rater's rating, a point mass,
against the histogram of the story's other raters; averaged over the story's raters, then over the stories as the
judge's distance is. It is what one human's answer scores against the others. A judge can go below it: a point
mass cannot match a spread histogram, a distribution can.

A judge that rates each story several times (the personas of a Mixture of Personas, Harel-Canada et al. 2024) has
the histogram of its ratings as its distribution (`histogram_agreement`); a rating between two scale points (3.5)
keeps its place on the line, where the distance is measured.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.judges.cache import DISTRIBUTION, RATINGS

COLUMNS = ["criterion", "stories", "distance", "raters_loo_distance", "note"]
OFF_SCALE = "ratings off the 1-5 scale: not comparable with the judge's"
NONE_SHARED = "no story with two or more ratings and the judge's distribution"


def histogram(ratings) -> np.ndarray:
    """The share of each rating 1..5 among `ratings` (integers 1..5)."""
    ratings = np.asarray(ratings, dtype=int)
    return np.bincount(ratings - 1, minlength=len(RATINGS)) / len(ratings)


def distance(p, q) -> float:
    """1-Wasserstein distance between two distributions over the ratings 1..5."""
    from scipy.stats import wasserstein_distance  # here: the workflow's start-up imports this module

    return float(wasserstein_distance(RATINGS, RATINGS, p, q))


def raters_loo_distance(ratings) -> float:
    """Mean over one story's raters of the distance between a rater's rating and the other raters' histogram."""
    ratings = np.asarray(ratings, dtype=int)
    return float(np.mean([distance(histogram([rating]), histogram(np.delete(ratings, k)))
                          for k, rating in enumerate(ratings)]))


def to_raters(values, weights, rated) -> float:
    """1-Wasserstein distance between a judge's distribution (mass `weights` on the ratings `values`; None: equal
    masses) and the histogram of a story's ratings `rated`."""
    from scipy.stats import wasserstein_distance

    return float(wasserstein_distance(values, RATINGS, weights, histogram(rated)))


def criterion_row(ratings: pd.DataFrame, judged: pd.Series) -> dict:
    """The agreement's numbers on one criterion (ratings: story_id, rating; judged: story_id -> the judge's
    distribution as (values, weights), to_raters' arguments)."""
    ratings = ratings.dropna(subset=["rating"])
    if not ratings["rating"].isin(RATINGS).all():
        return {"stories": 0, "note": OFF_SCALE}
    rated = ratings.groupby("story_id")["rating"].agg(list)
    rated = rated[rated.map(len) >= 2]
    shared = [story for story in rated.index if story in judged.index]
    if not shared:
        return {"stories": 0, "note": NONE_SHARED}
    return {"stories": len(shared), "note": "",
            "distance": np.mean([to_raters(*judged[story], rated[story]) for story in shared]),
            "raters_loo_distance": np.mean([raters_loo_distance(rated[story]) for story in shared])}


def distribution_agreement(ratings: pd.DataFrame, judged: pd.DataFrame) -> pd.DataFrame:
    """One row per criterion the judge rated (COLUMNS): the stories with two or more ratings and the judge's
    distribution, the judge's mean distance to their raters' histograms and the raters' leave-one-out ceiling
    (module docstring). `ratings`: story_id, criterion, rating, one row per rater; `judged`: a judge job's details
    (story_id, criterion, p1..p5; a story without a distribution, NaN or a file that predates them, is left out)."""
    judged = judged.reindex(columns=["story_id", "criterion", *DISTRIBUTION])
    rows = []
    for criterion, own in judged.groupby("criterion", sort=False):
        own = own.dropna(subset=list(DISTRIBUTION))
        masses = pd.Series([(RATINGS, p) for p in own[list(DISTRIBUTION)].to_numpy()], index=own["story_id"],
                           dtype=object)
        rows.append({"criterion": criterion, **criterion_row(ratings[ratings["criterion"] == criterion], masses)})
    return pd.DataFrame(rows, columns=COLUMNS)


def histogram_agreement(ratings: pd.DataFrame, judged: pd.DataFrame) -> pd.DataFrame:
    """`distribution_agreement` of a judge that rates each story several times: its distribution on a story is the
    histogram of its ratings there (`judged`: story_id, criterion, rating, one row per rating; a story with fewer
    than two, or a rating off 1-5, is left out of the judge's side)."""
    judged = judged.dropna(subset=["rating"])
    judged = judged[judged["rating"].between(RATINGS[0], RATINGS[-1])]
    rows = []
    for criterion, own in judged.groupby("criterion", sort=False):
        values = pd.Series({story: (group.to_numpy(), None) for story, group
                            in own.groupby("story_id", sort=False)["rating"] if len(group) >= 2}, dtype=object)
        rows.append({"criterion": criterion, **criterion_row(ratings[ratings["criterion"] == criterion], values)})
    return pd.DataFrame(rows, columns=COLUMNS)
