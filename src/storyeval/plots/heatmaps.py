"""Annotated heatmaps of HANNA (Fig. 1-6, 7, 10-38), drawn as HANNA's notebook draws them (Chhun et al. 2022).

Seaborn's heatmap in its white style, integer annotations, square cells, no colour
bar; correlations signed (or oriented) on a diverging map from -100 to 100, or as
HANNA's |r| from 0 to 100. Cell size and fonts scale with the matrix, so a 72 x 72
metric matrix stays legible (5 pt numbers in 0.2 in cells) and a 6 x 6
criteria matrix looks like an ordinary figure.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import RendererAgg, get_hinting_flag
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_pdf import Op, RendererPdf
from matplotlib.collections import QuadMesh
from matplotlib.colors import Colormap, ListedColormap, to_rgba, to_rgba_array
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.ft2font import RenderMode
from matplotlib.patches import Rectangle
from matplotlib.path import Path
from matplotlib.text import Text

from storyeval.criteria import ordered_criteria
from storyeval.data.registry import marked_labels
from storyeval.errors import InputError
from storyeval.plots.base import check_range, first_seen, new_figure, require_columns, white_style

CORRELATION_CMAP = "Blues"  # HANNA's |r| (absolute=True)
SIGNED_CMAP = "RdBu"  # diverging, white at 0: signed or oriented r
DARK_GREEN = "#1b7837"
LIGHT_GREEN = "#c2e6b9"
SIGNIFICANCE = 0.05
AVERAGE = "Average"
PAD_INCHES = 0.08
# A title wider than the grid and this much room for its labels, and wider than TITLE_MIN, breaks into lines: a
# small grid's long title (a Williams figure of a few metrics) would otherwise widen the figure with white.
TITLE_ROOM, TITLE_MIN = 2.0, 5.0
# FreeType's 16.16 matrix of an upright glyph (RendererAgg._draw_text_glyphs_and_boxes at angle 0).
# One cell of the mesh as a closed path: its four corners and back to the first.
SQUARE = [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY]
_UPRIGHT = (0x10000 * np.array([[1.0, -0.0], [0.0, 1.0]]) @ [[1, 0], [0, 1]]).round().astype(int)


def percent(values: np.ndarray) -> np.ndarray:
    """abs(round(100 x)): HANNA's cell value (rounded first, then absolute; NaN stays NaN)."""
    return np.abs(np.round(100.0 * np.asarray(values, dtype=float)))


def _check_matrix(matrix: object, function: str) -> pd.DataFrame:
    if not isinstance(matrix, pd.DataFrame) or matrix.empty:
        raise InputError(f"{function}: expected a non-empty DataFrame (rows x columns); fix: pivot the long table")
    if matrix.index.has_duplicates or matrix.columns.has_duplicates:
        raise InputError(f"{function}: repeated row or column labels; fix: one row and one column per variable")
    try:
        return matrix.astype(float)
    except (TypeError, ValueError) as error:
        raise InputError(f"{function}: non-numeric cell ({error}); fix: pass numbers, NaN where undefined") from error


def _layout(n_rows: int, n_cols: int) -> dict[str, float]:
    """Cell size (inches) and font sizes (points) for an n_rows x n_cols grid."""
    cell = float(np.clip(6.0 / max(n_rows, n_cols), 0.2, 0.6))
    cell_points = 72.0 * cell
    return {
        "cell": cell,
        "annot": float(np.clip(0.35 * cell_points, 5.0, 10.0)),
        "ticks": float(np.clip(0.42 * cell_points, 6.0, 11.0)),
        "title": float(np.clip(0.42 * cell_points, 6.0, 11.0)) + 3.0,
    }


def _wrap_title(figure: Figure, ax, inches: float) -> None:
    """Break the axes' title at spaces into lines no wider than `inches` (a line's width measured, its characters
    scaled to fit: the title's font is proportional)."""
    title, renderer = ax.title, figure.canvas.get_renderer()
    text = title.get_text()
    for _ in range(3):  # a narrower line may still hold wide letters: measure again
        width = title.get_window_extent(renderer).width / figure.dpi
        if width <= inches:
            return
        longest = max(map(len, title.get_text().split("\n")))
        title.set_text(textwrap.fill(text, max(10, int(longest * inches / width))))


