"""The report pages: a table as HTML (Tab. 4's best value in bold, the † note, the files named); a figure as its
PNG's exact pixels at screen resolution."""

import base64
import io
import re

import numpy as np
import pandas as pd
from PIL import Image

from storyeval.plots.base import save_figure
from storyeval.plots.heatmaps import correlation_heatmap
from storyeval.plots.pages import SCREEN_DPI, write_figure_page, write_table_page


def test_table_page_shows_the_table_with_its_marks(tmp_path):
    frame = pd.DataFrame({"System": ["Human", "CTRL"], "Relevance": ["**4.17** [4.03, 4.31]", "*2.54 [2.38, 2.70]"],
                          "Top": ["BaryScore-SD-0.001 †", "chrF"]})
    page = tmp_path / "tab4.html"
    write_table_page(page, frame, "Tab. 4: mean rating per system", ["tab4.csv", "tab4.md"])
    text = page.read_text(encoding="utf-8")
    assert "<table" in text and "<td><b>4.17</b> [4.03, 4.31]</td>" in text and "**" not in text
    assert "<td>*2.54 [2.38, 2.70]</td>" in text  # one star: the interval overlaps the best one's, kept as is
    assert "†" in text.split("</table>")[1] and "<code>tab4.csv</code>" in text


def embedded_pixels(page):
    data = re.search(r'src="data:image/webp;base64,([^"]+)"', page.read_text(encoding="utf-8")).group(1)
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGBA"))


def test_figure_page_holds_the_png_pixels_whether_handed_over_or_read(tmp_path):
    rng = np.random.default_rng(0)
    names = [f"m{i}" for i in range(12)]
    r = pd.DataFrame(rng.uniform(-1, 1, (12, 12)), index=names, columns=names)
    pdf, png = tmp_path / "f.pdf", tmp_path / "f.png"
    pixels = save_figure(correlation_heatmap(r, "12 x 12"), pdf, png, dpi=100)
    on_disk = np.asarray(Image.open(png).convert("RGBA"))
    assert np.array_equal(pixels, on_disk)
    write_figure_page(tmp_path / "given.html", png, pdf, "12 x 12", 100, pixels)
    write_figure_page(tmp_path / "read.html", png, pdf, "12 x 12", 100)
    assert np.array_equal(embedded_pixels(tmp_path / "given.html"), on_disk)
    assert (tmp_path / "given.html").read_bytes() == (tmp_path / "read.html").read_bytes()
    width = int(re.search(r'<img width="(\d+)"', (tmp_path / "read.html").read_text()).group(1))
    assert width == round(on_disk.shape[1] * SCREEN_DPI / 100)
