"""Every metric and the correlation table from Python, computed as the workflow computes them.

`score` scores lists of stories with one metric: the texts are cleaned as the workflow's loaders clean
them (`storyeval.text.clean`: `<newline>` markers to breaks, whitespace runs to one space), the
parameters default to the workflow's (the metric module's compute() defaults, which config.yaml's
`metric_params` does not change), and the result has the columns the workflow writes to
`results/<dataset>/computed/scores/<metric>.parquet`, indexed by story id.

>>> reference = ["A knight met a dragon, and they talked."]
>>> marked = score("chrf", ["The knight met the dragon.<newline><newline>They talked all night."], references=reference)
>>> marked.round(2)
           chrf
story_id
0         54.98
>>> marked.equals(score("chrf", ["The knight met the dragon. They talked all night."], references=reference))
True

Neural metrics take the path of their model (`model=`: a Hugging Face folder or name, "bundled" for the
offline all-MiniLM-L6-v2; a word-vector file for ROUGE-WE; a trained model file for StoryER). The model
is loaded once per process and reused by later calls.

`correlations` correlates a score frame with human ratings at the levels the data allow, as the
workflow's `correlations.csv`.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyeval.analysis import correlation_table
from storyeval.data.scoreset import Cube, build_cube
from storyeval.errors import InputError
from storyeval.limits import ABSURD, check_text
from storyeval.metrics import catalog
from storyeval.parameters import JUDGE, metric_parameters
from storyeval.parameters import check as check_parameters
from storyeval.stats.correlation import COEFFICIENTS, LEVELS
from storyeval.text.datasets import finish, prompt_ids
from storyeval.text.layouts import OUTLIER, far_out

Texts = Sequence[str] | pd.Series


def text_list(values: object, what: str, name: str) -> list[str]:
    """`values` as a list of texts: a list, tuple or Series of str, each within storyeval.limits' text limit.
    A bare string would be a sequence of one-character texts: refused, as is anything not a sequence of str."""
    plural = f"{what}s" if what != "story" else "stories"
    if isinstance(values, (str, bytes)):
        raise InputError(f"{name}: {plural} is one {type(values).__name__}, not a list (a string would be read as "
                         f"{len(values)} one-character {plural}); fix: pass a list of {plural}, e.g. [text]")
    if not isinstance(values, (list, tuple, pd.Series)):
        raise InputError(f"{name}: {plural} is {type(values).__name__}; fix: pass a list of {plural} (str)")
    values = list(values)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise InputError(f"{name}: {what} {index} is {type(value).__name__}, not str; fix: pass a list of "
                             f"{plural} (str; decode bytes first)")
        check_text(value, f"{name}: {what} {index}", "shorten it")
    return values


def id_list(values: object, count: int, what: str, name: str) -> list:
    """Story ids, prompt ids or systems: one per story, not a bare string."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, pd.Series, pd.Index, np.ndarray)):
        raise InputError(f"{name}: {what} is {type(values).__name__}; fix: pass a list of {what}, one per story")
    values = list(values)
    if len(values) != count:
        raise InputError(f"{name}: {len(values)} {what} for {count} stories; fix: pass one per story")
    return values


def finite_frame(frame: object, what: str, name: str) -> pd.DataFrame:
    """A story x column frame of finite numbers or missing values (NaN, None: a judge's unparsable answer; each
    statistic drops them and counts them); an infinity or a cell that is no number is refused."""
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"{name}: {what} is {type(frame).__name__}, not a DataFrame; fix: pass a story x "
                         f"{'metric' if what == 'scores' else 'criterion'} DataFrame (as score() returns)")
    if frame.empty:
        raise InputError(f"{name}: {what} has no rows or no columns; fix: pass at least one story and column")
    values = frame.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = np.argwhere(~np.isfinite(values) & ~frame.isna().to_numpy())
    if bad.size:
        row, column = bad[0]
        raise InputError(f"{name}: {what} holds {str(frame.iat[row, column])[:40]} (not a finite number) in column "
                         f"{frame.columns[column]!r}, story {frame.index[row]!r} ({len(bad)} such cells); fix: "
                         "drop those stories or columns, or give finite numbers")
    huge = np.argwhere(np.abs(np.nan_to_num(values)) > ABSURD)  # as the workflow refuses in a table of one's own
    if huge.size:
        row, column = huge[0]
        raise InputError(f"{name}: {what} holds {values[row, column]:g} in column {frame.columns[column]!r}, story "
                         f"{frame.index[row]!r}, beyond {ABSURD:g} in size, which no score or rating is "
                         f"({len(huge)} such cells); fix: correct it, or drop that story")
    if what == "human":  # the workflow's warning on ratings of no declared scale (storyeval.text.layouts.unscaled)
        for column, ratings in zip(frame.columns, values.T):
            outside, low, high = far_out(ratings)
            if outside.any():
                story = frame.index[np.flatnonzero(outside)[0]]
                warnings.warn(f"{name}: human rating {ratings[outside][0]:g} on {column!r}, story {story!r}, lies "
                              f"over {OUTLIER:,} interquartile ranges outside the bulk of its ratings (quartiles "
                              f"{low:g} and {high:g}; {int(outside.sum())} such ratings): the correlations include "
                              "it; fix: correct it, or drop that story", stacklevel=3)
    return frame


