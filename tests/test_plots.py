"""Figures on real HANNA data: the drawn numbers, colours and layout are read back from the artists."""

from __future__ import annotations

import itertools
import statistics

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import f1_score

from storyeval.analysis import correlation_table
from storyeval.criteria import CRITERIA
from storyeval.data.hanna import read_released_scores
from storyeval.data.scoreset import analysed_systems, build_cube
from storyeval.errors import InputError
from storyeval.plots import (
    correlation_heatmap,
    f1_heatmap,
    pvalue_heatmap,
    ranking_comparison,
    rating_violins,
    save_figure,
    topk_lines,
)
from storyeval.plots.heatmaps import DARK_GREEN, LIGHT_GREEN, CellNumbers
from storyeval.stats.ranking import borda

HANNA = "/work/shared/data/hanna/hanna_metric_scores.csv"
SMALL = 8  # metrics in the small matrices


@pytest.fixture(scope="module")
def hanna():
    released = read_released_scores(HANNA)
    systems = analysed_systems(released.stories, "Human")
    human = build_cube(released.stories, released.human_scores, "criterion", "score", CRITERIA, systems, "hanna")
    metrics = build_cube(
        released.stories, released.scores, "metric", "value", list(released.registry.slug), systems, "hanna"
    )
    table = correlation_table(human, metrics, ["story"], ["pearson", "spearman", "kendall"])
    labels = dict(zip(released.registry.slug, released.registry.label))
    table["x"] = table["x"].map(lambda name: labels.get(name, name))
    table["y"] = table["y"].map(lambda name: labels.get(name, name))
    return {"released": released, "human": human, "metrics": metrics, "table": table, "labels": labels}


def matrix(table: pd.DataFrame, kind: str, coefficient: str = "kendall") -> pd.DataFrame:
    rows = table[(table["kind"] == kind) & (table["coefficient"] == coefficient)]
    return rows.pivot(index="x", columns="y", values="r").reindex(
        index=list(dict.fromkeys(rows["x"])), columns=list(dict.fromkeys(rows["y"]))
    )


def numbers_artist(figure) -> CellNumbers:
    (artist,) = [artist for artist in figure.axes[0].artists if isinstance(artist, CellNumbers)]
    return artist


def drawn_numbers(figure) -> dict[tuple[int, int], str]:
    """{(row, column): text} of the cell annotations (each sits at the cell centre)."""
    return numbers_artist(figure).cells()


def cell_colours(figure) -> np.ndarray:
    mesh = figure.axes[0].collections[0]
    rows, columns = mesh.get_array().shape
    return mesh.get_facecolors().reshape(rows, columns, 4)


def expected_percent(frame: pd.DataFrame, keep=lambda row, column: True) -> dict[tuple[int, int], str]:
    # Independent formula: Python's round, then abs, per cell (HANNA's heatmap labels).
    return {
        (i, j): str(abs(round(100 * value)))
        for i, row in enumerate(frame.to_numpy())
        for j, value in enumerate(row)
        if not np.isnan(value) and keep(i, j)
    }


def test_lower_triangle_shows_abs_rounded_percent_and_hides_the_upper_cells(hanna):
    r = matrix(hanna["table"], "metric_metric").iloc[:SMALL, :SMALL].copy()
    r.iloc[5, 2] = np.nan  # a missing correlation is drawn blank
    figure = correlation_heatmap(r, "Story-level Kendall", lower_triangle=True, absolute=True)  # HANNA's look
    drawn = drawn_numbers(figure)
    assert drawn == expected_percent(r, keep=lambda i, j: j <= i)
    assert (5, 2) not in drawn and all(j <= i for i, j in drawn)
    assert drawn[(0, 0)] == "100"  # the diagonal stays
    assert (np.sign(r.to_numpy()[np.tril_indices(SMALL)]) < 0).any()  # signed input really was made absolute
    hidden = figure.axes[0].collections[0].get_array().mask
    assert hidden[np.triu_indices(SMALL, k=1)].all() and hidden[5, 2] and not hidden[np.diag_indices(SMALL)].any()
    assert np.allclose(cell_colours(figure)[0, 1], to_rgba("white"))
    assert [label.get_text() for label in figure.axes[0].get_yticklabels()] == list(r.index)
    assert [label.get_text() for label in figure.axes[0].get_xticklabels()] == list(r.columns)


