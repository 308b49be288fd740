"""Benchmark: each model-based metric's time per story on stand-ins of the paper's models (this machine's CPU),
and an estimate for the paper's models on one GPU, scaled by parameter count.

Stand-ins (tests/tiny_models.py): random weights, 32 wide, with the depth and window of the model of
config/paper.yaml they stand for, so that they read as many tokens as it does: bert-base-uncased (12 layers,
512 positions: encoder and masked LM), SBERT bert-large (24 layers, 512), bart-large-cnn (12 + 12 layers, 1024),
gpt2 (12 layers, 1024), BERT-large SQuAD (24 layers, 512), and 16-d word vectors. Each metric scores the stories of
hanna-llm's first prompt (the first --stories of its 7) with torch on --threads threads.
Estimate: a transformer's work per token grows with the parameters each token goes through (all but its input
embedding tables; a language-model head counts), so on this CPU the paper's model would take the stand-in's time
x params(paper) / params(stand-in), and on a GPU that x this CPU's measured float32 matmul rate / --gpu-tflops (the
rate assumed on the GPU; the metrics run in float32). Tiny models spend a larger share of their time outside
matrix products, so the estimate errs high. Metrics read from the embedding cache (BERTScore, MoverScore,
BaryScore, DepthScore, SUPERT) and from word vectors (ROUGE-WE, S3) run no model: their time is printed as
measured (theirs grows with the vector width and text length, not with the model).
Usage: python bench/bench_model_metrics.py [--mirror DIR] [--stories 7] [--threads 2] [--gpu-tflops 20]
       [--blanc-epochs 1]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the stand-in builders the tests use

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from storyeval.metrics import (  # noqa: E402
    bartscore,
    baryscore,
    bertscore,
    blanc,
    depthscore,
    infolm,
    moverscore,
    perplexity,
    rouge_we,
    s3,
    summaqa,
    supert,
)
from storyeval.neural.embeddings import encode_texts  # noqa: E402
from storyeval.text.datasets import load_hanna_llm  # noqa: E402

from tiny_models import tiny_bart, tiny_bert, tiny_gpt2  # noqa: E402

DEFAULT_MIRROR = REPO.parent / "shared" / "data" / "hanna"
S3_MIRROR = REPO.parent / "shared" / "data" / "s3"


def paper_configs() -> dict:
    """The transformers configs of config/paper.yaml's models (their published sizes), by stand-in."""
    from transformers import BartConfig, BertConfig, GPT2Config

    large = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096}
    return {
        "bert": ("bert-base-uncased", BertConfig()),
        "sbert": ("bert-large-nli-stsb-mean-tokens", BertConfig(**large)),
        "qa": ("bert-large-uncased-whole-word-masking-finetuned-squad", BertConfig(**large)),
        "bart": ("facebook/bart-large-cnn", BartConfig(vocab_size=50264, d_model=1024, encoder_layers=12,
                                                       decoder_layers=12, encoder_attention_heads=16,
                                                       decoder_attention_heads=16, encoder_ffn_dim=4096,
                                                       decoder_ffn_dim=4096, max_position_embeddings=1024)),
        "gpt2": ("gpt2", GPT2Config()),
    }


def per_token_parameters(model) -> int:
    """Parameters a token goes through: all but the input embedding tables (an output head tied to one counts)."""
    head = model.get_output_embeddings()
    tied = None if head is None else head.weight
    tables = sum(module.weight.numel() for module in model.modules()
                 if isinstance(module, torch.nn.Embedding) and module.weight is not tied)
    return sum(parameter.numel() for parameter in model.parameters()) - tables


def parameter_ratio(kind: str, architecture: str, folder: Path) -> tuple[str, float]:
    """(the paper's model, its per-token parameters / the stand-in's), both as the metric loads them."""
    name, config = paper_configs()[kind]
    model_class = getattr(transformers, architecture)
    with torch.device("meta"):  # sizes only, no memory
        paper = per_token_parameters(model_class(config))
    return name, paper / per_token_parameters(model_class.from_pretrained(folder))


def cpu_gflops(threads: int) -> float:
    """This machine's float32 matmul rate on `threads` threads (best of 5 products of 1024 x 1024 matrices)."""
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    best = min(timed(lambda: a @ b)[1] for _ in range(5))
    return 2 * 1024**3 / best / 1e9


def timed(work):
    start, cpu = time.perf_counter(), time.process_time()
    value = work()
    return value, time.perf_counter() - start, time.process_time() - cpu


def word_vectors(path: Path, texts) -> str:
    words = sorted({word for text in texts for word in re.findall(r"[a-z']+", text.lower())})
    vectors = np.random.default_rng(0).normal(size=(len(words), 16))
    rows = [f"{word} {' '.join(f'{x:.6f}' for x in vector)}" for word, vector in zip(words, vectors)]
    path.write_text(f"{len(words)} 16\n" + "\n".join(rows) + "\n")
    return str(path)


