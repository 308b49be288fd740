"""Report pages: each figure and table of the workflow as one self-contained HTML file.

Snakemake's report shows an HTML result inline at its own size, while it shrinks a PNG to the window (a 72 x 72
heatmap becomes unreadable, a 72 x 7 one a strip) and offers a CSV as a download. A figure page holds the
figure's PNG pixels, losslessly re-encoded as WebP (a quarter of the PNG's bytes), shown at SCREEN_DPI, and
names its PDF; a table page is the table in HTML. This module imports no plotting library: the workflow reads
the labels when it parses.
"""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.data.registry import DEGENERATE_NOTE
from storyeval.io import _atomic

# 5 pt cell numbers are 10 screen pixels tall at 150 px per inch: readable without zooming.
SCREEN_DPI = 150
# A figure up to this wide (inches) is shrunk to the window instead (its smallest text stays readable); the
# 72-metric heatmaps (15 in and more) keep SCREEN_DPI and scroll.
FIT_INCHES = 12
SHOWS = {
    "criteria": "criteria × criteria",
    "metric_criteria": "metrics × criteria",
    "metric_metric": "metrics × metrics",
    "williams": "Williams test, metric × metric",
    "bootstrap_f1": "weighted F1, metrics × criteria",
    "topk": "|r| on the top-k systems",
    "violins": "ratings per system",
    "system_ranking": "ranks of the systems by each metric",
}
METRIC_KINDS = ["metric_criteria", "metric_metric", "williams", "bootstrap_f1"]  # one row or column a metric
COEFFICIENTS = {"kendall": "Kendall τ", "spearman": "Spearman ρ", "pearson": "Pearson r"}
TABLES = {  # name -> (number or name in the papers, title of the table)
    "tab3_icc": ("Tab. 3", "Tab. 3: intraclass correlation per criterion (95 % CI), by rater layout"),
    "tab4_system_means": ("Tab. 4", "Tab. 4: mean rating per system (95 % CI); ** best, * CI overlaps the best"),
    "tab5_top3_pearson": ("Tab. 5", "Tab. 5: top metrics per criterion by |Pearson| (%)"),
    "tab6_borda": ("Tab. 6", "Tab. 6: top metrics by Borda count (ties: average ranks)"),
    "tab8_top5_story": ("Tab. 8", "Tab. 8: top metrics per criterion, story level (|r| %)"),
    "tab9_top5_system": ("Tab. 9", "Tab. 9: top metrics per criterion, system level (|r| %)"),
    "kemeny_consensus": ("Kemeny", "Kemeny consensus vs Borda (Kemeny score: lower is better)"),
    "reanalysis1_sum_of_ranks": ("Reanalysis 1", "Reanalysis 1 (Houairi & Thiounn): sum-of-ranks rankings"),
    "reanalysis2_top_k": ("Reanalysis 2", "Reanalysis 2 (Mendras & Nietge): top metrics per coefficient"),
    "reanalysis2_coefficient_agreement": (
        "Reanalysis 2", "Reanalysis 2: do rankings depend on the coefficient? Wilcoxon signed-rank on paired |r|, "
                        "Kendall tau between rankings"),
    "system_ranking_table": ("Systems", "Systems ranked by each metric (rank 1 = best), and Borda consensus rankings"),
    "storyer_evaluation_table": ("StoryER", "Learned StoryER-style evaluator beside the reference-free metrics"),
    "storyer_loss_history": ("StoryER", "Learned StoryER-style evaluator: mean training loss per epoch"),
    "computation_times": ("Tab. 2 (Houairi & Thiounn)", "Computation time per metric job, in total and per story"),
}
DEGENERATE = DEGENERATE_NOTE
STYLE = """body { font-family: sans-serif; margin: 12px; color: #222; }
p { max-width: 60em; } img { display: block; margin-top: 8px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; white-space: nowrap; }
th { background: #eef2f7; } tr:nth-child(even) td { background: #fafafa; }"""


