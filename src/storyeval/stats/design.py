"""A rated-story study's design, declared or read off its data, and the grouping its story level needs.

Stories nest in writers (systems) and prompts, with any number of stories per prompt x writer cell; raters are
persons (one id, one person across stories), per-story positions (HANNA's and UNION's slots: "rater 2" of one
story is not "rater 2" of the next) or persons in groups (each group rates its own block of stories). Which
correlation answers "which metric agrees with the humans" depends on that design (Deutsch, Foster & Freitag 2023,
Sec. 2, on grouping; Mathur et al. 2020 on pooling over systems):

- **item**: a correlation within each block of stories that share a prompt (or a rater group, where one prompt
  or none holds them), over at least MIN_WRITERS writers' stories, averaged over the blocks (HANNA's story level);
- **within**: where writers are few (2-3) or explain most of a criterion's variance, a correlation pooled over
  all stories mostly says which writer wrote them; each story is then compared with its own writer's other
  stories: the correlation after removing each writer's mean from both sides (system-demeaned);
- **pooled**: one correlation over all stories (no writers, or many writers that explain little).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from storyeval.errors import InputError

LAYOUTS = ("rater", "position")  # a rater id is a person, or a per-story slot (what the kinds declare)
MIN_WRITERS = 3  # a correlation across two writers' stories of a block has two points: +-1 whatever the data
FEW_WRITERS = 3  # with this many writers or fewer, a pooled correlation is mostly the writers' difference
WRITER_SHARE = 0.5  # eta squared: above it, writers explain most of a criterion's variance


@dataclass(frozen=True)
class Design:
    """What a study's stories and ratings are, in counts; `describe` says it in one line."""

    stories: int
    writers: int  # 0: no writers named
    prompts: int  # 0: no prompts named
    per_cell: tuple[int, int]  # fewest and most stories of a prompt x writer cell (of a writer, without prompts)
    raters: int  # distinct rater ids; 0: no per-rater ratings
    layout: str  # "rater" (persons), "position" (per-story slots) or "none"
    groups: int  # rater groups that each rate their own block of stories (0: none)
    group_size: tuple[int, int]  # fewest and most raters of a group
    per_story: tuple[int, int]  # fewest and most ratings of a story on a criterion
    blocks: str  # what the story level groups by: "prompt", "group" or "" (no block holds >= MIN_WRITERS writers)
    declared: bool  # the layout was declared (else read off the ids)

    def describe(self) -> str:
        """One line: "13 writers x 5 stories on 1 prompt; 10 raters in 5 groups of 2"."""
        low, high = self.per_cell
        each = f"{low}" if low == high else f"{low}-{high}"
        stories = f"{each} stor{'y' if high == 1 else 'ies'}"
        if self.writers and self.prompts == 1:
            head = f"{self.writers} writers x {stories} on 1 prompt"
        elif self.writers and self.prompts:
            head = f"{self.writers} writers x {self.prompts} prompts, {stories} a cell"
        elif self.writers:
            head = f"{self.writers} writers, {stories} each"
        elif self.prompts:
            head = f"{self.stories} stories on {self.prompts} prompts, no writers named"
        else:
            head = f"{self.stories} stories in one group (no writers or prompts named)"
        if not self.raters:
            return head + "; one score a story (no per-rater ratings)"
        low, high = self.per_story
        ratings = f"{low}" if low == high else f"{low}-{high}"
        if self.layout == "position":
            said = f"{ratings} ratings a story in {self.raters} per-story positions (not persons)"
        elif self.groups > 1:
            low, high = self.group_size
            size = f"{low}" if low == high else f"{low}-{high}"
            said = f"{self.raters} raters in {self.groups} groups of {size}"
        else:
            said = f"{self.raters} raters, {ratings} a story"
        return f"{head}; {said}" + ("" if self.declared or self.layout == "none" else " (layout read off the ids)")


