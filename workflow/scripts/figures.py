"""Render a family of figures (figures.smk): each as PDF and PNG, and its report page."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import time
from functools import cache

from storyeval.analysis import missing_note
from storyeval.criteria import ordered_criteria
from storyeval.data.registry import marked_labels, present_metrics, resolve_metrics
from storyeval.io import log_to, read_table
from storyeval.plots.base import said_figure, save_figure, shows_degenerate
from storyeval.plots.heatmaps import (
    correlation_heatmap,
    correlation_matrix,
    f1_heatmap,
    pvalue_heatmap,
    williams_matrix,
)
from storyeval.plots.pages import (
    COEFFICIENTS,
    caption_html,
    figure_caption,
    figure_fits,
    figure_heading,
    note_html,
    write_figure_page,
    write_said_page,
)
from storyeval.stats.williams import untested

log = log_to(snakemake.log[0])
params = snakemake.params
COLUMNS = {
    "correlations": ["kind", "level", "coefficient", "x", "y", "r"],
    "registry": ["slug", "label", "order", "direction"],
    "williams": ["level", "criterion", "metric_a", "metric_b", "p", "n"],
    "f1": ["metric", "criterion", "f1"],
    "topk": ["criterion", "k", "metric", "abs_r"],
    "stories": ["story_id", "system"],
    "human": ["story_id", "criterion", "score"],
}
CORRELATION_KINDS = {"criteria": "criteria", "metric_criteria": "metric_criterion", "metric_metric": "metric_metric"}
# The statistic a figure kind draws: its CSV counts the cells each column dropped (column missing).
DRAWN = {"criteria": ("correlations", "x"), "metric_criteria": ("correlations", "x"),
         "metric_metric": ("correlations", "x"), "bootstrap_f1": ("f1", "metric"), "topk": ("topk", "metric")}
WHAT = {"criteria": "criteria", "metric_criteria": "metrics x criteria", "metric_metric": "metrics x metrics"}


@cache
def table(key):
    return read_table(snakemake.input[key], COLUMNS[key])


@cache
def registry():
    return table("registry").sort_values("order")


@cache
def representative():
    """The representative subset's slugs that this score set holds; the others are skipped, said once."""
    held, skipped = present_metrics(params.representative, registry())
    if skipped:
        log.info("figures.representative_metrics: not in this score set, skipped: %s", skipped)
    return resolve_metrics(held, registry(), "config.yaml figures.representative_metrics")


def metric_order(spec):
    """Slugs of the figure's metrics in registry order: the representative subset, or all."""
    return representative() if spec["subset"] else list(registry()["slug"])


def labels():
    """slug -> the label a figure shows (a degenerate release marked †)."""
    return marked_labels(registry())


def heatmap(spec):
    """Fig. 1-6, 10-25: r in percent, oriented for the metrics (analysis.orientation oriented), or HANNA's |r|
    (absolute); the criteria's signed."""
    kind = spec["kind"]
    subset = metric_order(spec) if spec["subset"] else None
    absolute = params.orientation == "absolute"
    orientation = "oriented" if kind != "criteria" and params.orientation == "oriented" else "signed"
    matrix = correlation_matrix(table("correlations"), CORRELATION_KINDS[kind], spec["level"], spec["coefficient"],
                                table("registry"), subset, orientation)
    name = COEFFICIENTS[spec["coefficient"]]  # Kendall τ, Spearman ρ, Pearson r
    value = f"|{name}| (%)" if absolute else f"{name} (%), oriented" if orientation == "oriented" else f"{name} (%)"
    title = f"{spec['level'].capitalize()}-level {value}: {WHAT[kind]}"
    return correlation_heatmap(matrix, title, lower_triangle=kind != "metric_criteria",
                               average_row=kind == "metric_criteria", absolute=absolute)


def williams(spec):
    """Fig. 27-38: Williams-test p-values (%), metric A (rows) beating metric B (columns); raw as in the paper or,
    with figures.p_values bh, BH-adjusted within the level and criterion (williams_bh.csv)."""
    p_values = spec.get("p_values", "raw")
    matrix = williams_matrix(table("williams"), spec["level"], spec["criterion"], metric_order(spec), p_values)
    matrix = matrix.rename(index=labels(), columns=labels())
    adjusted = "BH-adjusted " if p_values == "bh" else ""
    title = (f"Williams test {adjusted}p-values (%), {spec['level']} level, {spec['criterion']}: "
             "row metric > column metric (Pearson)")
    return pvalue_heatmap(matrix, title)


def bootstrap_f1(spec):
    """Fig. 7 (representative subset) and Fig. 26 (all metrics): weighted F1 of pairwise system comparison."""
    frame = table("f1").set_index("metric").loc[metric_order(spec)].reset_index()
    frame["metric"] = frame["metric"].map(labels())
    return f1_heatmap(frame, "Weighted F1 (%) of paired-bootstrap system comparisons: metric vs criterion")


def topk(spec):
    """Fig. 8: |correlation| of chosen metrics on each criterion's top-k systems, k decreasing."""
    from storyeval.plots.panels import topk_lines  # brings seaborn (1-2 s): only the families that draw panels

    frame = table("topk").assign(metric=lambda frame: frame["metric"].map(labels()))
    title = f"System-level |{params.topk_coefficient.capitalize()}| on the top-k systems of each criterion"
    return topk_lines(frame, title)


def violins(spec):
    """Fig. 9: rating distributions per system and criterion."""
    from storyeval.plots.panels import rating_violins

    stories = table("stories")
    frame = table("human").merge(stories[["story_id", "system"]], on="story_id")
    return rating_violins(frame[["system", "criterion", "score"]], list(dict.fromkeys(stories["system"])),
                          ordered_criteria(frame["criterion"]))


RENDER = {"criteria": heatmap, "metric_criteria": heatmap, "metric_metric": heatmap, "williams": williams,
          "bootstrap_f1": bootstrap_f1, "topk": topk, "violins": violins}
log.info("imports and set-up: %.2f CPU-s", time.process_time())
for name, spec in params.figures.items():
    pdf, png = snakemake.output[f"{name}_pdf"], snakemake.output[f"{name}_png"]
    start = time.process_time()
    # A Williams figure where no pair could be tested says why instead of drawing a blank grid.
    said = untested(table("williams"), spec["level"], spec["criterion"]) if spec["kind"] == "williams" else ""
    figure = said_figure(said) if said else RENDER[spec["kind"]](spec)
    built = time.process_time()
    degenerate = shows_degenerate(figure)  # before saving: save_figure clears the figure
    pixels = save_figure(figure, pdf, png, dpi=params.dpi)
    saved = time.process_time()
    caption = caption_html(snakemake.input[f"caption_{figure_caption(spec)}"], snakemake.wildcards,
                           snakemake.params.facts)
    if spec["kind"] in DRAWN:
        key, column = DRAWN[spec["kind"]]
        note = missing_note(read_table(snakemake.input[key], [column]), table("registry"), column)
        caption += note_html(note)
    if said:
        write_said_page(snakemake.output[f"{name}_page"], figure_heading(name, spec), said, caption)
    else:
        write_figure_page(snakemake.output[f"{name}_page"], png, pdf, figure_heading(name, spec), params.dpi,
                          pixels, caption, degenerate, figure_fits(spec))
    log.info("%s rendered (CPU-s: build %.2f, PDF + PNG %.2f, report page %.2f)", name, built - start, saved - built,
             time.process_time() - saved)