def _fit_axes(figure: Figure, ax, grid_width: float, grid_height: float) -> None:
    """Size the figure so that the grid keeps its size and every label around it is inside the page."""
    renderer = figure.canvas.get_renderer()
    box = ax.get_tightbbox(renderer, bbox_extra_artists=[]).transformed(figure.dpi_scale_trans.inverted())
    axes = ax.get_position().transformed(figure.transFigure).transformed(figure.dpi_scale_trans.inverted())
    left, bottom = axes.x0 - box.x0 + PAD_INCHES, axes.y0 - box.y0 + PAD_INCHES
    right, top = box.x1 - axes.x1 + PAD_INCHES, box.y1 - axes.y1 + PAD_INCHES
    width, height = left + grid_width + right, bottom + grid_height + top
    figure.set_size_inches(width, height)
    ax.set_position([left / width, bottom / height, grid_width / width, grid_height / height])


class CellNumbers(Artist):
    """The numbers of a heatmap's cells, drawn as seaborn's `annot` draws them (centred, dark grey on light cells,
    white on dark ones) but as one artist: a 72 x 72 grid has 5,000 numbers, and a Text artist each spends most of
    a figure's rendering time laying itself out again on every draw. Here each distinct (number, colour) is laid
    out once per renderer (on the PNG canvas its glyphs shaped once and rendered once per sub-pixel position; in
    the PDF its text block written once and replayed), every copy goes straight to the renderer, and the
    measuring draw of savefig is skipped; the pixels and PDF text are those of the Text artists
    (same font, alignment and rendering calls; tests/test_plots.py compares the pixels)."""

    zorder = 3  # Text's: above the mesh and the rules, as seaborn's annotations

    def __init__(self, rows: np.ndarray, columns: np.ndarray, strings: list[str], colours: list[str], fontsize: float):
        super().__init__()
        self.set_in_layout(False)  # the numbers lie inside the grid: margins are measured without them
        self.rows, self.columns, self.strings, self.colours = rows, columns, strings, colours
        self._font = FontProperties(size=fontsize)  # the style's font family, read while the style is active
        self._stamps: dict[tuple, tuple] = {}
        self._bitmaps: dict[tuple, tuple] = {}  # rendered glyphs by font, size, dpi and sub-pixel position
        self._pdf_file, self._pdf_blocks = None, {}  # the PDF file drawn on, {string: its recorded text block}

    def cells(self) -> dict[tuple[int, int], str]:
        """{(row, column): number as drawn}."""
        return dict(zip(zip(self.rows.tolist(), self.columns.tolist()), self.strings))

    def font_size(self) -> float:
        return self._font.get_size_in_points()

    def _stamp(self, renderer, string: str, colour: str) -> tuple[Text, float, float, tuple | None]:
        key = (type(renderer), self.get_figure(root=True).dpi, string, colour)  # a layout holds for one renderer
        if key not in self._stamps:
            text = Text(0, 0, string, color=colour, ha="center", va="center", fontproperties=self._font)
            text.set_figure(self.get_figure(root=False))
            ((_, _, (dx, dy)),) = text._get_layout(renderer)[1]  # offset of the line from the anchor
            glyphs = self._agg_glyphs(renderer, text) if isinstance(renderer, RendererAgg) else None
            self._stamps[key] = (text, dx, dy, glyphs)
        return self._stamps[key]

    def _agg_glyphs(self, renderer: RendererAgg, text: Text) -> tuple:
        """The glyphs RendererAgg.draw_text shapes for `text` (the same calls): shaped once, not once a copy."""
        font = renderer._prepare_font(self._font)
        items = font._layout(text.get_text(), flags=get_hinting_flag(), features=text.get_fontfeatures(),
                             language=text.get_language())
        size = self._font.get_size_in_points()
        return tuple((item.ft_object, size, item.glyph_index, 0, 1, item.x, item.y) for item in items)

    def _agg_text(self, renderer: RendererAgg, gc, x: float, y: float, glyphs: tuple) -> None:
        """RendererAgg._draw_text_glyphs_and_boxes at angle 0 (its pixels), each glyph rendered once per sub-pixel
        position: FreeType places a glyph at a 26.6 fixed-point offset, and one moved by whole pixels is the same
        bitmap moved by those pixels. The numbers sit at the cell centres, so few positions recur."""
        load_flags = get_hinting_flag()
        antialiased = gc.get_antialiased()
        for font, size, glyph_index, _slant, _extend, dx, dy in glyphs:
            # The position draw_text computes at angle 0 (cos 1, sin 0), in 1/64 pixel, FreeType's y upwards.
            px, py = round(0x40 * (x + dx * 1.0 - dy * 0.0)), round(0x40 * (renderer.height - y + dx * 0.0 + dy * 1.0))
            (ix, fx), (iy, fy) = divmod(px, 0x40), divmod(py, 0x40)
            key = (font, size, renderer.dpi, glyph_index, fx, fy, antialiased, load_flags)
            if key not in self._bitmaps:
                font.set_size(size, renderer.dpi)
                font._set_transform(_UPRIGHT, [fx, fy])
                bitmap = font._render_glyph(glyph_index, load_flags,
                                            RenderMode.NORMAL if antialiased else RenderMode.MONO)
                buffer = np.array(bitmap.buffer)  # a copy: the next glyph reuses FreeType's buffer
                if not antialiased:
                    buffer *= 0xff
                self._bitmaps[key] = (buffer, bitmap.left, bitmap.top)
            buffer, left, top = self._bitmaps[key]
            renderer._renderer.draw_text_image(
                buffer, left + ix, int(renderer.height) - (top + iy) + buffer.shape[0], 0, gc)

    def _pdf_text(self, renderer: RendererPdf, gc, x: float, y: float, string: str, text: Text) -> None:
        """RendererPdf.draw_text, its bytes included, without its font lookup and layout for each copy.

        Its output for a string at angle 0 is: the colour operators of check_gc, "q", the matrix
        "1 0 -0 1 x y cm", then a text block that depends on the string and font only (the glyphs it
        uses are recorded in the file on the first copy). The first copy is drawn by draw_text and its
        text block recorded (write by write, so the compressed stream is the same); the others replay it."""
        file = renderer.file
        if self._pdf_file is not file:  # a text block holds for one PDF file (its font names and glyph subsets)
            self._pdf_file, self._pdf_blocks = file, {}
        key = string
        if key not in self._pdf_blocks:
            written: list[bytes] = []
            write = file.write
            file.write = lambda data: (written.append(data), write(data))[1]
            try:
                renderer.draw_text(gc, x, y, string, self._font, 0.0, mtext=text)
            finally:
                del file.write
            start = written.index(Op.gsave.value) if Op.gsave.value in written else -1
            expected = start >= 0 and written[start + 1:start + 4:2] == [b"\n", b"\n"] and written[-2:] == [b"Q", b"\n"]
            self._pdf_blocks[key] = written[start + 4:] if expected else None  # None: another layout, not replayed
            return
        if self._pdf_blocks[key] is None:
            renderer.draw_text(gc, x, y, string, self._font, 0.0, mtext=text)
            return
        renderer.check_gc(gc, gc._rgb)
        file.output(Op.gsave)
        file.output(1.0, 0.0, -0.0, 1.0, x, y, Op.concat_matrix)  # cos 0, sin 0, -sin 0, cos 0: draw_text's matrix
        for data in self._pdf_blocks[key]:
            file.write(data)

    def draw(self, renderer) -> None:
        # The page is measured by a draw with the renderer's draw_* methods replaced by no-ops
        # (RendererBase._draw_disabled, base.tight_page): the numbers add nothing to that measure.
        # savefig's PDF renderer is a MixedModeRenderer: it hands _draw_disabled and draw_text to its RendererPdf.
        inner = renderer._renderer if isinstance(renderer, MixedModeRenderer) else renderer
        if not self.get_visible() or "draw_text" in vars(renderer) or "draw_text" in vars(inner):
            return
        pdf = inner if isinstance(inner, RendererPdf) else None
        anchors = self.axes.transData.transform(np.column_stack([self.columns + 0.5, self.rows + 0.5]))
        height = renderer.get_canvas_width_height()[1]
        for (x, y), string, colour in zip(anchors, self.strings, self.colours):
            text, dx, dy, glyphs = self._stamp(renderer, string, colour)
            gc = renderer.new_gc()
            gc.set_foreground(to_rgba(colour), isRGBA=True)
            gc.set_antialiased(text._antialiased)
            x, y = x + dx, y + dy
            y = height - y if renderer.flipy() else y
            if glyphs is not None:  # RendererAgg.draw_text without its font lookup and shaping
                self._agg_text(renderer, gc, x, y, glyphs)
            elif pdf is not None:
                self._pdf_text(pdf, gc, x, y, string, text)
            else:
                renderer.draw_text(gc, x, y, string, self._font, 0.0, mtext=text)
            gc.restore()
        self.stale = False