def test_average_row_is_the_mean_absolute_correlation_over_the_criteria(hanna):
    r = matrix(hanna["table"], "metric_criterion").iloc[:SMALL].T  # rows criteria, columns metrics
    figure = correlation_heatmap(r, "Story-level Kendall, metrics x criteria", average_row=True, absolute=True)
    labels = [label.get_text() for label in figure.axes[0].get_yticklabels()]
    assert labels == CRITERIA + ["Average"]
    drawn = drawn_numbers(figure)
    average_row = len(CRITERIA)
    expected = expected_percent(r)
    for j, metric in enumerate(r.columns):
        mean_abs = statistics.fmean(abs(value) for value in r[metric])
        expected[(average_row, j)] = str(round(100 * mean_abs))
    assert drawn == expected
    assert figure.axes[0].lines[0].get_ydata()[0] == average_row  # the rule separating "Average"


def test_pvalue_cells_dark_green_when_significant_light_otherwise_white_without_a_test(hanna):
    means = hanna["metrics"].values.mean(axis=0)[:, :6]  # system-level metric means, 10 systems
    names = [hanna["labels"][name] for name in hanna["metrics"].names[:6]]
    p = np.full((6, 6), np.nan)
    for i, j in itertools.permutations(range(6), 2):
        p[i, j] = pearsonr(means[:, i], means[:, j]).pvalue
    p = pd.DataFrame(p, index=names, columns=names)
    assert (p < 0.05).any().any() and (p >= 0.05).any().any()
    figure = pvalue_heatmap(p, "p-values")
    colours = cell_colours(figure)
    for i, j in itertools.product(range(6), repeat=2):
        value = p.iloc[i, j]
        want = "white" if np.isnan(value) else DARK_GREEN if value < 0.05 else LIGHT_GREEN
        assert np.allclose(colours[i, j], to_rgba(want)), (i, j, value)
    assert drawn_numbers(figure) == expected_percent(p)


def pair_labels(means: np.ndarray) -> list[int]:
    # 1 if the first system of the pair is higher, 2 if the second, 0 on a tie.
    return [int(np.sign(means[a] - means[b]) % 3) for a, b in itertools.combinations(range(len(means)), 2)]


def test_f1_heatmap_rows_metrics_columns_criteria_in_percent(hanna):
    human = hanna["human"].values.mean(axis=0)
    metrics = hanna["metrics"].values.mean(axis=0)[:, :5]
    rows = [
        {
            "metric": hanna["labels"][name],
            "criterion": criterion,
            "f1": f1_score(pair_labels(human[:, c]), pair_labels(metrics[:, m]), average="weighted"),
        }
        for m, name in enumerate(hanna["metrics"].names[:5])
        for c, criterion in enumerate(CRITERIA)
    ]
    frame = pd.DataFrame(rows)
    figure = f1_heatmap(frame, "Weighted F1")
    table = frame.pivot(index="metric", columns="criterion", values="f1").reindex(
        index=list(dict.fromkeys(frame["metric"])), columns=CRITERIA
    )
    assert drawn_numbers(figure) == expected_percent(table)
    assert [label.get_text() for label in figure.axes[0].get_xticklabels()] == CRITERIA