def run(args, folder: Path) -> list[tuple]:
    texts = load_hanna_llm(args.mirror / "hanna_llm_stories.csv").texts
    texts = texts[texts["prompt_id"] == 0].head(args.stories).reset_index(drop=True)
    n = len(texts)
    bert = tiny_bert(folder / "bert", layers=12, max_position=512)
    sbert = tiny_bert(folder / "sbert", layers=24, max_position=512, seed=1)
    qa = tiny_bert(folder / "qa", layers=24, max_position=512, seed=2, head="BertForQuestionAnswering")
    bart = tiny_bart(folder / "bart", layers=12, max_position=1024)
    gpt2 = tiny_gpt2(folder / "gpt2", n_positions=1024, layers=12)
    vectors = word_vectors(folder / "vectors.txt", [*texts["story"], *texts["reference"]])
    corpus = sorted(set(texts["story"]) | set(texts["reference"]) | set(texts["prompt"]))
    rows = []

    def model_metric(label, kind, architecture, path, work):
        _, wall, cpu = timed(work)
        rows.append((label, wall / n, cpu / n, *parameter_ratio(kind, architecture, path)))
        print(f"{label}: {wall:.1f} s", flush=True)

    def model_free(label, work):
        _, wall, cpu = timed(work)
        rows.append((label, wall / n, cpu / n, None, None))
        print(f"{label}: {wall:.1f} s", flush=True)

    cache = None

    def embed():
        nonlocal cache
        cache = encode_texts(corpus, bert, [8, 9, 10, 11, 12], batch_size=16)

    model_metric("embedding pass (encoder)", "bert", "BertModel", bert, embed)
    sentences = supert.required_texts(texts)
    sentence_cache = None

    def embed_sentences():
        nonlocal sentence_cache
        sentence_cache = encode_texts([*corpus, *sentences], sbert, [24], batch_size=16)

    model_metric("embedding pass (SUPERT sentences)", "sbert", "BertModel", sbert, embed_sentences)
    model_metric("InfoLM", "bert", "BertForMaskedLM", bert, lambda: infolm.compute(texts, model=str(bert)))
    epochs = {"finetune_epochs": args.blanc_epochs}
    model_metric(f"BLANC (5 variants, {args.blanc_epochs} tuning epochs)", "bert", "BertForMaskedLM", bert,
                 lambda: blanc.compute(texts, model=str(bert), options=epochs))
    model_metric("BARTScore (4 variants)", "bart", "BartForConditionalGeneration", bart,
                 lambda: bartscore.compute(texts, model=str(bart)))
    model_metric("perplexity", "gpt2", "GPT2LMHeadModel", gpt2, lambda: perplexity.compute(texts, model=str(gpt2)))
    model_metric("SummaQA", "qa", "BertForQuestionAnswering", qa,
                 lambda: summaqa.compute(texts, model=str(qa), entities="capitalised"))
    model_free("BERTScore from cache", lambda: bertscore.compute(texts, cache=cache, layer=8))
    model_free("MoverScore from cache", lambda: moverscore.compute(texts, cache=cache, layer=12))
    model_free("BaryScore from cache", lambda: baryscore.compute(texts, cache=cache))
    model_free("DepthScore from cache", lambda: depthscore.compute(texts, cache=cache, layer=9))
    model_free("SUPERT from cache", lambda: supert.compute(texts, cache=sentence_cache, layer=24))
    model_free("ROUGE-WE-3", lambda: rouge_we.compute(texts, embeddings=vectors))
    svr = {"pyramid_model": str(S3_MIRROR / "svr.pyr_score.en.pkl"),
           "responsiveness_model": str(S3_MIRROR / "svr.responsiveness.en.pkl")}
    model_free("S3", lambda: s3.compute(texts, embeddings=vectors, **svr))
    return rows


def report(rows: list[tuple], rate: float, gpu_tflops: float, n: int) -> None:
    print(f"{n} stories; float32 matmul on this CPU: {rate:.0f} GFLOP/s; GPU assumed at {gpu_tflops:.0f} TFLOP/s")
    print(f"{'metric':34s} {'wall s/story':>12s} {'CPU s/story':>11s} {'paper model':>34s} {'x params':>9s} "
          f"{'GPU s/story (est.)':>18s}")
    for label, wall, cpu, paper, ratio in rows:
        if paper is None:
            print(f"{label:34s} {wall:12.3f} {cpu:11.3f} {'(no model)':>34s}")
            continue
        gpu = wall * ratio * rate / (gpu_tflops * 1000)
        print(f"{label:34s} {wall:12.3f} {cpu:11.3f} {paper[-34:]:>34s} {ratio:9.0f} {gpu:18.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--stories", type=int, default=7, help="stories of hanna-llm's first prompt scored (1-7)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--blanc-epochs", type=int, default=1,
                        help="BLANC-Tune's epochs per summary (BLANC's default, 10, takes about 10x for the tune part)")
    parser.add_argument("--gpu-tflops", type=float, default=20.0,
                        help="float32 rate assumed on the GPU (an H100's peak is about 60; kernels reach a part)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()  # the stand-ins load into other heads: reports of unused weights
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, torch on {args.threads} threads")
    rate = cpu_gflops(args.threads)
    with tempfile.TemporaryDirectory() as folder:
        rows = run(args, Path(folder))
    report(rows, rate, args.gpu_tflops, args.stories)


if __name__ == "__main__":
    main()