class PdfFillsByColour(QuadMesh):
    """Seaborn's cell mesh, written to a PDF as one filled path per colour rather than one per cell.

    RendererPdf has no quad-mesh primitive: it writes every cell as a path with its own colour operators,
    5,184 of them in a 72 x 72 heatmap, about half of the PDF's writing time. The same rectangles grouped by
    their RGBA fill the same area with the same colours (adjacent cells do not overlap); other renderers
    (Agg: the PNG) draw the mesh as before."""

    def draw(self, renderer) -> None:
        inner = renderer._renderer if isinstance(renderer, MixedModeRenderer) else renderer
        if not isinstance(inner, RendererPdf) or not self.get_visible() or "draw_path" in vars(inner):
            super().draw(renderer)
            return
        self.update_scalarmappable()
        corners = self.get_coordinates()  # (rows + 1, columns + 1, 2), data units
        squares = np.stack([corners[:-1, :-1], corners[:-1, 1:], corners[1:, 1:], corners[1:, :-1],
                            corners[:-1, :-1]], axis=2).reshape(-1, 5, 2)
        colours = np.broadcast_to(self.get_facecolors(), (len(squares), 4))
        renderer.open_group("quadmesh", self.get_gid())
        gc = renderer.new_gc()
        self._set_gc_clip(gc)
        gc.set_linewidth(0.0)
        distinct, which = np.unique(colours, axis=0, return_inverse=True)
        for index, colour in enumerate(distinct):
            if colour[3] == 0:  # transparent: nothing to fill
                continue
            cells = squares[which.ravel() == index]
            path = Path(cells.reshape(-1, 2), np.tile(SQUARE, len(cells)))
            renderer.draw_path(gc, path, self.get_transform().frozen(), tuple(colour))
        gc.restore()
        renderer.close_group("quadmesh")
        self.stale = False


