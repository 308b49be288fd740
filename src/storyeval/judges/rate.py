"""LLM judges: a causal language model rates each story on each criterion, 1 to 5, one prompt per story and
criterion (`storyeval.judges.prompts`).

Three modes. `expected` (G-Eval, Liu et al. 2023): one forward pass per story and criterion; at the answer position
(right after the reply's opening) the probabilities of the five rating tokens, renormalised over them, weight
the ratings: score = sum_r r p(r) / sum_r p(r). Deterministic and finer than one sampled answer; the share of
the next-token probability the five tokens hold (`rating_mass`) is kept per story as a check that the judge
answers with a rating at all, and the renormalised distribution itself (`p1`..`p5`: storyeval.stats.distribution
compares it with the raters' histogram). `generate`: the greedy answer (at most `max_new_tokens`) parsed by
`storyeval.judges.parse`; a failure is NaN, counted and reported, never imputed. `pairwise` (PairS, Liu et al. 2024):
two stories of one prompt in one prompt, both orders, P(the first is better) from the label tokens A and B the
same way (storyeval.judges.pairwise turns the verdicts into per-story scores and position-bias measures).

Prompts are batched by length (`storyeval.neural.models.length_batches`), left-padded, positions counted from
each prompt's first token, so that the answer position is the last of every row. A prompt longer than the
model's window follows the judge's `truncate` policy (`storyeval.judges.window`): left out and counted, or its
story cut. Every prompt without a rating has its reason in the details (`failure`) and one log line counts them
(`storyeval.judges.gaps`). The same texts, settings and model give the same numbers from `storyeval.judge` and
from the workflow's judge job (they call `rate`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.judges import window
from storyeval.judges.cache import DISTRIBUTION, KEPT, RATINGS, AnswerCache, entry_key
from storyeval.judges.gaps import MISSING_CHOICE, PAST_WINDOW, SERVER, stated
from storyeval.judges.parse import parse_rating
from storyeval.judges.prompts import Template, prompt_text
from storyeval.neural.models import identity, length_batches, pinned_source, warn_unpinned, where_from
from storyeval.neural.paths import resolve_model_path

MODES = ("expected", "generate", "pairwise")
RATING_LABELS = tuple(map(str, RATINGS))
PAIR_LABELS = ("A", "B")  # mode pairwise: the first story, the second
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    mode: str = "expected"
    batch_size: int = 8  # prompts per forward pass at most
    batch_tokens: int = 8192  # padded prompt tokens per forward pass at most
    max_new_tokens: int = 32  # mode generate
    dtype: str = "auto"  # auto: bfloat16 on a GPU, float32 on the CPU
    top_logprobs: int = 20  # a served judge in mode expected (storyeval.judges.http)
    truncate: str = "none"  # a prompt past the window: none (left out), head, middle (storyeval.judges.window)
    max_length: int | None = None  # the window in tokens; None: the model config's
    pairs: str | int = "auto"  # mode pairwise: all, auto or a number of random cycles per prompt (pairwise.pairs)
    ties: str = "flip"  # mode pairwise: a verdict that flips with the order is a tie (flip), or the mean decides
    pair_score: str = "win_rate"  # mode pairwise: a story's score, win_rate or bradley_terry
    seed: int = 20221012  # mode pairwise: the pairs drawn

    @property
    def labels(self) -> tuple[str, ...]:
        """The answer tokens whose probabilities are read: the ratings 1-5, or A and B in mode pairwise."""
        return PAIR_LABELS if self.mode == "pairwise" else RATING_LABELS

    def extra(self, served: bool = False) -> int:
        """Answer tokens the window must hold beside a prompt."""
        return self.max_new_tokens if self.mode == "generate" else int(served)


@dataclass
class Prompts:
    """The tokenised prompts of a job: one row per story and criterion."""

    story_id: list = field(default_factory=list)
    criterion: list = field(default_factory=list)
    ids: list = field(default_factory=list)  # token ids up to the answer position
    rating_ids: list = field(default_factory=list)  # the label tokens at that position (ratings 1-5, or A and B)
    cut: list = field(default_factory=list)  # story tokens cut to fit the window (truncate head or middle)
    fits: list = field(default_factory=list)  # False: past the window, left out (truncate none)
    order: list = field(default_factory=list)  # mode pairwise: o0 (the pair as drawn) or o1 (swapped)

    @property
    def tokens(self) -> int:
        return sum(len(ids) for ids, fits in zip(self.ids, self.fits) if fits)

    @property
    def run(self) -> list[int]:
        """Indices of the prompts that are run (within the window)."""
        return [k for k, fits in enumerate(self.fits) if fits]

    def table(self) -> pd.DataFrame:
        order = {"order": self.order} if any(self.order) else {}
        return pd.DataFrame({"story_id": self.story_id, **order, "criterion": self.criterion,
                             "prompt_tokens": list(map(len, self.ids)), "truncated": self.cut,
                             "failure": ["" if fits else PAST_WINDOW for fits in self.fits]})


@lru_cache(maxsize=2)
def load_judge(key: str, name_or_path: str, device: str | None = None, revision: str | None = None,
               dtype: str = "auto"):
    """(model in eval mode on its device, tokenizer) of the causal LM at `name_or_path`, pinned to `revision` as
    the metric models are (`storyeval.neural.models`); `key` names its config entry in messages."""
    import torch
    import transformers

    from storyeval.neural.device import choose_device

    device = str(choose_device(device))
    name = resolve_model_path(str(name_or_path))
    transformers.logging.disable_progress_bar()
    source = pinned_source(key, name, revision)
    torch_dtype = {"auto": torch.bfloat16 if device.startswith("cuda") else torch.float32,
                   "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(name, **source)
        model = transformers.AutoModelForCausalLM.from_pretrained(name, dtype=torch_dtype, **source)
    except (OSError, ValueError) as error:
        raise InputError(f"{key}: cannot load {name!r} as a causal language model from {where_from(name)}: "
                         f"{str(error).splitlines()[0]}; fix: name a model folder or hub id that holds one") from error
    warn_unpinned(key, name, revision)
    return model.eval().to(device), tokenizer


def answer_position(tokenizer, text: str, special: bool, labels: tuple[str, ...] = RATING_LABELS
                    ) -> tuple[list[int], list[int]]:
    """(ids of `text` up to the answer position, ids of the label tokens there, the ratings 1-5 or A and B): the
    longest prefix the tokenisations of text + " 1" ... text + " 5" (the reply "Rating: 4") share, each then ending
    in one token that is its label (a BPE tokenizer joins the space to the digit, a SentencePiece one may keep it
    apart)."""
    encoded = tokenizer([f"{text} {label}" for label in labels], add_special_tokens=special)["input_ids"]
    shared = 0
    while all(len(ids) > shared for ids in encoded) and len({ids[shared] for ids in encoded}) == 1:
        shared += 1
    found = [ids[shared] if len(ids) == shared + 1 else None for ids in encoded]
    if None in found or any(tokenizer.decode([t]).strip() != label for t, label in zip(found, labels)):
        fix = "use mode generate for this model" if labels == RATING_LABELS else "use another judge"
        raise InputError(f"judge tokenizer {getattr(tokenizer, 'name_or_path', '')!r}: the answers "
                         f"{', '.join(labels)} are not one token each after the reply's opening; fix: {fix}")
    return encoded[0][:shared], found


def build_prompts(texts: pd.DataFrame, criteria: dict[str, str], template: Template, tokenizer,
                  limit: int | None = None, truncate: str = "none", labels: tuple[str, ...] = RATING_LABELS
                  ) -> Prompts:
    """One prompt per story (rows of `texts`; mode pairwise: per pair and order, storyeval.judges.pairwise) and
    criterion, row by row, each within `limit` tokens as the `truncate` policy makes it (storyeval.judges.window)."""
    missing = sorted(column for column in template.reads if column not in texts or texts[column].isna().any())
    if missing:
        raise InputError(f"judge template {template.name}: it reads the {', '.join(missing)} of every story, which "
                         "this dataset lacks; fix: use a template that does not (e.g. geval)")
    prompts = Prompts()
    for row in texts.itertuples(index=False):
        for criterion in criteria:
            def render(values, criterion=criterion):
                return answer_position(tokenizer, *prompt_text(tokenizer, template, values, criterion, criteria),
                                       labels)

            ids, ratings, cut, fits = window.fit(render, tokenizer, row._asdict(), limit, truncate)
            for name, value in (("story_id", row.story_id), ("criterion", criterion), ("ids", ids),
                                ("rating_ids", ratings), ("cut", cut), ("fits", fits),
                                ("order", getattr(row, "order", ""))):
                getattr(prompts, name).append(value)
    return prompts


def window_line(key: str, prompts: Prompts, window_size: int | None, truncate: str) -> str | None:
    """One line on the prompts whose story was cut to fit the window (those left out: the failures' count line)."""
    cut = [n for n in prompts.cut if n]
    if not cut:
        return None
    return (f"{key}: {len(cut)} of {len(prompts.ids)} prompts past the {window_size}-token window, their story cut "
            f"(truncate: {truncate}) by {min(cut)}-{max(cut)} tokens")


def left_padded(rows: list[list[int]], pad_id: int, device):
    """Ids, attention mask and positions (counted from each row's first token) of left-padded rows."""
    import torch

    width = max(map(len, rows))
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for k, row in enumerate(rows):
        ids[k, width - len(row):] = torch.as_tensor(row)
        mask[k, width - len(row):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), positions.to(device)


def rating_distribution(logits: np.ndarray) -> np.ndarray:
    """softmax over the logits [n, k] of the label tokens (ratings 1-5, or A and B): the judge's distribution."""
    logits = np.asarray(logits, dtype=np.float64)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def expected_rating(logits: np.ndarray) -> np.ndarray:
    """G-Eval's score from the logits [n, 5] of the rating tokens 1-5: sum_r r softmax(logits)_r."""
    return rating_distribution(logits) @ RATINGS


def label_columns(distribution: np.ndarray, mode: str) -> dict:
    """The details' value columns from the distribution [n, k] over the labels: mode pairwise, the probability
    that the first story is better (value); else the expected rating (value) and the distribution (p1..p5)."""
    if mode == "pairwise":
        return {"value": distribution[:, 0]}
    return {"value": distribution @ RATINGS, **dict(zip(DISTRIBUTION, distribution.T))}


def run_expected(model, prompts: Prompts, batches, pad_id: int, mode: str = "expected") -> pd.DataFrame:
    import torch

    width = len(prompts.rating_ids[prompts.run[0]]) if prompts.run else len(RATINGS)
    mass, distribution = np.full(len(prompts.ids), np.nan), np.full((len(prompts.ids), width), np.nan)
    with torch.inference_mode():
        for batch in batches:
            ids, mask, positions = left_padded([prompts.ids[k] for k in batch], pad_id, model.device)
            try:  # the head on the answer position only: a vocabulary's logits per prompt, not per token
                out = model(input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=1)
            except TypeError:  # a model class without logits_to_keep
                out = model(input_ids=ids, attention_mask=mask, position_ids=positions)
            logits = out.logits[:, -1].float()
            chosen = torch.as_tensor([prompts.rating_ids[k] for k in batch], device=logits.device)
            rating_logits = logits.gather(1, chosen)
            mass[batch] = (rating_logits.logsumexp(-1) - logits.logsumexp(-1)).exp().cpu().numpy()
            distribution[batch] = rating_distribution(rating_logits.cpu().numpy())
    columns = label_columns(distribution, mode)
    return pd.DataFrame({"value": columns.pop("value"), "rating_mass": mass, **columns})


def run_generate(model, tokenizer, prompts: Prompts, batches, pad_id: int, max_new_tokens: int) -> pd.DataFrame:
    import torch

    answers = [""] * len(prompts.ids)
    with torch.inference_mode():
        for batch in batches:
            ids, mask, _ = left_padded([prompts.ids[k] for k in batch], pad_id, model.device)
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=pad_id, num_beams=1)
            for k, row in zip(batch, out[:, ids.shape[1]:].tolist()):
                answers[k] = tokenizer.decode(row, skip_special_tokens=True)
    parsed = [parse_rating(answer) for answer in answers]
    return pd.DataFrame({"value": [np.nan if p is None else float(p) for p in parsed], "answer": answers})