def writers_of(stories: pd.DataFrame, reference_system: str | None = None) -> pd.Series:
    """Who wrote each story (stories.csv's `writer`, else `system`), NaN where no writer is named (a one-group
    set's "system" is the story id itself); the human reference stories are left out by the caller."""
    writer = stories["writer"] if "writer" in stories else stories["system"]
    named = writer.where(writer.astype(str) != stories["story_id"].astype(str))
    return named.where(named != reference_system) if reference_system else named


def analysed_stories(stories: pd.DataFrame, reference_system: str | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """(the stories the analyses use, their writers): the human reference system's stories left out."""
    writers = writers_of(stories, reference_system)
    kept = (writers.notna() | writers_of(stories).isna()).to_numpy()
    return stories[kept].reset_index(drop=True), writers[kept].reset_index(drop=True)


def story_groups(story_ids: pd.Series, ratings: pd.DataFrame, grouped: Mapping[str, int]) -> pd.Series:
    """Each story's rater group (`rater_groups`: a group's raters rate the same stories, so any rater tells)."""
    first = ratings.drop_duplicates("story_id").set_index("story_id")["rater"].map(grouped)
    return story_ids.map(first)


def rater_groups(ratings: pd.DataFrame) -> dict[str, int]:
    """rater -> group where the raters fall into groups that each rate their own block of stories (every rater
    of a group rates the same stories, no two groups share a story, at least two groups of at least two
    raters); {} otherwise."""
    if ratings.empty:
        return {}
    rated = ratings.groupby("rater")["story_id"].agg(lambda ids: tuple(sorted(set(ids))))
    blocks = {block: index for index, block in enumerate(dict.fromkeys(rated))}
    if len(blocks) < 2 or rated.value_counts().min() < 2:
        return {}
    covered = [story for block in blocks for story in block]
    if len(covered) != len(set(covered)):
        return {}
    return {rater: blocks[block] for rater, block in rated.items()}


def looks_positional(ratings: pd.DataFrame) -> bool:
    """Rater ids that are per-story slots: few ids, each story's ratings by the first k of them in one order
    (a story rated twice by "annot0" and "annot1", one rated five times by "annot0".."annot4")."""
    if ratings.empty:
        return False
    ids = sorted(ratings["rater"].astype(str).unique())
    per_story = ratings.groupby("story_id")["rater"].agg(lambda raters: tuple(sorted(set(map(str, raters)))))
    widest = per_story.map(len).max()
    return (len(ids) == widest and per_story.nunique() > 1 and ratings["story_id"].nunique() >= 4 * len(ids)
            and all(raters == tuple(ids[:len(raters)]) for raters in per_story))


def given_prompts(stories: pd.DataFrame) -> pd.Series:
    """Each story's prompt as the data have it: stories.csv's given_prompt where present (its prompt_id is 0
    where the cubes pool the stories), else prompt_id; NaN where no prompt is named."""
    key = "given_prompt" if "given_prompt" in stories else "prompt_id"
    return stories[key] if key in stories else pd.Series(np.nan, index=stories.index)


def infer_design(stories: pd.DataFrame, ratings: pd.DataFrame | None, layout: str | None = None,
                 groups: bool | None = None, reference_system: str | None = None) -> Design:
    """The design of `stories` (story_id, prompt_id, system or writer) and `ratings` (story_id, criterion, rater,
    rating; None or empty: one score a story). `layout` ("rater" or "position") and `groups` (whether raters
    form groups) are the dataset's declarations; None: read off the data."""
    if layout is not None and layout not in LAYOUTS:
        raise InputError(f"rater_layout: {layout!r}; fix: declare one of {', '.join(LAYOUTS)}")
    kept, writers = analysed_stories(stories, reference_system)
    kept = kept.assign(_writer=writers, prompt_id=given_prompts(kept))
    prompted = bool(kept["prompt_id"].notna().all())
    named = kept["_writer"].notna().all()
    if named:
        keys = ["_writer"] + (["prompt_id"] if prompted else [])
        sizes = kept.groupby(keys).size()
        full = sizes.reindex(pd.MultiIndex.from_product([kept[k].unique() for k in keys]) if len(keys) > 1
                             else sizes.index, fill_value=0)
        per_cell = (int(full.min()), int(full.max()))
    else:
        per_cell = (1, 1)
    ratings = ratings if ratings is not None else pd.DataFrame(columns=["story_id", "criterion", "rater", "rating"])
    ratings = ratings[ratings["story_id"].isin(kept["story_id"])]
    raters = int(ratings["rater"].nunique()) if len(ratings) else 0
    if not raters:
        chosen, grouped = "none", {}
    else:
        chosen = layout or ("position" if looks_positional(ratings) else "rater")
        grouped = {} if chosen == "position" or groups is False else rater_groups(ratings)
        if groups and not grouped:
            raise InputError("rater_groups: true, but the raters do not fall into groups that each rate their own "
                             "stories; fix: set rater_groups: false, or check the rater ids")
    counts = ratings.groupby(["story_id", "criterion"]).size() if raters else pd.Series([0])
    group_sizes = pd.Series(grouped).value_counts() if grouped else pd.Series([0])
    blocks = ""
    if named and prompted and kept["prompt_id"].nunique() > 1:
        if kept.groupby("prompt_id")["_writer"].nunique().min() >= MIN_WRITERS:
            blocks = "prompt"
    if not blocks and named and grouped:
        block = story_groups(kept["story_id"], ratings, grouped)
        if block.notna().all() and kept.groupby(block)["_writer"].nunique().min() >= MIN_WRITERS:
            blocks = "group"
    return Design(stories=len(kept), writers=int(kept["_writer"].nunique()) if named else 0,
                  prompts=int(kept["prompt_id"].nunique()) if prompted else 0, per_cell=per_cell, raters=raters,
                  layout=chosen, groups=len(set(grouped.values())),
                  group_size=(int(group_sizes.min()), int(group_sizes.max())),
                  per_story=(int(counts.min()), int(counts.max())), blocks=blocks, declared=layout is not None)


def story_blocks(stories: pd.DataFrame, ratings: pd.DataFrame | None, design: Design) -> pd.Series:
    """Each story's block for the item grouping (its prompt, or its rater group), NaN without blocks."""
    if design.blocks == "prompt":
        return given_prompts(stories)
    if design.blocks == "group":
        return story_groups(stories["story_id"], ratings, rater_groups(ratings))
    return pd.Series(np.nan, index=stories.index)


def eta_squared(values: np.ndarray, writers: np.ndarray) -> float:
    """The share of `values`' variance between writers (the correlation ratio squared); NaN without variance."""
    present = np.isfinite(values)
    values, writers = values[present], writers[present]
    total = ((values - values.mean()) ** 2).sum()
    if total == 0:
        return float("nan")
    means = pd.Series(values).groupby(writers).transform("mean").to_numpy()
    return float(((means - values.mean()) ** 2).sum() / total)


def story_statistic(design: Design, writer_share: float) -> str:
    """The story-level statistic of a criterion of `design` whose writers explain `writer_share` of its variance
    (eta squared): "item", "within" or "pooled" (the module's docstring)."""
    if design.blocks:
        return "item"
    if design.writers >= 2 and (design.writers <= FEW_WRITERS or writer_share >= WRITER_SHARE):
        return "within"
    return "pooled"


STATISTICS = {
    "item": "within each {block}, over its writers' stories, averaged over the {blocks} {block}s",
    "within": "over all stories after removing each writer's mean (system-demeaned): how a metric orders a "
              "writer's own stories",
    "pooled": "over all stories at once",
    "system": "over the writers' mean scores",
}


def statistic_words(statistic: str, design: Design, blocks: int) -> str:
    """What a statistic correlates, in words, for a caption."""
    block = {"prompt": "prompt", "group": "rater group"}.get(design.blocks, "block")
    return STATISTICS[statistic].format(block=block, blocks=blocks)


def declared_design(entry: Mapping | None) -> tuple[str | None, bool | None]:
    """(rater_layout, rater_groups) a dataset entry declares (None: read off the data)."""
    entry = entry or {}
    groups = entry.get("rater_groups", "auto")
    return entry.get("rater_layout"), None if groups == "auto" else bool(groups)
