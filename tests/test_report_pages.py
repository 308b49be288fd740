"""The report pages: a table as HTML (Tab. 4's best value in bold, the † note, its files to save); a figure as its
PNG's exact pixels at screen resolution and its PDF to save; the captions of each kind on the page; the meta
tables for people; the landing page of whatever the report holds."""

import base64
import html
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from storyeval.criteria import CRITERIA
from storyeval.plots.base import save_figure
from storyeval.plots.heatmaps import correlation_heatmap
from storyeval.plots.pages import (
    DEGENERATE,
    META_TABLES,
    SCREEN_DPI,
    SHOWN_PER_GROUP,
    TABLE_CAPTIONS,
    TABLES,
    about_text,
    caption_facts,
    caption_html,
    figure_heading,
    figure_labels,
    fill_caption,
    meta_headers,
    readable,
    table_labels,
    write_figure_page,
    write_table_page,
)


def test_table_page_shows_the_table_with_its_marks(tmp_path):
    frame = pd.DataFrame({"System": ["Human", "CTRL"], "Relevance": ["**4.17** [4.03, 4.31]", "*2.54* [2.38, 2.70]"],
                          "Top": ["BaryScore-SD-0.001 †", "ROUGE-S* F-Score"], "Next": ["ROUGE-SU* Recall", "x"]})
    page, files = tmp_path / "tab4.html", [tmp_path / "tab4.csv", tmp_path / "tab4.md"]
    frame.to_csv(files[0], index=False)
    files[1].write_text("# Tab. 4\n")
    write_table_page(page, frame, "Tab. 4: mean rating per system", files)
    text = page.read_text(encoding="utf-8")
    assert "<table" in text and "<td><b>4.17</b> [4.03, 4.31]</td>" in text and "**" not in text
    assert "<td><i>2.54</i> [2.38, 2.70]</td>" in text  # one star: the interval overlaps the best one's
    assert "<td>ROUGE-S* F-Score</td>" in text and "<td>ROUGE-SU* Recall</td>" in text  # a name's star stays
    assert DEGENERATE in text.split("</table>")[1]
    assert linked(page) == {file.name: file.read_bytes() for file in files}


def linked(page) -> dict[str, bytes]:
    """{file name: bytes} of the page's download links."""
    links = re.findall(r'<a download="([^"]+)" href="data:[^;]+;base64,([^"]+)"', page.read_text(encoding="utf-8"))
    return {name: base64.b64decode(data) for name, data in links}


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
    assert linked(tmp_path / "given.html") == {"f.pdf": pdf.read_bytes()}  # the PDF itself, away from results/
    assert (tmp_path / "given.html").read_bytes() == (tmp_path / "read.html").read_bytes()
    width = int(re.search(r'<img width="(\d+)"', (tmp_path / "read.html").read_text()).group(1))
    assert width == round(on_disk.shape[1] * SCREEN_DPI / 100)


REPORT = Path(__file__).resolve().parents[1] / "workflow/report"