def check(settings: Settings, template: Template, key: str) -> None:
    """A mode, a truncate policy and a template that go together."""
    if settings.mode not in MODES:
        raise InputError(f"{key}: mode {settings.mode!r}; fix: use one of {', '.join(MODES)}")
    if settings.truncate not in window.TRUNCATE:
        raise InputError(f"{key}: truncate {settings.truncate!r}; fix: use one of {', '.join(window.TRUNCATE)}")
    if settings.mode == "pairwise":
        from storyeval.judges.pairwise import check_settings

        check_settings(settings, key)
    if template.pairwise != (settings.mode == "pairwise"):
        fix = ("a pairwise template (pairwise, pairwise-stories: {story_a} and {story_b})" if template.pairwise is False
               else "mode pairwise, or a template that rates one {story}")
        does = "compares two stories" if template.pairwise else "rates one story"
        raise InputError(f"{key}: template {template.name} {does} and the mode is {settings.mode}; fix: use {fix}")


def asked_rows(texts: pd.DataFrame, settings: Settings) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(the rows a job prompts: the stories, or in mode pairwise each pair in both orders; the pairs or None)."""
    if settings.mode != "pairwise":
        return texts, None
    from storyeval.judges.pairwise import pairs, presentations

    drawn = pairs(texts, settings.pairs, settings.seed)
    return presentations(texts, drawn), drawn


def scored(texts: pd.DataFrame, criteria: dict[str, str], details: pd.DataFrame, run: dict, settings: Settings,
           key: str, rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(scores, details, what was run) of a job's details on `rows` (asked_rows): one rating per story, or in mode
    pairwise the stories' scores from the verdicts (storyeval.judges.pairwise.finish_pairs)."""
    if settings.mode != "pairwise":
        scores, details, counts = finish(texts, criteria, details, key)
    else:
        from storyeval.judges.pairwise import finish_pairs

        scores, details, counts = finish_pairs(texts, criteria, rows, details, settings, key)
    return scores, details, run | counts


