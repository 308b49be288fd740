"""SummaQA (Scialom et al. 2019) as SummEval computes it (Fabbri et al. 2021, `summ_eval/summa_qa_metric.py`
and `summa_qa_utils.py`): cloze questions from the source's named entities, answered by a QA model over the
summary.

Roles: HANNA marks SummaQA reference-based, so the source is the human story and the summary is the story.
- Questions (`QG_masked`): for every sentence of the human story and every named entity in it, the
  sentence with that entity's characters replaced by "MASKED"; the entity's text is the answer.
  No entity: both scores 0 (SummEval's convention).
- Answers (`QA_Bert.predict`): each (question, story) pair is encoded as [CLS] question [SEP] story [SEP],
  truncated "longest first" and padded to `max_seq_len` 384; start and end logits go through a softmax
  over all 384 positions (padding included, as the original), are multiplied by the token type ids
  (only the story's segment and its final [SEP] count), and the best start and best end are taken
  independently; the answer is the word pieces from start to end joined by spaces (`##` marks kept,
  empty when end < start) and its probability is p(start) * p(end).
- Scores: the mean probability over the questions (`summaqa_avg_prob`, column `summaqa`) and the mean
  SQuAD F1 of the answers against the entities (`summaqa_avg_fscore`, column `summaqa-f1`; answers
  normalised: lowercased, punctuation, articles and extra spaces removed).
HANNA released one SummaQA column; it is taken to be the probability: its values are continuous and
near 0.1 with a small spread for systems whose stories rarely contain the reference's entities,
where an F1 would be mostly 0.
Model (role `question_answering`): SummEval's bert-large-uncased-whole-word-masking-finetuned-squad, read
with that model's own tokenizer (SummEval loaded bert-base-uncased's, the same uncased WordPiece vocabulary).
Entities (`entities`): "spacy:<pipeline name or folder>" (SummEval: en_core_web_sm, its parser's sentences
and NER), or "capitalised", a stand-in that needs no model: sentences end at . ! or ?, and an entity is a
run of capitalised words less its leading stop words ("The", "I", ...).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics.base import Resource, check_texts, columns, defaults_of, describe, scores_frame
from storyeval.neural import models
from storyeval.text.stopwords import STOP_WORDS
from storyeval.text.tokenize import parts

NAME = "summaqa"
NEEDS = frozenset({"reference"})
COLUMNS = columns("model", "based", "SummaQA", "SummaQA-F1")
RESOURCE = Resource("model", "question_answering")
MASK = "MASKED"
SENTENCE = re.compile(r"[^.!?]+[.!?]*")
PUNCTUATION = frozenset(string.punctuation)
CAPITALISED = re.compile(r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")


def capitalised_entities(text: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """(sentence, [(start, end) of each entity in it]) by the "capitalised" stand-in (module docstring)."""
    out = []
    for match in SENTENCE.finditer(text):
        sentence = match.group().strip()
        if not sentence:
            continue
        spans = []
        for run in CAPITALISED.finditer(sentence):
            for word in re.finditer(r"\S+", run.group()):  # the run from its first word that is no stop word
                if word.group().lower() not in STOP_WORDS:
                    spans.append((run.start() + word.start(), run.end()))
                    break
        out.append((sentence, spans))
    return out


@lru_cache(maxsize=2)
def spacy_pipeline(name: str):
    try:
        import spacy

        return spacy.load(name)
    except (ImportError, OSError) as error:
        raise InputError(f"metric {NAME}: cannot load the spaCy pipeline {name!r} ({str(error).splitlines()[0]}); "
                         "fix: install it (python -m spacy download en_core_web_sm) or set "
                         f"metric_params.{NAME}.entities to capitalised") from error


def sentence_entities(doc) -> list[tuple[str, list[tuple[int, int]]]]:
    """Each sentence of a parsed `doc` and the character spans of the entities it holds whole (as spaCy's
    `Span.ents`, which scans every entity of the document for each sentence: quadratic, hours on a long story),
    in one pass over both."""
    entities, next_entity, found = list(doc.ents), 0, []
    for sent in doc.sents:
        spans = []
        while next_entity < len(entities) and entities[next_entity].start < sent.end:
            entity = entities[next_entity]
            if entity.start >= sent.start and entity.end <= sent.end:
                spans.append((entity.start_char - sent.start_char, entity.end_char - sent.start_char))
            next_entity += 1
        found.append((sent.text, spans))
    return found


def recogniser(entities: str):
    """The function text -> [(sentence, entity spans)] that `entities` names."""
    if entities == "capitalised":
        return capitalised_entities
    if entities.startswith("spacy:"):
        nlp = spacy_pipeline(entities.removeprefix("spacy:"))
        disabled = [pipe for pipe in ("tagger", "textcat") if pipe in nlp.pipe_names]  # as SummEval

        def spacy_entities(text: str) -> list[tuple[str, list[tuple[int, int]]]]:
            # a story over the parser's nlp.max_length is parsed in parts cut at line breaks (its memory: ~1 GB
            # per 100,000 characters); a shorter one is one part, parsed as it always was
            return [found for doc in nlp.pipe(parts(text, nlp.max_length), disable=disabled)
                    for found in sentence_entities(doc)]
        return spacy_entities
    raise InputError(f"metric {NAME}: entities {entities!r} is not 'capitalised' or 'spacy:<pipeline>'; "
                     f"fix: set metric_params.{NAME}.entities to one of them")


def cloze_questions(text: str, find_entities) -> tuple[list[str], list[str]]:
    """SummEval's QG_masked: one question per entity (its sentence with the entity masked) and its answer."""
    questions, answers = [], []
    for sentence, spans in find_entities(text):
        for start, end in spans:
            questions.append(sentence[:start] + MASK + sentence[end:])
            answers.append(sentence[start:end])
    return questions, answers


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in PUNCTUATION)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def f1_score(prediction: str, truth: str) -> float:
    """SQuAD's token F1 of two answers."""
    predicted, true = normalize_answer(prediction).split(), normalize_answer(truth).split()
    same = sum((Counter(predicted) & Counter(true)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(true)
    return 2 * precision * recall / (precision + recall)


def answer(loaded, questions: list[str], story: str, max_seq_len: int,
           batch_size: int) -> tuple[list[str], list[float]]:
    """QA_Bert.predict over batches: the answers (word pieces joined by spaces) and their probabilities."""
    import torch

    answers, probabilities = [], []
    for first in range(0, len(questions), batch_size):
        batch = questions[first:first + batch_size]
        encoded = loaded.tokenizer(batch, [story] * len(batch), max_length=max_seq_len, truncation="longest_first",
                                   padding="max_length", return_token_type_ids=True, return_tensors="pt")
        encoded = {key: value.to(loaded.device) for key, value in encoded.items()}
        with torch.no_grad():
            out = loaded.model(input_ids=encoded["input_ids"], token_type_ids=encoded["token_type_ids"],
                               attention_mask=encoded["attention_mask"])
        segment = encoded["token_type_ids"].float()
        start_values, start = (torch.softmax(out.start_logits.float(), -1) * segment).max(-1)  # first best, as topk(1)
        end_values, end = (torch.softmax(out.end_logits.float(), -1) * segment).max(-1)
        for ids, s, e in zip(encoded["input_ids"].tolist(), start.tolist(), end.tolist()):
            answers.append(" ".join(loaded.tokenizer.convert_ids_to_tokens(ids)[s:e + 1]))
        probabilities += (start_values * end_values).tolist()
    return answers, probabilities


def compute(texts: pd.DataFrame, *, model: str, entities: str = "spacy:en_core_web_sm", max_seq_len: int = 384,
            batch_size: int = 8, device: str | None = None, revision: str | None = None) -> pd.DataFrame:
    """Columns summaqa (mean answer probability) and summaqa-f1 (mean F1), see module docstring."""
    check_texts(texts, NEEDS, NAME)
    find_entities = recogniser(entities)
    loaded = models.load("question-answering", model, device, revision)
    models.check_window(loaded, max_seq_len, NAME, "max_seq_len")  # every pair is padded to max_seq_len
    rows = []
    for story, reference in zip(texts["story"], texts["reference"]):
        questions, truths = cloze_questions(reference, find_entities)
        if not questions:
            rows.append((0.0, 0.0))
            continue
        answers, probabilities = answer(loaded, questions, story, max_seq_len, batch_size)
        rows.append((float(np.mean(probabilities)), float(np.mean([f1_score(a, t) for a, t in zip(answers, truths)]))))
    values = np.array(rows, dtype=float).reshape(-1, 2)
    return scores_frame(texts["story_id"], {"summaqa": values[:, 0], "summaqa-f1": values[:, 1]})


@defaults_of(compute)
def signature(*, model: str, entities: str, max_seq_len: int, batch_size: int, device: str | None,
              revision: str | None) -> dict:
    packages = ["torch", "transformers"] + (["spacy"] if entities.startswith("spacy:") else [])
    return describe(NAME, packages, {"source": "reference", "summary": "story"},
                    {"entities": entities, "max_seq_len": max_seq_len}, model=models.identity(model, revision))
