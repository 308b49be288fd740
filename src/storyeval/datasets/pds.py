"""PDS: the Psychological Depth Scale human study (Harel-Canada, Zhou, Muppalla, Yildiz, Kim, Sahai and Peng,
"Measuring Psychological Depth in Language Models", EMNLP 2024, pp. 17162-17196). 97 short stories on 15 Reddit
WritingPrompts premises, by five LLMs (Llama-2-7B/13B/70B, Vicuna-33B, GPT-4; two prompting strategies) and by
Reddit writers of three levels (Human-Novice, -Intermediate, -Advanced), each rated 1-5 by the same 5 participants
on the scale's five components (authenticity, empathy, engagement, emotion_provoking, narrative_complexity) and on
human_likeness (is it human-written?); and the same stories rated by GPT-3.5 and GPT-4 under three personas each
(the paper's Mixture of Personas). MIT licence (the release's LICENSE file).

Files (the authors' data, in the fork github.com/EPronovost/psychdepth that carries their commits) and quirks:
- study_stories.csv is Windows-1252, not UTF-8 (apostrophes 0x92, quotes 0x93/0x94, dashes 0x96/0x97): read as
  cp1252. Its `story_id`
  is the row number for LLM stories and the Reddit post id for human ones ("j5eqypx"); `study_id` (0-99, three
  numbers absent: 70, 71, 83) names every story in all files, so story ids here are s<study_id>-<writer>.
- Two human stories' premise cells differ from their premise's: straight apostrophes (premise 14) and a mojibake
  ending (premise 7, "as 'rent'''''" then "\u00ef??\u00ef"). Every story takes its premise_id's most frequent text
  (the prompt the LLMs were given): 15 prompt texts.
- The stories lie on no prompt x system grid: a premise has 3 to 8 stories, a human level appears on 3-4 premises,
  and 16 premise x model cells hold two stories (two strategies, or two of one strategy). storyeval's grouped
  story level needs one story per prompt and system, so the 97 stories form one group (prompt_id empty, the
  premise kept as prompt text): story-level correlations over all 97 stories, as the paper correlates its per-story
  means, and no system level. The writer stays the story's system.
- The human-written stories are systems here, not references (reference_system None): no story is the reference
  of another. A correlation over all stories mixes human and LLM writers (the confounds table says where the
  within-system correlations differ).
- human_annotations.csv (ASCII): one row per story and participant (ids 2, 3, 4, 6, 7), no gap, no duplicate;
  `study_id` joins the stories, and its `story_id`, `premise_id` and `model_short` are checked against them.
- gpt-3.5_annotations.csv and gpt-4_annotations.csv: 100 stories x 3 personas (`participant_id` 0-2, `profile`
  the persona prompt); their `story_id` is the study_id; the three stories missing from the study are dropped; the
  human writers are named Human-Low/-Mid/-High (checked against the study's levels). GPT-4's ratings include
  halves (3.5). One judge column per model and criterion: the mean over the personas (the authors'
  MeanAggregator, analyze.py).
- *_new_human_stories_annotations.csv (GPT-4o, GPT-4o-mini, o1-preview, with and without personas) rate 15 later
  stories (ids new_0a..new_4c, March 2025) whose human ratings are not released: nothing joins them, unused.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.data.registry import slugify
from storyeval.datasets.base import Dataset, Printed, fixed, pinned_files
from storyeval.errors import InputError
from storyeval.text.datasets import TextDataset, decode_table, finish, require_columns

SOURCE = pinned_files(
    "https://raw.githubusercontent.com/EPronovost/psychdepth", "9e93799a0cdcfbedb78aa9405d750d6d28fb50ce", {
        "license": ("LICENSE", "LICENSE", "65f3a03e639f2922e9944e1c58b7334882e9ef40801853ced8df550ed4f8e3a5"),
        "stories": ("data/study_stories.csv", "study_stories.csv",
                    "7a6b8b09be0fe758262a82df160c433a41295c5e2c08c57d557d6f67cd2b7fca"),
        "human": ("human_study/data/processed/human_annotations.csv", "human_annotations.csv",
                  "7ff10ab2466e52ad9085d71cf30dde8db0b3335d6190eb517e2c45c044867c6c"),
        "gpt-3.5": ("human_study/data/processed/gpt-3.5_annotations.csv", "gpt-3.5_annotations.csv",
                    "864241376cd881b8c7dc84dd5fb478a6cc26c1bb285552c48b159f9d7d9b1cae"),
        "gpt-4": ("human_study/data/processed/gpt-4_annotations.csv", "gpt-4_annotations.csv",
                  "57a9f73f31558a6ac42c9fa471908d01e8125d3d5706c2aedb994200cf529aee"),
    })

COMPONENTS = ("authenticity", "empathy", "engagement", "emotion_provoking", "narrative_complexity")
CRITERIA = (*COMPONENTS, "human_likeness")
# authenticity ("feels true to real human experience") and human_likeness fit none of the shared terms; emotion
# provocation is the reader's emotional response, which HANNA's Empathy covers too.
CRITERIA_MAP = {"empathy": "empathy", "emotion_provoking": "empathy", "engagement": "interestingness/engagement",
                "narrative_complexity": "complexity"}
JUDGES = {"gpt-3.5": "GPT-3.5", "gpt-4": "GPT-4"}  # source key -> label
JUDGE_WRITERS = {"Human-Low": "Human-Novice", "Human-Mid": "Human-Intermediate", "Human-High": "Human-Advanced"}
STORY_COLUMNS = ["study_id", "story_id", "premise_id", "premise", "text", "model_short"]
HUMAN_COLUMNS = ["participant_id", "study_id", "story_id", "premise_id", "model_short",
                 *(f"{name}_score" for name in CRITERIA)]
JUDGE_COLUMNS = ["participant_id", "story_id", "model_short", *(f"{name}_score" for name in CRITERIA)]
MEAN_ITEM = "mean of the five components"
ALPHA_ITEM = "alpha ordinal (Gwet weights, count table)"
PAPER = "Harel-Canada et al. 2024 (PDS), EMNLP"


def read_csv(path: str | Path, name: str, columns: Sequence[str], encoding: str = "utf-8") -> pd.DataFrame:
    """A release file as strings (`encoding` cp1252: study_stories.csv), checked for `columns`."""
    text = decode_table(Path(path).read_bytes(), f"dataset {name}: {path}", encoding)
    frame = pd.read_csv(StringIO(text), dtype=str, keep_default_na=False)
    require_columns(frame, list(columns), name, path)
    return frame


def ratings_of(frame: pd.DataFrame, path, name: str) -> pd.DataFrame:
    """The criterion columns as floats (an empty or non-numeric cell is an InputError)."""
    try:
        return frame[[f"{criterion}_score" for criterion in CRITERIA]].astype("float64").set_axis(CRITERIA, axis=1)
    except ValueError as error:
        raise InputError(f"dataset {name}: {path} has a non-numeric rating ({error}); fix: use the released file") \
            from error


def story_ids(stories: pd.DataFrame) -> dict[str, str]:
    """study_id -> s<study_id>-<writer>, e.g. s10-human-novice."""
    return {study: f"s{int(study):02d}-{slugify(writer)}" for study, writer in
            zip(stories["study_id"], stories["model_short"])}


def read_stories(path, name: str) -> pd.DataFrame:
    stories = read_csv(path, name, STORY_COLUMNS, encoding="cp1252")
    if stories["study_id"].duplicated().any():
        repeated = stories["study_id"][stories["study_id"].duplicated()].iloc[0]
        raise InputError(f"dataset {name}: {path} repeats study_id {repeated}; fix: use the released file")
    return stories


def read_human(path, name: str, stories: pd.DataFrame) -> pd.DataFrame:
    """Long ratings (story_id, criterion, worker, rating) of human_annotations.csv, each row checked against the
    story its study_id names."""
    frame = read_csv(path, name, HUMAN_COLUMNS)
    known = stories.set_index("study_id")[["story_id", "premise_id", "model_short"]]
    joined = frame.join(known.add_suffix("_story"), on="study_id")
    wrong = joined["story_id_story"].isna() | (joined[["story_id", "premise_id", "model_short"]].to_numpy()
                                               != joined[["story_id_story", "premise_id_story",
                                                          "model_short_story"]].to_numpy()).any(axis=1)
    if wrong.any():
        raise InputError(f"dataset {name}: {path} row {int(np.flatnonzero(wrong)[0]) + 2} (study_id "
                         f"{joined['study_id'][wrong].iloc[0]}) names no story of study_stories.csv or another "
                         "story, premise or writer; fix: use the released files of one commit")
    refuse_repeats(frame, ["study_id", "participant_id"], path, name, "one participant")
    ids = story_ids(stories)
    wide = ratings_of(frame, path, name).assign(story_id=frame["study_id"].map(ids),
                                                worker="p" + frame["participant_id"])
    long = wide.melt(id_vars=["story_id", "worker"], var_name="criterion", value_name="rating")
    return long[["story_id", "criterion", "worker", "rating"]].sort_values(["story_id", "criterion", "worker"])


def refuse_repeats(frame: pd.DataFrame, keys: list[str], path, name: str, rater: str) -> None:
    """One rating a story and rater: a repeated (story, rater) row is the file's damage, said in one line."""
    if frame.duplicated(keys).any():
        raise InputError(f"dataset {name}: {path} rates a story twice by {rater}; fix: use the released file")