def relative_luminance(colours: np.ndarray) -> np.ndarray:
    """WCAG 2.0 relative luminance of RGBA colours (seaborn.utils.relative_luminance, which picks the text colour
    of its annotations)."""
    rgb = to_rgba_array(colours)[:, :3]
    rgb = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return rgb.dot([0.2126, 0.7152, 0.0722])


def _heatmap_mesh(ax, colour: pd.DataFrame, mask: np.ndarray, cmap: Colormap, vmin: float, vmax: float) -> QuadMesh:
    """What seaborn.heatmap draws for square=True, cbar=False, linewidths=0 and no tick labels (seaborn 0.13's
    _HeatMapper.plot, call for call): no spines, the masked matrix as a mesh, rows top to bottom. Not seaborn
    itself: importing it costs a figure job 1-2 CPU-s (it imports scipy.stats), and its heatmap draws the whole
    figure once to test tick labels that this module sets. tests/test_plots.py compares the pixels with seaborn's."""
    ax.set_aspect("equal")
    for spine in ax.spines.values():
        spine.set_visible(False)
    data = np.ma.masked_where(mask, colour.to_numpy())
    mesh = ax.pcolormesh(data, cmap=cmap, vmin=vmin, vmax=vmax, linewidths=0.0, edgecolor="white")
    ax.set(xlim=(0, colour.shape[1]), ylim=(0, colour.shape[0]))
    ax.invert_yaxis()
    return mesh


def _annotate(ax, mesh, numbers: np.ndarray, number_format: str, fontsize: float) -> None:
    """Seaborn's annotation rule (seaborn.matrix._annotate_heatmap): every unmasked cell, ".15" text where the
    cell's relative luminance exceeds 0.408, white text elsewhere."""
    mesh.update_scalarmappable()
    shown = ~np.ma.getmaskarray(mesh.get_array()).ravel()
    rows, columns = np.divmod(np.flatnonzero(shown), numbers.shape[1])
    light = np.atleast_1d(relative_luminance(mesh.get_facecolors()[shown])) > 0.408
    strings = [format(value, number_format) for value in numbers.ravel()[shown]]
    ax.add_artist(CellNumbers(rows, columns, strings, [".15" if bright else "w" for bright in light], fontsize))


