"""What a judge job will run, said at start-up: forward passes (stories x criteria) and prompt tokens."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pandas as pd

from storyeval.errors import InputError
from storyeval.io import read_parquet
from storyeval.judges import config as judge_config
from storyeval.judges.prompts import load_template


@lru_cache(maxsize=4)
def read_texts(dataset: str, entry: str, source: str | None) -> pd.DataFrame | None:
    from storyeval.datasets import describe
    from storyeval.text.datasets import subset_prompts

    written = Path(f"results/{dataset}/data/texts.parquet")
    if written.is_file():
        return read_parquet(written)
    if source is None or not Path(source).is_file():
        return None
    entry = json.loads(entry)
    loaded = describe(entry, dataset).load(source, dataset)
    return subset_prompts(loaded.texts, loaded.human_scores, entry.get("max_prompts"))[0]


def dataset_texts(config, dataset: str, source: str | Path | None) -> pd.DataFrame | None:
    """The dataset's text table: results/<dataset>/data/texts.parquet when written, else read from its `source`
    file as rule normalise_texts reads it (once per dataset); None when neither is there yet."""
    entry = json.dumps(config["datasets"][dataset], sort_keys=True, default=str)
    return read_texts(dataset, entry, None if source is None else str(source))


def asked(texts: pd.DataFrame, criteria: dict, settings) -> tuple[int, str]:
    """(forward passes, what they are) of a job on `texts`: stories x criteria, or pairs x 2 orders x criteria."""
    from storyeval.judges.rate import asked_rows

    rows, drawn = asked_rows(texts, settings)
    if drawn is None:
        return len(rows) * len(criteria), f"{len(texts)} stories x {len(criteria)} criteria"
    return len(rows) * len(criteria), f"{len(drawn)} pairs x 2 orders x {len(criteria)} criteria"


def describe_plan(config, dataset: str, judge: str, template: str, source: str | Path | None) -> str:
    """One line: the job, its forward passes and prompt tokens (counted with the judge's tokenizer, when the
    tokenizer is local and the texts readable; otherwise said so)."""
    from storyeval.judges.rate import Settings, count_prompts

    job = f"judge {judge} with template {template} on {dataset}"
    criteria = judge_config.criteria(config, dataset)
    texts = dataset_texts(config, dataset, source)
    if texts is None:
        return f"{job}: {len(criteria)} forward passes per story (the texts are not read yet)"
    settings = Settings(**judge_config.settings(config, judge))
    passes, units = asked(texts, criteria, settings)
    model = config["judges"]["models"][judge]
    source = model.get("tokenizer") or (None if judge_config.served(model) else model["path"])
    if source is None:
        return (f"{job}: {passes} forward passes ({units}) on the server; prompt tokens counted by it (no local "
                "tokenizer)")
    try:
        from transformers import AutoTokenizer

        from storyeval.neural.paths import resolve_model_path

        revision = {} if model.get("revision") is None or Path(source).is_dir() else {"revision": model["revision"]}
        tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(source), local_files_only=True, **revision)
    except (OSError, ValueError) as error:
        return (f"{job}: {passes} forward passes ({units}); prompt tokens not counted, its tokenizer is not local "
                f"({str(error).splitlines()[0]})")
    try:
        passes, tokens = count_prompts(texts, criteria, load_template(judge_config.template_spec(config, template)),
                                       tokenizer, settings)
    except InputError as error:  # said here, and the job stops on it
        return f"{job}: {error}"
    return f"{job}: {passes} forward passes ({units}), {tokens} prompt tokens, {settings.mode} mode"
