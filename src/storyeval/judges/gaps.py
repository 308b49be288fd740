"""What a judge could not rate, stated: each prompt without a rating is NaN (never imputed) with its reason in the
job's details (`failure`), counted in one log line; a judge column with fewer values than any statistic needs
(`storyeval.data.scoreset.MIN_CELLS`) is left out of the score set with one log line and a note on the report's
landing page: how many answers parsed, three raw answers, the fix.
"""

from __future__ import annotations

import json
import logging

import pandas as pd

from storyeval.data.scoreset import MIN_CELLS

log = logging.getLogger(__name__)

NO_RATING = "no 1-5 rating in the answer"
PAST_WINDOW = "past the window"
SERVER = "server error"
MISSING_CHOICE = "no usable answer for this prompt in the server's reply"
FIXES = {
    NO_RATING: "use mode expected (it reads the rating tokens' probabilities, nothing to parse), an instruction-tuned "
               "judge, or a template whose answer opens with the rating (answer: \"Rating:\")",
    PAST_WINDOW: "set truncate: head or middle for this judge (judges.models.<name>.truncate), or use a judge with a "
                 "longer window",
    SERVER: "read the server's log (the answers below are its errors), correct it and rerun the judge job",
    MISSING_CHOICE: "read the server's log, correct it and rerun the judge job",
}
LEFT_OUT = ["slug", "label", "rated", "stories", "answers", "reason", "fix"]


def failure_count(details: pd.DataFrame) -> dict[str, int]:
    """{reason: prompts} of the prompts without a rating."""
    reasons = details.get("failure", pd.Series("", index=details.index)).fillna("")
    return {reason: int(n) for reason, n in reasons[reasons != ""].value_counts(sort=False).items()}


def count_line(key: str, details: pd.DataFrame) -> str | None:
    """One line: how many of the prompts hold no rating, by reason and by criterion; None where all do."""
    counts = failure_count(details)
    if not counts:
        return None
    failed = details[details["failure"].fillna("") != ""]
    per = failed.groupby("criterion", sort=False).size()
    return (f"{key}: {len(failed)} of {len(details)} prompts without a rating (NaN, not imputed): "
            + ", ".join(f"{n} {reason}" for reason, n in counts.items())
            + "; per criterion: " + ", ".join(f"{name} {n}" for name, n in per.items()))


def raw_answers(details: pd.DataFrame, criterion: str, k: int = 3) -> list[str]:
    """The first `k` answers (the failure's reason where no answer came) of `criterion`'s prompts without a
    rating, each at most 80 characters."""
    failed = details[(details["criterion"] == criterion) & (details["failure"].fillna("") != "")]
    answer = failed["answer"] if "answer" in failed else pd.Series("", index=failed.index)
    texts = [str(text) if isinstance(text, str) and text else reason
             for text, reason in zip(answer, failed["failure"])]
    return [text if len(text) <= 80 else text[:77] + "..." for text in texts[:k]]


def answers_text(details: pd.DataFrame, criterion: str) -> str:
    """`raw_answers` as a table cell: quoted, comma-separated ("No answer.", "No answer.")."""
    return json.dumps(raw_answers(details, criterion), ensure_ascii=False)[1:-1]


def left_out(scores: pd.DataFrame, details: pd.DataFrame, registry: pd.DataFrame) -> pd.DataFrame:
    """LEFT_OUT rows of one judge job's columns (`scores`: story_id and one column per slug; `registry`: slug,
    label, criterion) with fewer than MIN_CELLS ratings; the reason is the commonest failure of its prompts."""
    if "failure" not in details:  # written before failures had their reason
        details = details.assign(failure=details["value"].isna().map({True: NO_RATING, False: ""}))
    rows = []
    for entry in registry.itertuples(index=False):
        rated = int(scores[entry.slug].notna().sum())
        if rated >= MIN_CELLS:
            continue
        own = details[details["criterion"] == entry.criterion]
        counts = failure_count(own)
        reason = max(counts, key=counts.get) if counts else NO_RATING
        rows.append([entry.slug, entry.label, rated, len(scores),
                     answers_text(details, entry.criterion),
                     reason, FIXES.get(reason, FIXES[NO_RATING])])
    return pd.DataFrame(rows, columns=LEFT_OUT)


def left_out_line(row) -> str:
    return (f"{row.label}: {row.rated} of {row.stories} stories rated, fewer than the {MIN_CELLS} any statistic "
            f"needs ({row.reason}; answers: {row.answers}); left out of every statistic; fix: {row.fix}")


def left_out_note(table: pd.DataFrame) -> str:
    """The landing page's sentence on the judge columns left out; "" where none was. The answers' braces and
    markup characters read as "?" (the page is a report caption: Jinja and reStructuredText read them)."""
    if table.empty:
        return ""
    rows = table.assign(answers=table["answers"].fillna("").astype(str).str.replace(r"[{}*`|\\]", "?", regex=True))
    return "Judge columns left out of every statistic (docs/judges.md, A judge that cannot answer): " + "; ".join(
        left_out_line(row) for row in rows.itertuples(index=False)) + "."


def stated(details: pd.DataFrame, key: str) -> tuple[pd.DataFrame, dict]:
    """(details, counts: parse failures, prompts past the window, prompts cut) of a job's details: a prompt without
    a value and without a stated reason holds no answer in it (a parse failure); the count line is logged where any
    prompt has none."""
    unstated = details["value"].isna() & (details["failure"].fillna("") == "")
    details = details.assign(failure=details["failure"].fillna("").mask(unstated, NO_RATING))
    line = count_line(key, details)
    if line:
        log.warning("%s", line)
    past = int((details["failure"] == PAST_WINDOW).sum())
    return details, {"parse_failures": int((details["failure"] != "").sum()) - past, "past_window": past,
                     "truncated": int((details["truncated"] > 0).sum())}