def test_violins_one_panel_per_criterion_cut_at_the_data_range(hanna):
    released = hanna["released"]
    scores = released.human_scores.merge(released.stories, on="story_id")
    systems = list(dict.fromkeys(released.stories["system"]))
    figure = rating_violins(scores, systems, CRITERIA)
    assert [ax.get_title() for ax in figure.axes] == CRITERIA
    for ax, criterion in zip(figure.axes, CRITERIA):
        assert [label.get_text() for label in ax.get_xticklabels()] == systems
        bodies = ax.collections[: len(systems)]
        for position, (system, body) in enumerate(zip(systems, bodies)):
            vertices = np.concatenate([path.vertices for path in body.get_paths()])
            observed = scores.loc[(scores["system"] == system) & (scores["criterion"] == criterion), "score"]
            assert vertices[:, 1].min() == pytest.approx(observed.min())
            assert vertices[:, 1].max() == pytest.approx(observed.max())
            assert vertices[:, 0].mean() == pytest.approx(position, abs=0.05)


def test_topk_lines_reversed_axis_and_legend_outside(hanna):
    human, metrics = hanna["human"].values.mean(axis=0), hanna["metrics"].values.mean(axis=0)
    chosen = {"bleu": "BLEU", "chrf": "chrF", "bertscore-recall": "BERTScore Recall"}
    columns = [hanna["metrics"].names.index(slug) for slug in chosen]
    rows = []
    for c, criterion in enumerate(CRITERIA[:2]):
        order = np.argsort(-np.round(human[:, c], 2), kind="stable")
        for k in range(10, 3, -1):
            top = order[:k]
            for column, label in zip(columns, chosen.values()):
                rows.append((criterion, k, label, abs(spearmanr(metrics[top, column], human[top, c]).statistic)))
    frame = pd.DataFrame(rows, columns=["criterion", "k", "metric", "abs_r"])
    figure = topk_lines(frame, "Top-k systems")
    panels = [ax for ax in figure.axes if ax.get_title() in CRITERIA]
    assert [ax.get_title() for ax in panels] == CRITERIA[:2]
    for ax, criterion in zip(panels, CRITERIA[:2]):
        left, right = ax.get_xlim()
        assert left > right  # k decreases to the right
        for line, label in zip(ax.lines, chosen.values()):
            want = frame[(frame["criterion"] == criterion) & (frame["metric"] == label)].sort_values("k")
            assert list(line.get_xdata()) == list(want["k"])
            assert np.allclose(line.get_ydata(), 100 * want["abs_r"])
    legend = figure.legends[0]
    assert [text.get_text() for text in legend.get_texts()] == list(chosen.values())
    figure.canvas.draw()
    assert legend.get_window_extent().x0 >= max(ax.get_window_extent().x1 for ax in panels)


def test_ranking_bars_show_the_published_story_level_borda_top(hanna):
    counts = borda(hanna["table"][hanna["table"]["kind"] == "metric_criterion"], {"story": ["story"]},
                   orientation="absolute")  # HANNA's |r|
    figure = ranking_comparison(counts, "Borda", top=5)
    ax = figure.axes[0]
    names = [label.get_text() for label in ax.get_yticklabels()]
    widths = [bar.get_width() for bar in ax.patches]
    # HANNA Tab. 6, story level: chrF 1237, S3-Pyramid 1198, ROUGE-1 Recall 1186.
    assert names[:3] == ["chrF", "S3-Pyramid", "ROUGE-1 Recall"]
    assert widths[:3] == pytest.approx([1237, 1198, 1186])
    assert widths == sorted(counts["borda"], reverse=True)[:5] and len(widths) == 5


def test_72_metrics_render_legibly_inside_the_page(hanna):
    r = matrix(hanna["table"], "metric_metric")
    big = correlation_heatmap(r, "72 x 72", lower_triangle=True)
    small = correlation_heatmap(matrix(hanna["table"], "criteria"), "6 x 6", lower_triangle=True)
    assert len(drawn_numbers(big)) == 72 * 73 // 2
    assert numbers_artist(big).font_size() >= 5
    cell = {
        name: f.axes[0].get_position().width * f.get_figwidth() / n
        for name, f, n in [("big", big, 72), ("small", small, 6)]
    }
    assert cell["small"] > cell["big"] >= 0.2
    renderer = big.canvas.get_renderer()
    page = big.bbox
    ax = big.axes[0]
    for artist in [ax.title, *ax.get_xticklabels(), *ax.get_yticklabels()]:
        box = artist.get_window_extent(renderer)
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, artist.get_text()


