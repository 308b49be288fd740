"""SummaQA: cloze questions by hand (both entity recognisers), SQuAD F1 by hand, and the scores of a tiny random
QA model against a line-by-line port of SummEval's QA_Metric (its batching, padding and top-1 spans)."""

import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch

from storyeval.errors import InputError
from storyeval.metrics import summaqa

from tiny_models import one_thread, tiny_bert_qa

REFERENCE = "Anna met Bob in New York. It rained on the Old Bridge! I smiled."
TEXTS = pd.DataFrame({
    "story_id": ["s0", "s1", "s2"],
    "story": ["Anna met Bob in New York and they walked to the Old Bridge. " * 6, "Bob slept all day.",
              "Nothing here."],
    "reference": [REFERENCE, "Bob went to York with Anna. Then Carl came.", "it was quiet. nobody came."]})

thread = pytest.fixture(autouse=True)(one_thread)


@pytest.fixture(scope="module")
def qa_model(tmp_path_factory):
    words = {w.lower() for text in [*TEXTS["story"], *TEXTS["reference"]] for w in re.findall(r"\w+", text)}
    return str(tiny_bert_qa(tmp_path_factory.mktemp("qa"), sorted(words)))


def test_capitalised_cloze_questions():
    questions, answers = summaqa.cloze_questions(REFERENCE, summaqa.recogniser("capitalised"))
    assert answers == ["Anna", "Bob", "New York", "Old Bridge"]  # "It" and "I" are stop words
    assert questions == ["MASKED met Bob in New York.", "Anna met MASKED in New York.", "Anna met Bob in MASKED.",
                         "It rained on the MASKED!"]


def test_spacy_cloze_questions(tmp_path):
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "GPE", "pattern": "New York"},
                                               {"label": "PERSON", "pattern": "Bob"}])
    nlp.to_disk(tmp_path / "pipeline")
    questions, answers = summaqa.cloze_questions(REFERENCE, summaqa.recogniser(f"spacy:{tmp_path / 'pipeline'}"))
    assert answers == ["Bob", "New York"]
    assert questions == ["Anna met MASKED in New York.", "Anna met Bob in MASKED."]
    with pytest.raises(InputError, match="cannot load the spaCy pipeline"):
        summaqa.recogniser(f"spacy:{tmp_path / 'absent'}")
    with pytest.raises(InputError, match="is not 'capitalised' or 'spacy:<pipeline>'"):
        summaqa.recogniser("regex")


def test_f1_by_hand():
    assert summaqa.f1_score("the Big  Apple!", "big apple") == 1.0
    assert summaqa.f1_score("new york city", "New York") == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))
    assert summaqa.f1_score("john ##son", "Johnson") == 0.0  # word pieces are compared as SummEval joins them
    assert summaqa.f1_score("", "Bob") == 0.0


def summeval_compute(tokenizer, model, questions, true_answers, text, max_seq_len, batch_size=8):
    """SummEval's QA_Metric.compute with QA_Bert.predict, ported line by line (encode_plus per question, batches
    of 8, softmax * token types, topk(1), ' '.join of the pieces)."""
    if not questions:
        return 0, 0
    # encode_plus (removed in transformers 5) is the tokenizer's call on one pair
    rows = [tokenizer(q, text, max_length=max_seq_len, padding="max_length", truncation=True,
                      return_token_type_ids=True) for q in questions]
    answers, probs = [], []
    for first in range(0, len(rows), batch_size):
        batch = rows[first:first + batch_size]
        input_ids = torch.tensor([ex["input_ids"] for ex in batch])
        token_type_ids = torch.tensor([ex["token_type_ids"] for ex in batch])
        attention_mask = torch.tensor([ex["attention_mask"] for ex in batch])
        with torch.no_grad():
            outputs = model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
        start_scores = torch.nn.functional.softmax(outputs.start_logits, -1) * token_type_ids.float()
        end_scores = torch.nn.functional.softmax(outputs.end_logits, -1) * token_type_ids.float()
        start_values, start_indices = start_scores.topk(1)
        end_values, end_indices = end_scores.topk(1)
        for idx, (ids, s, e) in enumerate(zip(input_ids, start_indices, end_indices)):
            answers.append(" ".join(tokenizer.convert_ids_to_tokens(ids)[s[0]:e[0] + 1]))
            probs.append((start_values[idx][0] * end_values[idx][0]).item())

    def f1(prediction, truth):
        def norm(s):
            s = "".join(ch for ch in s.lower() if ch not in set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"))
            return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())
        common = Counter(norm(prediction).split()) & Counter(norm(truth).split())
        same = sum(common.values())
        if same == 0:
            return 0
        p, r = same / len(norm(prediction).split()), same / len(norm(truth).split())
        return 2 * p * r / (p + r)

    return sum(probs) / len(questions), sum(f1(a, t) for a, t in zip(answers, true_answers)) / len(questions)