@pytest.mark.parametrize("caption", sorted(path.name for path in REPORT.glob("*.rst") if path.name != "workflow.rst"))
def test_caption_on_the_page_reads_as_the_reports(caption):
    """The page shows the caption as Snakemake's report renders it (docutils), the wildcards filled."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    wildcards = {"dataset": "mine", "scoreset": "computed", "model": "tiny"}
    facts = (BENCHMARK_FACTS if caption == "benchmark.rst"
             else caption_facts(HANNA_SHAPE, True, True, "released", ["none", "item", "system"]))
    snakemake = type("Snakemake", (), {"wildcards": wildcards, "params": {"facts": facts}})  # as the report fills it
    filled = Environment().from_string((REPORT / caption).read_text(encoding="utf-8")).render(snakemake=snakemake)
    ours = caption_html(REPORT / caption, wildcards, facts)
    theirs = publish_parts(filled, writer="html")["body"]

    def words(markup: str) -> str:
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())

    assert words(ours) == words(theirs) and "{{" not in ours
    literal = '<tt class="docutils literal">'
    assert ours.count("<em>") == theirs.count("<em>") and ours.count("<code>") == theirs.count(literal)


# The cross-dataset benchmark's caption speaks of every dataset (storyeval.workflow.benchmark), not of a score set.
BENCHMARK_FACTS = {"answer": "**Across datasets:** BLEU is in the top cluster on 2 datasets.",
                   "studies": "hanna-annotations: hanna", "min_studies": "2"}
HANNA_SHAPE = {"levels": ["story", "system"], "systems": True, "subset": True, "criteria": CRITERIA}
POOLED_SHAPE = {"levels": ["story"], "systems": False, "subset": False}
HANNA_ONLY = ["Human reference stories", "TACL", "†", "Houairi & Thiounn's Tab. 2", "of HANNA's scores",
              "Fig. 27-32", "averaged over the prompts", "system level:", "(system level)", "item:"]
NOT_OWN = ("workflow.rst", "audit.rst", "storyer_evaluation.rst", "storyer_training.rst",  # HANNA's or StoryER's
           "benchmark.rst", "audit_datasets.rst",  # every dataset's
           "judge_distribution.rst", "judge_pairwise.rst",  # the LLM judges' own pages, only where judges are
           "released_judges.rst")


def filled_captions(facts: dict) -> str:
    """Every caption of the report with its wildcards and `facts` filled, as one text."""
    wildcards = {"dataset": "mine", "scoreset": "computed", "model": "tiny"}
    return " ".join(" ".join(fill_caption(path.read_text(encoding="utf-8"), wildcards, facts).split())
                    for path in sorted(REPORT.glob("*.rst")) if path.name not in NOT_OWN)


def test_captions_say_only_what_is_true_of_the_set():
    """HANNA's conventions (its reference stories, judges, † release, numbered figures, the reanalyses of its
    scores) only on HANNA; each level defined as it was computed; only the groupings the set has."""
    hanna = filled_captions(caption_facts(HANNA_SHAPE, True, True, "released", ["none", "item", "system"]))
    for phrase in HANNA_ONLY:
        assert phrase in hanna, phrase
    own = filled_captions(caption_facts(POOLED_SHAPE, False, False, "", ["none"]))
    for phrase in HANNA_ONLY:
        assert phrase not in own, phrase
    assert "Story level: the correlation over all stories at once (these tables pool" in own
    assert "These tables have no system level" in own
    assert "per criterion and grouping (none: all stories at once)" in own and "judge" not in own.lower()
    assert "one figure per criterion and level (story)" in own and "Tab. 5 (Pearson) and Tab. 8 (story level)" in own
    assert "*System*" not in own and "*Story*, the only level here" in own
    assert "prompts and systems resampled" in hanna and "(the stories resampled: the set is one group" in own
    pooled = caption_facts(POOLED_SHAPE, False, False, "", ["none"])
    assert meta_headers("meta_best_table", pooled)[0]["label"] == "Metric" and "LLM judges" not in str(pooled)
    assert table_labels("meta_consensus_table", pooled)["Shows"] == "Kemeny and Borda consensus of metrics"
    assert meta_headers("meta_consensus_table", caption_facts(HANNA_SHAPE, True, True, "released", ["none"]))[0][
        "label"] == "Metric or LLM judge"
    grid = caption_facts({**HANNA_SHAPE, "subset": False}, False, False, "configured", ["none", "item", "system"])
    assert grid["levels"] == ("Story level: for each prompt, the correlation over the systems' stories, averaged over "
                              "the prompts; system level: the correlation of the systems' mean scores.")
    assert "which LLM judge configured for this dataset" in grid["judges"] and "subset" not in grid["williams"]


# What each kind of table holds, in its caption's words; only percent tables say "in percent".
HOLDS = {"icc": "intraclass correlation", "system_means": "mean rating", "top_metrics": "in percent",
         "borda": "Borda count", "kemeny": "Kendall distance", "sum_of_ranks": "ranks are summed",
         "reanalysis_top_k": "as fractions", "coefficient_agreement": "Wilcoxon signed-rank"}
PERCENT = {"top_metrics", "heatmap", "bootstrap_f1", "topk", "williams"}


def test_each_kind_of_table_has_its_own_caption():
    assert set(TABLE_CAPTIONS) == set(TABLES)
    for name, caption in TABLE_CAPTIONS.items():
        facts = caption_facts(HANNA_SHAPE, True, True, "released", ["none", "item", "system"])
        wildcards = {"dataset": "mine", "scoreset": "computed", "model": "tiny"}
        text = " ".join(fill_caption((REPORT / f"{caption}.rst").read_text(encoding="utf-8"), wildcards, facts).split())
        assert HOLDS.get(caption, "") in text, name
        assert ("in percent" in text) == (caption in PERCENT), name
    kinds = {caption for name, caption in TABLE_CAPTIONS.items() if name.startswith(("tab", "reanalysis", "kemeny"))}
    assert kinds == set(HOLDS)


def as_the_report_sorts(rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The report's order (JavaScript localeCompare, label by label): punctuation, then digits, then letters."""
    def key(text: str) -> list[tuple[int, str]]:
        return [(0 if not char.isalnum() else 1 if char.isdigit() else 2, char.lower()) for char in text]

    return sorted(rows, key=lambda row: [key(label) for label in row])


