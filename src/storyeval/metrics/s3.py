"""S3 (Peyrard, Botschen & Gurevych 2017): learned scores S3-Pyramid and S3-Responsiveness, as in SummEval.

Six features per story, named and ordered as S3's `extract_feature` (sorted names),
story = summary, human story = the one reference (SummEval's `s3_utils`, tokenize=True):
- ROUGE_1_R, ROUGE_2_R: ROUGE-N recall over lowercased `\\w+` words Snowball-stemmed;
- ROUGE_1_R_WE, ROUGE_2_R_WE: ROUGE-N-WE recall (`storyeval.metrics.rouge_we`, no stemming);
- JS_eval_1, JS_eval_2: Jensen-Shannon divergence (natural log) between the story's and
  the reference's relative frequencies of stemmed words without NLTK English stopwords
  (n = 1), resp. of bigrams with at least one non-stopword (n = 2). As in the original,
  the stopword test runs on stemmed words, and KL terms skip words absent on either side.
Each score is a regression model applied to the feature vector. The released models are
scikit-learn SVR pickles in S3's repository (`models/en/svr.pyr_score.en.pkl`,
`svr.responsiveness.en.pkl`, trained on TAC 2008/2009); they are not available offline
and no pip package ships them, so the model is a JSON file (`model_file`) holding, per
score, either {"kind": "linear", "coef", "intercept"} or {"kind": "svr", "kernel"
(linear|rbf|poly|sigmoid), "gamma", "coef0", "degree", "support_vectors", "dual_coef",
"intercept"}, plus the "features" order; `export_model` writes that form from a fitted
scikit-learn regressor (e.g. the released pickles, loaded where they are at hand).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics import rouge_we
from storyeval.metrics.base import check_texts, describe, safe_ratio, scores_frame
from storyeval.text.stopwords import STOP_WORDS

NAME = "s3"
NEEDS = frozenset({"reference"})
FEATURES = ("JS_eval_1", "JS_eval_2", "ROUGE_1_R", "ROUGE_1_R_WE", "ROUGE_2_R", "ROUGE_2_R_WE")
SCORES = {"pyramid": "s3-pyramid", "responsiveness": "s3-responsiveness"}
KERNELS = ("linear", "rbf", "poly", "sigmoid")



@lru_cache(maxsize=None)
def stem(word: str) -> str:
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english").stem(word)


def stems(text: str) -> list[str]:
    return [stem(word) for word in rouge_we.words(text)]


def rouge_recall(story: list[str], reference: list[str], n: int) -> float:
    """S3's rouge_n with alpha 0 (its value is the recall)."""
    matches = sum((rouge_we.ngram_counts(story, n) & rouge_we.ngram_counts(reference, n)).values())
    return float(safe_ratio(matches, max(len(reference) - n + 1, 0)))


def content_frequencies(tokens: list[str], n: int) -> dict:
    """Relative frequencies of stopword-free words (n = 1) or of n-grams with one non-stopword (n > 1)."""
    if n == 1:
        grams = [(w,) for w in tokens if w not in STOP_WORDS]
    else:
        grams = [g for g in (tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)) if any(w not in STOP_WORDS for w in g)]
    return {gram: count / len(grams) for gram, count in Counter(grams).items()}


def js_divergence(story: dict, reference: dict) -> float:
    average = {k: (story.get(k, 0.0) + reference.get(k, 0.0)) / 2 for k in story.keys() | reference.keys()}

    def kl(p: dict) -> float:
        return sum(f * math.log(f / average[w]) for w, f in p.items())

    return (kl(story) + kl(reference)) / 2


def features(texts: pd.DataFrame, *, embeddings: str) -> pd.DataFrame:
    """The six S3 features per story (columns FEATURES)."""
    check_texts(texts, NEEDS, NAME)
    plain = {c: [rouge_we.words(t) for t in texts[c]] for c in ("story", "reference")}
    stemmed = {c: [stems(t) for t in texts[c]] for c in ("story", "reference")}
    vectors = rouge_we.load_vectors(embeddings, {w for c in plain for tokens in plain[c] for w in tokens})
    rows = []
    for s, r, ps, pr in zip(stemmed["story"], stemmed["reference"], plain["story"], plain["reference"]):
        row = {f"JS_eval_{n}": js_divergence(content_frequencies(s, n), content_frequencies(r, n)) for n in (1, 2)}
        for n in (1, 2):
            row[f"ROUGE_{n}_R"] = rouge_recall(s, r, n)
            matches, reference_count, _ = rouge_we.rouge_n_we(ps, pr, vectors, n)
            row[f"ROUGE_{n}_R_WE"] = float(safe_ratio(matches, reference_count))
        rows.append([row[name] for name in FEATURES])
    return scores_frame(texts["story_id"], dict(zip(FEATURES, np.array(rows, dtype=float).reshape(-1, len(FEATURES)).T)))


