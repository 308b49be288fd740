"""The text metrics storyeval computes: module, needed texts, and HANNA's released label per variant.

A metric's score columns are the slugs of HANNA's released labels
(`storyeval.data.registry.slugify("ROUGE-1 Recall") == "rouge-1-recall"`), so
computed scores register under the same slugs as the released ones and can be
compared with them column by column. Modules are imported only on `load`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from storyeval.errors import InputError
from storyeval.learned.data import ASPECTS

ROUGE_VARIANTS = {"1": "ROUGE-1", "2": "ROUGE-2", "3": "ROUGE-3", "4": "ROUGE-4", "l": "ROUGE-L",
                  "w-1.2": "ROUGE-W-1.2", "s-star": "ROUGE-S*", "su-star": "ROUGE-SU*"}
ROUGE_MEASURES = {"recall": "Recall", "precision": "Precision", "f-score": "F-Score"}
DATASTATS = {"coverage": "Coverage", "density": "Density", "compression": "Compression", "text-length": "Text length",
             **{f"novelty-{n}": f"Novelty-{n}" for n in (1, 2, 3)},
             **{f"repetition-{n}": f"Repetition-{n}" for n in (1, 2, 3)}}


@dataclass(frozen=True)
class Entry:
    module: str
    needs: frozenset[str]
    released: dict[str, str]  # score column (slug) -> HANNA's released label
    # What a neural metric reads, as (keyword of compute(), config role): the shared embedding
    # cache of an encoder ("cache"), a model ("model"), a word-embedding file ("embeddings"), or a
    # model file the workflow trains on the role's encoder ("model_file": the StoryER-style evaluator).
    resource: tuple[str, str] | None = None


# Columns HANNA did not release: label, reference, family, direction (registry layout).
NEW_COLUMNS = {
    "perplexity": ("Perplexity", "free", "model", "lower"),
    # the learned evaluator (metrics/storyer.py): preference score, then the predicted 1-5 rating of each aspect
    "storyer-preference": ("StoryER preference", "free", "model", "higher"),
    **{f"storyer-aspect-{k}": (f"StoryER rating {k}: {name}", "free", "model", "higher")
       for k, name in enumerate(ASPECTS, start=1)},
}
BARYSCORE_REGS = ["10", "5", "1", "0.5", "0.1", "0.01", "0.001"]


CATALOG: dict[str, Entry] = {
    "bleu": Entry("storyeval.metrics.bleu", frozenset({"reference"}), {"bleu": "BLEU"}),
    "rouge": Entry("storyeval.metrics.rouge", frozenset({"reference"}), {
        f"rouge-{variant}-{measure}": f"{label} {measure_label}"
        for variant, label in ROUGE_VARIANTS.items() for measure, measure_label in ROUGE_MEASURES.items()
    }),
    "meteor": Entry("storyeval.metrics.meteor", frozenset({"reference"}), {"meteor": "METEOR"}),
    "chrf": Entry("storyeval.metrics.chrf", frozenset({"reference"}), {"chrf": "chrF"}),
    "cider": Entry("storyeval.metrics.cider", frozenset({"reference"}), {"cider": "CIDEr"}),
    "datastats": Entry("storyeval.metrics.datastats", frozenset({"prompt"}), DATASTATS),
    "bertscore": Entry("storyeval.metrics.bertscore", frozenset({"reference"}), {
        "bertscore-precision": "BERTScore Precision", "bertscore-recall": "BERTScore Recall", "bertscore-f1": "BERTScore F1",
    }, ("cache", "encoder")),
    "moverscore": Entry("storyeval.metrics.moverscore", frozenset({"reference"}), {"moverscore": "MoverScore"}, ("cache", "encoder")),
    "baryscore": Entry("storyeval.metrics.baryscore", frozenset({"reference"}), {
        "baryscore-w": "BaryScore-W", **{f"baryscore-sd-{reg}": f"BaryScore-SD-{reg}" for reg in BARYSCORE_REGS},
    }, ("cache", "encoder")),
    "depthscore": Entry("storyeval.metrics.depthscore", frozenset({"reference"}), {"depthscore": "DepthScore"}, ("cache", "encoder")),
    "supert": Entry("storyeval.metrics.supert", frozenset({"prompt", "reference"}), {
        "supert-ps": "SUPERT-PS", "supert-ss": "SUPERT-SS", "supert-golden": "SUPERT-Golden",
    }, ("cache", "sentence_encoder")),
    "bartscore": Entry("storyeval.metrics.bartscore", frozenset({"prompt", "reference"}), {
        f"bartscore-{v}": f"BARTScore-{v.upper()}" for v in ("ps", "sp", "sh", "hs")}, ("model", "seq2seq")),
    "infolm": Entry("storyeval.metrics.infolm", frozenset({"reference"}), {
        "infolm-fisherrao": "InfoLM-FisherRao", "infolm-r-fisherrao": "InfoLM-R-FisherRao",
        "infolm-sim-fisherrao": "InfoLM-Sim-FisherRao"}, ("model", "masked_lm")),
    "blanc": Entry("storyeval.metrics.blanc", frozenset({"prompt", "reference"}), {
        "blanc-help-ps": "BLANC-Help-PS", "blanc-tune-ps": "BLANC-Tune-PS", "blanc-help-ss": "BLANC-Help-SS",
        "blanc-tune-ss": "BLANC-Tune-SS", "blanc-golden": "BLANC-Golden"}, ("model", "masked_lm")),
    "perplexity": Entry("storyeval.metrics.perplexity", frozenset(), {}, ("model", "causal_lm")),
    "rouge-we": Entry("storyeval.metrics.rouge_we", frozenset({"reference"}), {
        f"rouge-we-3-{m}": f"ROUGE-WE-3 {label}" for m, label in ROUGE_MEASURES.items()}, ("embeddings", "word_embeddings")),
    "storyer": Entry("storyeval.metrics.storyer", frozenset(), {}, ("model_file", "sentence_encoder")),
    # the prompt-free subset of datastats, for datasets without prompts
    "textstats": Entry("storyeval.metrics.textstats", frozenset(), {
        column: DATASTATS[column] for column in ["text-length", "repetition-1", "repetition-2", "repetition-3"]
    }),
}


def entry(name: str) -> Entry:
    if name not in CATALOG:
        raise InputError(f"unknown text metric {name!r}; fix: use one of {', '.join(CATALOG)}")
    return CATALOG[name]


def load(name: str) -> ModuleType:
    """The metric's module (NAME, NEEDS, compute, signature)."""
    return importlib.import_module(entry(name).module)


def applicable(name: str, columns_present: set[str]) -> bool:
    """Whether a dataset that has the text columns `columns_present` (e.g. {"story", "prompt"}) can be scored."""
    return entry(name).needs <= columns_present


def parameters(name: str) -> set[str]:
    """The keyword parameters a metric's compute() accepts (read from its source, without importing heavy modules)."""
    import inspect

    return {key for key, parameter in inspect.signature(load(name).compute).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY}


def registry_rows() -> dict[str, tuple[str, str, str, str]]:
    """Registry rows of computed columns that HANNA's released file does not have."""
    return dict(NEW_COLUMNS)