def test_tables_are_listed_in_the_papers_order():
    """The report sorts entries by their labels as text; the # label keeps TABLES' order (Tab. 3 before Kemeny)."""
    rows = [tuple(table_labels(name).values()) for name in TABLES]
    assert as_the_report_sorts(rows) == rows and list(table_labels("tab3_icc")) == ["#", "Table", "Shows"]


def test_figures_are_listed_in_the_papers_order():
    """Numbered figures first, in their order; a dataset's unnumbered Williams figures after them, not before."""
    specs = {"fig02_criteria_system_kendall": {"kind": "criteria", "level": "system", "coefficient": "kendall",
                                               "subset": False},
             "fig27_williams_story_relevance": {"kind": "williams", "level": "story", "criterion": "Relevance",
                                                "subset": False},
             "williams_story_delight": {"kind": "williams", "level": "story", "criterion": "Delight", "subset": False},
             "williams_system_delight": {"kind": "williams", "level": "system", "criterion": "Delight",
                                         "subset": False}}
    rows = [tuple(figure_labels(name, spec).values()) for name, spec in specs.items()]
    assert as_the_report_sorts(rows) == rows
    assert figure_heading("williams_story_delight", specs["williams_story_delight"]).startswith("Williams test")


def meta_best_frame() -> pd.DataFrame:
    rows = [{"grouping": grouping, "coefficient": "pearson", "criterion": criterion, "kind": "metric",
             "metric": f"metric-{k}", "label": f"Metric {k}", "family": "string", "r": 0.5 - k / 30,
             "ci_low": 0.4 - k / 30, "ci_high": 0.6 - k / 30, "rank": 1 + k // 3, "rank1_size": 3}
            for grouping in ("none", "system") for criterion in ("Flow", "Wit") for k in range(5)]
    return pd.DataFrame(rows)


def test_meta_tables_are_for_people(tmp_path):
    """Labels not slugs, no column with one value, three decimals, the first rows of each group and the whole
    table to save."""
    frame = meta_best_frame()
    csv = tmp_path / "meta_best.csv"
    frame.to_csv(csv, index=False)
    headers, groups = META_TABLES["meta_best_table"]
    shown = readable(frame, headers)
    assert "metric" not in shown and "Coefficient" not in shown and "Best cluster size" not in shown
    assert list(shown.columns) == ["Grouping", "Criterion", "Metric or LLM judge", "r", "95 % CI low",
                                   "95 % CI high", "Cluster rank"]
    assert shown["r"].iloc[1] == "0.467" and shown["Cluster rank"].iloc[0] == 1
    counts = readable(pd.DataFrame({"borda": [1957.0, 1341.5], "rank": [1.0, 2.0]}), {"borda": "Borda", "rank": "R"})
    assert counts.to_dict("list") == {"Borda": ["1957", "1341.5"], "R": ["1", "2"]}
    page = tmp_path / "meta_best_table.html"
    write_table_page(page, shown, "Meta", [csv], "", groups)
    text = page.read_text(encoding="utf-8")
    assert text.count("<tr") == 1 + 2 * 2 * SHOWN_PER_GROUP and "12 of 20 rows" in text
    assert "Metric 3" not in text and linked(page) == {"meta_best.csv": csv.read_bytes()}


def test_the_best_column_leads_its_group_whatever_its_kind(tmp_path):
    """The judges listed first and a metric that beats every judge: the metric leads its table rows, stands on the
    page and heads its figure panel; with judges that beat every metric, each kind's best still stands there."""
    from storyeval.plots.meta import best_agreement
    from storyeval.stats.meta import FAMILY, best_table

    keys = {"grouping": "none", "coefficient": "pearson", "criterion": "Flow"}
    judges = [{**keys, "metric": f"judge-{k}", "label": f"Judge {k}", "family": FAMILY, "r": 0.4 - k / 100}
              for k in range(5)]
    metrics = [{**keys, "metric": f"metric-{k}", "label": f"Metric {k}", "family": "string", "r": 0.6 - k / 5}
               for k in range(5)]
    for winner, loser in ((0.6, 0.4), (0.2, 0.5)):  # a metric beats every judge; then every judge beats it
        intervals = pd.DataFrame(judges + [{**row, "r": winner - k / 5} for k, row in enumerate(metrics)])
        intervals = intervals.assign(r=np.where(intervals["family"] == FAMILY, loser - np.arange(10) / 100,
                                                intervals["r"]), ci_low=lambda f: f["r"] - 0.1,
                                     ci_high=lambda f: f["r"] + 0.1)
        clusters = intervals[["grouping", "coefficient", "criterion", "metric"]].assign(
            rank=intervals["r"].rank(ascending=False, method="first").astype(int))
        table = best_table(intervals, clusters, top=5)
        assert table["r"].is_monotonic_decreasing and table["kind_best"].sum() == 2
        headers, groups = META_TABLES["meta_best_table"]
        page = tmp_path / "meta_best_table.html"
        write_table_page(page, readable(table, headers), "Meta", [_csv(tmp_path, table)], "", groups,
                         table["kind_best"].to_numpy(), "the best of each kind")
        rows = re.findall(r"<tr>\s*<td>(.*?)</td>\s*<td>(.*?)</td>", page.read_text(encoding="utf-8"))
        best = "Metric 0" if winner > loser else "Judge 0"
        assert rows[0][0] == best and {"Metric 0", "Judge 0"} <= {label for label, _ in rows}
        panel = best_agreement(table, "pearson").axes[0]
        assert panel.get_yticklabels()[-1].get_text() == best  # the top row of the panel


def _csv(folder: Path, table: pd.DataFrame) -> Path:
    path = folder / "meta_best.csv"
    table.to_csv(path, index=False)
    return path


class Named:
    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return self.name == other.name

    def __lt__(self, other):
        return self.name < other.name


class Result:
    def __init__(self, path):
        self.path = Path(path)


def landing(tmp_path, categories: dict[str, dict[str, list[str]]], judges: bool = True) -> str:
    """The landing page as Snakemake's report renders it (workflow.rst through Jinja, then docutils), as text."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    results = {Named(category): {Named(sub): [Result(tmp_path / name) for name in names]
                                 for sub, names in subcategories.items()}
               for category, subcategories in categories.items()}
    snakemake = type("Snakemake", (), {"config": {"meta": {"judges": judges}}})
    rst = Environment(trim_blocks=True, lstrip_blocks=True).from_string(
        (REPORT / "workflow.rst").read_text(encoding="utf-8")).render(snakemake=snakemake, categories=results, files=[])
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", publish_parts(rst, writer="html")["body"])).split())


def test_landing_page_introduces_what_the_report_holds(tmp_path):
    stories = pd.DataFrame({"story_id": [f"s{k}" for k in range(6)], "prompt_id": [0, 0, 0, 1, 1, 1],
                            "system": ["A", "B", "Human"] * 2})
    human = pd.DataFrame({"story_id": ["s0", "s1", "s3", "s4"], "criterion": ["Flow", "Wit", "Flow", "Wit"],
                          "score": [1.0, 2.0, 3.0, 4.0]})
    ratings = pd.DataFrame({"story_id": ["s0", "s0", "s1", "s1", "s3"], "criterion": ["Flow"] * 5,
                            "rater": ["r1", "r2", "r2", "r3", "r1"], "rating": [1, 2, 3, 4, 5]})
    registry = pd.DataFrame({"slug": ["bleu", "chrf"], "label": ["BLEU", "chrF"], "family": ["string"] * 2})
    (tmp_path / "about.rst").write_text(about_text("mine", "computed", stories, human, ratings, registry, "Human"))
    own = landing(tmp_path, {"mine, computed scores": {"About": ["about.html"], "Tables": ["meta_best.html"]}})
    assert ("mine, computed scores. 6 stories written for 2 prompts by 2 systems (A, B) and the human reference. "
            "4 of them are rated on 2 criteria (Flow, Wit) by 3 raters, 1-2 a story and criterion. "
            "With fewer than 3 systems a prompt, the story level is one correlation over all stories, each beside its "
            "within-system correlation (confounds.csv), and each prompt's stories are compared in pairs "
            "(paired_accuracy.csv). 2 metric scores (2 string).") in own
    assert "which metric agrees best" in own and "LLM judge" not in own
    assert "1,056" not in own and "HANNA's authors released" not in own and "audit" not in own
    assert "†" not in own  # nothing here is marked
    flat = about_text("wp", "computed", stories.assign(system=stories["story_id"]), human.iloc[:0], ratings.iloc[:0],
                      registry, "Human")
    assert flat.startswith("**wp, computed scores.** 6 stories, without prompts and systems: each story is an item")
    assert "No human ratings" in flat
    single = about_text("one", "computed", stories, human[human["criterion"] == "Flow"], ratings.iloc[:0], registry,
                        "Human")
    assert "2 of them are rated on 1 criterion (Flow) (one score a story, no per-rater rows)." in single
    (tmp_path / "about.rst").write_text(about_text("hanna", "released", stories, human, ratings, registry.assign(
        degenerate_release=[True, False]), "Human"))
    full = landing(tmp_path, {"hanna, released scores": {"About": ["about.html"], "Tables": ["meta_best.html"]},
                              "Reproduction audit": {"Tables": ["audit.html"]}})
    assert "HANNA's authors released" in full and "which LLM judge" in full and "Reproduction audit:" in full
    assert "computed scores category" not in full
    both = landing(tmp_path, {"hanna, released scores": {"About": ["about.html"]},
                              "mine, computed scores": {"About": ["about.html"]}})
    assert "computed scores category holds" in both and "Meta entries" not in both
    assert "1.2e-178 to 1.1e-9" in full and "1e-56" not in full


def assert_pages_tell_the_truth(base: Path, wildcards: dict[str, str], facts: dict[str, str]) -> None:
    """A run's report pages (results/<dataset>/<scoreset>): each shows its kind's caption with the set's `facts`
    (caption_facts), saves the very files it names, and notes † where a figure shows a degenerate release."""
    registry = pd.read_csv(base / "metrics.csv")
    degenerate = registry["degenerate_release"].astype(bool).any()
    pages = sorted((base / "report").glob("*.html"))
    assert pages
    for page in pages:
        text, name = page.read_text(encoding="utf-8"), page.stem
        assert '<p class="caption">' in text, name
        files = linked(page)
        if (base / "figures" / f"{name}.pdf").exists():
            assert files == {f"{name}.pdf": (base / "figures" / f"{name}.pdf").read_bytes()}, name
            kinds = ("_metric_", "bootstrap_f1", "williams")  # the figures of every metric, not of a subset
            all_metrics = any(kind in name for kind in kinds) and not name.endswith("_subset")
            assert (DEGENERATE in text) == (degenerate and all_metrics), name
        csv = base / "tables" / f"{name.removesuffix('_table')}.csv"  # meta_best_table: tables/meta_best.csv
        if name in TABLE_CAPTIONS and csv.exists():
            assert caption_html(REPORT / f"{TABLE_CAPTIONS[name]}.rst", wildcards, facts) in text, name
            assert files[csv.name] == csv.read_bytes(), name


def test_make_report_reports_one_dataset_and_never_installs():
    import subprocess

    repo = REPORT.parents[1]

    def planned(*args: str) -> str:
        return subprocess.run(["make", "-n", "-C", str(repo), "report", *args], capture_output=True, text=True,
                              check=True).stdout

    one = " ".join(planned("CONFIG=mine.yaml", "DATASET=mine").split())
    style = "--report-stylesheet workflow/report/report.css"
    assert "snakemake --cores 2 --configfile mine.yaml -- dataset_mine" in one
    assert f"snakemake --report report-mine.html {style} --configfile mine.yaml -- dataset_mine" in one
    assert "python -m storyeval.workflow.report report-mine.html mine" in one  # the tab names the dataset
    default = " ".join(planned().split())
    assert "--report report.html" in default and "dataset_" not in default and "--configfile" not in default
    assert "pip" not in one + default and "run make env" in default
    released = " ".join(subprocess.run(["make", "-n", "-C", str(repo), "report-released"], capture_output=True,
                                       text=True, check=True).stdout.split())
    assert "snakemake --cores 2 released" in released and f"--report report-released.html {style} released" in released
    assert (REPORT / "report.css").is_file()


def test_numbers_read_as_numbers():
    """p-values to two significant digits, scientific below 1e-3 with a plain exponent; ranks and counts without
    `.0`; the slug beside its label left out; snake_case headers as words."""
    from storyeval.plots.pages import for_reading, p_text

    assert [p_text(p) for p in (0.002583, 0.05, 0.5, 2.981e-13, 1.0, float("nan"))] == [
        "0.0026", "0.05", "0.5", "3.0e-13", "1", ""]
    frame = pd.DataFrame({"level": ["story", "story"], "metric": ["bleu", "chrf"], "label": ["BLEU", "chrF"],
                          "rank": [3.0, 4.5], "wilcoxon_p": [0.002583, 8.522e-12], "kendall_tau": [0.88071, 0.5],
                          "borda": [5308.0, 5200.0]})
    shown = for_reading(frame)
    assert list(shown.columns) == ["Level", "Metric", "Rank", "Wilcoxon p", "Kendall τ", "Borda"]
    assert shown.to_dict("list") == {"Level": ["story", "story"], "Metric": ["BLEU", "chrF"], "Rank": ["3", "4.5"],
                                     "Wilcoxon p": ["0.0026", "8.5e-12"], "Kendall τ": ["0.8807", "0.5000"],
                                     "Borda": ["5308", "5200"]}


def test_tab4_marks_as_hanna_prints_them(tmp_path):
    """Bold and * on the best generated system of a column (the human reference, best of all, unmarked), italic
    on a system whose interval overlaps the best one's; the page shows them as HTML."""
    from storyeval.tables import tab4_system_means

    rows = [("Human", 4.2, 4.0, 4.4), ("A", 2.8, 2.6, 3.0), ("B", 2.7, 2.5, 2.9), ("C", 2.0, 1.9, 2.1)]
    means = pd.DataFrame([{"system": system, "criterion": criterion, "mean": mean, "ci_low": low, "ci_high": high}
                          for criterion in ("Relevance", "Average") for system, mean, low, high in rows])
    table = tab4_system_means(means, "Human").set_index("System")["Relevance"]
    assert table.to_dict() == {"Human": "4.20 [4.00, 4.40]", "A": "**2.80**\\* [2.60, 3.00]",
                               "B": "*2.70* [2.50, 2.90]", "C": "2.00 [1.90, 2.10]"}
    page = tmp_path / "tab4.html"
    write_table_page(page, tab4_system_means(means, "Human"), "Tab. 4", [_csv(tmp_path, means)])
    text = page.read_text(encoding="utf-8")
    assert "<td><b>2.80</b>* [2.60, 3.00]</td>" in text and "<td><i>2.70</i> [2.50, 2.90]</td>" in text
    assert "<td>4.20 [4.00, 4.40]</td>" in text and "\\" not in text


def design_summary() -> pd.DataFrame:
    """Two criteria of a design's answer (storyeval.stats.answer's summary columns)."""
    row = {"level": "story", "statistic": "item", "statistic_words": "within each prompt", "resampled": "prompts",
           "stories": 960, "writers": 10, "raters": 3, "best_low": 0.3, "best_high": 0.7, "writer_baseline": 0.2,
           "writer_baseline_pooled": 0.3, "length_baseline": 0.1, "ceiling": 0.8, "top_size": 1, "columns": 4,
           "kendall_best": "chrF", "kendall_best_tau": 0.3, "against_direction": ""}
    return pd.DataFrame([
        {**row, "criterion": "Flow", "verdict": "chrF leads", "best": "chrF", "best_r": 0.5, "best_judge": "Judge",
         "best_judge_r": 0.4},
        {**row, "criterion": "Wit", "verdict": "Judge leads", "best": "Judge", "best_r": 0.6, "best_judge": "Judge",
         "best_judge_r": 0.6, "against_direction": "BLEU -0.30"},
    ])


def test_the_landing_page_states_the_answers(tmp_path):
    """The audit's headline and, per grouping and criterion, the best metric and LLM judge with their clusters
    and how often a judge leads, on the landing page; the report's tab names storyeval and the dataset."""
    from storyeval.audit import landing_text
    from storyeval.plots.answer import answer_text
    from storyeval.plots.pages import best_answer
    from storyeval.workflow.report import retitle

    keys = {"coefficient": "pearson", "family": "string", "ci_low": 0.0, "ci_high": 1.0, "rank1_size": 1}
    best = pd.DataFrame([
        {**keys, "grouping": "none", "criterion": "Flow", "kind": "metric", "label": "chrF", "r": 0.5, "rank": 1},
        {**keys, "grouping": "none", "criterion": "Flow", "kind": "LLM judge", "label": "Judge", "r": 0.4, "rank": 2},
        {**keys, "grouping": "none", "criterion": "Wit", "kind": "LLM judge", "label": "Judge", "r": 0.6, "rank": 1},
        {**keys, "grouping": "none", "criterion": "Wit", "kind": "metric", "label": "BLEU", "r": 0.3, "rank": 2},
    ]).assign(kind_best=True)
    (tmp_path / "meta_best.rst").write_text(best_answer(best, "hanna, released scores", "pearson"))
    audit = pd.DataFrame({"status": ["exact"] * 3 + ["within printed precision", "explained deviation"],
                          "default_status": ["exact"] * 2 + ["explained deviation"] * 3})
    (tmp_path / "audit.rst").write_text(landing_text(audit))
    (tmp_path / "answer.rst").write_text(answer_text(design_summary(), "hanna, released scores", "HANNA's design"))
    full = landing(tmp_path, {"hanna, released scores": {"Figures": ["meta_best.html"], "Answer": ["answer.html"]},
                              "Reproduction audit": {"Tables": ["audit.html"]}})
    assert "Reproduction audit: 3 of 5 published numbers reproduced exactly (1 more within printed precision), " \
           "1 explained, 0 unexplained" in full
    # the design's answer leads; meta_best's pooled per-grouping answer stays on its own page
    assert "which metric agrees with the humans, for this design" in full and "(HANNA's design)" in full
    assert "Flow: chrF leads; best chrF +0.50 [+0.30, +0.70]; best LLM judge Judge +0.40" in full
    assert "human ceiling 0.80 (two half-panels of the raters, Spearman-Brown); top cluster 1 of 4 columns (BH over " \
           "the 4)" in full
    assert "Flow chrF 0.500 (cluster 1) > Judge 0.400" not in full
    answer = best_answer(best, "hanna, released scores", "pearson")
    assert "Flow chrF 0.500 (cluster 1) > Judge 0.400 (cluster 2); Wit Judge 0.600 (cluster 1) > BLEU 0.300" in answer
    assert "Of the 2 cells where LLM judges and metrics were both measured, an LLM judge leads 1, a metric 1; an LLM " \
           "judge is in the best cluster in 1." in answer
    assert "Tab. 7" in full
    own = landing(tmp_path, {"mine, computed scores": {"Figures": ["meta_best.html"]}})  # judges configured for it
    assert "which LLM judge configured for this dataset" in own and "Tab. 7" not in own
    pooled = best.assign(confound=["system", "", "", "system; length"])  # the answer keeps its confound flags
    said = best_answer(pooled, "crowd, computed scores", "pearson")
    assert "Flow chrF 0.500 (cluster 1) [confound: system] > Judge 0.400 (cluster 2)" in said
    assert "BLEU 0.300 (cluster 2) [confound: system; length]" in said and "not what it seems" in said
    assert "[confound" not in best_answer(best.assign(confound=""), "hanna, released scores", "pearson")
    report = tmp_path / "report.html"
    report.write_text("<html><head><title>Snakemake Report</title></head><body><title>x</title></body></html>")
    retitle(report, "example")
    assert report.read_text().startswith("<html><head><title>storyeval report: example</title>")


def test_wide_figures_scroll_inside_their_frame_and_fig8_names_its_coefficient(tmp_path):
    from storyeval import plan
    from storyeval.sources import Digests

    png, pdf = tmp_path / "wide.png", tmp_path / "wide.pdf"
    Image.new("RGBA", (3000, 200), "white").save(png)
    pdf.write_bytes(b"%PDF")
    write_figure_page(tmp_path / "wide.html", png, pdf, "Fig. 9", 200)
    text = (tmp_path / "wide.html").read_text()
    assert re.search(r'<div class="frame"><img width="2250" alt', text) and "div.frame { overflow: auto" in text
    write_figure_page(tmp_path / "violins.html", png, pdf, "Fig. 9", 200, fit=True)  # no cell numbers: fitted
    assert 'style="max-width: 100%; height: auto"' in (tmp_path / "violins.html").read_text()
    assert 'max-width: 100%' not in text.split("<body>")[1]
    spec = plan.figures_of(CRITERIA, topk_coefficient="kendall")["fig08_topk_systems"]
    assert figure_labels("fig08_topk_systems", spec)["Coefficient"] == "|Kendall|"
    digests = Digests({"a.py": "0" * 64, "storyeval.io": "1" * 64})
    assert "0000" not in f"sources={digests}" and repr(digests) == repr(dict(digests))
    facts = caption_facts({"levels": ["story"], "systems": True, "subset": False}, True, True, "released", ["none"])
    assert str(facts).startswith("the captions' sentences") and repr(facts) == repr(dict(facts))  # no dump


def test_a_long_table_links_its_files_above_it_and_wraps_sentences(tmp_path):
    from storyeval.plots.pages import LONG_TABLE, header

    rows = LONG_TABLE + 1
    frame = pd.DataFrame({"paper_value": range(rows), "explanation": ["a reason, in words, " * 4] * rows})
    csv = _csv(tmp_path, frame)
    page = tmp_path / "audit.html"
    write_table_page(page, frame.rename(columns=header), "Reproduction audit", [csv])
    text = page.read_text(encoding="utf-8")
    assert text.index("Files:") < text.index("<table") and text.count("Files:") == 2
    assert "<th>Paper value</th>" in text and "td:nth-child(2) { white-space: normal" in text
    assert "h3 { padding-left: 40px; }" in text  # the title clear of the report's menu button