def rate(texts: pd.DataFrame, criteria: dict[str, str], template: Template, model_path: str | Path,
         settings: Settings = Settings(), revision: str | None = None, device: str | None = None,
         key: str = "judge", served: str | None = None, tokenizer: str | None = None,
         cache: str | Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(scores: story_id x criterion, details: one row per prompt (story, or pair and order, and criterion) with
    its prompt tokens, story tokens cut, value and the reason it has none (`failure`), and what was run: forward
    passes, answers from the cache, prompt tokens, parse failures, prompts past the window, the dtype and device the
    model ran in) for the stories of `texts` (a text table with story_id, story and what the template reads) rated
    on `criteria` ({name: definition}). A `model_path` that is a URL is a served judge (`storyeval.judges.http`:
    `served` model name, local `tokenizer`). `cache`: the answer cache's file (storyeval.judges.cache), None for
    none."""
    check(settings, template, key)
    rows, drawn = asked_rows(texts, settings)
    if str(model_path).startswith(("http://", "https://")):
        from storyeval.judges.http import rate_http

        details, run = rate_http(rows, criteria, template, str(model_path), settings, served, tokenizer, key=key,
                                 cache=cache)
        return scored(texts, criteria, details, run, settings, key, rows)
    model, tokenizer = load_judge(key, str(model_path), device, revision, settings.dtype)
    size = window.model_window(model.config, settings.max_length, key)
    prompts = build_prompts(rows, criteria, template, tokenizer, window.room(size, settings.extra(), key),
                            settings.truncate, settings.labels)
    line = window_line(key, prompts, size, settings.truncate)
    if line:
        log.warning("%s", line)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    dtype = str(model.dtype).removeprefix("torch.")

    def ask(todo: list[int]) -> pd.DataFrame:
        run = np.asarray(todo, dtype=int)
        batches = [run[batch] for batch in length_batches([len(prompts.ids[k]) for k in run], settings.batch_tokens,
                                                          settings.batch_size)]
        units = f"{len(rows)} stories" if drawn is None else f"{len(drawn)} pairs x 2 orders"
        log.info("%s: %d forward passes (%s x %d criteria), %d prompt tokens, %d batches", key, len(run), units,
                 len(criteria), sum(len(prompts.ids[k]) for k in run), len(batches))
        if settings.mode == "generate":
            return run_generate(model, tokenizer, prompts, batches, pad_id, settings.max_new_tokens)
        return run_expected(model, prompts, batches, pad_id, settings.mode)

    signature = (lambda: identity(model_path, revision) | {"dtype": dtype}) if cache is not None else dict
    details, asked = answered(prompts, prompts.ids, ask, AnswerCache(cache), signature, template, settings, key)
    run = {"forward_passes": asked, "cached": len(prompts.run) - asked, "prompt_tokens": prompts.tokens,
           "dtype": dtype, "device": str(model.device)}
    return scored(texts, criteria, details, run, settings, key, rows)


def answered(prompts: Prompts, sent: list, ask, cache: AnswerCache, signature, template: Template,
             settings: Settings, key: str, served: bool = False) -> tuple[pd.DataFrame, int]:
    """(details before `finish`, prompts asked): the answers the cache holds for the prompts within the window
    (`sent`: what each prompt sends, its key's prompt part), `ask(todo)` for the others (a frame over every
    prompt), which the cache then keeps (a server's error excepted)."""
    decoding = {"mode": settings.mode, "max_new_tokens": settings.max_new_tokens if settings.mode == "generate"
                else None, "top_logprobs": settings.top_logprobs if served and settings.mode != "generate" else None}
    held = {}
    if cache.path is not None:
        own, text = signature(), f"{template.user}\n{template.answer}"
        keys = {k: entry_key(own, text, settings.mode, sent[k], decoding) for k in prompts.run}
        found = cache.get(list(keys.values()))
        held = {k: found[keys[k]] for k in keys if keys[k] in found}
    todo = [k for k in prompts.run if k not in held]
    results, table = ask(todo), prompts.table()
    details = table.drop(columns=[name for name in results if name in table]).join(results)
    for k, answer in held.items():
        for name, value in answer.items():
            if name in details and value is not None:
                details.at[k, name] = value
    if cache.path is not None:
        log.info("%s: %d of %d answers from the cache %s, %d asked", key, len(held), len(prompts.run), cache.path,
                 len(todo))
        fresh = details.loc[todo]
        keep = fresh[~fresh["failure"].fillna("").isin([SERVER, MISSING_CHOICE])]
        cache.put({keys[k]: {name: row.get(name) for name in KEPT} for k, row in keep.iterrows()})
    return details, len(todo)


def finish(texts: pd.DataFrame, criteria: dict[str, str], details: pd.DataFrame, key: str
           ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(scores, details, counts) of a job's details (storyeval.judges.gaps.stated)."""
    details, counts = stated(details, key)
    scores = details.pivot(index="story_id", columns="criterion", values="value")
    scores = scores.loc[list(texts["story_id"]), list(criteria)].rename_axis(columns=None)
    return scores, details, counts


def count_prompts(texts: pd.DataFrame, criteria: dict[str, str], template: Template, tokenizer,
                  settings: Settings = Settings()) -> tuple[int, int]:
    """(forward passes, prompt tokens) a job will run on `texts`: what `build_prompts` gives, counted with one
    tokenisation per prompt (every prompt ends in the same reply opening, so the answer position lies the same
    number of tokens before each prompt's end)."""
    rows = [row._asdict() for row in asked_rows(texts, settings)[0].itertuples(index=False)]
    if not rows:
        return 0, 0
    built = [prompt_text(tokenizer, template, row, criterion, criteria) for row in rows for criterion in criteria]
    special = built[0][1]
    lengths = [len(ids) for ids in tokenizer([text for text, _ in built], add_special_tokens=special)["input_ids"]]
    offset = lengths[0] - len(answer_position(tokenizer, *built[0], settings.labels)[0])
    return len(built), sum(lengths) - offset * len(built)