def test_save_figure_is_byte_identical_and_vector(hanna, tmp_path):
    r = matrix(hanna["table"], "criteria")
    for run in ("a", "b"):
        save_figure(
            correlation_heatmap(r, "Criteria", lower_triangle=True), tmp_path / f"{run}.pdf", tmp_path / f"{run}.png"
        )
    pdf, png = (tmp_path / "a.pdf").read_bytes(), (tmp_path / "a.png").read_bytes()
    assert pdf == (tmp_path / "b.pdf").read_bytes() and png == (tmp_path / "b.png").read_bytes()
    assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf and b"/Type /Font" in pdf
    assert png.startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "call",
    [
        lambda r: correlation_heatmap(100 * r, "percent passed"),
        lambda r: correlation_heatmap(r.iloc[:, :3], "not square", lower_triangle=True),
        lambda r: correlation_heatmap(r, "both", lower_triangle=True, average_row=True),
        lambda r: pvalue_heatmap(r - 1, "negative p"),
        lambda r: f1_heatmap(pd.DataFrame({"metric": ["a"], "f1": [0.5]}), "no criterion"),
        lambda r: rating_violins(
            pd.DataFrame({"system": ["A"], "criterion": ["Relevance"], "score": [3.0]}), ["B"], ["Relevance"]
        ),
        lambda r: topk_lines(
            pd.DataFrame({"criterion": ["RE"], "k": [4], "metric": ["a"], "abs_r": [-0.2]}), "negative"
        ),
        lambda r: save_figure(correlation_heatmap(r, "x"), "out.png", "out.pdf"),
    ],
)
def test_bad_input_raises_input_error(hanna, call):
    with pytest.raises(InputError):
        call(matrix(hanna["table"], "criteria"))


def test_cell_numbers_draw_the_pixels_of_seaborns_annotations(hanna, tmp_path):
    """The mesh (heatmaps._heatmap_mesh) and CellNumbers are a faster way to draw seaborn's heatmap and its `annot`
    texts, not another look: same PNG pixels."""
    import seaborn as sns

    from storyeval.plots.base import white_style
    from storyeval.plots.heatmaps import _correlation_cmap, percent

    r = matrix(hanna["table"], "metric_metric").iloc[:SMALL, :SMALL]
    shown = pd.DataFrame(percent(r.to_numpy()), index=r.index, columns=r.columns)
    figure = correlation_heatmap(r, "Story-level Kendall", lower_triangle=True, absolute=True)
    hidden = np.triu(np.ones(shown.shape, dtype=bool), k=1)
    seaborn_figure = correlation_heatmap(r, "Story-level Kendall", lower_triangle=True, absolute=True)
    ax = seaborn_figure.axes[0]
    numbers_artist(seaborn_figure).remove()
    with white_style():
        reference = sns.heatmap(
            shown,
            mask=hidden,
            annot=shown.to_numpy(),
            fmt=".0f",
            cmap=_correlation_cmap(),
            vmin=0,
            vmax=100,
            square=True,
            cbar=False,
            annot_kws={"fontsize": numbers_artist(figure).font_size()},
            ax=seaborn_figure.add_axes(ax.get_position()),
        )
    ax.remove()
    reference.set(xticks=[], yticks=[], xlabel="", ylabel="", title=ax.get_title())
    figure.axes[0].set(xticks=[], yticks=[], title=ax.get_title())
    for name, drawn in (("ours", figure), ("seaborn", seaborn_figure)):
        drawn.savefig(tmp_path / f"{name}.png", dpi=100)
    from PIL import Image

    ours, theirs = (np.asarray(Image.open(tmp_path / f"{name}.png")) for name in ("ours", "seaborn"))
    assert ours.shape == theirs.shape and np.array_equal(ours, theirs)


