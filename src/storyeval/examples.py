"""Example rated stories the project generates itself (no third-party text), in the layouts users' files have.

Each system has a planted quality: better systems write longer stories that copy more of the prompt's
reference, and raters score them higher on three criteria that are not HANNA's. `config/examples/` ships the
files `write_examples` writes, beside a ready config for each layout.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SYSTEMS = ("alpha", "beta", "gamma", "delta", "epsilon")  # planted quality rises from alpha to epsilon
CRITERIA = {"Fluency": "fluency", "Plot": "plot_score", "Delight": "delight"}  # criterion: column
WORDS = tuple(
    "the a old young quiet brave small dark bright lost hidden red fox king river tower girl boy storm ship map "
    "letter garden wolf clock city forest door key song walked found opened lost carried watched followed "
    "remembered crossed built broke sang dreamed under over into beyond behind near night morning winter home "
    "secret promise journey shadow light fire stone bridge window mountain sea road friend stranger".split()
)


def rated_stories(seed: int = 7, prompts: int = 12, raters: int = 3, systems=SYSTEMS,
                  vocabulary=tuple(f"w{index}" for index in range(400))) -> pd.DataFrame:
    """One row per story and rater: prompts x systems stories, planted quality, integer ratings on 1-5."""
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(prompts):
        reference = list(rng.choice(vocabulary, 60))
        for rank, system in enumerate(systems):
            quality = rank / 2 + rng.normal(0, 0.3)
            copied = int(np.clip(10 + 12 * quality, 0, 60))
            words = reference[:copied] + list(rng.choice(vocabulary, 30 + int(15 * quality)))
            means = {"fluency": 2 + quality, "plot_score": 1.5 + 0.8 * quality, "delight": 2.5 + 0.5 * quality}
            for rater in range(raters):
                noisy = {column: int(np.clip(np.rint(mean + rng.normal(0, 0.5)), 1, 5))
                         for column, mean in means.items()}
                rows.append({
                    "id": f"p{prompt:02d}-{system}",
                    "prompt": f"Write a story about topic {prompt}.",
                    "model": system,
                    "text": " ".join(words) + ".",
                    "human_story": " ".join(reference) + ".",
                    "annotator": f"rater{(prompt + rater) % 5}",
                    **noisy,
                })
    return pd.DataFrame(rows)


def long_layout(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per story, rater, criterion and score (a crowdsourcing export)."""
    keys = [column for column in frame.columns if column not in CRITERIA.values()]
    long = frame.reset_index().melt(id_vars=["index", *keys], value_vars=list(CRITERIA.values()),
                                    var_name="criterion", value_name="score")
    return long.sort_values("index", kind="stable").drop(columns="index").reset_index(drop=True)