def test_scores_equal_summevals_port(qa_model):
    from transformers import AutoTokenizer, BertForQuestionAnswering

    scores = summaqa.compute(TEXTS, model=qa_model, entities="capitalised", max_seq_len=48, batch_size=3)
    assert list(scores.columns) == ["summaqa", "summaqa-f1"]
    tokenizer = AutoTokenizer.from_pretrained(qa_model)
    model = BertForQuestionAnswering.from_pretrained(qa_model).eval()
    find = summaqa.recogniser("capitalised")
    expected = [summeval_compute(tokenizer, model, *summaqa.cloze_questions(r, find), s, 48)
                for s, r in zip(TEXTS["story"], TEXTS["reference"])]
    np.testing.assert_allclose(scores.to_numpy(), np.array(expected, dtype=float), rtol=1e-6, atol=1e-9)
    assert scores.loc["s2"].tolist() == [0.0, 0.0]  # no entity in the reference: no question
    assert (scores["summaqa"].iloc[:2] > 0).all() and (scores.to_numpy() <= 1).all()
    # the softmax runs over the padding too (as SummEval): a longer padding lowers every probability
    longer = summaqa.compute(TEXTS.iloc[[1]], model=qa_model, entities="capitalised", max_seq_len=96)
    assert longer.loc["s1", "summaqa"] < scores.loc["s1", "summaqa"]
    with pytest.raises(InputError, match="max_seq_len 384 exceeds the 128-position window"):
        summaqa.compute(TEXTS, model=qa_model, entities="capitalised")
    signature = summaqa.signature(model=qa_model, entities="capitalised")
    assert signature["parameters"] == {"entities": "capitalised", "max_seq_len": 384}


def test_answers_scored_by_hand(qa_model):
    """Start and end logits forced to fall with the position: every answer is the story's first word piece, so
    the F1 is the share of the reference's entities that are that word."""
    from storyeval.neural import models

    loaded = models.load("question-answering", qa_model)
    def ramp(module, inputs, output):
        return 0 * output - 0.05 * torch.arange(output.shape[1])[None, :, None]

    hook = loaded.model.qa_outputs.register_forward_hook(ramp)
    try:
        scores = summaqa.compute(TEXTS, model=qa_model, entities="capitalised", max_seq_len=48)
        first = summaqa.answer(loaded, ["MASKED met Bob in New York."], TEXTS["story"][0], 48, 8)
    finally:
        hook.remove()
    # s0: Anna of Anna, Bob, New York, Old Bridge; s1: Bob of Bob, York, Anna, Carl
    assert scores["summaqa-f1"].tolist() == [0.25, 0.25, 0.0]
    # "[CLS] masked met bob in new york . [SEP]" puts the answer at position 9, p = softmax(ramp)[9] for start and end
    p = torch.softmax(-0.05 * torch.arange(48.0), 0)
    assert first == (["anna"], [pytest.approx(float(p[9] ** 2), rel=1e-5)])


def test_workflow_scores_summaqa_with_the_configured_role(tmp_path, qa_model, hanna_mirror):
    from workflow_helpers import make_workdir, run_snakemake

    target = "results/hanna-llm/computed/scores/summaqa@tiny-qa.parquet"
    workdir = make_workdir(tmp_path / "work", **{"models.question_answering": {"name": "tiny-qa", "path": qa_model},
                                        "metric_params.summaqa": {"entities": "capitalised", "max_seq_len": 128},
                                        "datasets.hanna-llm.max_prompts": 1})
    run = run_snakemake(workdir, "--cores", "1", target)
    assert run.returncode == 0, run.stderr[-3000:]
    scores = pd.read_parquet(workdir / target)
    assert len(scores) == 7 and np.isfinite(scores[["summaqa", "summaqa-f1"]].to_numpy()).all()
    disabled = run_snakemake(make_workdir(tmp_path / "default"), "-n")
    assert disabled.returncode == 0 and "summaqa@" not in disabled.stdout