def load(paths: Sequence[str], name: str = "pds") -> TextDataset:
    """The 97 stories (one group, writers as systems, premises as prompts) and the 5 participants' ratings."""
    stories_path, human_path = paths
    stories = read_stories(stories_path, name)
    ids = story_ids(stories)
    absent = pd.Series(np.nan, index=stories.index, dtype="str")
    premises = stories.groupby("premise_id")["premise"].agg(lambda texts: texts.value_counts().index[0])
    texts = pd.DataFrame({"story_id": stories["study_id"].map(ids),
                          "prompt_id": pd.array([pd.NA] * len(stories), dtype="Int64"),
                          "system": stories["model_short"], "prompt": stories["premise_id"].map(premises),
                          "story": stories["text"], "reference": absent})
    ratings = read_human(human_path, name, stories).reset_index(drop=True)
    scores = ratings.groupby(["story_id", "criterion"], sort=True)["rating"].mean().rename("score").reset_index()
    return TextDataset(name, finish(name, texts), scores, ratings)


def read_judge(path, name: str, stories: pd.DataFrame) -> pd.DataFrame:
    """A judge file's ratings by study_id, checked against the study's writers; stories outside the study
    (70, 71, 83) dropped."""
    frame = read_csv(path, name, JUDGE_COLUMNS)
    writers = frame["model_short"].replace(JUDGE_WRITERS)
    study = frame["story_id"].map(stories.set_index("study_id")["model_short"])
    wrong = study.notna() & (study != writers)
    if wrong.any():
        raise InputError(f"dataset {name}: {path} names story {frame['story_id'][wrong].iloc[0]} as written by "
                         f"{frame['model_short'][wrong].iloc[0]}, study_stories.csv by {study[wrong].iloc[0]}; fix: "
                         "use the released files of one commit")
    refuse_repeats(frame, ["story_id", "participant_id"], path, name, "one persona")
    kept = study.notna()
    return ratings_of(frame[kept], path, name).assign(study_id=frame.loc[kept, "story_id"],
                                                       persona=frame.loc[kept, "participant_id"])


