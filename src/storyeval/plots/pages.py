"""Report pages: each figure and table of the workflow as one self-contained HTML file.

Snakemake's report shows an HTML result inline at its own size, while it shrinks a PNG to the window (a 72 x 72
heatmap becomes unreadable, a 72 x 7 one a strip) and offers a CSV as a download. A figure page holds the
figure's PNG pixels, losslessly re-encoded as WebP (under half the PNG's bytes), shown at SCREEN_DPI; a table
page is the table in HTML. Each page shows its caption (workflow/report/*.rst) and carries its files (the PDF, the
full CSV) as download links whose address holds the bytes, so that the report works wherever it is copied. This
module imports no plotting library: the workflow reads the labels when it parses.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.criteria import CRITERIA
from storyeval.data.registry import DEGENERATE_MARK, DEGENERATE_NOTE, RELEASED_RATERS, marked
from storyeval.data.scoreset import MIN_SYSTEMS
from storyeval.io import _atomic
from storyeval.sources import Facts

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
UNNUMBERED = {"williams": "Williams", "system_ranking": "Systems"}  # a set rating other criteria than HANNA's
METRIC_KINDS = ["metric_criteria", "metric_metric", "williams", "bootstrap_f1"]  # one row or column a metric
COEFFICIENTS = {"kendall": "Kendall τ", "spearman": "Spearman ρ", "pearson": "Pearson r"}
TABLES = {  # name -> (number or name in the papers, title of the table), in the papers' order
    "tab3_icc": ("Tab. 3", "Tab. 3: intraclass correlation per criterion (95 % CI), by rater layout"),
    "agreement": ("Agreement", "Human agreement: Krippendorff's alpha and the human ceiling per criterion"),
    "alt_test": ("Alt-test", "May a metric replace a rater? The Alternative Annotator Test per metric and criterion"),
    "tab4_system_means": ("Tab. 4", "Tab. 4: mean rating per system (95 % CI); bold and *: best generated system, "
                                    "italic: CI overlaps it"),
    "tab5_top3_pearson": ("Tab. 5", "Tab. 5: top metrics per criterion by Pearson r (%)"),
    "tab6_borda": ("Tab. 6", "Tab. 6: top metrics by Borda count (ties: average ranks)"),
    "tab8_top5_story": ("Tab. 8", "Tab. 8: top metrics per criterion, story level (r %)"),
    "tab9_top5_system": ("Tab. 9", "Tab. 9: top metrics per criterion, system level (r %)"),
    "kemeny_consensus": ("Kemeny", "Kemeny consensus vs Borda (Kemeny score: lower is better)"),
    "reanalysis1_sum_of_ranks": ("Reanalysis 1", "Reanalysis 1 (Houairi & Thiounn): sum-of-ranks rankings"),
    "reanalysis2_top_k": ("Reanalysis 2", "Reanalysis 2 (Mendras & Nietge): top metrics per coefficient"),
    "reanalysis2_coefficient_agreement": (
        "Reanalysis 2", "Reanalysis 2: do rankings depend on the coefficient? Wilcoxon signed-rank on paired |r|, "
                        "Kendall tau between rankings"),
    "meta_best_table": ("Meta", "Best metrics (and LLM judges) per criterion and grouping"),
    "meta_consensus_table": ("Meta", "Kemeny and Borda consensus of metrics (and LLM judges)"),
    "system_ranking_table": ("Systems", "Systems ranked by each metric (rank 1 = best), and Borda consensus rankings"),
    "paired_accuracy": ("Paired", "Which story of a prompt wins: each metric's pairwise accuracy with ties"),
    "storyer_evaluation_table": ("StoryER", "Learned StoryER-style evaluator beside the reference-free metrics"),
    "storyer_loss_history": ("StoryER", "Learned StoryER-style evaluator: mean training loss per epoch"),
    "computation_times": ("Times", "Computation time per metric job, in total and per story"),
    "judge_pairwise": ("Judges", "Pairwise LLM judges: position bias, ties and pairwise accuracy against the humans"),
    "judge_distribution": ("Judges", "LLM judges' distributions against the raters' histograms (1-Wasserstein)"),
    "released_judges": ("Judges", "Released LLM judges measured as computed ones: missing ratings, distribution, "
                                  "position"),
}
# How a ranking table says what ranked the metrics (config analysis.orientation, stats.ranking.ranked_r).
ORIENTATION_NOTES = {"oriented": "ranked by r after orientation (a lower-is-better metric's r negated)",
                     "absolute": "ranked by |r|, as HANNA"}
# The caption (workflow/report/<name>.rst) of each kind of table: what its numbers are.
TABLE_CAPTIONS = {
    "tab3_icc": "icc",
    "agreement": "agreement",
    "alt_test": "alt_test",
    "tab4_system_means": "system_means",
    "tab5_top3_pearson": "top_metrics",
    "tab6_borda": "borda",
    "tab8_top5_story": "top_metrics",
    "tab9_top5_system": "top_metrics",
    "kemeny_consensus": "kemeny",
    "reanalysis1_sum_of_ranks": "sum_of_ranks",
    "reanalysis2_top_k": "reanalysis_top_k",
    "reanalysis2_coefficient_agreement": "coefficient_agreement",
    "meta_best_table": "meta_best",
    "meta_consensus_table": "meta_consensus",
    "system_ranking_table": "system_ranking",
    "paired_accuracy": "paired_accuracy",
    "storyer_evaluation_table": "storyer_evaluation",
    "storyer_loss_history": "storyer_training",
    "computation_times": "computation_times",
    "judge_pairwise": "judge_pairwise",
    "judge_distribution": "judge_distribution",
    "released_judges": "released_judges",
}
HEATMAPS = ("criteria", "metric_criteria", "metric_metric")
# The meta tables for people (readable): {column: header}, and the groups whose first rows a page shows (with the
# best of each kind, column kind_best: a metric is never hidden behind judges).
META_TABLES = {
    "meta_best_table": ({"grouping": "Grouping", "coefficient": "Coefficient", "criterion": "Criterion",
                         "label": "Metric or LLM judge", "kind": "Kind", "family": "Family", "r": "r",
                         "ci_low": "95 % CI low", "ci_high": "95 % CI high", "rank": "Cluster rank",
                         "rank1_size": "Best cluster size", "confound": "Confound"}, ["Grouping", "Criterion"]),
    "meta_consensus_table": ({"level": "Grouping", "kind": "Kind", "kemeny_rank": "Kemeny rank",
                              "label": "Metric or LLM judge", "family": "Family", "borda": "Borda count",
                              "borda_rank": "Borda rank"}, ["Grouping"]),
}
PAIRED_HEADERS = {"criterion": "Criterion", "label": "Metric", "accuracy": "Accuracy",
                  "accuracy_low": "Accuracy CI low", "accuracy_high": "Accuracy CI high",
                  "calibrated": "Tie-calibrated", "calibrated_low": "Calibrated CI low",
                  "calibrated_high": "Calibrated CI high", "epsilon": "Epsilon", "metric_ties": "Metric ties",
                  "human_ties": "Human ties", "pairs": "Pairs", "beats_chance": "Beats chance",
                  "beats_system": "Beats better system"}


def paired_view(table: pd.DataFrame) -> pd.DataFrame:
    """The paired accuracies for people (storyeval.stats.paired): per criterion, the best tie-calibrated first,
    then the baselines' rows (their flags empty)."""
    from storyeval.stats.paired import BASELINES

    words = {True: "yes", False: "no", "True": "yes", "False": "no"}
    flags = {column: table[column].map(words).fillna("") for column in ("beats_chance", "beats_system")
             if column in table}
    place = {slug: rank for rank, slug in enumerate(BASELINES, 1)}  # metrics 0, then the baselines in order
    ordered = table.assign(order=table.groupby("criterion", sort=False).ngroup(),
                           baseline=table["metric"].map(place).fillna(0) if "metric" in table else 0, **flags)
    ordered = ordered.sort_values(["order", "baseline", "calibrated", "label"], ascending=[True, True, False, True],
                                  kind="stable")
    return readable(ordered, PAIRED_HEADERS)


