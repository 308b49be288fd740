"""One dataset's score sets as one: the authors' released outputs and judges beside the metrics storyeval computed,
so that a comparison sets every column against every other on the same stories (as WMT's metrics task scores the
submitted metrics and the baselines on one segment set, Freitag et al. 2023)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from storyeval.stats.meta import ranked_items

log = logging.getLogger(__name__)


def joined_score_sets(parts: Sequence[tuple[str, pd.DataFrame, pd.DataFrame]]
                      ) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """(scores, registry, story ids) of (score set, scores: story_id, metric, value, registry: slug, label, family,
    direction) parts: a slug that several sets hold is renamed `slug@set` and labelled "Label (set)" in each;
    the registry gains `scoreset`, `source_slug` and the column's `item` and `item_label` across datasets
    (storyeval.stats.meta.ranked_items: a judge's criteria are one item; a metric computed here is the same item
    in every dataset, an author's released output of the same name is its own); the scores and the story ids are
    those of the stories that every set scores (a column measured on other stories than the rest would not be
    compared like for like)."""
    counts = pd.Series([slug for _, _, registry in parts for slug in registry["slug"]]).value_counts()
    shared = None
    scores, registries = [], []
    for name, frame, registry in parts:
        renamed = registry["slug"].map(lambda slug, name=name: f"{slug}@{name}" if counts[slug] > 1 else slug)
        twice = registry["slug"].map(counts) > 1
        items = ranked_items(registry)
        own = twice & (name != "computed")
        registries.append(registry.assign(
            slug=renamed, label=registry["label"].where(~twice, registry["label"] + f" ({name})"),
            scoreset=name, source_slug=registry["slug"],
            item=items["item"].where(~own, items["item"] + f"@{name}"),
            item_label=items["label"].where(~own, items["label"] + f" ({name})")))
        scored = frame.loc[frame["value"].notna(), "story_id"].unique()
        shared = set(scored) if shared is None else shared & set(scored)
        scores.append(frame.assign(metric=frame["metric"].map(dict(zip(registry["slug"], renamed, strict=True)))))
    joined = pd.concat(scores, ignore_index=True)
    kept = joined["story_id"].isin(shared or set())
    if len(parts) > 1:
        log.info("score sets %s: %d stories scored by every set", ", ".join(name for name, _, _ in parts),
                 len(shared or ()))
    return joined[kept & joined["metric"].notna()], pd.concat(registries, ignore_index=True), sorted(shared or ())
