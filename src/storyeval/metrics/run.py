"""Run one metric module on a text table and write its scores and signature (shared by the metric rules)."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path
from types import ModuleType

import pandas as pd

from storyeval.io import write_parquet


def score_and_write(module: ModuleType, texts: pd.DataFrame, options: dict, scores_path: str | Path,
                    signature_path: str | Path, extra: dict, log: logging.Logger) -> pd.DataFrame:
    """compute() with `options`, its warnings logged (never silent), scores as parquet, signature as JSON."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = module.compute(texts, **options)
    for warning in caught:
        log.warning("%s", warning.message)
    signature = module.signature(**options)
    clash = sorted(set(signature) & set(extra))
    if clash:  # the rule's keys (dataset, configured model name) must not hide the metric's (its model identity)
        raise ValueError(f"signature keys {clash} of {module.NAME} clash with the rule's; rename the rule's")
    write_parquet(scores.reset_index(), scores_path)
    signature |= {"stories": len(texts), **extra}
    if caught:  # a documented fallback (ROUGE's 0 for a script it cannot tokenise): the report says it too
        signature["warnings"] = sorted({str(warning.message) for warning in caught})
    Path(signature_path).write_text(json.dumps(signature, indent=2, sort_keys=True, default=str) + "\n")
    return scores