def per_rater_layout(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per story, a column per rater position and criterion (r1_fluency, r2_fluency, ...)."""
    frame = frame.assign(position=frame.groupby("id").cumcount() + 1)
    keys = ["id", "prompt", "model", "text", "human_story"]
    wide = frame.pivot(index=keys, columns="position", values=list(CRITERIA.values()))
    wide = wide.loc[frame.set_index(keys).index.unique()]  # the stories in their order, not sorted
    wide.columns = [f"r{position}_{column}" for column, position in wide.columns]
    return wide.reset_index()


def write_examples(folder: str | Path, seed: int = 2026) -> dict[str, Path]:
    """The example dataset (6 prompts x 4 systems x 3 raters) as wide.csv, long.csv and per_rater.jsonl."""
    folder = Path(folder)
    frame = rated_stories(seed, prompts=6, systems=SYSTEMS[:4], vocabulary=WORDS)
    paths = {name: folder / name for name in ("wide.csv", "long.csv", "per_rater.jsonl")}
    frame.to_csv(paths["wide.csv"], index=False, lineterminator="\n")
    long_layout(frame).to_csv(paths["long.csv"], index=False, lineterminator="\n")
    per_rater_layout(frame).to_json(paths["per_rater.jsonl"], orient="records", lines=True)
    return paths


CROWD_SYSTEMS = ("longform", "brief")  # planted: longform writes longer stories and is rated higher
CROWD_TASKS = {"Coherence": "coherence.csv", "Fluency": "fluency.csv", "Interestingness": "interestingness.csv"}
SHARED_WORKER = "W-ALL"  # the one worker who took all three tasks


def crowd_tasks(seed: int = 2026, prompts: int = 50, ratings: int = 3) -> dict[str, pd.DataFrame]:
    """A crowdsourcing export of the shape researchers collect: one task (file) per criterion, each with its own
    9-11 workers of whom one (SHARED_WORKER) took every task, `prompts` prompts x 2 systems, `ratings` ratings
    per story and criterion on 1-5, prompt ids but no prompt texts, no reference.

    Planted confound: longform's stories are longer and rated higher (+1 on every criterion), while within each
    system a story's length is drawn independently of its quality, so length tracks the ratings only through
    which system wrote the story."""
    rng = np.random.default_rng(seed)
    stories = []
    for prompt in range(prompts):
        for system, words, bonus in ((CROWD_SYSTEMS[0], 60, 1.0), (CROWD_SYSTEMS[1], 30, 0.0)):
            length = int(rng.integers(words - 12, words + 13))
            stories.append({"story_id": f"q{prompt:02d}-{system}", "prompt_id": f"q{prompt:02d}", "model": system,
                            "story": " ".join(rng.choice(WORDS, length)).capitalize() + ".",
                            "quality": 2.4 + bonus + rng.normal(0, 0.6)})
    tasks = {}
    for number, criterion in enumerate(CROWD_TASKS):
        workers = [SHARED_WORKER, *(f"W{number + 1}{index:02d}" for index in range(int(rng.integers(8, 11))))]
        severity = dict(zip(workers, rng.normal(0, 0.3, len(workers))))
        rows = []
        for story in stories:
            for worker in rng.choice(workers, ratings, replace=False):
                score = story["quality"] + severity[worker] + rng.normal(0, 0.5)
                rows.append({"HITId": f"H{number + 1}-{story['story_id']}", "WorkerId": worker,
                             **{f"Input.{key}": story[key] for key in ("story_id", "prompt_id", "model", "story")},
                             "Answer.rating": int(np.clip(np.rint(score), 1, 5))})
        tasks[criterion] = pd.DataFrame(rows)
    # The last task came from another export of the platform: its rating column has the task's own name.
    last = list(CROWD_TASKS)[-1]
    tasks[last] = tasks[last].rename(columns={"Answer.rating": f"Answer.{last.lower()}"})
    return tasks


def write_crowd(folder: str | Path, seed: int = 2026) -> dict[str, Path]:
    """`crowd_tasks` as one CSV per criterion under `folder` (config/examples/crowd/)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for criterion, frame in crowd_tasks(seed).items():
        paths[CROWD_TASKS[criterion]] = folder / CROWD_TASKS[criterion]
        frame.to_csv(paths[CROWD_TASKS[criterion]], index=False, lineterminator="\n")
    return paths


def writer_groups(seed: int = 2026, writers: int = 13, per_writer: int = 5) -> pd.DataFrame:
    """Thirteen writers, one prompt, five stories each, raters in five groups of two: group g rated story g of
    every writer (a workshop's design). One row per story and rater; Overall on 1-10.

    Planted: a writer's level (N(0, 1.2)) and each story's own quality (N(0, 0.6)) set the ratings; a story's
    length follows its writer's level only, so length ranks writers but not one writer's stories."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 1.2, writers)
    rows = []
    for writer in range(writers):
        for sample in range(per_writer):
            quality = level[writer] + rng.normal(0, 0.6)
            length = int(np.clip(80 + 20 * level[writer] + rng.normal(0, 15), 20, None))
            text = " ".join(rng.choice(WORDS, length)).capitalize() + "."
            for rater in range(2):
                score = int(np.clip(np.rint(5.5 + 1.5 * quality + rng.normal(0, 1.0)), 1, 10))
                rows.append({"story": f"writer{writer + 1:02d}-{sample + 1}", "writer": f"writer{writer + 1:02d}",
                             "prompt": "plan 7", "text": text, "annotator": f"group{sample + 1}-r{rater + 1}",
                             "overall": score})
    return pd.DataFrame(rows)


def annotator_slots(seed: int = 2026, stories: int = 483) -> pd.DataFrame:
    """One group of stories, each rated by 2-5 annotators whose ids are per-story slots (annot0 .. annot4, as
    releases with a list of scores per story have them). One row per story and slot; Coherence on 1-5.

    Planted: repetition (a story that repeats its words) goes with higher coherence here, against the declared
    direction of Repetition-1 (lower is better)."""
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(stories):
        quality = rng.normal(0, 1)
        pool = list(rng.choice(WORDS, int(np.clip(14 - 4 * quality + rng.normal(0, 3), 3, 30)), replace=False))
        text = " ".join(rng.choice(pool, 30)).capitalize() + "."
        for slot in range(int(rng.integers(2, 6))):
            score = int(np.clip(np.rint(3 + 0.8 * quality + rng.normal(0, 0.8)), 1, 5))
            rows.append({"id": f"s{index:03d}", "text": text, "annotator": f"annot{slot}", "coherence": score})
    return pd.DataFrame(rows)


def write_designs(folder: str | Path, seed: int = 2026) -> dict[str, Path]:
    """`writer_groups` and `annotator_slots` as groups.csv and slots.csv under `folder` (config/examples/)."""
    folder = Path(folder)
    paths = {"groups.csv": folder / "groups.csv", "slots.csv": folder / "slots.csv"}
    writer_groups(seed).to_csv(paths["groups.csv"], index=False, lineterminator="\n")
    annotator_slots(seed).to_csv(paths["slots.csv"], index=False, lineterminator="\n")
    return paths
