"""Human agreement in the report: the pages of agreement.csv (alpha, raters, stories, the human ceiling) and of
alt_test.csv (the Alternative Annotator Test, with why a criterion went untested), the landing page's paragraph
and links, and the rules that plan them for a set with raters."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyeval import plan
from storyeval.data.load import analysis_grid
from storyeval.io import read_table, write_csv
from storyeval.plots.agreement_pages import agreement_answer, write_agreement_page, write_alt_test_page
from storyeval.stats.agreement import agreement_table
from storyeval.stats.alttest import Margin, alt_test_table
from storyeval.stats.meta import load_meta

from conftest import REPO
from workflow_helpers import make_workdir, run_snakemake

REPORT = REPO / "workflow/report"
PROMPTS, SYSTEMS = 30, ["A", "B", "C", "D"]  # 120 stories on a prompt x system grid


def rated_set(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(ratings, stories, paths of a score set) with three criteria: Flow, 4 raters of every story (tested); Wit, 2
    raters (too few annotators), one story rated once; Pace, 10 raters two a story, 24 stories each (too few
    instances). Two metrics: one follows the stories' quality, one is noise."""
    rng = np.random.default_rng(7)
    stories = pd.DataFrame([{"story_id": f"s{p * len(SYSTEMS) + k:03d}", "prompt_id": p, "system": system}
                            for p in range(PROMPTS) for k, system in enumerate(SYSTEMS)])
    quality = rng.normal(size=len(stories))
    rows = []
    for k, story in enumerate(stories["story_id"]):
        for criterion, raters in (("Flow", range(4)), ("Wit", range(2)), ("Pace", (k % 10, (k + 1) % 10))):
            rows += [{"story_id": story, "criterion": criterion, "rater": f"{criterion[0]}{rater}",
                      "rating": float(np.clip(np.round(3 + quality[k] + rng.normal(scale=0.7)), 1, 5))}
                     for rater in raters]
    ratings = pd.DataFrame(rows)
    ratings = ratings[~((ratings["story_id"] == "s000") & (ratings["rater"] == "W1"))]
    human = ratings.groupby(["story_id", "criterion"], as_index=False, sort=False)["rating"].mean()
    scores = pd.concat([pd.DataFrame({"story_id": stories["story_id"], "metric": "follows",
                                      "value": quality + rng.normal(scale=0.3, size=len(stories))}),
                        pd.DataFrame({"story_id": stories["story_id"], "metric": "noise",
                                      "value": rng.normal(size=len(stories))})])
    registry = pd.DataFrame({"slug": ["follows", "noise"], "label": ["Follows", "Noise"], "column": ["f", "n"],
                             "reference": False, "family": ["string", "neural"], "direction": "higher",
                             "degenerate_release": False, "order": [0, 1]})
    paths = {name: folder / f"{name}.csv" for name in ("stories", "human", "scores", "registry")}
    for name, frame in zip(paths, (stories, human.rename(columns={"rating": "score"}), scores, registry)):
        frame.to_csv(paths[name], index=False)
    return ratings, stories, paths


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """agreement.csv and alt_test.csv of the rated set, written and read back as the workflow does."""
    folder = tmp_path_factory.mktemp("agreement")
    ratings, stories, paths = rated_set(folder)
    grid, systems = analysis_grid(stories, None)
    agreement = agreement_table(ratings, grid, systems, ["story", "system"], ["pearson", "kendall"], "rater")
    alt, notes = alt_test_table(ratings, grid, load_meta(paths, None), Margin.of(None, None, 0.1), "rater", draws=199,
                                seed=1)
    files = {"agreement": folder / "agreement.csv", "alt_test": folder / "alt_test.csv"}
    write_csv(agreement, files["agreement"])
    write_csv(alt, files["alt_test"])
    return (read_table(files["agreement"], []), read_table(files["alt_test"], []), files, notes, folder)


MIN_ANNOTATORS = "untested: 2 raters rated this criterion, the test needs 3 (min_annotators)"
MIN_INSTANCES = "untested: each rater rated at most 24 stories that another rater rated too, the test needs 30 " \
                "(min_instances)"


