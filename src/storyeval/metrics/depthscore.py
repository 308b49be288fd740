"""DepthScore of the story against the human reference (Staerman et al. 2021), from the shared token-embedding
cache (`storyeval.neural.embeddings`); lower is better (a pseudo-distance).

Method, as the authors' library (`nlg_eval_via_simi_measures`, `DepthScoreMetric` and `dr_distance`, spec
section 4): the token vectors of one hidden layer, special tokens included, L2-normalised; X = reference,
Y = story. IRW depth (integrated rank-weighted, Ramsay et al. 2019) of each token within its own text: over K
random unit directions u, the token's rank r among the text's n projections <x, u> gives min(r/n, 1 - r/n);
the depth is the mean over directions. For each of `n_alpha` levels alpha in linspace(100 eps, 100, n_alpha)
(percent), the tokens whose depth reaches the alpha-th percentile of the text's depths form a depth region
whose support function in a second set of K directions is h(u) = max <x, u> over the region; then
DepthScore = (mean over alpha of max over u of (h_X(u) - h_Y(u))^p)^(1/p).
Directions as the library draws them: legacy `np.random.seed(seed)`, `multivariate_normal(0, I)`, rows
normalised (sklearn `normalize`); the depth uses the first draw (each of its two calls re-seeds, so X and Y
share it), the support functions the second. Defaults: p = 5, eps = 0.3, 5 levels, 10,000 directions, seed 0
(as HANNA ran the library; layer 9 of bert-base-uncased in `config/paper.yaml`, the model's last layer otherwise).
As the library, the power is signed (no absolute value, unlike the paper's |h_X - h_Y|^p): with p odd a
direction where the story's region reaches further counts negatively, and a text pair where that holds in
every direction has no real score (NaN, warned). Story = reference gives 0.

Speed: the library recomputed both texts' depths and supports per pair; they depend on one text only, so each
text's support functions are computed once (reference groups) and a pair costs K x n_alpha subtractions.
Per text: ranks from a SIMD sort of the projections, their shares summed in one pass, and only the largest
region projected (`irw_depth`, `support_functions`): 0.37 s -> 0.12 s for a 512-token text on one core,
two thirds of it the two float64 products with the 10,000 directions (~35 GFMA/s, near this core's peak).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics.base import Resource, check_texts, columns, defaults_of, describe, scores_frame, warn_count
from storyeval.neural.embeddings import EmbeddingCache, require_texts, resolve_layer
from storyeval.neural.parallel import map_reference_groups

NAME = "depthscore"
NEEDS = frozenset({"reference"})
COLUMNS = columns("embedding", "based", "DepthScore", direction="lower")
RESOURCE = Resource("cache", "encoder")


def njit_at_first_call(function):
    """numba.njit(cache=True, nogil=True), compiled at the first call: numba (0.4 s to import) is imported only
    when DepthScore runs, not when the catalog reads this module (a kernel calling another would need both
    compiled first; these two call none)."""
    @functools.wraps(function)
    def call(*args):
        return compiled(function)(*args)
    return call


@functools.cache
def compiled(function):
    from numba import njit

    return njit(cache=True, nogil=True)(function)


@dataclass(frozen=True)
class Settings:
    p: float
    eps: float
    n_alpha: int
    n_directions: int
    seed: int


def required_texts(texts: pd.DataFrame) -> list[str]:
    """The texts the embedding cache must hold for this metric."""
    return sorted(set(texts["story"]) | set(texts["reference"]))


@lru_cache(maxsize=4)
def directions(n_directions: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The library's (depth, support) direction sets: the first and second draw after seeding."""
    from sklearn.preprocessing import normalize

    state = np.random.RandomState(seed)  # the legacy generator `np.random.seed` drives, without global state
    first, second = (normalize(state.multivariate_normal(np.zeros(dim), np.identity(dim), size=n_directions))
                     for _ in range(2))
    return first, second


def irw_depth(points: np.ndarray, directions_: np.ndarray) -> np.ndarray:
    """IRW depth of each row of `points` [n, D] among them: the mean over directions of min(r/n, 1 - r/n),
    r the 1-based rank of its projection. The share of each sorted position is added to the token there, in
    direction order: the same sums as the mean over a [K, n] rank table (bit-identical, measured on 6 real
    texts), without building it.

    Ranks by sorting values, not indices: each projection's lowest mantissa bits are overwritten by its
    token index and the keys sorted as floats (numpy's SIMD sort, 13-26 ms against 59 ms for `argsort` on
    10,000 x 512; the sort was a third of DepthScore). Projections closer than 2^b ulps (b index bits, 9 for
    512 tokens: a relative 1e-13) then order by index, where argsort's order of equal values is unspecified."""
    n = points.shape[0]
    bits = max(int(n - 1).bit_length(), 1)
    keys = directions_ @ points.T  # [K, n]
    tag_columns(keys.view(np.int64), bits)
    keys.sort(axis=1)
    position = np.arange(1, n + 1, dtype=np.float64) / n
    return sorted_shares(keys.view(np.int64), bits, np.minimum(position, 1 - position), n) / len(directions_)


@njit_at_first_call
def tag_columns(keys: np.ndarray, bits: int) -> None:
    """Overwrite the lowest `bits` bits of each float64 (viewed as int64) with its column index."""
    clear = ~((1 << bits) - 1)
    for i in range(keys.shape[0]):
        for j in range(keys.shape[1]):
            keys[i, j] = (keys[i, j] & clear) | j