def figure_labels(name: str, spec: dict) -> dict[str, str]:
    """The columns of a figure in the report's list: number, what it shows, level, coefficient, metrics."""
    if spec["kind"] == "williams":
        measure = f"Pearson r, {spec['criterion']}{', BH-adjusted p' * (spec.get('p_values') == 'bh')}"
    else:
        measure = COEFFICIENTS.get(spec.get("coefficient"), "–")
    number = f"Fig. {name[3:5]}" if name.startswith("fig") else "–"  # zero-padded: the report sorts the labels as text
    return {"Figure": number, "Shows": SHOWS[spec["kind"]], "Level": spec.get("level", "–"),
            "Coefficient": measure, "Metrics": ("representative subset" if spec["subset"] else "all")
            if spec["kind"] in METRIC_KINDS else "–"}


def figure_heading(name: str, spec: dict) -> str:
    labels = figure_labels(name, spec)
    parts = [labels["Shows"], f"{labels['Level']} level" * (labels["Level"] != "–"), labels["Coefficient"],
             f"{labels['Metrics']} metrics" * (labels["Metrics"] != "–")]
    number = labels["Figure"].replace("Fig. 0", "Fig. ")
    return ": ".join(
        part for part in [number, ", ".join(part for part in parts if part not in ("", "–"))] if part != "–"
    )


def table_labels(name: str) -> dict[str, str]:
    number, title = TABLES[name]
    return {"Table": number, "Shows": title.removeprefix(f"{number}: ")}


def has_degenerate(frame: pd.DataFrame) -> bool:
    """Whether a cell carries the † of a degenerate released value (BaryScore-SD-0.001)."""
    return bool(frame.astype(str).apply(lambda column: column.str.contains("†")).any().any())


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n<h3>{html.escape(title)}</h3>\n{body}\n</body></html>\n"
    )


def write_figure_page(
    path: str | Path, png: str | Path, pdf: str | Path, heading: str, dpi: int, pixels: np.ndarray | None = None
) -> None:
    """A page with the PNG's pixels at SCREEN_DPI (scroll for the large heatmaps) and the PDF's path.

    `pixels`: the PNG's RGBA array when the caller holds it (save_figure returns it), which spares decoding
    the file again (a tenth of a second for a 72 x 72 heatmap)."""
    from PIL import Image  # Pillow comes with matplotlib; only the figure jobs need it

    with Image.open(png) if pixels is None else Image.fromarray(pixels, "RGBA") as image:
        buffer = io.BytesIO()
        image.save(buffer, format="WEBP", lossless=True, method=1)  # method 4: 0.15 % smaller, 15 % slower
        width = round(image.width * SCREEN_DPI / dpi)
        fit = ' style="max-width: 100%; height: auto"' if image.width / dpi <= FIT_INCHES else ""
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    body = (
        f"<p>Vector version: <code>{html.escape(str(pdf))}</code>; full-resolution PNG: "
        f'<code>{html.escape(str(png))}</code>.</p>\n<img width="{width}"{fit} alt="{html.escape(heading)}" '
        f'src="data:image/webp;base64,{data}">'
    )
    _atomic(path, lambda tmp: Path(tmp).write_text(_page(heading, body), encoding="utf-8"))


# Tab. 4 marks the best system as Markdown bold (**4.17**); on the page it is bold, not asterisks.
MARKDOWN_BOLD = re.compile(r"\*\*([^*<]+)\*\*")


def write_table_page(path: str | Path, frame: pd.DataFrame, title: str, files: list[str | Path]) -> None:
    """A page with the table as HTML, the † note where a cell carries it, and the CSV and Markdown paths."""
    note = f"<p>{DEGENERATE}.</p>\n" if has_degenerate(frame) else ""
    names = ", ".join(f"<code>{html.escape(str(file))}</code>" for file in files)
    table = MARKDOWN_BOLD.sub(r"<b>\1</b>", frame.to_html(index=False, na_rep="", border=0))
    body = f"{table}\n{note}<p>Files: {names}.</p>"
    _atomic(path, lambda tmp: Path(tmp).write_text(_page(title, body), encoding="utf-8"))
