"""The LLM judges whose ratings the built-in datasets' authors released, measured as storyeval measures the judges
it runs (docs/judges.md, "A judge that cannot answer" and "Distributions against the raters"): per judge, setup and
criterion, the ratings expected and present, what is missing and why, whether the column has too few ratings for
any statistic, its distribution's distance to the raters where the data hold one, and whether position can be
measured.

- HANNA (Chhun, Suchanek & Clavel, TACL 2024; hanna_metric_scores_llm.csv): 5 judges x 4 Eval-Prompts x the six
  criteria and their Average, one value a story (the mean of the judge's tries, storyeval.data.hanna_judges).
  Values below 1 (down to -1) are codes of unusable answers averaged in: off the scale here, though the score set
  keeps them as released. The raw answers are not in the file; one value a story is no distribution.
- PDS (Harel-Canada et al., EMNLP 2024): GPT-3.5 and GPT-4, each under three personas (their Mixture of Personas),
  one rating a story, persona and criterion (halves such as 3.5 included): the personas' ratings of a story are the
  judge's histogram there, set against the five participants' (storyeval.stats.distribution.histogram_agreement).
- TTCW (Chakrabarty et al., CHI 2024): seven LLMs' free-text Yes/No answers, one a story and test, read as the
  dataset reads them (storyeval.datasets.ttcw.judge_answers); a story's score counts tests passed, off 1-5.

Every released judge rated one story a prompt, so no position can be measured: the column says so and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.data.scoreset import MIN_CELLS
from storyeval.errors import InputError
from storyeval.judges.gaps import NO_RATING, answers_text, failure_count
from storyeval.stats.distribution import histogram_agreement

ABSENT = "absent from the file"
OFF_SCALE = "off the 1-5 scale"
NO_VERDICT = "no yes or no in the answer"
COLUMNS = ["judge", "setup", "criterion", "unit", "stories", "expected", "present", "missing", "missing_share",
           "absent", "off_scale", "unparsable", "reason", "answers", "rated_stories", "left_out",
           "distribution_stories", "distance", "raters_loo_distance", "distribution_note", "position"]
CLASSES = {"absent": ABSENT, "off_scale": OFF_SCALE, "unparsable": (NO_RATING, NO_VERDICT)}
DETAILS = ["judge", "setup", "criterion", "story_id", "value", "failure", "answer"]


def hanna(paths: Sequence[str | Path], name: str):
    """Details of hanna_metric_scores_llm.csv's judges: one row a column and story."""
    from storyeval.data.hanna_judges import read_judge_scores

    judges = read_judge_scores(paths[0])
    value = judges.scores.join(judges.registry.set_index("slug")[["judge", "criterion", "task", "task_label"]],
                               on="metric")
    off = value["value"].notna() & ~value["value"].between(1, 5)
    failure = np.where(value["value"].isna(), ABSENT, np.where(off, OFF_SCALE, ""))
    details = value.assign(setup="Eval-Prompt " + value["task"].astype(str) + ": " + value["task_label"],
                           failure=failure, answer="", value=value["value"].where(~off))
    return details[DETAILS], None


def pds(paths: Sequence[str | Path], name: str):
    """Details of GPT-3.5's and GPT-4's personas (study_stories.csv, human_annotations.csv, then the judge files):
    one row a story, persona and criterion; an empty cell is absent, one that is no number NO_RATING (its text the
    answer)."""
    from storyeval.datasets import pds as kind

    stories = kind.read_stories(paths[0], name)
    ids = kind.story_ids(stories)
    ratings = kind.load(paths[:2], name).ratings
    frames = []
    for key, path in zip(kind.JUDGES, paths[2:]):
        frame = kind.read_csv(path, name, kind.JUDGE_COLUMNS)
        frame = frame[frame["story_id"].isin(ids)]
        kind.refuse_repeats(frame, ["story_id", "participant_id"], path, name, "one persona")
        personas = sorted(frame["participant_id"].unique(), key=lambda persona: (len(persona), persona))
        grid = pd.MultiIndex.from_product([list(ids), personas], names=["story_id", "persona"])
        for criterion in kind.CRITERIA:
            text = frame.set_index(["story_id", "participant_id"])[f"{criterion}_score"].reindex(grid)
            text = text.where(text.str.strip() != "")  # an empty cell: no rating in the file
            value = pd.to_numeric(text, errors="coerce")
            off = value.notna() & ~value.between(1, 5)
            failure = np.where(text.isna(), ABSENT, np.where(value.isna(), NO_RATING, np.where(off, OFF_SCALE, "")))
            frames.append(pd.DataFrame({
                "judge": kind.JUDGES[key], "setup": f"Mixture of Personas ({len(personas)} personas)",
                "criterion": criterion, "story_id": grid.get_level_values("story_id").map(ids),
                "value": value.where(~off).to_numpy(), "failure": failure,
                "answer": text.where(failure != "").fillna("").to_numpy()}))
    return pd.concat(frames, ignore_index=True)[DETAILS], ratings


