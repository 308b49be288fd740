"""A judge served over HTTP by an OpenAI-compatible completions endpoint (vLLM, llama.cpp's server, ...):
`model` is the server's base URL (e.g. http://127.0.0.1:8000/v1), `served` the model name it serves.

Prompts are sent to `<url>/completions`, `batch_size` a request, greedy (temperature 0). With a local `tokenizer`
(the served model's folder or hub id) they are sent as token ids: the chat-formatted prompt up to the answer
position, exactly what the in-process judge reads (`storyeval.judges.rate`); without one, as plain text ending
in the reply's opening. Mode expected asks for the `top_logprobs` most likely next tokens and weights the ratings
by the probabilities of the tokens among them that read 1-5 (G-Eval, Liu et al. 2023), renormalised over them (the
judge's distribution, p1..p5 in the details); a prompt whose top tokens hold no rating is NaN, counted as a parse
failure. Mode pairwise reads the tokens A and B the same way (P(the first story is better)). Mode generate parses
the greedy answer
(`storyeval.judges.parse`). A malformed reply (an {"error": ...} body, fewer choices than prompts, a choice
without text or logprobs) is a parse failure of the prompts it concerns, its reason in the details; a server that
does not answer at all stops the job with one line. Prompt tokens are the server's count (`usage.prompt_tokens`).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.judges import window
from storyeval.judges.gaps import MISSING_CHOICE, NO_RATING, SERVER
from storyeval.judges.parse import parse_rating
from storyeval.judges.prompts import Template, prompt_text
from storyeval.judges.rate import RATING_LABELS, RATINGS, label_columns

STOPS = (401, 403, 404, 405)  # a wrong URL or access: every request would fail alike


class PlainText:
    """A stand-in tokenizer without a chat template: prompts as plain text."""

    chat_template = None


def post(url: str, payload: dict, timeout: float, key: str) -> dict:
    request = urllib.request.Request(f"{url.rstrip('/')}/completions", json.dumps(payload).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        if error.code in STOPS:
            raise InputError(f"{key}: {url}/completions answered HTTP {error.code} ({error.reason}); fix: correct the "
                             "URL (an OpenAI-compatible base URL ending in /v1) or the server's access") from error
        body = error.read().decode("utf-8", "replace")  # a request it refused (a prompt past its window, ...)
        return {"error": f"HTTP {error.code}: {body}"}
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise InputError(f"{key}: {url}/completions did not answer ({error}); fix: start the server, or correct the "
                         "URL (an OpenAI-compatible base URL ending in /v1)") from error


def distribution_from_top(top: dict[str, float], labels: tuple[str, ...] = RATING_LABELS
                          ) -> tuple[np.ndarray, float]:
    """(p(label), the ratings 1..5 or A and B, renormalised over the top tokens that read a label, NaN where none
    does; their mass) from one position's {token text: logprob}."""
    probabilities = np.zeros(len(labels))
    for token, logprob in (top or {}).items():
        if token.strip() in labels:
            probabilities[labels.index(token.strip())] += np.exp(logprob)
    mass = probabilities.sum()
    return (probabilities / mass if mass > 0 else np.full(len(labels), np.nan)), float(mass)


def reply_choices(answer, size: int) -> tuple[list[dict | None], str, str]:
    """(the reply's choice for each of the `size` prompts of a request, None where it has none; the reason none
    came; the server's message): a reply without `choices` (an {"error": ...} body) or with fewer choices than
    prompts is a parse failure of the prompts it concerns, never a stop."""
    if not isinstance(answer, dict) or not isinstance(answer.get("choices"), list):
        shown = json.dumps(answer.get("error", answer) if isinstance(answer, dict) else answer, default=str)
        return [None] * size, SERVER, shown[:200]
    chosen = [None] * size
    for place, choice in enumerate(answer["choices"]):
        index = choice.get("index", place) if isinstance(choice, dict) else None
        if isinstance(index, int) and 0 <= index < size:
            chosen[index] = choice
    return chosen, MISSING_CHOICE, ""


def read_choice(choice: dict, generate: bool, labels: tuple[str, ...] = RATING_LABELS
                ) -> tuple[float, float, str, str, np.ndarray]:
    """(value, label mass, the answer as read, failure reason or "", p(label)) of one choice; in modes expected
    and pairwise a failure's answer is its most likely next tokens."""
    none = np.full(len(labels), np.nan)
    try:
        if generate:
            rating = parse_rating(choice["text"])
            value = np.nan if rating is None else float(rating)
            return value, np.nan, choice["text"], NO_RATING * (rating is None), none
        top = choice["logprobs"]["top_logprobs"][0]
        distribution, mass = distribution_from_top(top, labels)
        value = float(distribution @ RATINGS if labels == RATING_LABELS else distribution[0])
        if np.isfinite(value):
            return value, mass, "", "", distribution
        likely = sorted(top or {}, key=lambda token: -top[token])[:3]
        return value, mass, "most likely next tokens: " + ", ".join(map(repr, likely)), NO_RATING, distribution
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        return np.nan, np.nan, json.dumps(choice, default=str)[:200], MISSING_CHOICE, none


