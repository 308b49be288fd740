"""What a dataset's data allow: degenerate shapes get a sentence, not a traceback.

Correlations need three values and Williams' test four (n - 3 degrees of freedom): fewer than four stories
stops the run; one prompt, one system, or two without prompts make one group (story level over all stories, no
system level); two systems on several prompts keep their systems: their story level pools all stories (a
correlation within a prompt would have two points), with the within-system correlations beside it, and each
prompt's two stories are compared (storyeval.stats.paired); with three systems Williams' test has no system level;
a criterion with one value on every story has no correlation and is left out, and a dataset where no
criterion varies stops. The same function shapes the data (rule normalise_texts) and
plans the targets at start-up, so the two agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pandas as pd

from storyeval.datasets import Dataset, describe
from storyeval.errors import InputError
from storyeval.text.datasets import TextDataset, subset_prompts

MIN_VALUES = 3  # a correlation of two points is +-1 whatever the data
MIN_WILLIAMS = 4  # Williams' test (Chhun et al.'s Fig. 27-38) has n - 3 degrees of freedom


def fit_to_data(data: TextDataset) -> tuple[TextDataset, list[str]]:
    """(the dataset reduced to what its analyses can use, one phrase per reduction)."""
    texts, notes = data.texts, []
    if len(texts) < MIN_WILLIAMS:
        raise InputError(f"dataset {data.name}: {len(texts)} stories; its tests need at least {MIN_WILLIAMS} "
                         "(Williams' test has n - 3 degrees of freedom); fix: add stories")
    texts = texts.assign(writer=texts["system"])  # who wrote each story, kept where the cubes pool the stories
    systems = texts["system"].dropna().unique()
    one_group = None  # why the stories form one group, if they must
    cells = texts.groupby(["prompt_id", "system"]).size() if texts["prompt_id"].notna().all() else pd.Series([1])
    if len(systems) and (cells.max() > 1 or len(cells) < texts["prompt_id"].nunique() * len(systems)):
        each = f"{cells.min()}" if cells.min() == cells.max() else f"{cells.min()}-{cells.max()}"
        one_group = (f"{each} stories a prompt and system (not one story of every system on "
                     "every prompt), so the cubes hold one group and the design's answer groups the stories itself "
                     "(answer.csv: by prompt, within writers or pooled)")
    elif len(systems) and texts["prompt_id"].nunique() == 1:
        one_group = ("one prompt, so one group: story-level correlations over its stories and no system level "
                     "(each system has one story)")
    elif len(systems) == 2 and texts["prompt_id"].notna().all():
        notes.append(paired_note(texts["prompt_id"].nunique(), systems))
    elif 0 < len(systems) < MIN_VALUES:
        one_group = (f"{len(systems)} system{'s' * (len(systems) > 1)} ({', '.join(map(repr, systems))}), fewer "
                     f"than the {MIN_VALUES} a correlation needs within a prompt or between system means, so "
                     "story-level correlations over all stories and no system level")
    if one_group:
        texts = texts.assign(system=pd.Series(np.nan, index=texts.index, dtype="str"))
        notes.append(one_group)
    elif len(systems) == MIN_VALUES:
        notes.append(f"3 systems, fewer than the {MIN_WILLIAMS} Williams' test needs between system means, so its "
                     "system-level t and p are NaN (the correlations are computed)")
    human, ratings = data.human_scores, data.ratings
    if human is not None and len(human):
        spread = human.groupby("criterion", sort=False)["score"].agg(lambda v: v.max() - v.min())
        constant = list(spread.index[spread == 0])
        if len(constant) == len(spread):
            raise InputError(f"dataset {data.name}: no criterion varies (every story has the same rating on "
                             f"{', '.join(constant)}); fix: check the ratings column(s), nothing can be correlated")
        if constant:
            values = human.groupby("criterion")["score"].first()
            notes.append("; ".join(f"criterion {name!r} is {values[name]:g} on every story, so it is left out "
                                   "(a constant has no correlation)" for name in constant))
            human = human[~human["criterion"].isin(constant)].reset_index(drop=True)
            ratings = None if ratings is None else ratings[~ratings["criterion"].isin(constant)].reset_index(drop=True)
    if ratings is not None and ratings["worker"].nunique() < 2:
        notes.append("one rater, so no ICC (Tab. 3) or system means (Tab. 4)")
        ratings = None
    texts.attrs = dict(data.texts.attrs)
    return dataclasses.replace(data, texts=texts, human_scores=human, ratings=ratings), notes + list(data.notes)


def paired_note(prompts: int, systems) -> str:
    """What two systems on several prompts get, said once at start-up."""
    return (f"{prompts} prompts, {len(systems)} systems ({', '.join(map(repr, systems))}): fewer than the {MIN_VALUES} "
            "a correlation needs within a prompt, so story-level correlations pool all stories, each beside its "
            "within-system correlation, each prompt's stories are compared in pairs (paired_accuracy), and no "
            "system level")


def load_fitted(entry: Mapping, name: str, files: list[str]) -> tuple[TextDataset, list[str]]:
    """A configured dataset's files read (its first `max_prompts` prompts) and fitted to what it allows."""
    data = describe(entry, name).read(list(files), name)
    texts, human = subset_prompts(data.texts, data.human_scores, entry.get("max_prompts"))
    ratings = None if data.ratings is None else data.ratings[data.ratings["story_id"].isin(texts["story_id"])]
    return fit_to_data(dataclasses.replace(data, texts=texts, human_scores=human, ratings=ratings))


def fitted_description(dataset: Dataset, data: TextDataset) -> Dataset:
    """`dataset`'s declaration reduced to what `data` (fit_to_data's) holds: systems, raters, criteria."""
    kept = () if data.human_scores is None else tuple(pd.unique(data.human_scores["criterion"]))
    # A long file whose entry lists no criteria rates those its criterion column holds.
    criteria = tuple(name for name in dataset.criteria if name in kept) if dataset.criteria else kept
    systems = data.texts["system"].dropna().nunique()  # fit_to_data keeps two systems only on several prompts
    return dataclasses.replace(dataset, systems=dataset.systems and systems > 0,
                               paired=dataset.prompts and 1 < systems < MIN_VALUES,
                               # raters the file names: a rater column, or rater blocks and JSON ratings by rater
                               raters=data.ratings is not None, criteria=criteria, rating_gaps=data.gaps)
