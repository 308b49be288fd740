"""LLM judges computed from the texts: any Hugging Face causal LM rates any dataset's stories on its criteria
(`rate`), one score column per judge, template and criterion, registered beside the metrics as family
`llm-judge` so that every statistic and the meta-evaluation take them (`storyeval.stats.meta` compares each
with the human criterion it rated). HANNA's released judge ratings are `storyeval.data.hanna_judges`."""

from __future__ import annotations

import pandas as pd

from storyeval.data.hanna_judges import FAMILY
from storyeval.data.registry import slugify

JUDGE_COLUMNS = ["judge", "criterion", "task", "template", "mode"]  # registry columns a judge row adds


def column_slug(judge: str, template: str, criterion: str) -> str:
    return f"judge-{slugify(judge)}-{slugify(template)}-{slugify(criterion)}"


def judge_registry(judge: str, template, criteria: list[str], mode: str) -> pd.DataFrame:
    """Registry rows (the metric registry's columns and JUDGE_COLUMNS) of one judge job's score columns; `task`
    is the template's TACL Eval-Prompt number, else its name."""
    task = template.name if template.task is None else int(template.task)
    return pd.DataFrame([{
        "slug": column_slug(judge, template.name, criterion),
        "label": f"{judge} {criterion} ({template.name})",
        "column": criterion,
        "reference": "free",
        "family": FAMILY,
        "direction": "higher",
        "judge": judge,
        "criterion": criterion,
        "task": task,
        "template": template.name,
        "mode": mode,
    } for criterion in criteria])