def _annotated_heatmap(
    colour: pd.DataFrame,
    numbers: np.ndarray,
    title: str,
    cmap: Colormap,
    vmin: float,
    vmax: float,
    hidden: np.ndarray | None = None,
    rule_above: int | None = None,
    number_format: str = ".0f",
) -> Figure:
    """Draw `colour` (rows x columns) with `numbers` as text; NaN and `hidden` cells stay blank."""
    n_rows, n_cols = colour.shape
    size = _layout(n_rows, n_cols)
    grid_width, grid_height = n_cols * size["cell"], n_rows * size["cell"]
    mask = np.isnan(colour.to_numpy(dtype=float)) | np.isnan(numbers)
    if hidden is not None:
        mask |= hidden
    with white_style():
        width, height = grid_width + 2.0, grid_height + 2.0
        figure = new_figure(width, height)
        # The axes at the grid's final size: _fit_axes measures the centred title's overhang on each side from it.
        ax = figure.add_axes((1.0 / width, 1.0 / height, grid_width / width, grid_height / height))
        mesh = _heatmap_mesh(ax, colour, mask, cmap, vmin, vmax)
        # Same labels, places (cell centres) and vertical alignment as seaborn's, so the same pixels and PDF.
        ax.set_xticks(np.arange(n_cols) + 0.5, list(colour.columns))
        ax.set_yticks(np.arange(n_rows) + 0.5, list(colour.index), va="center")
        mesh.__class__ = PdfFillsByColour  # the same mesh; only its PDF drawing differs
        _annotate(ax, mesh, numbers, number_format, size["annot"])
        ax.set(xlabel="", ylabel="")
        # The axis labels are empty: pinned, they skip Axis._update_label_position's measuring of every tick
        # label on each draw (a third of the tick labels' layout work in a 72 x 72 heatmap).
        ax.xaxis.set_label_coords(0.5, 0.0)
        ax.yaxis.set_label_coords(0.0, 0.5)
        ax.tick_params(axis="both", length=0, labelsize=size["ticks"], pad=2)
        if n_cols > 8:
            ax.set_xticks(ax.get_xticks(), ax.get_xticklabels(), rotation=90)
        else:
            ax.set_xticks(ax.get_xticks(), ax.get_xticklabels(), rotation=45, ha="right", rotation_mode="anchor")
        ax.set_yticks(ax.get_yticks(), ax.get_yticklabels(), rotation=0)
        if rule_above is not None:
            ax.axhline(rule_above, color="0.2", linewidth=0.8)
        # Placed, not left to Axes._update_title_position: its search for tick labels above the grid (there are
        # none) costs a tenth of a 72 x 72 figure's drawing time, on every draw.
        ax.set_title(title, fontsize=size["title"], y=1.0)
        _wrap_title(figure, ax, max(grid_width + TITLE_ROOM, TITLE_MIN))
        _fit_axes(figure, ax, grid_width, grid_height)
    return figure


def _correlation_cmap() -> Colormap:
    return colormaps[CORRELATION_CMAP].with_extremes(bad="white")  # seaborn's color_palette(name, as_cmap=True)


def _signed_cmap() -> Colormap:
    return colormaps[SIGNED_CMAP].with_extremes(bad="white")