def kernel(kind: str, x: np.ndarray, support: np.ndarray, gamma: float, coef0: float, degree: int) -> np.ndarray:
    """scikit-learn's kernels, [n, support vectors]."""
    if kind == "rbf":
        return np.exp(-gamma * ((x[:, None, :] - support[None, :, :]) ** 2).sum(-1))
    dot = x @ support.T
    return {"linear": dot, "poly": (gamma * dot + coef0) ** degree, "sigmoid": np.tanh(gamma * dot + coef0)}[kind]


def predict(model: dict, x: np.ndarray) -> np.ndarray:
    """A model of the JSON form (module docstring) applied to feature rows x."""
    if model["kind"] == "linear":
        return x @ np.asarray(model["coef"], dtype=float).ravel() + float(np.ravel(model["intercept"])[0])
    gram = kernel(model["kernel"], x, np.asarray(model["support_vectors"], dtype=float), float(model.get("gamma", 0.0)),
                  float(model.get("coef0", 0.0)), int(model.get("degree", 3)))
    return gram @ np.asarray(model["dual_coef"], dtype=float).ravel() + float(np.ravel(model["intercept"])[0])


def export_model(estimator) -> dict:
    """The JSON form of a fitted scikit-learn regressor: SVR (any kernel above) or a linear model (coef_, intercept_)."""
    if hasattr(estimator, "support_vectors_"):
        if estimator.kernel not in KERNELS:
            raise InputError(f"metric {NAME}: SVR kernel {estimator.kernel!r} is not one of {KERNELS}")
        return {"kind": "svr", "kernel": estimator.kernel, "gamma": float(getattr(estimator, "_gamma", estimator.gamma)),
                "coef0": float(estimator.coef0), "degree": int(estimator.degree),
                "support_vectors": estimator.support_vectors_.tolist(), "dual_coef": np.ravel(estimator.dual_coef_).tolist(),
                "intercept": float(np.ravel(estimator.intercept_)[0])}
    return {"kind": "linear", "coef": np.ravel(estimator.coef_).tolist(), "intercept": float(np.ravel(estimator.intercept_)[0])}


def load_models(model_file: str | Path) -> dict[str, dict]:
    path = Path(model_file)
    if not path.is_file():
        raise InputError(f"metric {NAME}: model file {path} does not exist; fix: export S3's released SVR models "
                         "with storyeval.metrics.s3.export_model, or disable S3")
    spec = json.loads(path.read_text())
    if tuple(spec.get("features", ())) != FEATURES:
        raise InputError(f"metric {NAME}: {path} 'features' must be {list(FEATURES)} (S3's order)")
    for score in SCORES:
        model = spec.get(score)
        if not isinstance(model, dict) or model.get("kind") not in ("linear", "svr") or (
                model["kind"] == "svr" and model.get("kernel") not in KERNELS):
            raise InputError(f"metric {NAME}: {path} lacks a valid '{score}' model "
                             f"(kind linear, or svr with a kernel in {KERNELS})")
    return {score: spec[score] for score in SCORES}


def compute(texts: pd.DataFrame, *, embeddings: str, model_file: str) -> pd.DataFrame:
    """Columns s3-pyramid, s3-responsiveness (see module docstring)."""
    models = load_models(model_file)
    x = features(texts, embeddings=embeddings).to_numpy()
    return scores_frame(texts["story_id"], {SCORES[score]: predict(model, x) for score, model in models.items()})


def signature(*, embeddings: str, model_file: str) -> dict:
    path = Path(model_file)
    return describe(NAME, ["nltk", "numpy"], {"summary": "story", "reference": "reference"}, {"features": list(FEATURES)},
                    embeddings=rouge_we.signature(embeddings=embeddings)["embeddings"],
                    model_file={"file": path.name,
                                "sha256": hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None})
