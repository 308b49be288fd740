"""Stories longer than a judge's window: a declared policy per judge (`truncate`).

The window is the model's (`max_position_embeddings` or `n_positions` of its config) unless `max_length` sets it
(a served judge's window is not known locally: set it there). A prompt fits when its tokens up to the answer
position and the answer's budget (max_new_tokens in mode generate, 1 for a served judge in mode expected) lie in
the window. One that does not:

- `none` (default): left out, its rating NaN, counted as "past the window" (the run goes on);
- `head`: the story's first tokens are kept, as many as fit (the story is cut, the instructions kept whole);
- `middle`: the story's first and last tokens are kept, half each, joined by MARK (its middle is cut).

The cut story is re-rendered through the template and tokenised again until the prompt fits (a BPE tokenizer may
merge the tokens at the cut); a template too long for the window on its own leaves the story out.
"""

from __future__ import annotations

from storyeval.errors import InputError

TRUNCATE = ("none", "head", "middle")
MARK = " [...] "


def model_window(config, max_length: int | None, key: str) -> int | None:
    """The window in tokens: `max_length`, else the model config's; a `max_length` past the model's is refused
    (positions beyond it have no embedding)."""
    own = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if max_length is not None and own is not None and max_length > own:
        raise InputError(f"{key}: max_length {max_length} is past the model's {own}-token window; fix: set "
                         f"max_length to at most {own}, or leave it out")
    return max_length or own


def room(window: int | None, extra: int, key: str) -> int | None:
    """Prompt tokens a window leaves beside `extra` answer tokens; none left is a settings error."""
    if window is None:
        return None
    if extra >= window:
        raise InputError(f"{key}: {extra} answer tokens (max_new_tokens) leave no room for a prompt in the model's "
                         f"{window}-token window; fix: lower max_new_tokens (a rating with a few sentences of "
                         "explanation needs under 300)")
    return window - extra


def cut_story(tokenizer, story: str, keep: int, policy: str) -> str:
    ids = tokenizer(story, add_special_tokens=False)["input_ids"]
    if policy == "head":
        return tokenizer.decode(ids[:keep])
    first = (keep + 1) // 2
    return tokenizer.decode(ids[:first]).rstrip() + MARK + tokenizer.decode(ids[len(ids) - (keep - first):]).lstrip()


def fit(render, tokenizer, row: dict, limit: int | None, policy: str) -> tuple[list, list, int, bool]:
    """(prompt ids, label ids, story tokens cut, fits) of `row` within `limit` prompt tokens; where the policy
    leaves it out (fits False) the ids are the whole prompt's. `render(row)` gives (ids, label ids) of a row. A
    pairwise row's two stories (story_a, story_b) are cut to the same number of tokens at most."""
    whole = ids, labels = render(row)
    if limit is None or len(ids) <= limit:
        return ids, labels, 0, True
    if policy == "none":
        return *whole, 0, False
    names = [name for name in ("story", "story_a", "story_b") if name in row and isinstance(row[name], str)]
    lengths = {name: len(tokenizer(row[name], add_special_tokens=False)["input_ids"]) for name in names}
    keep = max(lengths.values()) - -(len(ids) - limit) // -len(names)  # the excess shared out, rounded up
    while keep > 0:
        cut = {name: cut_story(tokenizer, row[name], keep, policy) for name in names if lengths[name] > keep}
        ids, labels = render(row | cut)
        if len(ids) <= limit:
            return ids, labels, sum(lengths[name] - keep for name in cut), True
        keep -= -(len(ids) - limit) // -len(names)
    return *whole, 0, False
