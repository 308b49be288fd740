"""The report as a reader's browser lays it out (headless Chromium): Snakemake's report template, given the
report's stylesheet (workflow/report/report.css, `make report`'s --report-stylesheet), opens the landing page at
its top at 1280x800, 1400x1000 and 1920x1080, keeps a category's entry list from squeezing the page beside it, and
a table page's wide table scrolls inside its own frame. The same report without the stylesheet is measured too:
its title lies above the window, so the measure sees what it tests."""

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from storyeval.plots.pages import write_table_page

REPO = Path(__file__).resolve().parents[1]
STYLESHEET = REPO / "workflow" / "report" / "report.css"
SIZES = [(1280, 800), (1400, 1000), (1920, 1080)]
TITLE = "A landing page taller than any window"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SNAKEFILE = """report: "workflow.rst"
rule all:
    input: "out/page.html"
rule page:
    output: report("out/page.html", category="example, computed scores", subcategory="Tables", labels={labels})
    shell: "echo '<html><body><p>a page</p></body></html>' > {{output}}"
"""
# A category's list of the report's labels: long enough that the list, sized to its widest row, took the window.
LABELS = {"#": "09", "Table": "Tab. 9", "Shows": "top metrics per criterion, system level (r %); ranked by r after "
          "orientation (a lower-is-better metric's r negated)", "Level": "system", "Coefficient": "Kendall τ",
          "Metrics": "all"}
# Run in each frame of the harness: the title's box on the landing page, then the entry list and the page beside
# it once a category is open; posted to the harness, which writes them into its DOM for --dump-dom.
PROBE = """<script>
setTimeout(function () {
  var title = Array.from(document.querySelectorAll('#app h1')).find(h => h.textContent.includes(%s));
  var box = title.getBoundingClientRect(), said = {name: window.name, width: innerWidth, height: innerHeight,
    title_top: box.top, title_bottom: box.bottom};
  app.showCategory(Object.keys(categories)[0]);
  setTimeout(function () {
    said.list = document.querySelector('#app > div > nav').getBoundingClientRect().width;
    said.page = document.querySelector('#app > div > nav + div').getBoundingClientRect().width;
    parent.postMessage(JSON.stringify(said), '*');
  }, 300);
}, 300);
</script>"""
HARNESS = """<!DOCTYPE html><html><body><pre id="said"></pre>
<script>window.addEventListener('message', e => { document.getElementById('said').textContent += e.data + '\\n'; });
</script>%s</body></html>"""


def browser() -> str:
    found = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    if found is None:
        pytest.skip(f"no headless Chromium on PATH (looked for {', '.join(BROWSERS)}): the layout is not measured")
    return found


def render_dom(page: Path, profile: Path, width: int = 2000, height: int = 1200) -> str:
    """The DOM of `page` after Chromium ran its scripts (a virtual 5 s)."""
    command = [browser(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
               "--virtual-time-budget=5000", "--dump-dom", page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout


def said_in(dom: str) -> str:
    """The text a probe wrote into the page's <pre id="said">."""
    return html.unescape(dom.split('<pre id="said">')[1].split("</pre>")[0])


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """{(frame name): what PROBE measured}: the report with the stylesheet at SIZES and without it at 1400x1000,
    each in a frame of that size in one Chromium run (a frame's viewport is what a window's would be)."""
    browser()
    work = tmp_path_factory.mktemp("layout")
    paragraphs = "\n\n".join(f"Paragraph {i}: " + "the landing page's words " * 20 for i in range(60))
    (work / "workflow.rst").write_text(f"{TITLE}\n{'=' * len(TITLE)}\n\n{paragraphs}\n", encoding="utf-8")
    (work / "Snakefile").write_text(SNAKEFILE.format(labels=repr(LABELS)), encoding="utf-8")
    snakemake = [sys.executable, "-m", "snakemake", "--directory", str(work), "--snakefile", str(work / "Snakefile")]
    subprocess.run([*snakemake, "--cores", "1", "--quiet"], check=True, capture_output=True)
    frames = []
    for name, style in (("styled", ["--report-stylesheet", str(STYLESHEET)]), ("plain", [])):
        report = work / f"{name}.html"
        subprocess.run([*snakemake, "--report", str(report), *style], check=True, capture_output=True)
        text = report.read_text(encoding="utf-8")
        end = text.rindex("</body>")
        report.write_text(text[:end] + PROBE % json.dumps(TITLE) + text[end:], encoding="utf-8")
        sizes = SIZES if name == "styled" else SIZES[1:2]
        frames += [f'<iframe name="{name} {w}x{h}" src="{report.name}" width="{w}" height="{h}" '
                   'style="border: 0; display: block"></iframe>' for w, h in sizes]
    harness = work / "harness.html"
    harness.write_text(HARNESS % "\n".join(frames), encoding="utf-8")
    said = said_in(render_dom(harness, work / "profile")).split("\n")
    return {entry["name"]: entry for entry in map(json.loads, filter(None, said))}


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_landing_page_opens_at_its_title(measured, width, height):
    said = measured[f"styled {width}x{height}"]
    assert (said["width"], said["height"]) == (width, height)
    assert 0 <= said["title_top"] < said["title_bottom"] <= height, said


def test_without_the_stylesheet_the_title_is_out_of_reach(measured):
    """Snakemake's template alone centres the landing page: its title lies above the top, where scrolling does not
    reach (the fault the stylesheet mends, seen by the same measure)."""
    assert measured["plain 1400x1000"]["title_bottom"] < 0


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_entry_list_leaves_the_page_most_of_the_window(measured, width, height):
    said = measured[f"styled {width}x{height}"]
    assert said["list"] <= 0.4 * width and said["page"] >= 0.6 * width - 1, said
    assert said["list"] + said["page"] <= width + 1, said


def test_a_wide_table_scrolls_inside_its_frame(tmp_path):
    """A table page of 40 wide columns at 1280 px: the page itself stays in the window, the table's frame scrolls."""
    frame = pd.DataFrame({f"Column {i}": [f"a long cell of column {i}"] * 3 for i in range(40)})
    page, files = tmp_path / "wide.html", [tmp_path / "wide.csv"]
    frame.to_csv(files[0], index=False)
    write_table_page(page, frame, "A wide table", files)
    probe = ("<script>setTimeout(function () { var f = document.querySelector('div.frame'); "
             "document.getElementById('said').textContent = JSON.stringify({page: "
             "document.documentElement.scrollWidth, window: innerWidth, frame: f.clientWidth, table: f.scrollWidth}); "
             "}, 100);</script>")
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", f'<pre id="said"></pre>{probe}</body>'),
                    encoding="utf-8")
    said = json.loads(said_in(render_dom(page, tmp_path / "profile", 1280, 800)))
    assert said["page"] <= said["window"] and said["frame"] <= said["window"] < said["table"], said
