"""The finished report's browser tab title. Snakemake's report template writes <title>Snakemake Report</title>
and has no setting for it (only a stylesheet, --report-stylesheet), so `make report` retitles the file it built:
`python -m storyeval.workflow.report report.html hanna`."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

from storyeval.errors import InputError

TITLE = re.compile(r"<title>[^<]*</title>")


def report_title(dataset: str = "") -> str:
    """The tab title: storyeval and the dataset the report shows (all datasets of the run without one)."""
    return f"storyeval report: {dataset}" if dataset else "storyeval report: all datasets"


def retitle(path: str | Path, dataset: str = "") -> None:
    """Set the report's first <title> (Snakemake's) to report_title(dataset)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    retitled, count = TITLE.subn(f"<title>{html.escape(report_title(dataset))}</title>", text, count=1)
    if not count:
        raise InputError(f"{path}: no <title> in the report; fix: rebuild it with snakemake --report")
    path.write_text(retitled, encoding="utf-8")


if __name__ == "__main__":
    retitle(*sys.argv[1:3])
