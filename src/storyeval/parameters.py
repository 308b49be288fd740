"""The type and range of every metric and judge parameter a user can set: config `metric_params.<metric>` and
`judges`, and `storyeval.api.score(..., **params)` and `judge(...)`. One table, JSON-schema fragments: the API
checks its arguments against them (`check`), and workflow/schemas/config.schema.yaml holds the same fragments
(tests/test_metrics_catalog.py compares them), so a value refused in one place is refused in the other, before
any computation.

Bounds: orders of n-grams at most 20 (chrF and BLEU use 6 and 4; an order beyond the longest word or sentence
only adds empty n-gram tables, and chrF's char_order=10**9 grew to 2.45 GB before dying); counts of passes,
iterations and directions well above any published setting, and below what would run for days; a judge answer
of at most 4096 new tokens (a rating with a few sentences of explanation needs under 300; each new token is a
forward pass).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import jsonschema

from storyeval.errors import InputError
from storyeval.metrics import bartscore, baryscore, blanc, infolm, supert
from storyeval.neural.ot import INITS, SOLVERS


def integer(low: int, high: int | None = None, null: bool = False) -> dict:
    return {"type": ["integer", "null"] if null else "integer", "minimum": low,
            **({} if high is None else {"maximum": high})}


def number(low: float, high: float | None = None, exclusive: bool = False) -> dict:
    return {"type": "number", "exclusiveMinimum" if exclusive else "minimum": low,
            **({} if high is None else {"maximum": high})}


def choice(*values: str) -> dict:
    return {"type": "string", "enum": list(values)}


def some_of(*values: str) -> dict:
    return {"type": "array", "items": {"type": "string", "enum": list(values)}, "minItems": 1, "uniqueItems": True}


BOOLEAN = {"type": "boolean"}
ORDER = integer(1, 20)  # an n-gram order (see the module docstring)
LAYER = integer(1, 1000, null=True)  # an encoder layer; null: the last (the model's depth is checked when loaded)
PROCESSES = integer(1, 1024)
BATCH = integer(1, 4096)
TOKENS = integer(1, 1_000_000)  # padded tokens per forward pass
LENGTH = integer(1, 1_000_000)  # a model window in tokens
DEVICE = {"type": ["string", "null"], "pattern": "^(auto|cpu|cuda(:[0-9]+)?)$",
          "description": "auto, cpu, cuda or cuda:<n>, or null"}
REVISION = {"type": ["string", "null"], "pattern": "^[0-9a-f]{40}$",
            "description": "a hub commit (40 hex digits) or null"}
PATH = {"type": ["string", "null"]}
SEED = integer(0, 2**32 - 1)
SHARE = number(0, 1)
MODEL_RUN = {"device": DEVICE, "revision": REVISION}

METRICS: dict[str, dict[str, dict]] = {
    "bartscore": {"variants": some_of(*bartscore.VARIANTS), "max_length": LENGTH, "batch_size": BATCH,
                  "max_tokens": TOKENS, **MODEL_RUN},
    "baryscore": {"layers": {"type": ["array", "null"], "items": integer(1, 1000), "minItems": 1},
                  "idf": choice(*baryscore.IDF), "swap_idf": BOOLEAN,
                  "regularisations": {"type": "array", "items": number(0, 1000, exclusive=True), "minItems": 1},
                  "sinkhorn": choice(*baryscore.SINKHORN), "solver": choice(*SOLVERS), "init": choice(*INITS),
                  "max_iterations": integer(1, 1_000_000), "stop_threshold": number(0, 1, exclusive=True),
                  "tolerance": number(0, 1, exclusive=True), "processes": PROCESSES},
    "bertscore": {"layer": LAYER, "idf": BOOLEAN},
    "blanc": {"variants": some_of(*blanc.VARIANTS), "golden": choice("tune", "help"), "seed": SEED,
              "max_tokens": TOKENS, **MODEL_RUN, "options": {"type": ["object", "null"], "properties": {
                  "gap": integer(1, 1000), "min_token_length_normal": integer(1, 1000),
                  "min_token_length_lead": integer(1, 1000), "min_token_length_followup": integer(1, 1000),
                  "measure": choice("relative", "improve"), "filler_token": {"type": "string"},
                  "len_sent_allow_cut": integer(1, 1_000_000), "finetune_batch_size": BATCH,
                  "finetune_epochs": integer(1, 1000), "finetune_chunk_size": LENGTH,
                  "finetune_chunk_stride": LENGTH, "learning_rate": number(0, 1, exclusive=True),
                  "warmup_steps": integer(0, 1_000_000), "p_mask": SHARE, "p_token_replace": SHARE,
                  "p_token_original": SHARE,
                  "token_replace_range": {"type": "array", "items": integer(0, 10_000_000), "minItems": 2,
                                          "maxItems": 2}}}},
    "bleu": {"tokenize": choice("none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm", "flores101",
                                "flores200", "spBLEU-1K"),
             "lowercase": BOOLEAN, "smooth_method": choice("none", "floor", "add-k", "exp"), "max_ngram_order": ORDER},
    "chrf": {"char_order": ORDER, "word_order": integer(0, 20), "beta": integer(0, 100)},
    "cider": {"order": ORDER, "sigma": number(0, 1_000_000, exclusive=True),
              "scale": number(0, 1_000_000, exclusive=True)},
    "datastats": {"summeval_newline": BOOLEAN, "lowercase_ngrams": BOOLEAN},
    "depthscore": {"layer": LAYER, "p": number(0, 100, exclusive=True), "eps": SHARE, "n_alpha": integer(1, 1000),
                   "n_directions": integer(1, 1_000_000), "seed": SEED, "processes": PROCESSES},
    "infolm": {"temperature": number(0, 100, exclusive=True), "idf": choice(*infolm.IDF_MODES), "max_length": LENGTH,
               "max_tokens": TOKENS, **MODEL_RUN},
    "meteor": {"alpha": SHARE, "beta": number(0, 100), "gamma": SHARE},
    "moverscore": {"layer": LAYER, "idf": BOOLEAN, "stop_words": {"type": "array", "items": {"type": "string"}},
                   "processes": PROCESSES},
    "perplexity": {"window": integer(1, 1_000_000, null=True), "stride": integer(1, 1_000_000, null=True),
                   "add_bos": BOOLEAN, "batch_size": BATCH, "max_tokens": TOKENS, **MODEL_RUN},
    "rouge": {"max_order": ORDER, "weight": number(1, 10), "skip_distance": integer(0, 1_000_000, null=True),
              "alpha": SHARE, "stem": BOOLEAN, "double_weighted_recall": BOOLEAN, "cut_at_lt": BOOLEAN},
    "rouge-we": {"n": ORDER, "alpha": SHARE, "threshold": number(-1, 1)},
    "s3": {},
    "storyer": {"encoder_path": PATH, "device": DEVICE, "cache_path": PATH},
    "summaqa": {"entities": {"type": "string", "minLength": 1}, "max_seq_len": LENGTH, "batch_size": BATCH,
                **MODEL_RUN},
    "supert": {"layer": LAYER, "top_n": integer(1, 1000), "granularity": choice(*supert.GRANULARITIES),
               "alignment": choice(*supert.ALIGNMENTS), "variants": some_of(*supert.VARIANTS)},
    "textstats": {"summeval_newline": BOOLEAN},
}

# The settings of an LLM judge (config `judges`, storyeval.judges.rate.Settings, api.judge).
JUDGE: dict[str, dict] = {
    "mode": choice("expected", "generate", "pairwise"),
    "pairs": {"anyOf": [choice("auto", "all"), integer(1, 1000)]},  # mode pairwise: random cycles per prompt
    "ties": choice("flip", "average"),
    "pair_score": choice("win_rate", "bradley_terry"),
    "seed": SEED,
    "batch_size": BATCH,
    "batch_tokens": TOKENS,
    "max_new_tokens": integer(1, 4096),
    "top_logprobs": integer(5, 1000),  # servers cap it lower (OpenAI's API and vLLM's default: 20); 1000 bounds a reply
    "dtype": choice("auto", "float32", "bfloat16", "float16"),
    "truncate": choice("none", "head", "middle"),  # a prompt past the window (storyeval.judges.window)
    "max_length": integer(8, 1_048_576, null=True),  # the window in tokens; null: the model's (2^20: the longest now)
}

# Python's sequences and numpy's numbers are what JSON's arrays and numbers are here (never a bool).
TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many({
    "array": lambda _, value: isinstance(value, (list, tuple)),
    "integer": lambda _, value: isinstance(value, numbers.Integral) and not isinstance(value, bool),
    "number": lambda _, value: isinstance(value, numbers.Real) and not isinstance(value, bool),
})
Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=TYPES)


def wanted(fragment: Mapping) -> str:
    """What a fragment accepts, in words (the fix of a refusal)."""
    if "description" in fragment:
        return fragment["description"]
    if "enum" in fragment:
        return "one of " + ", ".join(map(str, fragment["enum"]))
    if "anyOf" in fragment:
        return " or ".join(map(wanted, fragment["anyOf"]))
    if "items" in fragment and fragment.get("type") != "object":
        return f"a list, each {wanted(fragment['items'])}" + ("; or null" if "null" in fragment["type"] else "")
    kinds = fragment["type"] if isinstance(fragment["type"], list) else [fragment["type"]]
    low = fragment.get("minimum", fragment.get("exclusiveMinimum"))
    bounds = "" if low is None else (f" from {low}" if "minimum" in fragment else f" above {low}")
    bounds += f" to {fragment['maximum']}" if "maximum" in fragment else ""
    words = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
             "object": "a mapping", "null": "null"}
    return " or ".join(words[kind] + (bounds if kind in ("integer", "number") else "") for kind in kinds)


def metric_parameters(name: str) -> dict[str, dict]:
    """The fragments of metric `name`'s parameters: METRICS' for a built-in metric; a metric added as one module
    (docs/contributing.md) declares its own in the module's PARAMETERS (none: no parameter is checked)."""
    if name in METRICS:
        return METRICS[name]
    from storyeval.metrics import catalog  # the catalog imports every metric module: only for an added one

    return dict(getattr(catalog.load(name), "PARAMETERS", {}))


def check(params: Mapping, table: Mapping[str, dict], where: str) -> None:
    """Refuse the first value of `params` (name -> value) its fragment in `table` does not accept: InputError
    `<where> <name>=<value>: <why>; fix: pass <what it accepts>`. Names the table lacks are left to the caller."""
    for name, value in params.items():
        if name not in table:
            continue
        error = jsonschema.exceptions.best_match(Validator(table[name]).iter_errors(value))
        if error is not None:  # named down to the offending item or option, with what it accepts
            key = name + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
            shown = repr(error.instance) if len(repr(error.instance)) <= 40 else repr(error.instance)[:40] + "..."
            accepted = table[name] if "anyOf" in table[name] else error.schema  # a choice of forms: all of them
            raise InputError(f"{where} {key}={shown}: {error.message[:120]}; fix: pass {wanted(accepted)}")