def texts_table(stories: Texts, *, references: Texts | None = None, prompts: Texts | None = None,
                story_ids: Sequence | None = None, systems: Sequence[str] | None = None,
                name: str = "texts") -> pd.DataFrame:
    """The text table the metrics read (`storyeval.metrics.base`), cleaned as every dataset loader cleans.

    Story ids default to 0, 1, ...; prompt ids number the distinct prompts in order of appearance.

    >>> texts_table(["Once  upon<newline>a time."], prompts=["Write a tale."])[["story_id", "prompt_id", "story"]]
      story_id  prompt_id                story
    0        0          0  Once upon a time.
    """
    stories = text_list(stories, "story", name)
    ids = [str(k) for k in range(len(stories))] if story_ids is None else id_list(story_ids, len(stories),
                                                                                   "story_ids", name)
    columns = {"story_id": ids, "story": stories}
    for column, values in (("reference", references), ("prompt", prompts), ("system", systems)):
        columns[column] = [None] * len(stories) if values is None else (
            id_list(values, len(stories), "systems", name) if column == "system" else text_list(values, column, name))
        if len(columns[column]) != len(stories):
            raise InputError(f"{name}: {len(columns[column])} {column}s for {len(stories)} stories; "
                             f"fix: pass one {column} per story")
    texts = pd.DataFrame(columns, dtype=object)
    texts["prompt_id"] = 0 if prompts is None else prompt_ids(texts["prompt"]).to_numpy()
    return finish(name, texts)


def encoded(texts: pd.DataFrame, metric: str, model: str, params: dict, device: str | None):
    """The token-embedding cache of every text the metric reads, every layer of the encoder at `model`."""
    from storyeval.neural.device import choose_device
    from storyeval.neural.embeddings import encode_texts, inference_encoder
    from storyeval.neural.paths import resolve_model_path

    path = resolve_model_path(model)
    corpus = [text for column in ("story", "reference", "prompt") for text in texts[column].dropna()]
    required = catalog.load(metric).required_texts
    accepted = inspect.signature(required).parameters
    corpus += required(texts, **{key: value for key, value in params.items() if key in accepted})
    layers = range(1, int(inference_encoder(path, choose_device(device))[1].config.num_hidden_layers) + 1)
    return encode_texts(corpus, path, layers, device=device)


def score(metric: str, stories: Texts, *, references: Texts | None = None, prompts: Texts | None = None,
          story_ids: Sequence | None = None, model: str | None = None, device: str | None = None,
          **params) -> pd.DataFrame:
    """Scores of one metric (a catalog name: `storyeval.metrics.catalog.CATALOG`), one row per story.

    `references` and `prompts` are needed where the metric reads them (`catalog.entry(metric).needs`);
    `params` override the metric's defaults (`catalog.defaults(metric)`); `model` is the model path of a
    neural metric; `device` ("cpu", "cuda"; default: cuda when present) where the metric runs a model.

    >>> score("datastats", ["The dragon slept."], prompts=["A dragon sleeps."])[["coverage", "novelty-1"]]
              coverage  novelty-1
    story_id
    0              0.6        0.4
    """
    if not isinstance(metric, str):
        raise InputError(f"score: metric is {type(metric).__name__}; fix: name it, one of {', '.join(catalog.CATALOG)}")
    entry = catalog.entry(metric)
    accepted = catalog.parameters(metric) - {entry.resource[0] if entry.resource else None, "device"}
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise InputError(f"score: {metric} has no parameter {unknown[0]!r}; fix: use {', '.join(sorted(accepted))}"
                         f"{'' if entry.resource is None else ', model= and device='}")
    check_parameters(params, metric_parameters(metric), f"score: {metric}")
    for keyword, value in (("model", model), ("device", device)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"score: {keyword} is {type(value).__name__}; fix: pass a str (a path, or e.g. 'cpu')")
    texts = texts_table(stories, references=references, prompts=prompts, story_ids=story_ids, name=metric)
    if entry.resource is None:
        if model is not None:
            raise InputError(f"metric {metric} reads no model; fix: leave model out")
        return catalog.load(metric).compute(texts, **params)
    keyword, role = entry.resource
    if model is None:
        raise InputError(f"metric {metric} reads a model (config role {role}); fix: pass model=<path>, "
                         "e.g. model='bundled' for the offline all-MiniLM-L6-v2 encoder")
    if keyword == "cache":
        params["cache"] = encoded(texts, metric, model, params, device)
    else:
        from storyeval.neural.paths import resolve_model_path

        params[keyword] = resolve_model_path(model)
        if device is not None and "device" in catalog.parameters(metric):
            params["device"] = device
    return catalog.load(metric).compute(texts, **params)