def correlation_heatmap(
    matrix: pd.DataFrame, title: str, lower_triangle: bool = False, average_row: bool = False, absolute: bool = False
) -> Figure:
    """Heatmap of correlations in percent (HANNA Fig. 1-6, 10-25).

    `matrix` holds r as it is to be read (signed, or oriented by the caller: correlation_matrix), rows x columns in
    the order to draw. Cells show round(100 r) on a diverging map centred on 0, blue above and red below, so a
    correlation against the humans (or against a metric's own direction, once oriented) reads as one; NaN cells are
    blank. `absolute`: HANNA's look instead, abs(round(100 r)) in blues from 0 to 100 (its notebook; the
    paper-exact profile), where a strong r of either sign is the same dark cell.
    lower_triangle: metric x metric and criteria x criteria figures; needs a
    square matrix with the same labels on both axes; the diagonal is kept.
    average_row: metric x criteria figures (rows = criteria, columns =
    metrics); appends "Average" = the mean over the rows of r per column (of |r| with `absolute`; NaN skipped),
    shown as round(100 mean), below a thin rule.
    """
    function = "correlation_heatmap"
    matrix = _check_matrix(matrix, function)
    check_range(matrix, -1.0, 1.0, "correlations", function)
    hidden = None
    if lower_triangle and average_row:
        raise InputError(f"{function}: lower_triangle and average_row together make no spec figure; fix: pick one")
    if lower_triangle:
        if list(matrix.index) != list(matrix.columns):
            raise InputError(
                f"{function}: lower_triangle needs the same labels, in the same order, on rows and columns; "
                "fix: reindex the matrix with one variable list"
            )
        hidden = np.triu(np.ones(matrix.shape, dtype=bool), k=1)
    values = matrix.abs() if absolute else matrix
    shown = pd.DataFrame(np.round(100.0 * values.to_numpy()), index=matrix.index, columns=matrix.columns)
    rule = None
    if average_row:
        if AVERAGE in matrix.index:
            raise InputError(f"{function}: the matrix already has a row {AVERAGE!r}; fix: pass the criteria rows only")
        means = np.round(100.0 * values.mean(axis=0)).to_numpy()
        average = pd.DataFrame([means], index=[AVERAGE], columns=matrix.columns)
        shown, rule = pd.concat([shown, average]), len(matrix)
    if absolute:
        return _annotated_heatmap(shown, shown.to_numpy(), title, _correlation_cmap(), 0.0, 100.0, hidden, rule)
    return _annotated_heatmap(shown, shown.to_numpy(), title, _signed_cmap(), -100.0, 100.0, hidden, rule)


def correlation_matrix(
    correlations: pd.DataFrame,
    kind: str,
    level: str,
    coefficient: str,
    registry: pd.DataFrame,
    metrics: list[str] | None = None,
    orientation: str = "signed",
) -> pd.DataFrame:
    """One heatmap's r: criteria x criteria, criteria x metrics, or metrics x metrics (display labels).

    `metrics` (slugs) restricts and orders the metrics; default: registry order. `orientation` "signed": r as
    computed; "oriented" (analysis.orientation): a lower-is-better metric's scores negated (its r with a criterion
    negated, and its r with another metric once per lower-is-better side), as the rankings read them, so a positive
    cell is agreement in the metrics' declared directions. The criteria are rated higher-is-better: unchanged.
    """
    rows = correlations[
        (correlations["kind"] == kind) & (correlations["level"] == level) & (correlations["coefficient"] == coefficient)
    ]
    matrix = rows.pivot(index="x", columns="y", values="r")
    order = metrics if metrics is not None else list(registry.sort_values("order")["slug"])
    labels = marked_labels(registry)  # a degenerate release's column marked †, as in the tables
    criteria = ordered_criteria(rows["y"])
    if kind == "criteria":
        return matrix.loc[criteria, criteria]
    sign = pd.Series(1.0, index=order)
    if orientation == "oriented":
        sign = registry.set_index("slug")["direction"].reindex(order).map({"lower": -1.0}).fillna(1.0)
    elif orientation != "signed":
        raise InputError(f"correlation_matrix: orientation {orientation!r}; fix: signed or oriented")
    if kind == "metric_criterion":
        return matrix.loc[order, criteria].mul(sign, axis=0).T.rename(columns=labels)
    return matrix.loc[order, order].mul(sign, axis=0).mul(sign, axis=1).rename(index=labels, columns=labels)


P_VALUES = {"raw": "p", "bh": "p_bh"}  # config figures.p_values -> column of williams_bh.csv


def williams_matrix(
    williams: pd.DataFrame, level: str, criterion: str, metrics: list[str], p_values: str = "raw"
) -> pd.DataFrame:
    """One Williams figure's p-values: metric A (rows) beating metric B (columns), `metrics` (slugs) in order.
    `p_values` "raw" (the paper) or "bh": Benjamini-Hochberg adjusted within the level and criterion (the p_bh
    column of williams_bh.csv)."""
    column = P_VALUES[p_values]
    if column not in williams:
        raise InputError(
            f"williams_matrix: no column {column!r} for figures.p_values {p_values}; fix: pass williams_bh.csv"
        )
    rows = williams[(williams["level"] == level) & (williams["criterion"] == criterion)]
    return rows.pivot(index="metric_a", columns="metric_b", values=column).reindex(index=metrics, columns=metrics)


