"""StoryER's training samples as tables, and the prompt folds (StoryER, Chen et al. 2022).

- Ranking pairs (train_rank_data_small.pkl, read by the restricted unpickler): items
  [prompt, story, story, target, margin]; target 1 means the first story was the more upvoted, -1 the second
  (StoryER's train.py: hinge on -target * (s1 - s2) + 0.3); the released file has target 1 throughout.
  The item's own margin field is unused, as in StoryER (the margin is a training setting).
- Aspect ratings (train_rate_reason_data_small.json): {story, score (upvotes), prompt, comments: [[aspect id,
  rating, comment]]}; a comment counts when its aspect id is 1..10, its rating 1..5 and its comment a string,
  as StoryER's dataset.py keeps them (aspect -1 / NaN comment mark an empty slot).
Texts are cleaned by `storyeval.text.clean.clean_text`, as every dataset the metrics score.

Folds: the distinct prompts, sorted, are permuted by numpy's default_rng(seed); the first
round(share x number of prompts) are held out. Every pair and rated story of a held-out prompt is held out,
so no held-out prompt is seen in training.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.limits import check_text
from storyeval.pickles import brief, load_restricted
from storyeval.text.clean import clean_text

# StoryER's dataset.py `aspect_string`: aspect id k (1..10) is ASPECTS[k - 1].
ASPECTS = ("opening/beginning", "middle/twist/flow", "ending", "character shaping", "scene description",
           "heartwarming/touch", "sad/crying/tear", "horror/scary", "funny/hilarious/laugh", "novel/idea")
RATING_RANGE = (1, 5)
PAIR_COLUMNS = ["pair", "prompt", "high", "low"]
RATING_COLUMNS = ["story_index", "prompt", "story", "aspect", "rating", "comment"]
TRAIN, HELDOUT = "train", "heldout"


def cleaned(text: str, where: str) -> str:
    check_text(text, where, "use the released file")
    text = clean_text(text)
    if not text:
        raise InputError(f"{where} is empty after cleaning; fix: use the released file")
    return text


def load_pairs(path: str | Path) -> pd.DataFrame:
    """One row per pair: pair (its index in the file), prompt, high (preferred story), low."""
    items = load_restricted(path)
    if not isinstance(items, list) or not items:
        raise InputError(f"{path}: should hold a non-empty list of [prompt, story, story, target, margin] items")
    rows = []
    for index, item in enumerate(items):
        if not (isinstance(item, (list, tuple)) and len(item) == 5 and all(isinstance(t, str) for t in item[:3])
                and item[3] in (1, -1) and not isinstance(item[3], bool)):
            raise InputError(
                f"{path}: item {index} is not [prompt, story, story, target 1 or -1, margin]: {brief(item, 80)}"
            )
        prompt, first, second, target = item[0], item[1], item[2], item[3]
        high, low = (first, second) if target == 1 else (second, first)
        where = f"{path}: item {index}"
        rows.append(
            (index, cleaned(prompt, f"{where} prompt"), cleaned(high, f"{where} story"), cleaned(low, f"{where} story"))
        )
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def valid_comment(entry: object) -> bool:
    if not (isinstance(entry, (list, tuple)) and len(entry) == 3):
        return False
    aspect, rating, comment = entry
    return (
        type(aspect) is int
        and 1 <= aspect <= len(ASPECTS)
        and type(rating) in (int, float)
        and RATING_RANGE[0] <= rating <= RATING_RANGE[1]
        and isinstance(comment, str)
        and comment.strip() != ""
    )


def load_ratings(path: str | Path) -> pd.DataFrame:
    """One row per usable comment: story_index (the story's index in the file), prompt, story, aspect (1..10),
    rating (1..5), comment. Empty slots are skipped (module docstring)."""
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: not a readable JSON file ({error}); fix: fetch the released file again") from error
    if not isinstance(items, list) or not items:
        raise InputError(f"{path}: should hold a non-empty list of {{story, prompt, comments}} objects")
    rows = []
    for index, item in enumerate(items):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("story"), str)
            and isinstance(item.get("prompt"), str)
            and isinstance(item.get("comments"), list)
        ):
            raise InputError(f"{path}: item {index} lacks a story, prompt or comments list; fix: use the released file")
        where = f"{path}: item {index}"
        story, prompt = cleaned(item["story"], f"{where} story"), cleaned(item["prompt"], f"{where} prompt")
        rows += [
            (index, prompt, story, entry[0], float(entry[1]), clean_text(entry[2]))
            for entry in item["comments"]
            if valid_comment(entry)
        ]
    if not rows:
        raise InputError(f"{path}: no comment has an aspect id 1..{len(ASPECTS)}, a rating 1..5 and a text")
    return pd.DataFrame(rows, columns=RATING_COLUMNS)


def prompt_folds(prompts, heldout_share: float, seed: int) -> pd.Series:
    """Fold (TRAIN or HELDOUT) of each distinct prompt, indexed by prompt (module docstring)."""
    distinct = sorted(set(prompts))
    if not (isinstance(heldout_share, (int, float)) and 0 <= heldout_share < 1):
        raise InputError(f"storyer folds: heldout_share {heldout_share!r} must lie in [0, 1); fix: set e.g. 0.2")
    n_heldout = int(math.floor(heldout_share * len(distinct) + 0.5))  # round half up, not to even
    if heldout_share > 0 and not 1 <= n_heldout < len(distinct):
        raise InputError(
            f"storyer folds: heldout_share {heldout_share} of {len(distinct)} prompts leaves "
            f"{n_heldout} held out; fix: choose a share that holds out at least one prompt and keeps one"
        )
    order = np.random.default_rng(seed).permutation(len(distinct))
    folds = np.full(len(distinct), TRAIN, dtype=object)
    folds[order[:n_heldout]] = HELDOUT
    return pd.Series(folds, index=pd.Index(distinct, name="prompt"), name="fold")


def fold_of(frame: pd.DataFrame, folds: pd.Series) -> pd.Series:
    """The fold of each row by its prompt; a prompt the folds do not know is trained on (it is no held-out prompt)."""
    return frame["prompt"].map(folds).fillna(TRAIN)


def first_prompts(frame: pd.DataFrame, max_prompts: int | None) -> pd.DataFrame:
    """The rows of the first `max_prompts` distinct prompts, sorted (all rows when None): quick runs and tests."""
    if max_prompts is None:
        return frame
    if not (type(max_prompts) is int and max_prompts >= 1):
        raise InputError(f"storyer data: max_prompts {max_prompts!r} must be a positive integer or null")
    kept = sorted(set(frame["prompt"]))[:max_prompts]
    return frame[frame["prompt"].isin(kept)].reset_index(drop=True)
