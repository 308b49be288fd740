"""A judge served over HTTP by an OpenAI-compatible completions endpoint (vLLM, llama.cpp's server, ...):
`model` is the server's base URL (e.g. http://127.0.0.1:8000/v1), `served` the model name it serves.

Prompts are sent to `<url>/completions`, `batch_size` a request, greedy (temperature 0). With a local `tokenizer`
(the served model's folder or hub id) they are sent as token ids: the chat-formatted prompt up to the answer
position, exactly what the in-process judge reads (`storyeval.judges.rate`); without one, as plain text ending
in the reply's opening. Mode expected asks for the `top_logprobs` most likely next tokens and weights the ratings
by the probabilities of the tokens among them that read 1-5 (G-Eval, Liu et al. 2023); a prompt whose top tokens
hold no rating is NaN, counted as a parse failure. Mode generate parses the greedy answer
(`storyeval.judges.parse`). Prompt tokens are the server's count (`usage.prompt_tokens`).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.judges.parse import parse_rating
from storyeval.judges.prompts import Template, prompt_text
from storyeval.judges.rate import RATINGS, answer_position


class PlainText:
    """A stand-in tokenizer without a chat template: prompts as plain text."""

    chat_template = None


def is_url(model) -> bool:
    return str(model).startswith(("http://", "https://"))


def post(url: str, payload: dict, timeout: float, key: str) -> dict:
    request = urllib.request.Request(f"{url.rstrip('/')}/completions", json.dumps(payload).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise InputError(f"{key}: {url}/completions did not answer ({error}); fix: start the server, or correct the "
                         "URL (an OpenAI-compatible base URL ending in /v1)") from error


def expected_from_top(top: dict[str, float]) -> tuple[float, float]:
    """(expected rating, rating mass) from one position's {token text: logprob}."""
    probabilities = np.zeros(len(RATINGS))
    for token, logprob in (top or {}).items():
        if token.strip() in {str(r) for r in RATINGS}:
            probabilities[int(token.strip()) - 1] += np.exp(logprob)
    mass = probabilities.sum()
    return (float(probabilities @ RATINGS / mass) if mass > 0 else np.nan), float(mass)


def rate_http(texts: pd.DataFrame, criteria: dict[str, str], template: Template, url: str, settings,
              served: str | None = None, tokenizer: str | None = None, timeout: float = 600,
              key: str = "judge") -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """`storyeval.judges.rate.rate`'s three results from a served judge (module docstring)."""
    local = None
    if tokenizer is not None:
        from transformers import AutoTokenizer

        local = AutoTokenizer.from_pretrained(tokenizer)
    rows, prompts = [], []
    for row in texts.itertuples(index=False):
        for criterion in criteria:
            text, special = prompt_text(local or PlainText(), template, row._asdict(), criterion, criteria)
            prompts.append(answer_position(local, text, special)[0] if local else text)
            rows.append((row.story_id, criterion))
    generate = settings.mode == "generate"
    payload = {"model": served, "temperature": 0, "max_tokens": settings.max_new_tokens if generate else 1}
    if not generate:
        payload["logprobs"] = settings.top_logprobs
    values, extra, tokens = [], [], 0
    for start in range(0, len(prompts), settings.batch_size):
        answer = post(url, payload | {"prompt": prompts[start:start + settings.batch_size]}, timeout, key)
        choices = sorted(answer["choices"], key=lambda choice: choice["index"])
        tokens += int(answer.get("usage", {}).get("prompt_tokens", 0))
        for choice in choices:
            if generate:
                rating = parse_rating(choice["text"])
                values.append(np.nan if rating is None else float(rating))
                extra.append(choice["text"])
            else:
                value, mass = expected_from_top(choice["logprobs"]["top_logprobs"][0])
                values.append(value)
                extra.append(mass)
    lengths = [len(prompt) if local else np.nan for prompt in prompts]  # token ids with a local tokenizer
    details = pd.DataFrame(rows, columns=["story_id", "criterion"]).assign(
        prompt_tokens=lengths, value=values, **{"answer" if generate else "rating_mass": extra})
    scores = details.pivot(index="story_id", columns="criterion", values="value")
    scores = scores.loc[list(texts["story_id"]), list(criteria)].rename_axis(columns=None)
    failures = int(details["value"].isna().sum())
    # the server chooses the dtype and device: the signature names the server
    run = {"forward_passes": len(prompts), "prompt_tokens": tokens, "parse_failures": failures, "dtype": "served",
           "device": url}
    return scores, details, run