def test_cell_numbers_cached_glyphs_and_pdf_text_write_the_bytes_of_matplotlibs_calls(hanna, tmp_path, monkeypatch):
    """The PNG glyph cache and the replayed PDF text blocks are shortcuts, not another output: same bytes as
    RendererAgg._draw_text_glyphs_and_boxes and RendererPdf.draw_text called for every number."""
    r = matrix(hanna["table"], "metric_metric").iloc[:16, :16]
    save_figure(correlation_heatmap(r, "16 x 16", lower_triangle=True), tmp_path / "fast.pdf", tmp_path / "fast.png")
    numbers = numbers_artist(correlation_heatmap(r, "16 x 16", lower_triangle=True))
    assert len(set(numbers.strings)) < len(numbers.strings)  # repeated numbers: the cached paths are taken
    monkeypatch.setattr(
        CellNumbers,
        "_agg_text",
        lambda self, renderer, gc, x, y, glyphs: renderer._draw_text_glyphs_and_boxes(gc, x, y, 0.0, glyphs, []),
    )
    monkeypatch.setattr(
        CellNumbers,
        "_pdf_text",
        lambda self, renderer, gc, x, y, string, text: renderer.draw_text(
            gc, x, y, string, self._font, 0.0, mtext=text
        ),
    )
    save_figure(correlation_heatmap(r, "16 x 16", lower_triangle=True), tmp_path / "plain.pdf", tmp_path / "plain.png")
    for suffix in ("pdf", "png"):
        assert (tmp_path / f"fast.{suffix}").read_bytes() == (tmp_path / f"plain.{suffix}").read_bytes(), suffix


def test_reused_font_subsets_write_the_pdf_bytes_of_matplotlibs_subsetting(hanna, tmp_path):
    """The font subsets cached across a job's figures: a miss and then a hit give the bytes of fontTools' subset
    made for that PDF; outside save_figure, matplotlib's own subsetting is back."""
    from matplotlib.backends import _backend_pdf_ps

    from storyeval.plots.base import PDF_METADATA, SAVE_RC, _font_subset, reused_font_subsets

    r = matrix(hanna["table"], "criteria")
    original = _backend_pdf_ps.get_glyphs_subset
    with matplotlib.rc_context(SAVE_RC):
        correlation_heatmap(r, "Criteria", lower_triangle=True).savefig(tmp_path / "plain.pdf", metadata=PDF_METADATA)
        _font_subset.cache_clear()
        for run in ("miss", "hit"):
            with reused_font_subsets():
                correlation_heatmap(r, "Criteria", lower_triangle=True).savefig(
                    tmp_path / f"{run}.pdf", metadata=PDF_METADATA
                )
    assert _font_subset.cache_info().misses >= 1 and _font_subset.cache_info().hits >= 1
    plain = (tmp_path / "plain.pdf").read_bytes()
    assert b"/FontFile2" in plain
    assert (tmp_path / "miss.pdf").read_bytes() == plain and (tmp_path / "hit.pdf").read_bytes() == plain
    assert _backend_pdf_ps.get_glyphs_subset is original


def test_pdf_mesh_fills_each_shown_cell_once_in_its_own_colour(hanna):
    """PdfFillsByColour writes one path per colour: read back, its squares are the mesh's cells, each once,
    each in the colour the PNG's mesh gives it (p-value greens, blank cells included)."""
    import io

    from matplotlib.backends.backend_pdf import PdfFile, RendererPdf

    figure = pvalue_heatmap(
        pd.DataFrame(
            np.random.default_rng(0).uniform(0, 0.1, (9, 9)), index=list("abcdefghi"), columns=list("abcdefghi")
        ).mask(np.eye(9, dtype=bool)),
        "p",
    )
    mesh = figure.axes[0].collections[0]
    fills = []

    class Recording(RendererPdf):
        def draw_path(self, gc, path, transform, rgbFace=None):
            fills.append((path, rgbFace))

    renderer = Recording(PdfFile(io.BytesIO()), 72, *figure.get_size_inches())
    mesh.draw(renderer)
    mesh.update_scalarmappable()
    expected = {
        (row, column): tuple(colour)
        for (row, column), colour in zip(itertools.product(range(9), range(9)), mesh.get_facecolors())
    }
    drawn = {}
    for path, colour in fills:
        for square in path.vertices.reshape(-1, 5, 2):
            cell = (int(square[:4, 1].min()), int(square[:4, 0].min()))
            assert cell not in drawn and np.allclose(np.ptp(square, axis=0), 1.0)
            drawn[cell] = tuple(colour)
    assert len(fills) == len(set(expected.values())) == 3  # dark green, light green, white diagonal
    assert drawn == expected


