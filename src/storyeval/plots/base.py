"""Shared plumbing of the figures: Agg figures in seaborn's white style, input checks, deterministic saving."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends import _backend_pdf_ps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from storyeval.data.registry import DEGENERATE_MARK, DEGENERATE_NOTE
from storyeval.errors import InputError

# PDF metadata that would change from run to run (or machine to machine) is dropped.
PDF_METADATA = {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}
PNG_METADATA = {"Software": None}
PNG_COMPRESS_LEVEL = 3
PAD_INCHES = 0.05  # white margin around the drawn artists
# TrueType fonts in the PDF keep the text selectable and editable (Type 3 would not).
SAVE_RC = {"pdf.fonttype": 42, "svg.hashsalt": "storyeval"}


# seaborn.axes_style("white") of seaborn 0.13, spelled out: the heatmap jobs need nothing else of seaborn, whose
# import costs them 1-2 CPU-s (tests/test_plots.py checks the two are the same). All but its default colormap,
# "rocket", which exists only once seaborn is imported: every figure here names its colours.
WHITE_STYLE = {
    "figure.facecolor": "white", "axes.labelcolor": ".15", "xtick.direction": "out", "ytick.direction": "out",
    "xtick.color": ".15", "ytick.color": ".15", "axes.axisbelow": True, "grid.linestyle": "-", "text.color": ".15",
    "font.family": ["sans-serif"], "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans",
                                                        "Bitstream Vera Sans", "sans-serif"],
    "lines.solid_capstyle": "round", "patch.edgecolor": "w", "patch.force_edgecolor": True,
    "xtick.top": False, "ytick.right": False, "axes.grid": False, "axes.facecolor": "white", "axes.edgecolor": ".15",
    "grid.color": ".8", "axes.spines.left": True, "axes.spines.bottom": True, "axes.spines.right": True,
    "axes.spines.top": True, "xtick.bottom": False, "ytick.left": False,
}


@contextmanager
def white_style() -> Iterator[None]:
    """Seaborn's white style (as HANNA's heatmaps, Chhun et al. 2022) for the artists created inside."""
    with matplotlib.rc_context(WHITE_STYLE), matplotlib.rc_context({"font.family": "DejaVu Sans"}):
        yield


def new_figure(width: float, height: float, **kwargs: object) -> Figure:
    """A figure on the Agg canvas, outside pyplot: no GUI backend and no global figure registry."""
    figure = Figure(figsize=(width, height), **kwargs)
    FigureCanvasAgg(figure)
    return figure


def require_columns(frame: object, columns: list[str], function: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"{function}: expected a pandas DataFrame, got {type(frame).__name__}; fix: pass a DataFrame")
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise InputError(
            f"{function}: missing column(s) {missing} (has {list(frame.columns)}); fix: pass columns {columns}"
        )
    if frame.empty:
        raise InputError(f"{function}: the frame is empty; fix: pass at least one row")
    return frame


def check_range(values: pd.Series | pd.DataFrame, low: float, high: float, what: str, function: str) -> None:
    """Reject values outside [low, high] (NaN allowed): a percent passed as a fraction is a wrong figure."""
    try:
        numbers = values.to_numpy(dtype=float, na_value=float("nan")).ravel()
    except (TypeError, ValueError) as error:
        raise InputError(f"{function}: {what} are not numbers ({error}); fix: pass numeric columns") from error
    outside = numbers[(numbers < low) | (numbers > high)]
    if outside.size:
        raise InputError(
            f"{function}: {what} must lie in [{low:g}, {high:g}], found {outside[0]:g}; "
            "fix: pass fractions (r, p, F1), not percents"
        )


def check_present(wanted: list[str], available: pd.Series, what: str, function: str) -> None:
    present = set(available)
    missing = [name for name in wanted if name not in present]
    if missing:
        raise InputError(f"{function}: {what} {missing} not in the frame; fix: pass {what} that have rows")


def first_seen(values: pd.Series) -> list:
    """Distinct values in order of first appearance (the caller's order, not alphabetical)."""
    return list(dict.fromkeys(values))


_SUBSET_FONT = _backend_pdf_ps.get_glyphs_subset  # matplotlib's own, the cache below calls it


class _SubsetFontFile:
    """A subset font as the PDF backend uses it: it only writes it out (_backend_pdf_ps.font_as_file)."""

    def __init__(self, data: bytes):
        self.data = data

    def save(self, file, reorderTables: bool = False) -> None:
        file.write(self.data)


@lru_cache(maxsize=64)
def _font_subset(fontfile: str, glyphs: frozenset) -> tuple[bytes, tuple]:
    with _SUBSET_FONT(fontfile, glyphs) as subset:
        return _backend_pdf_ps.font_as_file(subset.font).getvalue(), tuple(subset.glyph_index_map.items())


def _cached_glyphs_subset(fontfile: str, glyphs) -> nullcontext:
    data, index_map = _font_subset(fontfile, frozenset(glyphs))
    return nullcontext(_backend_pdf_ps.SubsetResults(_SubsetFontFile(data), dict(index_map)))


@contextmanager
def reused_font_subsets() -> Iterator[None]:
    """The PDF backend's TrueType subsets, made once per font and glyph set in a process.

    fontTools parses the whole font again for every subset, 0.07-0.17 CPU-s a PDF (a third of a small heatmap's
    PDF), and the figures of a family use the same glyphs (their labels and digits). The subset is the same
    bytes either way; only matplotlib's PDF writing inside sees the cache."""
    _backend_pdf_ps.get_glyphs_subset = _cached_glyphs_subset
    try:
        yield
    finally:
        _backend_pdf_ps.get_glyphs_subset = _SUBSET_FONT


def save_figure(fig: Figure, pdf_path: str | Path, png_path: str | Path, dpi: int = 200) -> np.ndarray:
    """Write `fig` as a vector PDF and a PNG, close it, and return the PNG's pixels (rows x columns x RGBA).

    Deterministic: time stamps and tool versions are dropped from the
    metadata, so the same figure gives the same bytes. The page is grown or
    trimmed to the drawn artists (as bbox_inches="tight"), so no label is clipped.
    """
    pdf_path, png_path = Path(pdf_path), Path(png_path)
    for path, suffix in ((pdf_path, ".pdf"), (png_path, ".png")):
        if path.suffix.lower() != suffix:
            raise InputError(f"save_figure: {str(path)!r} should end with {suffix}; fix: rename the output")
        path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context(SAVE_RC):
        page = tight_page(fig, PAD_INCHES)
        # The measuring draw ran the layout engine (constrained layout of the panel figures); kept, the placed
        # axes are saved as they are, where an engine would make each savefig lay the figure out again.
        fig.set_layout_engine(None)
        with reused_font_subsets():
            fig.savefig(pdf_path, format="pdf", metadata=PDF_METADATA, bbox_inches=page)
        # zlib level 3 rather than Pillow's 6: the same pixels in 14 % more bytes, written in 60 % of the time.
        fig.savefig(png_path, format="png", metadata=PNG_METADATA, dpi=dpi, bbox_inches=page,
                    pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})
    pixels = np.array(fig.canvas.buffer_rgba())  # the Agg canvas still holds what the PNG encoded
    fig.clear()
    return pixels


