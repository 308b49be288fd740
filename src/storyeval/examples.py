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
