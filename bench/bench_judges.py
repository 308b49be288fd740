"""Benchmark: an LLM judge's prompts and prompt tokens per second (mode expected: one forward pass per story and
criterion) and the answer cache's hit rate on a rerun, on this machine's CPU, with a stand-in of a 7B judge's
depth, and an estimate for the real 7B judge on a GPU.

Stand-in: a Mistral architecture (transformers MistralForCausalLM) with Mistral-7B's depth (32 layers), grouped
query attention (4 query heads per key-value head) and 32k vocabulary, its width scaled down 16x (hidden 256,
MLP 896), random weights; its tokenizer a byte-level BPE of 32k tokens trained on the stories it rates, so that
prompts are about as many tokens as a 32k-vocabulary judge reads. It rates the stories of hanna-llm's first
--prompts prompts on HANNA's six criteria with template tacl-1 (storyeval.judges.rate), --threads torch threads.
Estimate (printed as such): a forward pass costs about 2 x non-embedding parameters FLOPs per prompt token (plus
attention, small at these lengths), so the real 7B judge runs --gpu-tflops x 1e12 / (2 x 7.0e9) tokens per second
on a GPU that sustains --gpu-tflops in bfloat16 (H100: about 990 dense peak; 300-400 is a usual sustained prefill
rate), and HANNA's 1,056 stories x 6 criteria take their tokens (measured on the stand-in's prompts, scaled to 1,056
stories) divided by that rate. --mode pairwise compares the prompt's stories in pairs (template pairwise, both
orders, storyeval.judges.pairwise) and scales by the prompts HANNA's pairs take (HANNA_PAIRS x 2 orders x 6).
Usage: python bench/bench_judges.py [--mirror DIR] [--prompts 1] [--threads 2] [--gpu-tflops 350] [--mode pairwise]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

import torch  # noqa: E402

from storyeval.judges.prompts import hanna_criteria, load_template  # noqa: E402
from storyeval.judges.rate import Settings, load_judge, rate  # noqa: E402
from storyeval.text.datasets import load_hanna_llm  # noqa: E402

DEFAULT_MIRROR = REPO.parent / "shared" / "data" / "hanna"
PARAMS_7B = 7.0e9  # Mistral-7B's non-embedding parameters, about (7.24e9 in all, 2 x 131M in embeddings and head)
HANNA_STORIES = 1056
HANNA_PAIRS = 3135  # pairs: auto on HANNA's 96 prompts x 11 stories (docs/judges.md, Pairwise judges)


def stand_in(folder: Path, corpus: list[str]) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import MistralConfig, MistralForCausalLM, PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=32000, special_tokens=["</s>"], show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="</s>", pad_token="</s>")
    config = MistralConfig(vocab_size=len(tokenizer), hidden_size=256, intermediate_size=896, num_hidden_layers=32,
                           num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=8192,
                           eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    MistralForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--prompts", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--gpu-tflops", type=float, default=350.0)
    parser.add_argument("--mode", choices=["expected", "pairwise"], default="expected")
    args = parser.parse_args()
    settings, template = Settings(mode=args.mode), load_template("tacl-1" if args.mode == "expected" else "pairwise")
    torch.set_num_threads(args.threads)
    texts = load_hanna_llm(args.mirror / "hanna_llm_stories.csv").texts
    stories = texts[texts["prompt_id"] < args.prompts]
    with tempfile.TemporaryDirectory() as tmp:
        folder = stand_in(Path(tmp) / "stand-in", list(texts["story"]) + list(texts["prompt"]))
        model, _ = load_judge("stand-in", str(folder), "cpu")
        params = sum(p.numel() for name, p in model.named_parameters() if "embed" not in name and "lm_head" not in name)
        rate(stories.head(2), {"Coherence": "warm-up"}, template, folder, settings, device="cpu", key="stand-in")
        cache = Path(tmp) / "answers.sqlite"
        start = time.perf_counter()
        _, details, run = rate(stories, hanna_criteria(), template, folder, settings, device="cpu", key="stand-in",
                               cache=cache)
        seconds = time.perf_counter() - start
        start = time.perf_counter()  # the same job again: every answer from the cache
        _, _, rerun = rate(stories, hanna_criteria(), template, folder, settings, device="cpu", key="stand-in",
                           cache=cache)
        cached_seconds = time.perf_counter() - start
    rate_cpu = run["prompt_tokens"] / seconds
    hits = rerun["cached"] / (rerun["cached"] + rerun["forward_passes"])
    print(f"stand-in: 32 layers x 256 wide, {params / 1e6:.1f} M non-embedding parameters, {args.threads} threads")
    asked = f"{run['pairs']} pairs x 2 orders" if args.mode == "pairwise" else f"{len(stories)} stories"
    print(f"{asked} x 6 criteria: {run['forward_passes']} forward passes, {run['prompt_tokens']} "
          f"prompt tokens (mean {details['prompt_tokens'].mean():.0f}) in {seconds:.1f} s: {rate_cpu:,.0f} tokens/s "
          "on this CPU")
    total = rerun["cached"] + rerun["forward_passes"]
    print(f"{run['forward_passes'] / seconds:.2f} prompts/s; the rerun: cache hit rate {hits:.0%}, "
          f"{cached_seconds:.1f} s ({total / cached_seconds:,.0f} prompts/s, prompts built and looked up)")
    print(f"the real 7B on this CPU, scaled by parameters (estimate): {rate_cpu * params / PARAMS_7B:,.1f} tokens/s")
    gpu_rate = args.gpu_tflops * 1e12 / (2 * PARAMS_7B)
    hanna_prompts = (2 * HANNA_PAIRS if args.mode == "pairwise" else HANNA_STORIES) * 6
    hanna_tokens = run["prompt_tokens"] / run["forward_passes"] * hanna_prompts
    print(f"estimate, a 7B judge on a GPU sustaining {args.gpu_tflops:g} bf16 TFLOPS: {gpu_rate:,.0f} tokens/s; HANNA "
          f"({hanna_prompts:,} prompts, about {hanna_tokens / 1e6:.1f} M tokens a template): "
          f"{hanna_tokens / gpu_rate / 60:.1f} min a template")


if __name__ == "__main__":
    sys.exit(main())