def test_white_style_and_luminance_are_seaborns():
    """base.WHITE_STYLE and heatmaps.relative_luminance spell out seaborn's, which the heatmaps no longer import."""
    import seaborn as sns
    from seaborn.utils import relative_luminance as seaborn_luminance

    from storyeval.plots.base import WHITE_STYLE
    from storyeval.plots.heatmaps import _correlation_cmap, relative_luminance

    assert WHITE_STYLE == {key: value for key, value in sns.axes_style("white").items() if key != "image.cmap"}
    colours = _correlation_cmap()(np.linspace(0.0, 1.0, 257))
    assert np.array_equal(relative_luminance(colours), seaborn_luminance(colours))
    assert _correlation_cmap()(0.3) == sns.color_palette("Blues", as_cmap=True)(0.3)


def test_correlation_matrix_orders_and_labels_each_kind(hanna):
    """One heatmap's r from the long table: criteria in HANNA's order, metrics in the given order, display labels."""
    from storyeval.plots.heatmaps import correlation_matrix

    released = hanna["released"]
    table = correlation_table(hanna["human"], hanna["metrics"], ["story"], ["kendall"])
    registry = released.registry
    chosen = list(registry.slug[:3])[::-1]
    labels = [hanna["labels"][slug] for slug in chosen]
    by_metric = correlation_matrix(table, "metric_criterion", "story", "kendall", registry, chosen)
    assert list(by_metric.index) == CRITERIA and list(by_metric.columns) == labels
    row = table[(table["kind"] == "metric_criterion") & (table["x"] == chosen[0]) & (table["y"] == CRITERIA[2])]
    assert by_metric.loc[CRITERIA[2], labels[0]] == row["r"].item()
    metrics = correlation_matrix(table, "metric_metric", "story", "kendall", registry, chosen)
    assert list(metrics.index) == labels == list(metrics.columns) and np.allclose(np.diag(metrics), 1.0)
    criteria = correlation_matrix(table, "criteria", "story", "kendall", registry)
    assert list(criteria.index) == CRITERIA == list(criteria.columns)


@pytest.mark.parametrize("kind", ["metric_criterion", "metric_metric"])
def test_a_degenerate_release_is_marked_in_every_heatmap_that_shows_it(hanna, kind):
    """The † that the tables, captions and landing page explain is on the heatmap's own axis labels."""
    from storyeval.plots.heatmaps import correlation_matrix

    table = correlation_table(hanna["human"], hanna["metrics"], ["story"], ["kendall"])
    registry = hanna["released"].registry
    shown = correlation_matrix(table, kind, "story", "kendall", registry)
    figure = correlation_heatmap(shown, kind, lower_triangle=kind == "metric_metric",
                                 average_row=kind == "metric_criterion")
    axes = figure.axes[0]
    for labels in ([axes.get_xticklabels()] + [axes.get_yticklabels()] * (kind == "metric_metric")):
        marked = [label.get_text() for label in labels if "†" in label.get_text()]
        assert marked == ["BaryScore-SD-0.001†"]
    subset = correlation_matrix(table, kind, "story", "kendall", registry, ["chrf", "bleu"])
    assert not any("†" in str(label) for label in [*subset.index, *subset.columns])