def said_figure(text: str, width: float = 7.0) -> Figure:
    """A figure that says in one line why there is nothing to draw: its PDF and PNG stand where the figure would."""
    import textwrap

    with white_style():
        figure = new_figure(width, 0.6)
        figure.text(0.5, 0.5, textwrap.fill(text, 110), ha="center", va="center", fontsize=9)
    return figure


def shows_degenerate(figure: Figure) -> bool:
    """Whether a text of the figure (a tick label, a legend entry) names a degenerate release (marked †)."""
    return any(DEGENERATE_MARK in text.get_text() for text in figure.findobj(Text))


def tight_page(fig: Figure, pad_inches: float) -> Bbox:
    """The page bbox_inches="tight" would give, measured once for both files.

    savefig(bbox_inches="tight") measures with a draw whose renderer draws nothing, every call: for a 72 x 72
    heatmap that is a third of its time. One such draw here (Figure.draw_without_rendering) lays out the
    ticks and titles as it does; passing the measured box saves the second and third."""
    fig.draw_without_rendering()
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    if shows_degenerate(fig):  # the file carries its own † footnote, below everything drawn
        fig.set_layout_engine(None)  # the laid-out axes stay where they are
        width, height = fig.get_size_inches()  # figure fractions: savefig(bbox_inches) moves transFigure, not inches
        fig.text(box.x0 / width, (box.y0 - 0.08) / height, f"{DEGENERATE_NOTE}.", ha="left", va="top", fontsize=6)
        fig.draw_without_rendering()
        box = fig.get_tightbbox(fig.canvas.get_renderer())
    return box.padded(pad_inches)
