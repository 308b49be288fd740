"""DeltaScore (Xie, Li, Cohn and Lau, "DeltaScore: Fine-Grained Story Evaluation with Perturbations", Findings of
EMNLP 2023, arXiv 2303.08991): generated stories rated 1-5 on fluency, coherence, relatedness, logicality and
interestingness, released in github.com/ZhuohanX/DeltaScore (data/{crowdsource,inhouse}/{roc,wp}.jsonl).

Two corpora (entry key `corpus`): ROCStories (`roc`: 20 leading sentences x 6 systems: BART, GPT-3, HINT, KGGPT2,
MEGATRON, PROGEN3) and WritingPrompts (`wp`: 20 prompts x 4 systems: BART, GPT-3, HINT, PROGEN3). Each JSON line
holds `title` (the prompt: ROC's leading sentence, WP's writing prompt), `story`, `model` (the system),
`reference` (the human story of the prompt) and the five criteria. Every prompt has one story of every system, so
the stories form a prompt x system grid (grouped story level and system level). The human story is a reference
only: it is not rated, so there is no human "system".

Two rating sets (entry key `ratings`): `crowdsource` (crowd workers) and `inhouse` (in-house annotators). Quirks
of the real files, and how they are handled:
- the two sets rate DIFFERENT stories: no title, story or reference of one set occurs in the other (checked on the
  release), so the other set cannot be a score set beside the chosen one's stories. What the release allows is
  their agreement at system level (the same systems, rated on other prompts): `recipes`;
- each score is the mean of three raters (every value is a multiple of 1/3, rounded to two decimals); per-rater
  ratings are not released, so there is no ICC, Krippendorff's alpha or rater ceiling on this data;
- GPT-3 is `DAVINCI` in crowdsource_wp and `gpt3` in the other three files: one system, GPT-3;
- texts are lowercased and tokenised (spaces around punctuation, WP's `` and '' quotes), ROC's names masked as
  [MALE], [FEMALE], [NEUTRAL] as the released ROCStories of Guan et al. (2020); kept as released.

The default rating set is `crowdsource`: the authors' scoring script (gen_scores.py at b437b2f) hard-codes
data_dir = 'crowdsource' for both corpora; which set the paper's tables use could not be read (below).

Printed numbers: none. The paper's correlation tables were searched for in the ACL Anthology / arXiv HTML
(ar5iv 2303.08991 returns the abstract and introduction only) and in the repository (its README prints no number);
the abstract prints none. The authors' recipe (gen_scores.py): Pearson, Spearman and Kendall of a metric with each
criterion over all stories of a corpus (120 ROC, 80 WP), no grouping by prompt; storyeval's `story` level instead
averages per-prompt correlations across systems (Chhun et al. 2022).

Licence: the repository has no LICENSE file; the files are fetched from the pinned commit, never redistributed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from storyeval.data.hanna import story_id
from storyeval.datasets.base import Dataset, pinned_files
from storyeval.errors import InputError, quoted
from storyeval.names import check_labels
from storyeval.text.datasets import (
    TextDataset,
    check_grid,
    finish,
    prompt_ids,
    read_table_file,
    require_columns,
    single_reference,
)

COMMIT = "b437b2f339152cda092f33cbb6ee6961b38050d3"
SOURCE = pinned_files("https://raw.githubusercontent.com/ZhuohanX/DeltaScore", COMMIT, {
    "crowdsource_roc": ("data/crowdsource/roc.jsonl", "crowdsource_roc.jsonl",
                        "221fab2654e58d428e7786bf5b96ca5a38e5d482a7eb3eff4258b2373b4416ac"),
    "crowdsource_wp": ("data/crowdsource/wp.jsonl", "crowdsource_wp.jsonl",
                       "d8f01720f600a1a396e64c15fc0ea3ecef11e4fa514b8d950d7434e05a59d230"),
    "inhouse_roc": ("data/inhouse/roc.jsonl", "inhouse_roc.jsonl",
                    "71ce0afa89b3cf9ffd7723f4bbba5748a87252934c80909b9f7d4c7728bf3426"),
    "inhouse_wp": ("data/inhouse/wp.jsonl", "inhouse_wp.jsonl",
                   "d938760a7d5acb9f0462cbef042c91e3a4a2a3f510f468c4bb471794b843474a"),
})
CORPORA = {"roc": "ROCStories", "wp": "WritingPrompts"}
RATING_SETS = {"crowdsource": "crowd workers", "inhouse": "in-house annotators"}
DEFAULT_RATINGS = "crowdsource"  # the set the authors' gen_scores.py reads
# The files' criterion keys -> storyeval's criterion names.
CRITERIA = {"fluency": "Fluency", "coherence": "Coherence", "relatedness": "Relatedness",
            "logicality": "Logicality", "interestingness": "Interestingness"}
CRITERIA_MAP = {"Fluency": "fluency", "Coherence": "coherence", "Relatedness": "relevance",
                "Logicality": "coherence", "Interestingness": "interestingness/engagement"}
GPT3 = "GPT-3"
SYSTEM_NAMES = {"gpt3": GPT3, "DAVINCI": GPT3}  # one system, two names in the release
COLUMNS = ["title", "story", "model", "reference", *CRITERIA]
SCALE = (1.0, 5.0)
COEFFICIENTS = ("pearson", "spearman", "kendall")  # scipy.stats' pearsonr, spearmanr, kendalltau


def read_ratings_file(path: str | Path, name: str) -> pd.DataFrame:
    """One released JSONL file, checked: its columns, numeric ratings on the 1-5 scale, GPT-3 under one name."""
    label = f"dataset {name}: {path}"
    frame = read_table_file(path, "jsonl", label, names=["model"])
    require_columns(frame, COLUMNS, name, path)
    ratings = frame[list(CRITERIA)].apply(pd.to_numeric, errors="coerce")
    off = ratings.isna() | (ratings < SCALE[0]) | (ratings > SCALE[1])
    if off.any(axis=None):
        row, column = off.stack()[off.stack()].index[0]
        value = frame.at[row, column]
        shown = f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else quoted(value)
        raise InputError(f"{label}: line {row + 1}, column {column!r}: {shown} is not a "
                         f"rating in [{SCALE[0]:g}, {SCALE[1]:g}]; fix: use the released file")
    frame[list(CRITERIA)] = ratings
    frame["model"] = frame["model"].map(lambda model: SYSTEM_NAMES.get(model, model))
    check_labels(pd.unique(frame["model"]), "system", "column 'model'", source=label, into="story ids")
    return frame


def load(paths: str | Path | Sequence[str | Path], name: str) -> TextDataset:
    """The stories of one corpus and rating set: prompt x system grid, the human story as reference, the released
    rater means as human scores (no per-rater ratings)."""
    path = paths if isinstance(paths, (str, Path)) else paths[0]
    frame = read_ratings_file(path, name)
    frame["prompt_id"] = prompt_ids(frame["title"])
    frame["story_id"] = [story_id(prompt, system) for prompt, system in zip(frame["prompt_id"], frame["model"])]
    references = single_reference(frame.rename(columns={"reference": "Human"}), name, path)
    texts = pd.DataFrame({
        "story_id": frame["story_id"],
        "prompt_id": frame["prompt_id"],
        "system": frame["model"],
        "prompt": frame["title"],
        "story": frame["story"],
        "reference": references.loc[frame["prompt_id"]].to_numpy(),
    }).sort_values(["prompt_id", "system"])
    check_grid(texts, f"dataset {name}: {path}", {"prompt": "title", "system": "model"})
    scores = (frame[["story_id", *CRITERIA]].rename(columns=CRITERIA)
              .melt(id_vars="story_id", var_name="criterion", value_name="score")
              .sort_values(["story_id", "criterion"]).reset_index(drop=True))
    return TextDataset(name, finish(name, texts), scores)


def system_means(path: str | Path, name: str) -> pd.DataFrame:
    """Each system's mean rating per criterion (systems x criteria) of one rating set."""
    frame = read_ratings_file(path, name)
    return frame.groupby("model")[list(CRITERIA)].mean().rename(columns=CRITERIA)