def page_text(path: Path) -> str:
    """A page's words, its tags and download links stripped."""
    text = re.sub(r'href="data:[^"]+"', "", path.read_text(encoding="utf-8"))
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def shown_number(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:.3f}"


def cells(path: Path) -> list[list[str]]:
    """The page's table, row by row (header first)."""
    table = path.read_text(encoding="utf-8").split("<table", 1)[1].split("</table>")[0]
    return [[html.unescape(cell) for cell in re.findall(r"<t[hd]>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr.*?>(.*?)</tr>", table, re.S)]


def test_the_alt_test_says_in_words_why_it_could_not_run(tables):
    _, alt, _, notes, _ = tables
    reasons = alt.set_index(["criterion", "metric"])["untested_reason"].fillna("")
    assert (reasons["Wit"] == MIN_ANNOTATORS).all() and (reasons["Pace"] == MIN_INSTANCES).all()
    assert (reasons["Flow"] == "").all()
    flow = alt[alt["criterion"] == "Flow"].set_index("metric")
    assert (flow["annotators"] == 4).all() and (flow["raters"] == 4).all() and flow["omega"].notna().all()
    assert flow.loc["follows", "passed"] and not flow.loc["noise", "passed"]
    untested = alt[alt["criterion"] != "Flow"]
    assert untested["omega"].isna().all() and (untested["annotators"] == 0).all() and not untested["passed"].any()
    assert any("'Wit': no alt-test, " + MIN_ANNOTATORS in note for note in notes)
    assert any("'Pace'" in note and "2 " + MIN_INSTANCES in note for note in notes)


def test_the_agreement_page_holds_alpha_raters_stories_and_the_ceiling(tables):
    agreement, _, files, _, folder = tables
    page = folder / "agreement.html"
    write_agreement_page(page, agreement, "mine: agreement", [files["agreement"]], "<p>caption</p>")
    header, *rows = cells(page)
    assert header == ["Criterion", "α (interval)", "α (ordinal)", "Raters", "Stories",
                      "Ceiling, story level, Pearson r", "Ceiling, story level, Kendall τ",
                      "Ceiling, system level, Pearson r", "Ceiling, system level, Kendall τ", "Note"]
    shown = {row[0]: dict(zip(header, row)) for row in rows}
    assert list(shown) == ["Flow", "Pace", "Wit"]  # storyeval.criteria.ordered_criteria
    for criterion, group in agreement.groupby("criterion"):
        row, first = shown[criterion], group.iloc[0]
        assert row["α (interval)"] == f"{first['alpha_interval']:.3f}"
        assert row["α (ordinal)"] == f"{first['alpha_ordinal']:.3f}"
        ceiling = group.set_index(["level", "coefficient"])["ceiling"]
        assert row["Ceiling, story level, Pearson r"] == shown_number(ceiling["story", "pearson"])
        assert row["Ceiling, system level, Kendall τ"] == shown_number(ceiling["system", "kendall"])
    assert [shown[name]["Raters"] for name in ("Flow", "Pace", "Wit")] == ["4", "10", "2"]
    assert {row["Stories"] for row in shown.values()} == {"120"}
    assert shown["Wit"]["Note"] == "1 of 120 stories with one rating left out" and shown["Pace"]["Note"] == ""
    assert "Raters here: rater ids of the dataset file." in page_text(page)
    # Pace's raters rate two stories of a prompt at most: no story-level coefficient, an undefined ceiling (–)
    assert shown["Pace"]["Ceiling, story level, Pearson r"] == "–"
    assert float(shown["Flow"]["α (interval)"]) > 0.3  # planted: quality dominates the raters' noise
    assert "agreement.csv" in page.read_text(encoding="utf-8")


def test_the_alt_test_page_holds_the_verdicts_and_the_reasons(tables):
    _, alt, files, _, folder = tables
    page = folder / "alt_test.html"
    write_alt_test_page(page, alt, "mine: alt-test", [files["alt_test"]], "<p>caption</p>", "Settings.", 30)
    text = page_text(page)
    assert f"Wit: {MIN_ANNOTATORS}" in text and f"Pace: {MIN_INSTANCES}" in text  # the sentence per criterion
    assert ("Flow: 1 of 2 tested pass at epsilon 0.1 (the default, the raters' kind not declared); passes beyond "
            "chance: Follows") in text
    header, *rows = cells(page)
    assert header == ["Criterion", "Metric", "Family", "Verdict", "ω (winning rate)", "ρ (advantage probability)",
                      "Raters tested", "Chance p (BH)", "Why untested"]
    shown = {(row[0], row[1]): dict(zip(header, row)) for row in rows}
    flow = alt[alt["criterion"] == "Flow"].set_index("metric")
    follows, noise = shown["Flow", "Follows"], shown["Flow", "Noise"]
    assert follows["Verdict"] == "passes (ε 0.1)" and noise["Verdict"] == "fails (ε 0.1)"
    assert follows["ω (winning rate)"] == f"{flow.loc['follows', 'omega']:.3f}"
    assert noise["ρ (advantage probability)"] == f"{flow.loc['noise', 'rho']:.3f}"
    assert follows["Raters tested"] == "4 of 4" and follows["Chance p (BH)"] == "0.005 (0.010)"  # no shuffle as good
    assert follows["Why untested"] == ""
    assert shown["Wit", "Noise"]["Verdict"] == "untested" and shown["Wit", "Noise"]["Why untested"] == MIN_ANNOTATORS
    pace = shown["Pace", "Follows"]
    assert pace["Why untested"] == MIN_INSTANCES and pace["ω (winning rate)"] == "–"
    assert pace["Raters tested"] == "0 of 10" and pace["Chance p (BH)"] == "–"  # nothing was shuffled
    assert [key for key in shown][:2] == [("Flow", "Follows"), ("Flow", "Noise")]  # the pass first


def test_a_criterion_tested_on_some_raters_says_how_many(tables):
    _, alt, files, _, folder = tables
    partly = alt.assign(annotators=np.where(alt["criterion"] == "Flow", 3, alt["annotators"]))
    page = folder / "partly.html"
    write_alt_test_page(page, partly, "mine: alt-test", [files["alt_test"]], "", "", 30)
    assert ("passes beyond chance: Follows; 3 of 4 raters tested, the other 1 rated "
            "fewer than 30 stories that another rater rated too (min_instances)") in page_text(page)


def render_landing(categories: dict[str, dict[str, list[Path]]]) -> str:
    """The landing page as Snakemake's report renders it (workflow.rst through Jinja, then docutils), as HTML."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    class Named:
        def __init__(self, name):
            self.name = name

        def __lt__(self, other):
            return self.name < other.name

    class Result:
        def __init__(self, path):
            self.path = Path(path)

    results = {Named(category): {Named(sub): [Result(path) for path in paths] for sub, paths in subs.items()}
               for category, subs in categories.items()}
    snakemake = type("Snakemake", (), {"config": {"meta": {"judges": False}}})
    rst = Environment(trim_blocks=True, lstrip_blocks=True).from_string(
        (REPORT / "workflow.rst").read_text(encoding="utf-8")).render(snakemake=snakemake, categories=results, files=[])
    return publish_parts(rst, writer="html", settings_overrides={"report_level": 2})["body"]


def test_the_landing_page_states_the_agreement_and_links_both_pages(tables):
    agreement, alt, _, _, folder = tables
    report = folder / "results/mine/computed/report"
    report.mkdir(parents=True)
    (report / "agreement.rst").write_text(agreement_answer(agreement, alt, "mine, computed scores", 30))
    body = render_landing({"mine, computed scores": {"Tables": [report / "agreement.html", report / "alt_test.html"]}})
    words = " ".join(html.unescape(re.sub(r"<[^>]+>", "", body)).split())
    flow = agreement.drop_duplicates("criterion").set_index("criterion")
    assert "mine, computed scores: how far the raters agree." in words
    assert (f"Krippendorff's alpha (interval): Flow {flow.loc['Flow', 'alpha_interval']:.3f} (4 raters, 120 stories), "
            f"Pace {flow.loc['Pace', 'alpha_interval']:.3f} (10 raters, 120 stories), "
            f"Wit {flow.loc['Wit', 'alpha_interval']:.3f} (2 raters, 120 stories)") in words
    assert f"Human ceiling (story level, Pearson r): Flow {flow.loc['Flow', 'ceiling']:.3f}" in words
    assert f"Pace: {MIN_INSTANCES}. Wit: {MIN_ANNOTATORS}." in words
    for name in ("agreement.html", "alt_test.html"):
        assert f"javascript:app.showResultInfo('{report / name}')" in html.unescape(body)
    assert "Pages: alpha and the ceiling, the alt-test per metric." in words
    assert "System Message" not in body  # no reStructuredText warning


def test_the_rules_plan_both_pages_for_a_set_with_raters(tmp_path, monkeypatch):
    """The crowd example (per-rater ratings): dataset_crowd wants the pages and the landing paragraph, and a dry
    run plans rule agreement_pages for them; a set without raters wants none."""
    import shutil

    from test_workflow_plan import checked

    from storyeval.workflow import startup, targets
    from storyeval.workflow.run import Run
    from storyeval.workflow.sources import Pinned

    monkeypatch.chdir(REPO)  # the example's paths are relative to the repository, as in a run
    config = checked("config/examples/crowd.yaml")
    fitted, _ = startup.fit_tables(config, ["crowd"], Pinned(config))
    wanted = targets.dataset_targets(Run(config, fitted=fitted), "crowd")
    pages = [f"results/crowd/computed/report/{name}" for name in ("agreement.html", "alt_test.html", "agreement.rst")]
    assert set(pages) <= set(wanted) and "results/crowd/computed/alt_test.csv" in wanted
    assert plan.agreement_targets("results/x/computed", {"raters": False}) == []
    workdir = make_workdir(tmp_path / "work")
    shutil.copytree(REPO / "config/examples/crowd", workdir / "config/examples/crowd")
    shutil.copy(REPO / "config/examples/crowd.yaml", workdir / "crowd.yaml")
    dry = run_snakemake(workdir, "-n", "--configfile", "crowd.yaml", "--", *pages, timeout=600)
    assert dry.returncode == 0, dry.stderr[-2000:]
    planned = dry.stdout + dry.stderr
    assert "rule agreement_pages:" in planned and "rule agreement:" in planned
    for page in pages:
        assert page in planned


def test_a_pass_chance_would_match_is_said_apart():
    """The chance control in words: passes whose corrected permutation p is above q are counted apart, only the
    others are named, and the table lists those first; where the verdict changes with epsilon, the column says
    so."""
    from storyeval.plots.agreement_pages import alt_test_sentences, alt_test_view

    alt = pd.DataFrame({"metric": ["a", "b", "c"], "label": ["A", "B", "C"], "family": "string",
                        "criterion": "Flow", "omega": [1.0, 1.0, 0.0], "rho": [0.50, 0.60, 0.30],
                        "passed": [True, True, False], "epsilon": 0.15, "epsilon_source": "skilled raters",
                        "passes_at": ["0.1 0.15 0.2", "0.15 0.2", ""], "annotators": 3, "raters": 3,
                        "chance_p": [0.0005, 0.2, 0.9], "chance_q": [0.0015, 0.3, 0.9], "chance_draws": 1999,
                        "beats_chance": [True, False, False], "untested_reason": ""})
    assert alt_test_sentences(alt) == ["Flow: 2 of 3 tested pass at epsilon 0.15 (skilled raters), 1 of them not "
                                       "beyond chance (permutation p after Benjamini-Hochberg above q); passes "
                                       "beyond chance: A"]
    view = alt_test_view(alt)
    assert view["Metric"].tolist() == ["A", "B", "C"] and "Family" not in view and "Why untested" not in view
    assert view["Verdict"].tolist() == ["passes (ε 0.15)", "passes, not beyond chance (ε 0.15)", "fails (ε 0.15)"]
    assert view["Chance p (BH)"].tolist() == ["< 0.001 (0.002)", "0.200 (0.300)", "0.900 (0.900)"]
    assert view["Across ε 0.1 / 0.15 / 0.2"].tolist() == ["", "passes at 0.15, 0.2; fails at 0.1", ""]