def pvalue_heatmap(matrix: pd.DataFrame, title: str, alpha: float = SIGNIFICANCE) -> Figure:
    """Williams-test p-values (HANNA Fig. 27-38): rows metric A, columns metric B, p of "A beats B".

    Cell text round(100 p); dark green where p < alpha (0.05), light green
    otherwise, white where no test was run (NaN, e.g. the diagonal).
    """
    function = "pvalue_heatmap"
    matrix = _check_matrix(matrix, function)
    check_range(matrix, 0.0, 1.0, "p-values", function)
    significant = matrix.where(matrix.isna(), (matrix < alpha).astype(float))
    cmap = ListedColormap([LIGHT_GREEN, DARK_GREEN]).with_extremes(bad="white")
    return _annotated_heatmap(significant, np.round(100.0 * matrix.to_numpy()), title, cmap, 0.0, 1.0)


def f1_heatmap(frame: pd.DataFrame, title: str) -> Figure:
    """Weighted F1 of pairwise system comparison (HANNA Fig. 7, 26) in percent.

    `frame`: one row per (metric, criterion) with f1 in [0, 1]; rows of the
    figure = metrics, columns = criteria, both in order of first appearance.
    """
    function = "f1_heatmap"
    require_columns(frame, ["metric", "criterion", "f1"], function)
    check_range(frame["f1"], 0.0, 1.0, "f1", function)
    if frame.duplicated(["metric", "criterion"]).any():
        raise InputError(f"{function}: a (metric, criterion) pair repeats; fix: one F1 per pair")
    table = frame.pivot(index="metric", columns="criterion", values="f1")
    table = table.reindex(index=first_seen(frame["metric"]), columns=first_seen(frame["criterion"]))
    shown = pd.DataFrame(percent(table.to_numpy()), index=table.index, columns=table.columns)
    return _annotated_heatmap(shown, shown.to_numpy(), title, _correlation_cmap(), 0.0, 100.0)


def rank_heatmap(matrix: pd.DataFrame, title: str, consensus_rows: int = 0) -> Figure:
    """Ranks of systems (columns) by each metric (rows), 1 = best: darker is better; tied ranks show as x.5.

    The last `consensus_rows` rows (Borda consensus) are set off below a thin rule."""
    function = "rank_heatmap"
    matrix = _check_matrix(matrix, function)
    check_range(matrix, 1.0, float(matrix.shape[1]), "ranks", function)
    rule = len(matrix) - consensus_rows if consensus_rows else None
    return _annotated_heatmap(
        matrix,
        matrix.to_numpy(dtype=float),
        title,
        _correlation_cmap().reversed(),
        1.0,
        float(matrix.shape[1]),
        rule_above=rule,
        number_format=".3g",
    )


def benchmark_heatmap(r: pd.DataFrame, top: pd.DataFrame, title: str, dpi: int = 200) -> Figure:
    """The cross-dataset benchmark (storyeval.benchmark.matrices): signed r in percent of each metric or judge
    (rows) with each dataset's criterion (columns), red below 0 and blue above, blank where it was not measured;
    the cells of a criterion's top significance cluster framed in dark green. Signed, unlike HANNA's |r|: the r
    are oriented (higher agrees more), so a negative one disagrees with the humans. `dpi`: the PNG's."""
    function = "benchmark_heatmap"
    r = _check_matrix(r, function)
    check_range(r, -1.0, 1.0, "correlations", function)
    if top.shape != r.shape:
        raise InputError(f"{function}: top is {top.shape}, r {r.shape}; fix: pass both from benchmark.matrices")
    shown = pd.DataFrame(np.round(100.0 * r.to_numpy()), index=r.index, columns=r.columns)
    cmap = colormaps["RdBu"].with_extremes(bad="white")
    figure = _annotated_heatmap(shown, shown.to_numpy(), title, cmap, -100.0, 100.0)
    ax = figure.axes[0]
    # Laid out again at the PNG's resolution: its hinted text runs longer than at the layout's 100 dpi, and the
    # long rotated labels of dataset criteria would be cut at the page's edge.
    figure.set_dpi(dpi)
    size = _layout(*shown.shape)
    _fit_axes(figure, ax, shown.shape[1] * size["cell"], shown.shape[0] * size["cell"])
    for row, column in zip(*np.nonzero(top.to_numpy(dtype=bool))):
        ax.add_patch(Rectangle((column + 0.04, row + 0.04), 0.92, 0.92, fill=False, edgecolor=DARK_GREEN,
                               linewidth=1.2, zorder=2.5))
    return figure