def cube(frame: pd.DataFrame, key: str, prompts: pd.Series, systems: pd.Series) -> Cube:
    """A story x variable frame as [prompt, system, variable] for the statistics."""
    stories = pd.DataFrame({"story_id": frame.index, "prompt_id": prompts.to_numpy(), "system": systems.to_numpy()})
    long = frame.rename_axis("story_id").reset_index().melt(id_vars="story_id", var_name=key, value_name="value")
    return build_cube(stories, long, key, "value", list(frame.columns), list(dict.fromkeys(systems)), f"{key} scores")


def correlations(scores: pd.DataFrame, human: pd.DataFrame | None = None, *, prompts: Sequence | None = None,
                 systems: Sequence[str] | None = None, levels: Sequence[str] | None = None,
                 coefficients: Sequence[str] = COEFFICIENTS) -> pd.DataFrame:
    """Correlations of metric scores with human ratings, the workflow's `correlations.csv`: one row per kind
    (criteria, metric_criterion, metric_metric), level, coefficient and pair, with r and n.

    `scores`: story id x metric (as `score` returns; `pd.concat` several); `human`: story id x criterion
    (mean rating per story), None for metric x metric only; `prompts`, `systems`: per story, in the order of
    `scores`. Levels the data allow (all of them by default): with prompts and systems, story level (per
    prompt over its systems, averaged over prompts: every prompt needs every system) and system level
    (system means); without prompts, story level over all stories and, with systems, system level; without
    systems, story level only. Remove the human reference system first, as the workflow does.

    >>> human = pd.DataFrame({"Coherence": [1, 2, 3, 2, 4, 5]}, index=[str(k) for k in range(6)])
    >>> scores = pd.DataFrame({"bleu": [10, 30, 20, 15, 25, 40]}, index=human.index)
    >>> table = correlations(scores, human, prompts=[0, 0, 0, 1, 1, 1], systems=["a", "b", "c"] * 2,
    ...                      coefficients=["pearson"])
    >>> table[table["kind"] == "metric_criterion"][["level", "x", "y", "r", "n"]].round(3)
        level     x          y      r  n
    1   story  bleu  Coherence  0.727  2
    4  system  bleu  Coherence  0.962  3
    """
    scores = finite_frame(scores, "scores", "correlations")
    if human is not None:
        human = finite_frame(human, "human", "correlations")
    for what, values in (("prompts", prompts), ("systems", systems)):
        if values is not None:
            id_list(values, len(scores), what, "correlations")
    for what, values, allowed in (("levels", levels, list(LEVELS)), ("coefficients", coefficients, COEFFICIENTS)):
        if values is not None and (isinstance(values, str) or not set(values) <= set(allowed)):
            raise InputError(f"correlations: {what} {values!r}; fix: pass a list of {', '.join(allowed)}")
    if human is not None and not human.index.equals(scores.index):
        raise InputError("correlations: the human ratings and the scores have different story ids; "
                         "fix: give both frames the same index, in the same order")
    allowed = ["story", "system"] if systems is not None else ["story"]
    levels = list(levels or allowed)
    if set(levels) - set(allowed) or set(levels) - set(LEVELS):
        raise InputError(f"correlations: levels {levels}, but these data allow {allowed}; fix: use those")
    one_group = pd.Series(np.zeros(len(scores), dtype=int))
    by_story = pd.Series(scores.index.astype(str))
    frames = []
    for level in levels:
        if prompts is not None and systems is not None:
            group, unit = pd.Series(list(prompts)), pd.Series(list(systems))
            metric_frame, human_frame = scores, human
        elif level == "system":  # no prompts: the system means, one group
            means = [frame.groupby(list(systems), sort=False).mean() if frame is not None else None
                     for frame in (scores, human)]
            metric_frame, human_frame = means
            group, unit = pd.Series(np.zeros(len(metric_frame), dtype=int)), pd.Series(metric_frame.index)
        else:  # story level over all stories: one group whose "systems" are the stories
            metric_frame, human_frame = scores.set_axis(by_story), None if human is None else human.set_axis(by_story)
            group, unit = one_group, by_story
        metrics = cube(metric_frame, "metric", group, unit)
        ratings = None if human_frame is None else cube(human_frame, "criterion", group, unit)
        frames.append(correlation_table(ratings, metrics, [level], list(coefficients)))
    return pd.concat(frames, ignore_index=True)


