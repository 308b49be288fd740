"""Williams test for two dependent correlations sharing one variable (HANNA Fig. 27-38).

Williams (1959), in Steiger's (1980) form, as recommended by Graham & Baldwin
(2014); HANNA (Chhun et al. 2022) ran it. Variable 1 is the human criterion,
2 and 3 two metrics; one-sided, H1: r12 > r13.

The test needs one r per pair of variables and the number of items n.
System level: Pearson over the S = 10 system means, n = S. Story level, which
the paper leaves open, has two modes (`williams_inputs(..., story_mode=...)`):
- "pooled" (default, the workflow's `stats.williams_story_mode`): Pearson over
  all P x S (prompt, system) stories, n = P x S: each r is computed on the n
  items the test assumes.
- "per_prompt": r = mean over prompts of the per-prompt Pearson over the S
  systems (the same story-level r as the figures), n = S, the number of items
  each averaged r was computed on. Conservative: averaging over 96 prompts
  makes r more precise than n = 10 assumes (on HANNA no story-level test then
  reaches p < 0.05). The paper's "n = 96 at story level" can be had by passing
  that n to `williams_table` with these r.
Missing cells (NaN): each r is over the items both its variables have (correlation.correlate), and n (pooled,
system level) is, per test, the number of items all three variables have, [M, M, C] then.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from storyeval.errors import InputError
from storyeval.stats.correlation import cell_means, correlate, story_level, system_level
from storyeval.stats.ranking import DIRECTIONS

STORY_MODES = ("per_prompt", "pooled")


def williams_test(r12, r13, r23, n) -> tuple[np.ndarray, np.ndarray]:
    """Williams t and one-sided p (H1: r12 > r13), broadcast over array inputs.

    K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23;
    t = (r12 - r13) sqrt((n-1)(1+r23)) / sqrt(2K(n-1)/(n-3) + ((r12+r13)^2/4)(1-r23)^3);
    p = P(T > t), T ~ Student t with n-3 df. NaN in, NaN out; an undefined t
    (e.g. two identical metrics: 0/0) is NaN too.
    """
    r12, r13, r23, n = (np.asarray(a, dtype=float) for a in (r12, r13, r23, n))
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if np.any(np.abs(r) > 1 + 1e-9):
            raise InputError(f"williams_test: {name} has a correlation outside [-1, 1]; fix: pass Pearson r values")
    if np.any(~(n > 3)):
        raise InputError(
            "williams_test: n must be > 3 (the test has n-3 degrees of freedom); fix: correlate over more items"
        )
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = np.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
        t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / denominator
    return t, stats.t.sf(t, n - 3)


def williams_table(
    r_metric_criterion: np.ndarray,
    r_metric_metric: np.ndarray,
    n: int | np.ndarray,
    metrics: list[str],
    criteria: list[str],
    level: str,
    directions: list[str] | None = None,
    orientation: str = "oriented",
) -> pd.DataFrame:
    """Williams test for every criterion and ordered metric pair a != b: does a agree better than b?

    `r_metric_criterion` [M, C], `r_metric_metric` [M, M], signed Pearson r;
    `n` a scalar or an array broadcastable to [M (a), M (b), C].
    Each metric is first turned by a sign s (stats.ranking's orientation): "oriented", s = -1 for a
    lower-is-better metric of `directions` (the registry's), else 1, so that H1 is "a's r after orientation
    exceeds b's" and a metric that moves against its direction tests as negative; "absolute" (HANNA), s = the
    sign of its r, so H1 is |r_a| > |r_b|. The test takes r12 = s_a r_a, r13 = s_b r_b and
    r23 = r_ab s_a s_b: flipping a metric's sign flips its correlation with the other metric too.
    (The authors' loop took abs() of r12 in place and lost its sign after the
    first column, so r23 was oriented wrongly: a bug, not followed here.)
    Returns columns level, criterion, metric_a, metric_b, r_a, r_b, r_ab
    (signed, as given), ranked_r_a, ranked_r_b, r_ab_oriented (the r12, r13 and r23 tested), n, t, p;
    criterion-major rows. Where n <= 3 there is no test: t and p are NaN.
    """
    r_mc = np.asarray(r_metric_criterion, dtype=float)
    r_mm = np.asarray(r_metric_metric, dtype=float)
    m, c = len(metrics), len(criteria)
    if r_mc.shape != (m, c) or r_mm.shape != (m, m):
        raise InputError(
            f"williams_table: shapes {r_mc.shape}, {r_mm.shape} do not match {m} metrics x {c} criteria; "
            "fix: pass [M, C] and [M, M] correlation matrices in the order of the names"
        )
    sign = orientation_signs(r_mc, directions, orientation)
    r_a, r_b = r_mc[:, None, :], r_mc[None, :, :]
    r_ab = np.broadcast_to(r_mm[:, :, None], (m, m, c))
    oriented = r_ab * sign[:, None, :] * sign[None, :, :]
    ranked_a, ranked_b = (r_a * sign[:, None, :]), (r_b * sign[None, :, :])
    n_abc = np.broadcast_to(np.asarray(n, dtype=float), (m, m, c))
    testable = n_abc > 3  # n - 3 degrees of freedom: with 3 systems there is no test, t and p are NaN
    t, p = williams_test(ranked_a, ranked_b, oriented, np.where(testable, n_abc, 4.0))
    t, p = np.where(testable, t, np.nan), np.where(testable, p, np.nan)
    a, b = np.nonzero(~np.eye(m, dtype=bool))
    columns = {
        "r_a": np.broadcast_to(r_a, (m, m, c)),
        "r_b": np.broadcast_to(r_b, (m, m, c)),
        "r_ab": r_ab,
        "ranked_r_a": np.broadcast_to(ranked_a, (m, m, c)),
        "ranked_r_b": np.broadcast_to(ranked_b, (m, m, c)),
        "r_ab_oriented": oriented,
        "n": n_abc,
        "t": t,
        "p": p,
    }
    names = np.asarray(metrics, dtype=object)
    return pd.DataFrame(
        {
            "level": level,
            "criterion": np.repeat(np.asarray(criteria, dtype=object), len(a)),
            "metric_a": np.tile(names[a], c),
            "metric_b": np.tile(names[b], c),
            **{key: value[a, b, :].T.ravel() for key, value in columns.items()},
        }
    )


def orientation_signs(r_mc: np.ndarray, directions: list[str] | None, orientation: str) -> np.ndarray:
    """[M, C] signs that turn each metric's r into the value it ranks by (stats.ranking.ranked_r)."""
    if orientation == "absolute":
        return np.where(r_mc < 0, -1.0, 1.0)  # r = 0 counts as positive: any orientation is valid there
    given = [] if directions is None else list(directions)
    if orientation != "oriented" or len(given) != len(r_mc) or not set(given) <= set(DIRECTIONS):
        raise InputError(
            f"williams_table: orientation {orientation!r} with {len(given)} "
            f"directions for {len(r_mc)} metrics; fix: 'absolute', or 'oriented' with the registry's direction "
            "(higher or lower) of every metric"
        )
    return np.broadcast_to(np.where(np.asarray(given) == "lower", -1.0, 1.0)[:, None], r_mc.shape)


def williams_inputs(
    human: np.ndarray, metrics: np.ndarray, level: str, story_mode: str = "pooled"
) -> tuple[np.ndarray, np.ndarray, int]:
    """Pearson inputs of `williams_table` from cubes `human` [P, S, C], `metrics` [P, S, M].

    Returns (r_metric_criterion [M, C], r_metric_metric [M, M], n); see the module docstring.
    """

    def shared(h: np.ndarray, m: np.ndarray, items: int):  # items all three variables have, where cells are missing
        if np.isfinite(h).all() and np.isfinite(m).all():
            return items
        present_m, present_h = np.isfinite(m).astype(float), np.isfinite(h).astype(float)
        return np.einsum("na,nb,nc->abc", present_m, present_m, present_h)

    if human.shape[:2] != metrics.shape[:2]:
        raise InputError(
            f"williams_inputs: cubes {human.shape} and {metrics.shape} differ in prompts/systems; fix: build "
            "both on the same stories"
        )
    p, s = human.shape[:2]
    if level == "system":
        n = shared(cell_means(human), cell_means(metrics), s)
        return system_level(metrics, human, "pearson")[0], system_level(metrics, metrics, "pearson")[0], n
    if level != "story" or story_mode not in STORY_MODES:
        raise InputError(
            f"williams_inputs: level {level!r}, story_mode {story_mode!r}; fix: level 'story' or 'system', "
            f"story_mode one of {STORY_MODES}"
        )
    if story_mode == "per_prompt":
        return story_level(metrics, human, "pearson")[0], story_level(metrics, metrics, "pearson")[0], s
    flat_h, flat_m = human.reshape(p * s, -1), metrics.reshape(p * s, -1)
    return correlate(flat_m, flat_h, "pearson"), correlate(flat_m, flat_m, "pearson"), shared(flat_h, flat_m, p * s)


def untested(williams: pd.DataFrame, level: str, criterion: str) -> str:
    """Why a Williams figure of `williams` (williams_table's rows) at `level` and `criterion` would be blank, in one
    sentence, or "" where some pair was tested: with n <= 3 items there is no test (n - 3 degrees of freedom)."""
    rows = williams[(williams["level"] == level) & (williams["criterion"] == criterion)]
    if rows["p"].notna().any():
        return ""
    n = int(rows["n"].max()) if len(rows) and rows["n"].notna().any() else 0
    items = "systems" if level == "system" else "items"
    return (f"No Williams test at the {level} level for {criterion}: the test has n - 3 degrees of freedom and "
            f"here n = {n} {items}, so no pair of metrics can be tested (every p-value is undefined).")