def ttcw(paths: Sequence[str | Path], name: str):
    """Details of the seven judges' answers (ttcw_short_stories.json, ttcw_annotations.json, then the judges'
    annotations_<judge>.jsonl): one row a story (of the 36 with texts), test and criterion that holds the test."""
    from storyeval.datasets import ttcw as kind

    texts = kind.load(paths[:2], name).texts
    ids = {(prompt, system): story for story, prompt, system in
           zip(texts["story_id"], texts["prompt_id"], texts["system"])}
    grid = pd.MultiIndex.from_product([texts["story_id"], list(kind.TESTS)], names=["story_id", "test"])
    frames = []
    for judge, path in zip(kind.JUDGES, paths[2:]):
        answers = kind.judge_answers(path, name)
        answers["story_id"] = [ids.get(key) for key in zip(answers["prompt_id"], answers["author"])]
        answers = answers.dropna(subset=["story_id"]).set_index(["story_id", "test"]).reindex(grid)
        failure = np.where(answers["response"].isna(), ABSENT, np.where(answers["answer"].isna(), NO_VERDICT, ""))
        table = pd.DataFrame({"judge": kind.JUDGES[judge], "setup": kind.TASK,
                              "story_id": grid.get_level_values("story_id"), "test": grid.get_level_values("test"),
                              "value": answers["answer"].to_numpy(), "failure": failure,
                              "answer": answers["response"].where(failure != "").fillna("").to_numpy()})
        frames += [table[table["test"].isin(tests)].assign(criterion=criterion)
                   for criterion, tests in kind.CRITERION_TESTS.items()]
    return pd.concat(frames, ignore_index=True)[DETAILS], None


# kind: (reader, what one expected rating is, why no distribution where there is none, why no position)
KINDS = {
    "hanna": (hanna, "story", "one value a story (the mean of the judge's tries), no distribution",
              "not measurable: one story a prompt, and the file holds no order of the prompts"),
    "pds": (pds, "story x persona", "",
            "not measurable: one story a prompt (the timestamps order the prompts in time, not places in a prompt)"),
    "ttcw": (ttcw, "story x test", "one Yes/No answer a story and test; a story's score counts tests passed, off "
                                   "the 1-5 scale", "not measurable: one story and one test a prompt, and the "
                                                    "file's lines are in no order of asking"),
}


def summary(details: pd.DataFrame, unit: str, position: str) -> pd.DataFrame:
    """COLUMNS up to left_out, and position, of a kind's details (DETAILS: one row an expected rating)."""
    rows = []
    for (judge, setup, criterion), own in details.groupby(["judge", "setup", "criterion"], sort=False):
        counts = failure_count(own)
        classes = {column: sum(counts.get(reason, 0) for reason in np.atleast_1d(reasons))
                   for column, reasons in CLASSES.items()}
        missing = sum(counts.values())
        rated = int(own.dropna(subset=["value"])["story_id"].nunique())
        quoted = own[own["answer"].fillna("") != ""]
        rows.append({"judge": judge, "setup": setup, "criterion": criterion, "unit": unit,
                     "stories": own["story_id"].nunique(), "expected": len(own), "present": len(own) - missing,
                     "missing": missing, "missing_share": missing / len(own),
                     **classes, "reason": "; ".join(f"{n} {reason}" for reason, n in counts.items()),
                     "answers": answers_text(quoted, criterion), "rated_stories": rated,
                     "left_out": rated < MIN_CELLS, "position": position})
    return pd.DataFrame(rows)


def released_judges(kind: str, paths: Sequence[str | Path], name: str | None = None) -> pd.DataFrame:
    """One row per released judge, setup and criterion of a built-in dataset (COLUMNS; module docstring). `kind`:
    hanna (paths: hanna_metric_scores_llm.csv), pds (study_stories.csv, human_annotations.csv,
    gpt-3.5_annotations.csv, gpt-4_annotations.csv) or ttcw (ttcw_short_stories.json, ttcw_annotations.json, then
    annotations_<judge>.jsonl of storyeval.datasets.ttcw.JUDGES, in that order)."""
    if kind not in KINDS:
        raise InputError(f"released judges: no built-in dataset {kind!r} with released LLM judges; fix: use one of "
                         f"{', '.join(KINDS)}")
    read, unit, no_distribution, position = KINDS[kind]
    details, ratings = read(paths, name or kind)
    table = summary(details, unit, position)
    keys = ["judge", "setup", "criterion"]
    if ratings is None:
        table = table.assign(distribution_stories=0, distance=np.nan, raters_loo_distance=np.nan,
                             distribution_note=no_distribution)
    else:
        judged = details.rename(columns={"value": "rating"})
        measured = pd.concat([histogram_agreement(ratings, own).assign(judge=judge, setup=setup)
                              for (judge, setup), own in judged.groupby(["judge", "setup"], sort=False)])
        measured = measured.rename(columns={"stories": "distribution_stories", "distance": "distance",
                                            "note": "distribution_note"})
        table = table.merge(measured, on=keys, how="left")
        table["distribution_stories"] = table["distribution_stories"].fillna(0).astype(int)
    return table[COLUMNS]