def test_meta_best_labels_lie_inside_the_png(tmp_path):
    """The layout is measured at the PNG's resolution: no label loses its first letters at the page's edge."""
    from PIL import Image

    from storyeval.plots.meta import best_agreement

    rows = [{"grouping": grouping, "criterion": criterion, "kind": kind, "label": f"OrcaPlatypus AVG (task {k})",
             "r": 0.3 - 0.01 * k, "ci_low": 0.2 - 0.01 * k, "ci_high": 0.4, "rank": 1 + (k > 2)}
            for grouping in ("none", "item", "system") for criterion in CRITERIA[:2]
            for kind in ("metric", "LLM judge") for k in range(5)]
    figure = best_agreement(pd.DataFrame(rows), "pearson", dpi=200)
    assert [text.get_text() for text in figure.legends[0].get_texts()] == [
        "metric, best cluster", "metric", "LLM judge, best cluster", "LLM judge"]
    metrics_only = best_agreement(pd.DataFrame(rows).query("kind == 'metric'"), "pearson", dpi=200)
    assert [text.get_text() for text in metrics_only.legends[0].get_texts()] == ["metric, best cluster", "metric"]
    save_figure(figure, tmp_path / "meta.pdf", tmp_path / "meta.png", dpi=200)
    grey = np.asarray(Image.open(tmp_path / "meta.png").convert("L"))
    assert grey[:, :6].min() == 255 and grey[:, -6:].min() == 255


@pytest.mark.parametrize("metrics", [2, 5, 40])
def test_a_long_title_fits_the_figure(metrics):
    """A Williams title of a few metrics (a dataset of one's own) breaks into lines and lies inside the figure, as
    the renderer measures it; over a wide grid it stays one line."""
    names = [f"Metric {k}" for k in range(metrics)]
    p = pd.DataFrame(np.random.default_rng(0).uniform(size=(metrics, metrics)), index=names, columns=names)
    title = ("Williams test BH-adjusted p-values (%), story level, Interestingness: row metric > column metric "
             "(Pearson)")
    figure = pvalue_heatmap(p, title)
    box = figure.axes[0].title.get_window_extent(figure.canvas.get_renderer())
    page = figure.bbox
    assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1
    drawn = figure.axes[0].title.get_text()
    assert " ".join(drawn.split()) == title and ("\n" in drawn) == (metrics < 40)


def test_meta_best_rows_lie_inside_their_panel():
    """Every row of a panel half a row inside its axes, also when the last ones have no correlation (a constant
    metric): the first row's dot and interval are not cut by the axes' edge."""
    from storyeval.plots.meta import best_agreement

    rows = [{"grouping": "none", "criterion": "Wit", "kind": "metric", "label": f"M{k}", "r": [0.3, 0.8, None][k],
             "ci_low": [0.2, 0.7, None][k], "ci_high": [0.4, 0.9, None][k], "rank": 1} for k in range(3)]
    low, high = best_agreement(pd.DataFrame(rows), "pearson").axes[0].get_ylim()
    assert (low, high) == (-0.5, 2.5)


def test_a_figure_that_draws_the_dagger_carries_its_footnote(tmp_path):
    """A figure whose labels carry † holds the † note itself (the PNG and PDF travel without the report page), drawn
    below everything else inside the saved page; a figure without † has no note."""
    import matplotlib.pyplot as plt

    from storyeval.plots.base import save_figure

    widths = {}
    for label, noted in (("BaryScore-SD-0.001†", True), ("BaryScore-W", False)):
        figure, ax = plt.subplots(figsize=(3, 2))
        ax.set_yticks([0, 1], [label, "BLEU"])
        pixels = save_figure(figure, tmp_path / f"{noted}.pdf", tmp_path / f"{noted}.png", dpi=100)
        ink = pixels[..., :3].sum(axis=2) < 300
        widths[noted] = pixels.shape[1]
        if noted:  # the note's line: ink in the bottom rows, right of where the axes end
            bottom = ink[-int(0.15 * pixels.shape[0]):]
            assert bottom[:, int(0.8 * pixels.shape[1]):].any() and not ink[:, -2:].any()
        plt.close(figure)
    assert widths[True] > 1.5 * widths[False]  # the note is wider than the small figure: the page grew to hold it
