"""The report pages of tables: an HTML table, Tab. 4's best value in bold, the † note, the files named."""

import pandas as pd

from storyeval.plots.pages import write_table_page


def test_table_page_shows_the_table_with_its_marks(tmp_path):
    frame = pd.DataFrame({"System": ["Human", "CTRL"], "Relevance": ["**4.17** [4.03, 4.31]", "*2.54 [2.38, 2.70]"],
                          "Top": ["BaryScore-SD-0.001 †", "chrF"]})
    page = tmp_path / "tab4.html"
    write_table_page(page, frame, "Tab. 4: mean rating per system", ["tab4.csv", "tab4.md"])
    text = page.read_text(encoding="utf-8")
    assert "<table" in text and "<td><b>4.17</b> [4.03, 4.31]</td>" in text and "**" not in text
    assert "<td>*2.54 [2.38, 2.70]</td>" in text  # one star: the interval overlaps the best one's, kept as is
    assert "†" in text.split("</table>")[1] and "<code>tab4.csv</code>" in text