def released(paths: Sequence[str], name: str, texts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One column per judge and criterion: the mean of its personas' ratings of each study story."""
    stories_path, *judge_paths = paths
    stories = read_stories(stories_path, name)
    ids = story_ids(stories)
    frames, rows = [], []
    for key, path in zip(JUDGES, judge_paths):
        means = read_judge(path, name, stories).groupby("study_id")[list(CRITERIA)].mean()
        for criterion in CRITERIA:
            slug = f"{slugify(key)}-mop-{slugify(criterion)}"
            frames.append(pd.DataFrame({"story_id": means.index.map(ids), "metric": slug,
                                        "value": means[criterion].to_numpy()}))
            rows.append({"slug": slug, "label": f"{JUDGES[key]} MoP {criterion}", "column": f"{criterion}_score",
                         "reference": "free", "family": "llm-judge", "direction": "higher",
                         "degenerate_release": False, "judge": JUDGES[key], "criterion": criterion, "task": "MoP",
                         "personas": int(read_csv(path, name, ["participant_id"])["participant_id"].nunique())})
    registry = pd.DataFrame(rows).assign(order=range(len(rows)))
    scores = pd.concat(frames, ignore_index=True)
    return scores[scores["story_id"].isin(texts["story_id"])].reset_index(drop=True), registry


def gwet_ordinal_distance(v1, v2, i1, i2, n_v, dtype=np.float64):
    """1 - Gwet's ordinal weight of two categories (Gwet 2014, Handbook of Inter-Rater Reliability, ch. 3:
    w = 1 - C(|k-l|+1, 2) / C(q, 2)), as the `agreement` package's ordinal_kernel that the authors' analyze.py
    passes to its krippendorffs_alpha. Krippendorff's alpha with this distance on the count table is that
    package's value (their formulation is Krippendorff's); Krippendorff's own ordinal metric, which weighs by the
    marginal counts, is another (alpha_ordinal of the agreement table)."""
    steps, q = np.abs(np.asarray(i1) - np.asarray(i2)), len(n_v)
    return (steps * (steps + 1) / (q * (q - 1))).astype(dtype)  # C(d+1, 2) / C(q, 2), 0 for equal categories


def authors_alpha(ratings: pd.DataFrame) -> float:
    """The authors' alpha of one criterion: the story x category count table (rater identity dropped) under
    Gwet's ordinal weights."""
    import krippendorff

    table = pd.crosstab(ratings["story_id"], ratings["rating"]).to_numpy(dtype=float)
    return float(krippendorff.alpha(value_counts=table, level_of_measurement=gwet_ordinal_distance))


def authors_spearman(human: pd.Series, judge: pd.Series) -> float:
    """The authors' judge-vs-human Spearman: per-story means rounded to 2 decimals, over the stories both rate
    (analyze.py pairs two lists sorted by story id by position: this join where both rate the same stories; the
    judges rate three stories more)."""
    from scipy import stats  # the recipes' only: start-up imports every kind module

    both = pd.concat([human.round(2), judge.round(2)], axis=1, join="inner")
    return float(stats.spearmanr(both.iloc[:, 0], both.iloc[:, 1]).statistic)


def recipes(paths: Sequence[str], name: str) -> pd.DataFrame:
    """Their ordinal alpha per component and averaged over the five, and each released judge's Spearman with the
    human per-story means per component and averaged (EPronovost/psychdepth story_eval/analyze.py)."""
    data = load(paths[:2], name)
    alpha_recipe = "analyze.py: agreement package's krippendorffs_alpha, ordinal_kernel, on the count table"
    spearman_recipe = "analyze.py: MeanAggregator (per-story means, 2 decimals), scipy spearmanr"
    rows = []
    alphas = {criterion: authors_alpha(data.ratings[data.ratings["criterion"] == criterion])
              for criterion in CRITERIA}
    alphas[MEAN_ITEM] = np.mean([alphas[c] for c in COMPONENTS])
    rows += [(f"{ALPHA_ITEM}: {criterion}", value, alpha_recipe) for criterion, value in alphas.items()]
    human = data.human_scores.pivot(index="story_id", columns="criterion", values="score")
    scores, registry = released([paths[0], *paths[2:]], name, data.texts)
    judged = scores.pivot(index="story_id", columns="metric", values="value")
    for judge, group in registry.groupby("judge", sort=False):
        values = {criterion: authors_spearman(human[criterion], judged[slug])
                  for slug, criterion in zip(group["slug"], group["criterion"])}
        values[MEAN_ITEM] = np.mean([values[c] for c in COMPONENTS])
        rows += [(f"Spearman {judge} MoP: {criterion}", value, spearman_recipe) for criterion, value in values.items()]
    return pd.DataFrame(rows, columns=["item", "value", "recipe"])


PRINTED = (
    Printed(PAPER, "abstract (p. 17162)", "Krippendorff's alpha of the human ratings", 0.72, "paper_recipes.csv",
            {"item": f"{ALPHA_ITEM}: {MEAN_ITEM}"},
            note="Not reproduced: the authors' recipe (analyze.py: ordinal-weighted alpha of the story x rating count "
                 "table, averaged over the five components) on the released human_annotations.csv (5 participants "
                 "x 97 stories) gives 0.13; Krippendorff's ordinal alpha on the raters x stories matrix 0.15, "
                 "interval 0.15, nominal 0.03. No released file or aggregation tried gives 0.72; the paper's tables "
                 "could not be consulted."),
    Printed(PAPER, "abstract (p. 17162)", "GPT-4o Mixture-of-Personas Spearman with humans, mean of 5 components",
            0.51, "paper_recipes.csv", {"item": f"Spearman GPT-4 MoP: {MEAN_ITEM}"},
            note="Not reproducible: GPT-4o's ratings of the 97 study stories are not released. The value beside it "
                 "is GPT-4's (gpt-4_annotations.csv, 3 personas) by the authors' recipe. The released GPT-4o files "
                 "(*_new_human_stories_annotations.csv) rate 15 later stories whose human ratings are not released "
                 "(their fork's notebook gives 0.34 on them with 3 student raters)."),
)

# The raters: five study participants who each rated all 97 stories, recruited for the study rather than from a
# crowd platform and not described as professional writers: skilled annotators in Calderon et al.'s rule of thumb
# (epsilon 0.15); the alt-test page shows where the verdict differs at 0.1 and 0.2.
PDS = Dataset(kind="pds", load=load, texts=frozenset({"story", "prompt"}), prompts=False, systems=True, raters=True,
              rater_kind="skilled",
              criteria=CRITERIA, suffixes=(".csv",), reference_system=None, criteria_map=CRITERIA_MAP,
              source="pds", inputs=("stories", "human"), released=released,
              released_inputs=("stories", *JUDGES), printed=PRINTED, recipes=recipes,
              recipe_inputs=("stories", "human", *JUDGES),
              description="97 stories by five LLMs and Reddit writers of three levels on 15 premises, rated 1-5 by "
                          "5 participants on the Psychological Depth Scale's five components and human-likeness",
              licence="MIT")

KINDS = {"pds": fixed(PDS)}