def served_prompts(texts: pd.DataFrame, criteria: dict[str, str], template: Template, local, settings, key: str):
    """(the prompts: token ids with a local tokenizer, else text; their table, as rate.Prompts.table)."""
    from storyeval.judges.rate import Prompts, build_prompts

    if local is not None:
        limit = window.room(settings.max_length, settings.extra(served=True), key)
        prompts = build_prompts(texts, criteria, template, local, limit, settings.truncate, settings.labels)
        return prompts.ids, prompts
    if settings.truncate != "none" or settings.max_length is not None:
        raise InputError(f"{key}: truncate {settings.truncate} and max_length {settings.max_length} need the served "
                         "model's tokenizer to count tokens; fix: set tokenizer: (a local copy of it), or leave "
                         "truncate and max_length out")
    prompts, texts_sent = Prompts(), []
    for row in texts.itertuples(index=False):
        for criterion in criteria:
            text, _ = prompt_text(PlainText(), template, row._asdict(), criterion, criteria)
            for name, value in (("story_id", row.story_id), ("criterion", criterion), ("ids", []),
                                ("rating_ids", []), ("cut", 0), ("fits", True), ("order", getattr(row, "order", ""))):
                getattr(prompts, name).append(value)
            texts_sent.append(text)
    return texts_sent, prompts


def local_tokenizer(tokenizer: str | None):
    """The served model's tokenizer from a local folder or hub id; None: prompts go as plain text."""
    if tokenizer is None:
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer)


def request_body(settings, served: str | None) -> dict:
    """A completions request's body without its prompt: greedy, one token and its top logprobs in modes expected and
    pairwise."""
    generate = settings.mode == "generate"
    body = {"model": served, "temperature": 0, "max_tokens": settings.max_new_tokens if generate else 1}
    if not generate:
        body["logprobs"] = settings.top_logprobs
    return body


def rate_replies(criteria: dict[str, str], template: Template, settings, built, replies, device: str, key: str,
                 cache=None, signature=dict) -> tuple[pd.DataFrame, dict]:
    """(details before `storyeval.judges.rate.scored`, what was run) from a served judge's replies: `built` is
    (local tokenizer or None, what each prompt sends, the prompts), `replies(todo)` yields (prompt indices, the
    server's answer) for each request that asks the prompts `todo`, wherever they were answered (a server, a
    batch's results file)."""
    from storyeval.judges.cache import AnswerCache
    from storyeval.judges.rate import answered

    local, sent, prompts = built
    generate = settings.mode == "generate"
    tokens = [0]

    def ask(todo: list[int]) -> pd.DataFrame:
        values, mass = np.full(len(sent), np.nan), np.full(len(sent), np.nan)
        distribution = np.full((len(sent), len(settings.labels)), np.nan)
        answers, failure = [""] * len(sent), list(prompts.table()["failure"])
        for batch, answer in replies(todo):
            usage = answer.get("usage") if isinstance(answer, dict) else None
            tokens[0] += int((usage if isinstance(usage, dict) else {}).get("prompt_tokens") or 0)
            choices, reason, message = reply_choices(answer, len(batch))
            for k, choice in zip(batch, choices):
                read = ((np.nan, np.nan, message, reason, np.full(len(settings.labels), np.nan)) if choice is None
                        else read_choice(choice, generate, settings.labels))
                values[k], mass[k], answers[k], failure[k], distribution[k] = read
        if generate:
            return pd.DataFrame({"value": values, "answer": answers, "failure": failure})
        read = label_columns(distribution, settings.mode)
        return pd.DataFrame({"value": read.pop("value"), "answer": answers, "failure": failure, "rating_mass": mass,
                             **read})

    details, asked = answered(prompts, sent, ask, AnswerCache(cache), signature, template, settings, key, served=True)
    lengths = [np.nan] * len(sent) if local is None else list(map(len, sent))
    return details.assign(prompt_tokens=lengths), {"forward_passes": asked, "cached": len(prompts.run) - asked,
                                                   "prompt_tokens": tokens[0], "dtype": "served", "device": device}


def rate_http(texts: pd.DataFrame, criteria: dict[str, str], template: Template, url: str, settings,
              served: str | None = None, tokenizer: str | None = None, timeout: float = 600,
              key: str = "judge", cache=None) -> tuple[pd.DataFrame, dict]:
    """(details before `storyeval.judges.rate.scored`, what was run) of a served judge (module docstring) on the
    rows `texts` (stories, or a pairwise job's presentations)."""
    local = local_tokenizer(tokenizer)
    sent, prompts = served_prompts(texts, criteria, template, local, settings, key)
    body = request_body(settings, served)

    def replies(todo: list[int]):
        for start in range(0, len(todo), settings.batch_size):
            batch = todo[start:start + settings.batch_size]
            yield batch, post(url, body | {"prompt": [sent[k] for k in batch]}, timeout, key)

    # the server chooses the dtype and device: the signature names the server
    signature = {"url": url, "served": served, "tokenizer": tokenizer}
    return rate_replies(criteria, template, settings, (local, sent, prompts), replies, url, key, cache,
                        lambda: signature)