def meta_headers(name: str, facts: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """META_TABLES' headers and groups of a meta table; its items named metrics alone where the set is compared
    with no LLM judge (caption_facts)."""
    headers, groups = META_TABLES[name]
    return ({**headers, "label": "Metric"} if not facts["judges"] else headers), groups


# A table page shows its first rows per group and links the whole table (the meta tables run to 180 rows).
SHOWN_PER_GROUP = 3
LONG_TABLE = 30  # rows: more, and the page links its files above the table as well
LONG_TEXT = 60  # characters: a column with a longer cell breaks into lines
KEPT = "the best of each kind"
DEGENERATE = DEGENERATE_NOTE
# h3: the report's menu button (fixed, top left) covers a page title's first letters once the menu is closed.
STYLE = """body { font-family: sans-serif; margin: 12px; color: #222; } h3 { padding-left: 40px; }
p { max-width: 60em; } img { display: block; margin-top: 8px; } p.caption { color: #333; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; white-space: nowrap; }
th { background: #eef2f7; white-space: normal; } tr:nth-child(even) td { background: #fafafa; }
div.frame { overflow: auto; max-width: 100%; max-height: 90vh; border: 1px solid #ddd; width: fit-content; }
div.frame th { position: sticky; top: 0; }"""


def figure_labels(name: str, spec: dict) -> dict[str, str]:
    """The columns of a figure in the report's list: number, what it shows, level, coefficient, metrics."""
    if spec["kind"] == "williams":
        measure = f"Pearson r, {spec['criterion']}{', BH-adjusted p' * (spec.get('p_values') == 'bh')}"
    elif spec["kind"] == "topk":  # the plot's axis: |Spearman| (config stats.topk.coefficient)
        measure = f"|{spec.get('topk_coefficient', 'spearman').capitalize()}|"
    else:
        measure = COEFFICIENTS.get(spec.get("coefficient"), "–")
    # Zero-padded: the report sorts the labels as text. The unnumbered sort after the paper's figures.
    number = f"Fig. {name[3:5]}" if name.startswith("fig") else UNNUMBERED.get(spec["kind"], "–")
    return {"Figure": number, "Shows": SHOWS[spec["kind"]], "Level": spec.get("level", "–"),
            "Coefficient": measure, "Metrics": ("representative subset" if spec["subset"] else "all")
            if spec["kind"] in METRIC_KINDS else "–"}


def figure_heading(name: str, spec: dict) -> str:
    labels = figure_labels(name, spec)
    parts = [labels["Shows"], f"{labels['Level']} level" * (labels["Level"] != "–"), labels["Coefficient"],
             f"{labels['Metrics']} metrics" * (labels["Metrics"] != "–")]
    number = labels["Figure"].replace("Fig. 0", "Fig. ") if labels["Figure"].startswith("Fig. ") else "–"
    return ": ".join(
        part for part in [number, ", ".join(part for part in parts if part not in ("", "–"))] if part != "–"
    )


def figure_fits(spec: dict) -> bool | None:
    """Whether a figure is fitted to the window whatever its width: the violins and Fig. 8's lines have no cell
    numbers to keep readable (None: by width, write_figure_page)."""
    return True if spec["kind"] in ("violins", "topk") else None


def figure_caption(spec: dict) -> str:
    """The caption file (workflow/report/<name>.rst) of a figure: one for the correlation heatmaps, one a kind."""
    return "heatmap" if spec["kind"] in HEATMAPS else spec["kind"]


def table_labels(name: str, facts: Mapping[str, str] | None = None) -> dict[str, str]:
    """The columns of a table in the report's list. The report sorts its entries by their labels as text: "#",
    the table's place in the papers, keeps the papers' order. With the set's `facts` (caption_facts), a meta
    table names LLM judges only where the set is compared with some."""
    number, title = TABLES[name]
    if facts is not None:
        title = title.replace(" (and LLM judges)", facts["and_judges"])
    return {"#": f"{list(TABLES).index(name) + 1:02d}", "Table": number, "Shows": title.removeprefix(f"{number}: ")}


def has_degenerate(frame: pd.DataFrame) -> bool:
    """Whether a cell carries the † of a degenerate released value (BaryScore-SD-0.001)."""
    return bool(frame.astype(str).apply(lambda column: column.str.contains("†")).any().any())


WILDCARD = re.compile(r"\{\{\s*snakemake\.wildcards\.(\w+)\s*\}\}")
FACT = re.compile(r"\{\{\s*snakemake\.params\.facts\.(\w+)\s*\}\}")
GROUPINGS = {"none": "none: all stories at once", "item": "item: per prompt, averaged over the prompts",
             "system": "system: the systems' mean scores"}


# Tab. 4's intervals (config analysis.system_means_unit), in its caption's words.
MEANS_UNITS = {
    "story": "as the mean of its story means (each story's mean over its raters), with the t-distribution 95 % "
             "confidence interval over those story means: the story is the unit, since a rater's ratings of one "
             "story are not independent draws",
    "rating": "over every individual rater score, with the t-distribution 95 % confidence interval over those "
              "ratings as if they were independent, as HANNA's Tab. 4",
}


# The settings the captions state by value, as config.yaml sets them (workflow/schemas/config.schema.yaml's
# defaults; tests/test_report_words.py compares): analysis.orientation, stats.confound_margin,
# stats.length_confound, stats.topk.k_min, figures.p_values.
SETTINGS = {"orientation": "oriented", "confound_margin": 0.2, "length_confound": 0.8, "k_min": 4, "p_values": "raw"}
# What a heatmap's cells are (analysis.orientation), and what a ranking ranks by, in the captions' words.
HEATMAP_CELLS = {
    "oriented": "round(100 r), the correlation in percent, each metric oriented (a lower-is-better metric's scores "
                "negated, so its r with a criterion is negated, and its r with another metric once per "
                "lower-is-better side): blue where a metric agrees with the human ratings (or two scores with each "
                "other) in their declared directions, red where it runs against them, white near 0; the criteria "
                "are signed as computed",
    "absolute": "abs(round(100 r)), the absolute correlation in percent, darker blue for a larger |r| whatever "
                "its sign, as HANNA draws them (the paper-exact profile): a metric that correlates against its own "
                "direction looks like one that agrees",
}
RANKED_BY = {
    "oriented": "r after orientation (a lower-is-better metric's r negated, so a positive value is agreement with "
                "the humans and a metric moving against its own direction ranks low)",
    "absolute": "``|r|``, as HANNA (the paper-exact profile: a metric agreeing in the wrong direction ranks as "
                "high)",
}
P_ADJUSTED = {"raw": "The p-values are raw, as in the paper",
              "bh": "The p-values are Benjamini-Hochberg adjusted within the level and criterion"}


def caption_facts(shape: Mapping, hanna: bool, released: bool, judges: str, groupings: Sequence[str],
                  means_unit: str = "story", settings: Mapping = SETTINGS, paper: bool | None = None
                  ) -> dict[str, str]:
    """The sentences of the captions that depend on the score set, as it was computed (the captions insert them as
    ``{{ snakemake.params.facts.<key> }}``, for Snakemake's report and the pages alike). `shape`: its levels,
    whether its stories lie on a prompt x system grid, its criteria (Run.structure); `hanna`: HANNA's stories,
    whose human reference stories are left out; `released`: HANNA's released scores (the † of a degenerate
    release); `judges`: "released" (HANNA's TACL 2024 judges), "configured" or ""; `groupings`: the
    meta-evaluation's groupings the set has; `means_unit`: Tab. 4's interval unit (analysis.system_means_unit);
    `settings`: the values the captions state (SETTINGS' keys); `paper`: HANNA's own stories, whose figures and
    tables carry the paper's name (default `hanna`), where another set's follow its layout and say so."""
    levels = shape["levels"]
    paper = hanna if paper is None else paper
    story = ("for each prompt, the correlation over the systems' stories, averaged over the prompts" if shape["systems"]
             else "the correlation over all stories at once (these tables pool the stories; the design's answer, "
             "answer.csv, says which statistic this design calls for)")
    defined = [f"story level: {story}"] * ("story" in levels) + [
        "system level: the correlation of the systems' mean scores"] * ("system" in levels)
    numbered = list(shape.get("criteria", [])) == CRITERIA and len(levels) == 2  # as storyeval.plan numbers them
    judged = {"released": " (and which LLM judge of HANNA's TACL 2024 release, Chhun, Suchanek & Clavel 2024)",
              "configured": " (and which LLM judge configured for this dataset)"}.get(judges, "")
    defined = "; ".join(defined)
    return Facts({
        "levels": defined[:1].upper() + defined[1:] + "." + " Human reference stories are left out." * hanna
        + " These tables have no system level (the design's answer has one from 4 writers on)."
        * ("system" not in levels),
        "degenerate": "A † after a metric's name marks a degenerate release (numerical noise)." * released,
        "judges": judged,
        "and_judges": " (and LLM judges)" * bool(judged),
        "judge_rule": "; a judge against the criterion it rated, its Average against each" * bool(judged),
        "judge_rank": ("; a judge (judge x evaluation task) ranks in each criterion's ranking by its rating of that "
                       "criterion, its Average as an item of its own") * bool(judged),
        "resampled": "prompts and systems resampled together" if shape["systems"]
        else "the stories resampled: the set is one group",
        "groupings": "; ".join(GROUPINGS[name] for name in groupings),
        "williams_caveat": "" if shape["systems"] else (
            " Here the stories are pooled: Williams' test takes them as independent draws, which stories of one "
            "writer or one prompt are not, so its p-values are too small; the design's answer (answer.csv) "
            "resamples what the design lets vary."),
        "williams": ("HANNA Fig. 27-32 (story level) and 33-38 (system level), one figure per criterion" if numbered
                     else f"one figure per criterion and level ({', '.join(levels)})")
        + ", each also for the representative subset" * bool(shape["subset"]),
        "borda_levels": "*Story*, *System*, or both (*Global*)" if len(levels) == 2
        else f"*{levels[0].capitalize()}*, the only level here",
        "top_tables": "Tab. 5 (Pearson), Tab. 8 (story level) and Tab. 9 (system level)" if "system" in levels
        else "Tab. 5 (Pearson) and Tab. 8 (story level)",
        "scores": "of HANNA's scores" if paper else "applied to this dataset's scores",
        "times": " (the analogue of Houairi & Thiounn's Tab. 2 on HANNA)" * paper,
        "icc_paper": icc_paper() if paper else "",
        "means_unit": MEANS_UNITS[means_unit],
        "paper": "HANNA " * paper,
        "as_hanna": "" if paper else "; numbered and laid out as in HANNA, Chhun et al. 2022",
        "heatmap_cells": HEATMAP_CELLS[settings["orientation"]],
        "ranked_by": RANKED_BY[settings["orientation"]],
        "confound_margin": f"{settings['confound_margin']:g}",
        "length_confound": f"{settings['length_confound']:g}",
        "k_min": str(settings["k_min"]),
        "p_adjusted": P_ADJUSTED[settings["p_values"]],
    })


@cache  # every HANNA table caption of a run asks (start-up: 23 parses of the file cost 1.5 CPU-s)
def icc_paper() -> str:
    """Why the ICCs of HANNA's released file differ from the paper's Tab. 3 (the audit's explanation), with the
    printed ICC2k (src/storyeval/printed_numbers.yaml)."""
    import yaml

    printed = yaml.load((Path(__file__).parents[1] / "printed_numbers.yaml").read_text(encoding="utf-8"),
                        Loader=yaml.CSafeLoader)
    values = ", ".join(f"{criterion} {icc2k}" for criterion, _, icc2k, _ in printed["hanna_tab3_icc2k"]["rows"])
    return (f" HANNA prints ICC2k {values}; the layout *rater positions (released file)* gives other values because "
            f"{RELEASED_RATERS} (Reproduction audit, HANNA Tab. 3).")
# The inline markup the captions use, as docutils renders it (tests/test_report_pages.py compares the two).
INLINE = [(re.compile(r"``(.+?)``"), r"<code>\1</code>"), (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
          (re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])"), r"<em>\1</em>")]
MIMES = {".pdf": "application/pdf", ".csv": "text/csv", ".md": "text/markdown", ".png": "image/png"}


def fill_caption(text: str, wildcards: Mapping[str, str], facts: Mapping[str, str] | None = None) -> str:
    """A caption's text with its wildcards and facts (caption_facts) filled, as Snakemake's report fills them."""
    text = WILDCARD.sub(lambda match: str(wildcards[match[1]]), text)
    return FACT.sub(lambda match: str((facts or {})[match[1]]), text)


def note_html(note: str) -> str:
    """A one-sentence note under a page's caption (e.g. `analysis.missing_note`'s), or "" where there is none."""
    return f'\n<p class="caption">{html.escape(note)}</p>' if note else ""


def caption_html(path: str | Path, wildcards: Mapping[str, str], facts: Mapping[str, str] | None = None) -> str:
    """A caption file (reStructuredText paragraphs with *emphasis* and ``code``, the wildcards and facts as
    Snakemake's report fills them) as HTML for the page itself: the report hides captions behind a button."""
    text = fill_caption(Path(path).read_text(encoding="utf-8"), wildcards, facts)
    paragraphs = []
    for block in re.split(r"\n\s*\n", text.strip()):
        paragraph = html.escape(" ".join(block.split()), quote=False)
        for pattern, replacement in INLINE:
            paragraph = pattern.sub(replacement, paragraph)
        paragraphs.append(f'<p class="caption">{paragraph}</p>')
    return "\n".join(paragraphs)


def download_link(path: str | Path, text: str | None = None) -> str:
    """A link that saves the file: its address holds the bytes, so it works away from results/ (the report embeds
    the page, and a path beside it would point nowhere)."""
    path = Path(path)
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    mime = MIMES.get(path.suffix, "application/octet-stream")
    return (f'<a download="{html.escape(path.name)}" href="data:{mime};base64,{data}">'
            f"{html.escape(text or path.name)}</a>")


def _page(title: str, body: str, caption: str = "") -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n<h3>{html.escape(title)}</h3>\n{caption}\n{body}\n</body></html>\n"
    )


def write_figure_page(
    path: str | Path, png: str | Path, pdf: str | Path, heading: str, dpi: int, pixels: np.ndarray | None = None,
    caption: str = "", degenerate: bool = False, fit: bool | None = None,
) -> None:
    """A page with the caption, the PNG's pixels at SCREEN_DPI (scroll for the large heatmaps) and the PDF to save.

    `pixels`: the PNG's RGBA array when the caller holds it (save_figure returns it), which spares decoding
    the file again (a tenth of a second for a 72 x 72 heatmap). `degenerate`: a label of the figure carries †.
    `fit`: fitted to the window whatever its width (figure_fits), None: up to FIT_INCHES wide."""
    from PIL import Image  # Pillow comes with matplotlib; only the figure jobs need it

    with Image.open(png) if pixels is None else Image.fromarray(pixels, "RGBA") as image:
        buffer = io.BytesIO()
        # Lossless: the PNG's pixels. The least effort (quality 0) of method 1: over a default run's 84 figures
        # (342 Mpx), 16 CPU-s and 17.2 MB against 29.5 and 11.3 at the default quality 80; method 0: 7.8 CPU-s and
        # 40 MB. exact: the pixels as they are, without the pass that rewrites the colour of transparent ones.
        image.save(buffer, format="WEBP", lossless=True, method=1, quality=0, exact=True)
        width = round(image.width * SCREEN_DPI / dpi)
        fitted = image.width / dpi <= FIT_INCHES if fit is None else fit
        fit = ' style="max-width: 100%; height: auto"' if fitted else ""
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    note = f"<p>{DEGENERATE}.</p>\n" if degenerate else ""
    body = (
        f"{note}<p>Vector version: {download_link(pdf, f'{Path(pdf).name} (PDF)')}. The image shows the pixels of "
        f'<code>{html.escape(str(png))}</code>.</p>\n<div class="frame"><img width="{width}"{fit} '
        f'alt="{html.escape(heading)}" src="data:image/webp;base64,{data}"></div>'
    )
    _atomic(path, lambda tmp: Path(tmp).write_text(_page(heading, body, caption), encoding="utf-8"))


# Tab. 4 marks the best system as Markdown bold (**4.17**) and those within its interval as italic (*3.22*); on
# the page they are bold and italic, not asterisks. Neither crosses a cell (<): ROUGE-S* names keep their star.
MARKDOWN_BOLD = re.compile(r"\*\*([^*<]+)\*\*")
MARKDOWN_ITALIC = re.compile(r"(?<![*\w])\*([^*<\s][^*<]*)\*(?![*\w])")


def p_text(value: float) -> str:
    """A p-value for reading: two significant digits, scientific below 1e-3 (0.0026, 2.6e-5)."""
    if pd.isna(value):
        return ""
    if value == 0 or abs(value) >= 1e-3:
        return f"{value:.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def number_text(value: float, digits: int = 3) -> str:
    """The fewest decimals that show `value` exactly, at most `digits`: a rank 3, a Borda count 1341.5, r 0.467."""
    if pd.isna(value):
        return ""
    places = next((n for n in range(digits) if abs(value - round(value, n)) <= 1e-9), digits)
    return f"{value:.{places}f}"


def is_p_value(column: str) -> bool:
    return column == "p" or column.startswith("p_") or column.endswith("_p")


def readable(frame: pd.DataFrame, headers: dict[str, str], digits: int = 3, constant: bool = False) -> pd.DataFrame:
    """A table for people: the `headers` columns only, renamed (labels, not slugs), those with one value for
    every row left out (the title or caption says it; `constant`: kept), p-values as p_text, other numbers to
    `digits` decimals or fewer where exact (a rank 3, a Borda count 1957 or 1341.5)."""
    table = frame[[column for column in headers if column in frame]]
    if len(table) > 1 and not constant:
        table = table.loc[:, table.nunique(dropna=False) > 1]
    shown = {}
    for column in table.columns:
        if is_p_value(column) and pd.api.types.is_float_dtype(table[column]):
            shown[column] = table[column].map(p_text).tolist()
        elif pd.api.types.is_float_dtype(table[column]):
            values = table[column].dropna().to_numpy()
            if np.allclose(2 * values, np.round(2 * values), rtol=0, atol=1e-9):  # ranks, counts: 3 beside 4.5
                shown[column] = [number_text(value, digits) for value in table[column]]
            else:  # a column of measurements: one number of decimals, the fewest that show every value exactly
                places = max((len(number_text(value, digits).partition(".")[2]) for value in values), default=0)
                shown[column] = [f"{value:.{places}f}" if pd.notna(value) else "" for value in table[column]]
    return table.assign(**shown).rename(columns=headers)


# Tidy result columns' headers for people (the reanalyses, the audit); any other snake_case column reads as words.
HEADERS = {"r": "r", "abs_r": "|r|", "n_metrics": "Metrics", "rank_sum": "Rank sum", "wilcoxon_p": "Wilcoxon p",
           "kendall_tau": "Kendall τ", "kendall_p": "Kendall p", "coefficient_a": "Coefficient A",
           "coefficient_b": "Coefficient B", "label": "Metric", "p_bh": "p (BH)", "ci_low": "95 % CI low",
           "ci_high": "95 % CI high", "status": "Status (paper-exact)", "default_status": "Status (default)",
           "storyeval_default": "storyeval (default)", "storyeval_paper_exact": "storyeval (paper-exact)",
           "metric": "Metric", "ms_per_story": "ms per story", "max_rss_mb": "Peak memory (MB)"}


def header(column: str) -> str:
    """A column's header for people: HEADERS, else its words (`paper_value` -> Paper value)."""
    if column in HEADERS:
        return HEADERS[column]
    words = column.replace("_", " ")
    return words[:1].upper() + words[1:] if column != words or column.islower() else column


def for_reading(frame: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """A tidy result table as a page shows it: every column kept but the slug beside its label, headers as
    words, ranks and counts as integers, p-values as p_text, other numbers to `digits` decimals at most."""
    columns = [column for column in frame if not (column in ("metric", "slug") and "label" in frame)]
    return readable(frame, {column: header(column) for column in columns}, digits, constant=True)


def write_table_page(
    path: str | Path, frame: pd.DataFrame, title: str, files: list[str | Path], caption: str = "",
    groups: list[str] | None = None, keep: Sequence[bool] | None = None, kept: str = "",
) -> None:
    """A page with the caption, the table as HTML, the † note where a cell carries it, and its files to save.

    `groups`: columns of `frame` whose groups show their first SHOWN_PER_GROUP rows only (the table lists each
    group's best first); the first file (the whole table) is linked beside them. `keep`: rows shown besides
    (each kind's best), which `kept` names. A column of long texts (the audit's reasons, Kemeny's top lists) breaks
    into lines, the others keep one; a long table links its files above it too."""
    shown, also = frame, ""
    if groups is not None:  # a column with one value was left out of the table: its rows are one group
        groups = [column for column in groups if column in frame]
        place = frame.groupby(groups, sort=False).cumcount().to_numpy() if groups else np.arange(len(frame))
        extra = np.asarray(keep if keep is not None else np.zeros(len(frame)), dtype=bool) & (place >= SHOWN_PER_GROUP)
        shown, also = frame[(place < SHOWN_PER_GROUP) | extra], f" and {kept}" * bool(extra.any())
    each = f" of each {' and '.join(groups).lower()}" if groups else ""
    part = (f"<p>The first {SHOWN_PER_GROUP} rows{each}{also}: {len(shown)} of {len(frame)} rows; the whole table: "
            f"{download_link(files[0])}.</p>\n") if len(shown) < len(frame) else ""
    note = f"<p>{DEGENERATE}.</p>\n" if has_degenerate(shown) else ""
    links = ", ".join(download_link(file) for file in files)
    table = MARKDOWN_BOLD.sub(r"<b>\1</b>", shown.to_html(index=False, na_rep="", border=0))
    table = MARKDOWN_ITALIC.sub(r"<i>\1</i>", table).replace("\\*", "*")  # Tab. 4's escaped asterisk: HANNA's *
    table = f'<div class="frame">{table}</div>'  # a wide or long table scrolls inside its frame, not the page
    files_line = f"<p>Files: {links}.</p>"
    top = f"{files_line}\n" if len(shown) > LONG_TABLE else ""
    long = [f"td:nth-child({place})" for place, column in enumerate(shown.columns, 1)
            if shown[column].astype(str).str.len().max() > LONG_TEXT]
    style = f"<style>{', '.join(long)} {{ white-space: normal; min-width: 16em; }}</style>\n" if long else ""
    body = f"{style}{top}{part}{table}\n{note}{files_line}"
    _atomic(path, lambda tmp: Path(tmp).write_text(_page(title, body, caption), encoding="utf-8"))


def best_answer(table: pd.DataFrame, name: str, coefficient: str) -> str:
    """The landing page's answer of a meta_best table (storyeval.stats.meta.best_table): per grouping and criterion
    the best metric and the best LLM judge, r and significance-cluster rank (1: no column is better), and how often
    a judge leads (reStructuredText, one paragraph)."""
    best = table[table["kind_best"]]
    judged = "LLM judge" in set(best["kind"])
    confounded = "confound" in best and best["confound"].fillna("").astype(bool).any()
    parts = []
    for grouping, rows in best.groupby("grouping", sort=False):
        cells = []
        for criterion, cell in rows.groupby("criterion", sort=False):
            said = [f"{row.label} {row.r:.3f}" + (f" (cluster {int(row.rank)})" if pd.notna(row.rank) else "")
                    + (f" [confound: {row.confound}]" if getattr(row, "confound", "") else "")
                    for row in cell.sort_values("r", ascending=False).itertuples()]
            cells.append(f"{criterion} {' > '.join(said)}")
        parts.append(f"*grouping {grouping}*: " + "; ".join(cells))
    text = (f"**{name}: which {'metric and which LLM judge agree' if judged else 'metric agrees'} best** "
            f"({COEFFICIENTS.get(coefficient, coefficient)}; cluster 1: no column significantly better"
            + ("; [confound: ...]: the pooled r is not what it seems, see confounds.csv" if confounded else "") + ").")
    if judged:
        # Only cells where a judge and a metric were both measured (r not NaN) compete: a cell of judges alone
        # (or metrics alone) says nothing of which kind leads.
        measured = table[table["r"].notna()]
        both = measured.groupby(["grouping", "criterion"], sort=False)["kind"].transform(
            lambda kinds: kinds.eq("LLM judge").any() and kinds.ne("LLM judge").any()).astype(bool)
        cells = measured[both].groupby(["grouping", "criterion"], sort=False)
        leads = cells.head(1)["kind"].eq("LLM judge")
        in_best = cells.apply(lambda cell: bool(((cell["kind"] == "LLM judge") & (cell["rank"] == 1)).any()))
        alone = measured.groupby(["grouping", "criterion"]).ngroups - len(leads)
        text += (f" Of the {len(leads)} cells where LLM judges and metrics were both measured, an LLM judge leads "
                 f"{int(leads.sum())}, a metric {int((~leads).sum())}; an LLM judge is in the best cluster in "
                 f"{int(in_best.sum())}." if len(leads) else " No cell holds both an LLM judge and a metric: which "
                 "kind leads is not measured.")
        if len(leads) and alone:
            text += f" {alone} cell{'s' * (alone != 1)} held one kind alone and are not counted."
    # One nested item a grouping: the landing page puts this text in a list item (indented two spaces).
    return text + "".join(f"\n\n  - {part}." for part in parts) + "\n"


def _names(values: list[str], most: int = 12) -> str:
    shown = ", ".join(map(str, values[:most]))
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")


def about_text(dataset: str, scoreset: str, stories: pd.DataFrame, human: pd.DataFrame, ratings: pd.DataFrame,
               registry: pd.DataFrame, reference_system: str | None, levels: str = "") -> str:
    """One reStructuredText paragraph on a score set, from its data: its stories, prompts and systems, the
    criteria and raters of its ratings, its metrics, and `levels`, how its levels were computed (caption_facts).
    The report's landing page shows it."""
    systems = list(dict.fromkeys(stories["system"]))
    generated = [system for system in systems if system != reference_system]
    prompts = stories["prompt_id"].nunique() if "prompt_id" in stories else 0
    reference = " and the human reference" if len(generated) < len(systems) else ""
    head = f"**{dataset}, {scoreset} scores.** {len(stories):,} stories"
    writers = stories["writer"] if "writer" in stories else stories["system"]
    named = list(dict.fromkeys(writers[writers.astype(str) != stories["story_id"].astype(str)]))
    if (stories["system"].astype(str) == stories["story_id"].astype(str)).all() and named:  # pooled by the tables
        parts = [f"{head} by {len(named)} writer{'s' * (len(named) != 1)} ({_names(named)}), one group in HANNA's "
                 "tables (each story an item of its own)."]
    elif (stories["system"].astype(str) == stories["story_id"].astype(str)).all():  # a set of stories, no systems
        parts = [f"{head}, without prompts and systems: each story is an item of its own."]
    else:
        parts = [f"{head}" + (f" written for {prompts:,} prompt{'s' * (prompts != 1)}" if prompts else "")
                 + f" by {len(generated)} system{'s' * (len(generated) != 1)} ({_names(generated)}){reference}."]
    criteria = list(dict.fromkeys(human["criterion"])) if "criterion" in human else []
    if criteria:
        rated = human["story_id"].nunique()
        by = "(one score a story, no per-rater rows)"
        if "rater" in ratings and len(ratings):
            raters = ratings["rater"].nunique()
            # per criterion: a crowd task's workers rate one criterion each (a story's raters differ by criterion)
            each = ratings.groupby(["story_id", "criterion"])["rater"].nunique() if "criterion" in ratings \
                else ratings.groupby("story_id")["rater"].nunique()
            per = f"{each.min()}" if each.min() == each.max() else f"{each.min()}-{each.max()}"
            by = f"by {raters} rater{'s' * (raters != 1)}, {per} a story{' and criterion' * ('criterion' in ratings)}"
        named = f"{len(criteria)} {'criterion' if len(criteria) == 1 else 'criteria'} ({_names(criteria)})"
        parts.append(f"{rated:,} of them are rated on {named} {by}.")
    else:
        parts.append("No human ratings: the metrics are compared with each other, not with people.")
    if criteria and prompts > 1 and 1 < len(generated) < MIN_SYSTEMS:
        parts.append(f"With fewer than {MIN_SYSTEMS} systems a prompt, the story level is one correlation over all "
                     "stories, each beside its within-system correlation (confounds.csv), and each prompt's stories "
                     "are compared in pairs (paired_accuracy.csv).")
    families = registry["family"].value_counts(sort=False) if "family" in registry else pd.Series(dtype=int)
    kinds = ", ".join(f"{count} {family}" for family, count in families.items())
    parts.append(f"{len(registry)} metric score{'s' * (len(registry) != 1)}" + (f" ({kinds})" if kinds else "") + ".")
    if levels and criteria:
        parts.append(levels)
    flagged = [label.removesuffix(DEGENERATE_MARK) for label in marked(registry)["label"] if DEGENERATE_MARK in label]
    if flagged:
        parts.append(f"Marked {DEGENERATE_MARK}: {', '.join(flagged)}, a degenerate release (numerical noise).")
    return " ".join(parts) + "\n"


def write_said_page(path: str | Path, heading: str, said: str, caption: str = "") -> None:
    """A figure's page where there is nothing to draw (plots.base.said_figure): the caption and, in one line, why."""
    body = f'<p class="said"><strong>{html.escape(said)}</strong></p>'
    _atomic(path, lambda tmp: Path(tmp).write_text(_page(heading, body, caption), encoding="utf-8"))


def write_about_page(path: str | Path, text_path: str | Path, title: str) -> None:
    """The score set's paragraph (about_text, already at `text_path`) as a page of its own."""
    _atomic(path, lambda tmp: Path(tmp).write_text(_page(title, "", caption_html(text_path, {})), encoding="utf-8"))