def named_criteria(criteria: str | Sequence[str] | dict[str, str]) -> dict[str, str]:
    """{name: definition} of `criteria`: HANNA's names (one name alone: that criterion) with HANNA's definitions,
    or {name: definition} as given."""
    from storyeval.judges.prompts import hanna_criteria

    if isinstance(criteria, dict):
        return dict(criteria)
    criteria = [criteria] if isinstance(criteria, str) else criteria  # one criterion, not its letters
    unknown = [name for name in criteria if name not in hanna_criteria()]
    if unknown:
        raise InputError(f"judge: no definition of criterion {unknown[0]!r}; fix: pass criteria as "
                         "{name: definition}, or use HANNA's names (" + ", ".join(hanna_criteria()) + ")")
    return {name: hanna_criteria()[name] for name in criteria}


def judge(stories: Texts, *, criteria: Sequence[str] | dict[str, str], model: str, mode: str = "expected",
          template: str | None = None, prompts: Texts | None = None, references: Texts | None = None,
          story_ids: Sequence | None = None, revision: str | None = None, device: str | None = None,
          batch_size: int = 8, batch_tokens: int = 8192, max_new_tokens: int = 32, dtype: str = "auto",
          served: str | None = None, tokenizer: str | None = None, top_logprobs: int = 20, truncate: str = "none",
          max_length: int | None = None, cache: str | None = None, pairs: str | int = "auto", ties: str = "flip",
          pair_score: str = "win_rate", seed: int = 20221012) -> pd.DataFrame:
    """Ratings 1-5 of an LLM judge (`storyeval.judges.rate`), one column per criterion, one row per story: the
    numbers of the workflow's judge job with the same template and settings (config `judges`).

    `criteria`: HANNA criterion names (rated with HANNA's definitions; one name: that criterion) or {name:
    definition}; `model`: a Hugging Face causal LM (folder or hub id, `revision` pins a hub id); `mode`: expected
    (G-Eval's probability-weighted rating), generate (the greedy answer, parsed; NaN where it holds no rating) or
    pairwise (two stories of a prompt compared in both orders, `pairs` drawn with `seed`, verdicts under the tie
    rule `ties` turned into each story's `pair_score`; storyeval.judges.pairwise); `template`: a file of
    storyeval/judges/templates (default tacl-1 with `prompts`, geval without; pairwise, pairwise-stories) or a .yaml
    path. A `model` URL is an OpenAI-compatible server (storyeval.judges.http): `served` names its model,
    `tokenizer` a local copy of its tokenizer, `top_logprobs` how many next tokens mode expected reads. A prompt
    past the window (`max_length`, default the model's) is left out (`truncate` none: NaN) or its story cut (head,
    middle; storyeval.judges.window). Every NaN is counted in one logged line and in the frame's `attrs`
    (parse_failures, past_window, truncated; mode pairwise adds pairs, position_consistency, first_share).
    `cache`: a file of answers kept between calls (storyeval.judges.cache; the workflow's judges.cache). Settings
    outside storyeval.parameters.JUDGE's ranges are refused before anything loads.
    """
    from storyeval.judges.prompts import default_template, load_template
    from storyeval.judges.rate import Settings, rate

    settings = {"mode": mode, "batch_size": batch_size, "batch_tokens": batch_tokens, "max_new_tokens": max_new_tokens,
                "dtype": dtype, "top_logprobs": top_logprobs, "truncate": truncate, "max_length": max_length,
                "pairs": pairs, "ties": ties, "pair_score": pair_score, "seed": seed}
    check_parameters(settings, JUDGE, "judge:")
    criteria = named_criteria(criteria)
    texts = texts_table(stories, references=references, prompts=prompts, story_ids=story_ids, name="judge")
    chosen = load_template(template or default_template(prompts is not None, mode))
    scores, _, run = rate(texts, dict(criteria), chosen, model, Settings(**settings), revision, device, served=served,
                          tokenizer=tokenizer, cache=cache)
    kept = ("parse_failures", "past_window", "truncated", "pairs", "position_consistency", "first_share")
    scores.attrs = {key: run[key] for key in kept if key in run}  # also logged, one line
    return scores