@njit_at_first_call
def sorted_shares(keys: np.ndarray, bits: int, share: np.ndarray, n: int) -> np.ndarray:
    """sum over rows of share[p] added to the token tagged at sorted position p (in row order, as bincount)."""
    mask, totals = (1 << bits) - 1, np.zeros(n)
    for i in range(keys.shape[0]):
        for p in range(keys.shape[1]):
            totals[keys[i, p] & mask] += share[p]
    return totals


def support_functions(points: np.ndarray, settings: Settings) -> np.ndarray:
    """[n_alpha, K]: the support function of each depth region (levels linspace(100 eps, 100, n_alpha) percent).

    Each region is a prefix of the tokens sorted by depth (deepest first), so only the largest region's tokens
    are projected, and the maximum over each slice between two region sizes, accumulated, serves every level
    (maxima are exact in any order; the smaller product differs from the full one by float rounding, < 4e-16
    on 6 real texts)."""
    depth_directions, support_directions = directions(settings.n_directions, points.shape[1], settings.seed)
    depth = irw_depth(points, depth_directions)
    # int(eps * 100) as the library (0.3 * 100 = 30.000000000000004 -> 30)
    levels = np.linspace(int(settings.eps * 100), 100, settings.n_alpha)
    sizes = np.array([np.count_nonzero(depth >= threshold) for threshold in np.percentile(depth, levels)])
    ends = np.unique(sizes)
    deepest = np.argsort(-depth, kind="stable")[:ends[-1]]
    projections = support_directions @ points[deepest].T  # [K, largest region]
    running = np.maximum.accumulate(np.maximum.reduceat(projections, np.r_[0, ends[:-1]], axis=1), axis=1)
    return running[:, np.searchsorted(ends, sizes)].T


def score(reference: np.ndarray, story: np.ndarray, p: float) -> float:
    """(mean over levels of max over directions of (h_X - h_Y)^p)^(1/p), as `dr_distance`."""
    with np.errstate(invalid="ignore"):
        return float(np.mean(np.max((reference - story) ** p, axis=1)) ** (1 / p))


def unit_points(vectors: np.ndarray) -> np.ndarray:
    """float32 L2 normalisation, then float64 (the library's `.tolist()`). The library divides by torch's norm,
    whose last bits differ from numpy's (`baryscore.unit_vectors`); DepthScore stays within 7.6e-8 of it."""
    return (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float64)


def score_group(job) -> list[float]:
    """One reference and its stories: each text's support functions once, then one score per story."""
    reference, stories, settings = job
    supports = {}
    for key, vectors in [reference, *stories]:
        if key not in supports:
            supports[key] = support_functions(unit_points(vectors), settings)
    return [score(supports[reference[0]], supports[key], settings.p) for key, _ in stories]


def check_options(p: float, eps: float, n_alpha: int, n_directions: int) -> None:
    if not 0 <= eps <= 1:
        raise InputError(f"metric {NAME}: eps {eps} must lie in [0, 1] (the lowest depth level); fix: e.g. 0.3")
    if p <= 0 or n_alpha < 1 or n_directions < 1:
        raise InputError(f"metric {NAME}: p ({p}), n_alpha ({n_alpha}) and n_directions ({n_directions}) must be "
                         "positive; fix: the paper's 5, 5 and 10000")


def compute(texts: pd.DataFrame, *, cache: EmbeddingCache, layer: int | None = None, p: float = 5, eps: float = 0.3,
            n_alpha: int = 5, n_directions: int = 10_000, seed: int = 0, processes: int = 1) -> pd.DataFrame:
    check_texts(texts, NEEDS, NAME)
    check_options(p, eps, n_alpha, n_directions)
    layer = resolve_layer(cache, layer, NAME)
    require_texts(cache, required_texts(texts), NAME)
    settings = Settings(float(p), float(eps), int(n_alpha), int(n_directions), int(seed))

    def group_job(reference, stories):
        cache.release()  # the previous group's mapped vectors: memory bounded by a group, not the dataset
        return ((reference, cache.get(reference).layers[layer]),
                [(story, cache.get(story).layers[layer]) for story in stories], settings)

    values = map_reference_groups(score_group, texts, group_job, processes)
    warn_count(NAME, texts, int(np.isnan(values).sum()),
               "have no DepthScore (the story's depth regions reach further in every direction; NaN, as the library)")
    return scores_frame(texts["story_id"], {"depthscore": values})


@defaults_of(compute)
def signature(*, cache: EmbeddingCache | dict, layer: int | None, p: float, eps: float, n_alpha: int,
              n_directions: int, seed: int, processes: int) -> dict:
    encoder = cache.signature if isinstance(cache, EmbeddingCache) else dict(cache)
    return describe(NAME, ["numpy", "scikit-learn"], {"candidate": "story", "reference": "reference"},
                    {"layer": int(encoder["num_hidden_layers"]) if layer is None else int(layer), "p": float(p),
                     "eps": float(eps), "n_alpha": int(n_alpha), "n_directions": int(n_directions), "seed": int(seed)},
                    method="IRW depth, depth-region support functions, signed power as the library's dr_distance; "
                           "special tokens included", encoder=encoder)
