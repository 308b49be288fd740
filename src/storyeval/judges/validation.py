"""Computed judge ratings beside the ratings HANNA's TACL 2024 release holds for the same judge, Eval-Prompt and
stories (`storyeval.data.hanna_judges`): does a judge computed here reproduce the released one?

Per computed column whose judge is configured as a released one (`judges.models.<name>.released`) and whose
template follows an Eval-Prompt (`task`): the stories both hold, Pearson's r, Krippendorff's alpha (interval
metric; Krippendorff 2011) of the two as two raters, the share of stories whose ratings round to the same
integer (`share_exact`), the mean absolute difference, and how many released values lie off the 1-5 scale
(kept as released, see hanna_judges).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.errors import InputError

COLUMNS = ["judge", "released_judge", "template", "task", "criterion", "slug", "released_slug", "n", "pearson_r",
           "alpha", "share_exact", "mean_abs_diff", "released_off_scale"]


def interval_alpha(first: np.ndarray, second: np.ndarray) -> float:
    """Krippendorff's alpha, interval metric, of two raters who rated every unit: 1 - D_o / D_e with
    D_o = (2 / n) sum_u (a_u - b_u)^2 and D_e = 2 n var(all values) / (n - 1), n = 2 x units (pairable values)."""
    values = np.concatenate([first, second])
    n = len(values)
    if n < 4 or np.ptp(values) == 0:
        return np.nan
    observed = 2 * np.sum((first - second) ** 2) / n
    expected = 2 * n * values.var() / (n - 1)
    return float(1 - observed / expected)


def validation_table(computed: pd.DataFrame, registry: pd.DataFrame, released: pd.DataFrame,
                     released_registry: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """`computed`, `released`: long scores (story_id, metric, value); `registry`: the computed judges' rows
    (slug, judge, criterion, task, template); `released_registry`: hanna_judges.judge_registry's; `names`:
    {configured judge: released judge}. One row per computed column with a released counterpart."""
    from scipy.stats import pearsonr

    wide = computed.pivot(index="story_id", columns="metric", values="value")
    theirs_wide = released.pivot(index="story_id", columns="metric", values="value")
    counterpart = released_registry.set_index(["judge", "criterion", "task"])["slug"]
    rows = []
    for entry in registry.itertuples(index=False):
        task = pd.to_numeric(pd.Series([entry.task]), errors="coerce").iloc[0]
        key = (names.get(entry.judge), entry.criterion, None if pd.isna(task) else int(task))
        if key not in counterpart.index or entry.slug not in wide:
            continue
        released_slug = counterpart.loc[key]
        stories = wide.index.intersection(theirs_wide.index)
        ours = wide.loc[stories, entry.slug].to_numpy(float)
        theirs = theirs_wide.loc[stories, released_slug].to_numpy(float)
        valid = np.isfinite(ours) & np.isfinite(theirs)
        ours, theirs = ours[valid], theirs[valid]
        varied = len(ours) > 1 and np.ptp(ours) > 0 and np.ptp(theirs) > 0
        rows.append([entry.judge, key[0], entry.template, key[2], entry.criterion, entry.slug, released_slug,
                     int(valid.sum()), pearsonr(ours, theirs).statistic if varied else np.nan,
                     interval_alpha(ours, theirs), float(np.mean(np.rint(ours) == np.rint(theirs))) if len(ours)
                     else np.nan, float(np.mean(np.abs(ours - theirs))) if len(ours) else np.nan,
                     int(np.sum((theirs < 1) | (theirs > 5)))])
    if not rows:
        raise InputError("judge validation: no computed judge column has a released counterpart on shared stories; "
                         "fix: set judges.models.<name>.released to a judge of HANNA's release (e.g. Mistral-7B) "
                         "and use a tacl-<task> template")
    return pd.DataFrame(rows, columns=COLUMNS)
