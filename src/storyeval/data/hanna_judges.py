"""The LLM-judge ratings of HANNA's TACL 2024 release as a score set of their own.

hanna_metric_scores_llm.csv (Chhun, Suchanek & Clavel, TACL 2024) holds, for
the same 1,056 stories as the metric columns, one column per judge, criterion
and task: ``<judge> <RE|CH|EM|SU|EG|CX|AVG> <task>``, e.g. ``ChatGPT EG 3``,
each cell a list of 96 per-prompt values per system (parsed by
storyeval.data.hanna.read_wide / parse_cell like the metric columns).

The task number is the evaluation prompt ("Eval-Prompt") the judge was given.
The authors' notebook (data_visualization.ipynb, dig-team/hanna-benchmark-asg
at 282f275) names the columns 1..4 (cell 7: GRADES_LABELS, `for i in
[1,2,3,4]`) and reads the answers as "Task 0".."Task 3" (cells 12-22:
`answers[i][c]["Task {task_id}"]`, `for task_id in range(4)`), i.e. column
task k = notebook Task k-1. Neither the notebook nor the README (checked at
282f275; the raw answers of llm_answers/ were too large to read) says what
a task is; the paper does (Sec. 3, "Eval-Prompts"), and TASKS follows
it: 1 simple rating; 2 rating with explanation; 3 rating with explanation and
the annotation guidelines given to the human raters; 4 rating with
explanation and the human reference story of the prompt.

The released values are the judge's mean over its tries; some lie below the
1-5 scale (down to -1, e.g. 80 of Mistral-7B's SU task-1 stories), apparently
codes of unusable answers averaged in. They are kept as released and counted
per column in the registry's `off_scale`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from storyeval.criteria import CODES
from storyeval.data.hanna import read_wide, to_long
from storyeval.data.registry import slugify
from storyeval.errors import InputError

JUDGE_PATTERN = re.compile(r"^(?P<judge>.+) (?P<code>RE|CH|EM|SU|EG|CX|AVG) (?P<task>[1-4])$")
AVERAGE = "Average"
TASKS = {
    1: "simple rating",
    2: "rating with explanation",
    3: "rating with explanation and guidelines",
    4: "rating with explanation and human story",
}
FAMILY = "llm-judge"


@dataclass(frozen=True)
class JudgeScores:
    scores: pd.DataFrame  # story_id, metric (slug), value
    registry: (
        pd.DataFrame
    )  # slug, label, column, judge, criterion, task, task_label, family, reference, direction, order, off_scale


def judge_registry(columns: list[str]) -> pd.DataFrame:
    """One row per judge column of `columns` (others ignored), in file order; criterion 'Average' for AVG."""
    rows = []
    for column in columns:
        match = JUDGE_PATTERN.match(column)
        if match is None or match["judge"].startswith("Human"):
            continue
        task = int(match["task"])
        rows.append(
            {
                "slug": f"{slugify(match['judge'])}-{match['code'].lower()}-t{task}",
                "label": f"{match['judge']} {match['code']} (task {task})",
                "column": column,
                "judge": match["judge"],
                "criterion": CODES.get(match["code"], AVERAGE),
                "task": task,
                "task_label": TASKS[task],
                "family": FAMILY,
                "reference": "free",
                "direction": "higher",
            }
        )
    registry = pd.DataFrame(rows)
    registry["order"] = range(len(registry))
    return registry


def read_judge_scores(path: str | Path) -> JudgeScores:
    """Judge scores of hanna_metric_scores_llm.csv in the long form of the metric scores (hanna.Released.scores)."""
    columns = read_wide(path)
    registry = judge_registry(list(columns))
    if registry.empty:
        raise InputError(
            f"{path}: no LLM judge columns '<judge> <RE|...|AVG> <1-4>'; fix: use hanna_metric_scores_llm.csv "
            "of the TACL 2024 release"
        )
    scores = to_long(columns, list(registry["column"]), "metric", "value")
    scores["metric"] = scores["metric"].map(dict(zip(registry["column"], registry["slug"])))
    off_scale = scores["value"].lt(1) | scores["value"].gt(5)
    registry["off_scale"] = registry["slug"].map(off_scale.groupby(scores["metric"]).sum()).astype(int)
    return JudgeScores(scores, registry)


def judges_for(registry: pd.DataFrame, criterion: str) -> list[str]:
    """Judge slugs to meta-evaluate against a human criterion: the judge's rating of it and its Average."""
    return list(registry.loc[registry["criterion"].isin([criterion, AVERAGE]), "slug"])
