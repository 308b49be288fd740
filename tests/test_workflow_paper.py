"""The paper's configuration end to end: config/paper.yaml with every model role pointed at a stand-in of the
paper's architecture (random weights, tiny width, the paper's depths where a layer setting depends on it), run on
one hanna-llm prompt (7 stories); every one of HANNA's 72 released columns comes out finite, merged and correlated."""

import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from storyeval.datasets import metric_names

from conftest import REPO
from tiny_models import tiny_bart, tiny_bert, tiny_gpt2
from workflow_helpers import make_workdir, run_snakemake

PROMPTS = 1  # 7 stories: the 6 LLMs' and the human reference
BASE = "results/hanna-llm/computed"
# A made-up commit hash each stand-in folder records (.revision) and the overrides pin: the revision check runs.
REVISION = "0123456789abcdef0123456789abcdef01234567"


def pinned(name, path):
    (path / ".revision").write_text(REVISION + "\n")
    return {"name": name, "path": str(path), "revision": REVISION}


def word_vectors(path, texts, dims=16, seed=0):
    """A word2vec text file of random vectors for the stories' lower-cased words (the paper: 300-d deps.words)."""
    words = sorted({word for text in texts for word in re.findall(r"[a-z']+", text.lower())})
    vectors = np.random.default_rng(seed).normal(size=(len(words), dims))
    rows = [f"{word} {' '.join(f'{x:.6f}' for x in vector)}" for word, vector in zip(words, vectors)]
    path.write_text(f"{len(words)} {dims}\n" + "\n".join(rows) + "\n")
    return {"name": "tiny-vectors", "path": str(path)}


def stand_ins(folder, texts):
    """Every role of config/paper.yaml on a stand-in: bert-base as the encoder (12 layers: BERTScore 8, DepthScore
    9, BaryScore 8-12) and as the masked LM (2 layers: InfoLM and BLANC set no layer, and BLANC fine-tunes it once
    per summary), SBERT bert-large (24 layers: SUPERT's layer 24), BART, GPT-2, a BERT QA model, word vectors."""
    return {
        "encoder": pinned("tiny-bert", tiny_bert(folder / "bert", layers=12)),
        "masked_lm": pinned("tiny-mlm", tiny_bert(folder / "mlm", seed=3)),
        "sentence_encoder": {**pinned("tiny-sbert", tiny_bert(folder / "sbert", layers=24, seed=1)), "layers": [24]},
        "seq2seq": pinned("tiny-bart", tiny_bart(folder / "bart", max_position=1024)),  # BARTScore's max_length
        "causal_lm": pinned("tiny-gpt2", tiny_gpt2(folder / "gpt2")),
        "question_answering": pinned("tiny-qa", tiny_bert(folder / "qa", head="BertForQuestionAnswering", seed=2,
                                                          max_position=512)),  # SummaQA pads to 384
        "word_embeddings": word_vectors(folder / "vectors.txt", texts),
    }


@pytest.mark.slow
def test_paper_config_computes_hannas_72_columns(tmp_path, hanna_mirror, hanna_llm_texts, released):
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    # the entry as paper.yaml leaves it (it runs the metrics config.yaml skips on hanna-llm)
    entry = {**yaml.safe_load((REPO / "config.yaml").read_text())["datasets"]["hanna-llm"],
             **paper["datasets"]["hanna-llm"]}
    # storyer is not a HANNA column; tests/test_workflow_storyer.py runs it
    metrics = [metric for metric in metric_names(entry, "hanna-llm") if metric != "storyer"]
    texts = hanna_llm_texts[hanna_llm_texts["prompt_id"] < PROMPTS]
    overrides = {
        "models": stand_ins(tmp_path / "models", [*texts["story"], *texts["reference"].dropna()]),
        "metric_params": {
            "summaqa": {"entities": "capitalised"},  # spaCy's en_core_web_sm needs a download
            "blanc": {"options": {"finetune_epochs": 1}},  # BLANC-Tune's 10 epochs a summary: minutes here
            "infolm": {"max_length": 128},  # the masked LM's window: InfoLM runs it once per token of a text
        },
        "datasets": {"hanna-llm": {"max_prompts": PROMPTS, "metrics": metrics}},
        "device": "cpu",  # named, so that every model job is handed a device
    }
    workdir = make_workdir(tmp_path / "work")
    (workdir / "stand-ins.yaml").write_text(yaml.safe_dump(overrides))
    assert set(paper["models"]) | {"word_embeddings"} == set(overrides["models"])  # every role of the paper's
    run = run_snakemake(workdir, "--cores", "2", f"{BASE}/scores.parquet", f"{BASE}/correlations.csv",
                        "--configfile", "config.yaml", str(REPO / "config/paper.yaml"), "stand-ins.yaml")
    assert run.returncode == 0, run.stderr[-4000:]

    scores = pd.read_parquet(workdir / BASE / "scores.parquet")
    table = scores.pivot(index="story_id", columns="metric", values="value")
    columns = list(released.registry["slug"])
    assert len(columns) == 72 and not set(columns) - set(table.columns), sorted(set(columns) - set(table.columns))
    assert len(table) == 7 * PROMPTS
    assert np.isfinite(table[columns].to_numpy()).all(), table[columns].columns[~np.isfinite(table[columns]).all()]
    assert set(columns) <= set(pd.read_csv(workdir / BASE / "metrics.csv")["slug"])  # merged: in the registry
    correlations = pd.read_csv(workdir / BASE / "correlations.csv")
    assert not set(columns) - set(correlations["x"]) - set(correlations["y"])
    # A column constant over the stories has no correlation (NaN); every other one has a finite r. Constant
    # here: CIDEr (one prompt, so one reference document: every n-gram's idf is log(1/1) = 0) and BLANC (a random
    # masked LM predicts no masked token, tuned or not).
    varying = [column for column in columns if table[column].nunique() > 1]
    correlated = correlations[np.isfinite(correlations["r"])]
    assert not set(varying) - set(correlated["x"]) - set(correlated["y"])
    signature = (workdir / BASE / "scores/bartscore@tiny-bart.signature.json").read_text()
    assert json.loads(signature)["model"]["revision"] == REVISION