def recipes(paths: Sequence[str | Path], name: str) -> pd.DataFrame:
    """How far the two rating sets agree: per criterion, each coefficient between the systems' mean ratings of the
    crowd and the in-house set. They rate different stories of the same systems, so the system level is the only
    one they share (n = the systems: 6 ROC, 4 WP)."""
    from scipy import stats  # the recipes' only: start-up imports every kind module

    correlations = dict(zip(COEFFICIENTS, (stats.pearsonr, stats.spearmanr, stats.kendalltau)))
    crowd, inhouse = (system_means(path, name) for path in paths)
    if sorted(crowd.index) != sorted(inhouse.index):
        raise InputError(f"dataset {name}: {paths[0]} and {paths[1]} rate systems {sorted(crowd.index)} and "
                         f"{sorted(inhouse.index)}; fix: use the released files")
    inhouse = inhouse.loc[crowd.index]
    rows = [{"item": f"{criterion} system means, crowdsource vs inhouse, {coefficient} (n={len(crowd)})",
             "value": float(correlate(crowd[criterion], inhouse[criterion])[0]),
             "recipe": "the two rating sets' per-system means correlated across systems (scipy.stats)"}
            for criterion in CRITERIA.values() for coefficient, correlate in correlations.items()]
    return pd.DataFrame(rows, columns=["item", "value", "recipe"])


def deltascore_dataset(entry: Mapping, name: str) -> Dataset:
    """A `deltascore` entry: its `corpus` (roc or wp) and `ratings` (crowdsource, the default, or inhouse)."""
    corpus, ratings = entry.get("corpus"), entry.get("ratings", DEFAULT_RATINGS)
    for key, value, choices in (("corpus", corpus, CORPORA), ("ratings", ratings, RATING_SETS)):
        if value not in choices:
            raise InputError(f"datasets.{name}.{key}: {value!r} is not a DeltaScore {key}; fix: use one of "
                             f"{', '.join(choices)}")
    systems = "6 systems'" if corpus == "roc" else "4 systems'"
    return Dataset(
        kind="deltascore", load=load, texts=frozenset({"story", "prompt", "reference"}), prompts=True, systems=True,
        rater_kind={"crowdsource": "crowd", "inhouse": "skilled"}[ratings],
        criteria=tuple(CRITERIA.values()), suffixes=(".jsonl",), criteria_map=CRITERIA_MAP,
        source="deltascore", inputs=(f"{ratings}_{corpus}",),
        recipes=recipes, recipe_inputs=(f"crowdsource_{corpus}", f"inhouse_{corpus}"),
        description=(f"{CORPORA[corpus]}: 20 prompts, {systems} stories each with the human story as reference, "
                     f"rated 1-5 on five criteria, the mean of three {RATING_SETS[ratings]}"),
        licence="none stated (the repository has no LICENSE file): fetched from the pinned commit, never "
                "redistributed")


KINDS = {"deltascore": deltascore_dataset}
