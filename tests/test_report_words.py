"""What the report's pages say to a reader: heatmaps draw the sign (or the orientation) of each correlation on a
diverging map, a top-k table keeps every metric tied at its cut and says how far k grew, a page with nothing to draw
says why in one line, the judges-lead count counts only cells where both kinds were measured, and the captions
give values, not config keys, and another dataset's name rather than HANNA's."""

import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib import colormaps

from storyeval.plots.heatmaps import CellNumbers, correlation_heatmap, correlation_matrix
from storyeval.plots.pages import FACT, SETTINGS, best_answer, caption_facts, fill_caption
from storyeval.stats.ranking import top_metrics
from storyeval.stats.williams import untested, williams_table
from storyeval.tables import tab89_top_by_coefficient

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "workflow" / "report"
SHAPE = {"levels": ["story", "system"], "systems": True, "subset": True, "criteria": ["Flow", "Wit"]}


def drawn(figure) -> dict[tuple[int, int], str]:
    (numbers,) = [artist for artist in figure.axes[0].artists if isinstance(artist, CellNumbers)]
    return numbers.cells()


def colours(figure) -> np.ndarray:
    mesh = figure.axes[0].collections[0]
    return mesh.get_facecolors().reshape(*mesh.get_array().shape, 4)


def test_a_heatmap_draws_the_sign_on_a_map_centred_on_zero():
    r = pd.DataFrame([[0.57, -0.57, 0.0]], index=["Elaboration"], columns=["A", "Text length", "C"])
    figure = correlation_heatmap(r, "signed", average_row=True)
    assert drawn(figure)[(0, 0)] == "57" and drawn(figure)[(0, 1)] == "-57"
    cells = colours(figure)
    assert cells[0, 0, 2] > cells[0, 0, 0] and cells[0, 1, 0] > cells[0, 1, 2]  # blue above 0, red below
    diverging = colormaps["RdBu"]  # from -100 (red) to 100 (blue): 0 in the middle
    assert np.allclose(cells[0, 0], diverging(157 / 200)) and np.allclose(cells[0, 1], diverging(43 / 200))
    assert np.all(cells[0, 2, :3] > 0.9)  # 0: white
    assert drawn(figure)[(1, 1)] == "-57"  # the Average row averages the signed r
    hanna = correlation_heatmap(r, "HANNA", average_row=True, absolute=True)  # HANNA's look on request
    assert drawn(hanna)[(0, 1)] == "57" and np.allclose(colours(hanna)[0, 0], colours(hanna)[0, 1])


def test_an_oriented_heatmap_negates_a_lower_is_better_metric():
    registry = pd.DataFrame({"slug": ["up", "down"], "label": ["Up", "Down"], "order": [0, 1],
                             "direction": ["higher", "lower"]})
    rows = [("metric_criterion", "up", "Flow", 0.4), ("metric_criterion", "down", "Flow", -0.6),
            ("metric_metric", "up", "down", -0.5), ("metric_metric", "down", "up", -0.5),
            ("metric_metric", "up", "up", 1.0), ("metric_metric", "down", "down", 1.0)]
    correlations = pd.DataFrame(rows, columns=["kind", "x", "y", "r"]).assign(level="story", coefficient="kendall")
    signed = correlation_matrix(correlations, "metric_criterion", "story", "kendall", registry)
    oriented = correlation_matrix(correlations, "metric_criterion", "story", "kendall", registry,
                                  orientation="oriented")
    assert signed.loc["Flow"].tolist() == [0.4, -0.6] and oriented.loc["Flow"].tolist() == [0.4, 0.6]
    pairs = correlation_matrix(correlations, "metric_metric", "story", "kendall", registry, orientation="oriented")
    assert pairs.loc["Down", "Up"] == 0.5 and pairs.loc["Down", "Down"] == 1.0  # once per lower-is-better side


def ranked(values: dict[str, float], criterion: str = "Relevance", coefficient: str = "kendall") -> pd.DataFrame:
    return pd.DataFrame({"level": "system", "coefficient": coefficient, "x": list(values), "y": criterion,
                         "r": list(values.values()), "order": range(len(values)), "direction": "higher"})


def test_a_top_k_table_keeps_every_metric_tied_at_the_cut():
    """Seven metrics tie at 0.60 for Relevance (HANNA's system-level Kendall): the top 5 keeps all seven and says
    that k grew from 5 to 8."""
    values = {"best": 0.8, **{f"m{i}": 0.6 for i in range(7)}, "last": 0.2}
    top = top_metrics(ranked(values), 5).assign(label=lambda frame: frame["metric"].str.upper())
    assert len(top) == 8 and top["tied_rank"].tolist() == [1] + [2] * 7
    table = tab89_top_by_coefficient(top, "system", 5)
    cells = table.iloc[0, 1:].tolist()
    assert len(cells) == 8 and cells[0] == "BEST (80)" and all(cell.endswith("(60) [tied at 2]") for cell in cells[1:])
    assert "Kendall: ties at the cut kept, k grows from 5 to 8 (Relevance 8 metrics)" == table.attrs["note"]
    plain = tab89_top_by_coefficient(top_metrics(ranked({"a": 0.9, "b": 0.8, "c": 0.7}), 2).assign(label="x"),
                                     "system", 2)
    assert plain.shape == (1, 3) and plain.attrs["note"] == ""  # no tie at the cut: k stays


def test_a_coefficient_whose_ties_name_no_top_k_is_left_out_in_one_line():
    """Three systems: a Kendall tau takes four values, and 12 metrics tie at the top in every criterion; Pearson still
    ranks them. Kendall's columns go, and one line says why."""
    tied = {f"m{i}": 1.0 for i in range(12)}
    spread = {f"m{i}": 0.9 - 0.05 * i for i in range(12)}
    frames = [ranked(tied, criterion) for criterion in ("Relevance", "Coherence")]
    frames += [ranked(spread, criterion, "pearson") for criterion in ("Relevance", "Coherence")]
    top = top_metrics(pd.concat(frames, ignore_index=True), 5).assign(label=lambda frame: frame["metric"])
    table = tab89_top_by_coefficient(top, "system", 5)
    assert [column for column in table if column != "Criterion"] == [f"Pearson {i}" for i in range(1, 6)]
    assert table.attrs["note"] == "Kendall left out: in every criterion 7 metrics beyond the top 5 tie with the " \
                                  "5th (equal values), so it names no top 5"


def test_a_williams_figure_of_three_systems_says_why_it_is_blank():
    rng = np.random.default_rng(0)
    r_mc, r_mm = rng.uniform(-0.5, 0.5, (3, 1)), np.eye(3) * 0.5 + 0.5
    three = williams_table(r_mc, r_mm, 3, ["a", "b", "c"], ["Flow"], "system", orientation="absolute")
    assert untested(three, "system", "Flow") == (
        "No Williams test at the system level for Flow: the test has n - 3 degrees of freedom and here n = 3 "
        "systems, so no pair of metrics can be tested (every p-value is undefined).")
    ten = williams_table(r_mc, r_mm, 10, ["a", "b", "c"], ["Flow"], "system", orientation="absolute")
    assert untested(ten, "system", "Flow") == ""


def test_judges_lead_only_where_judges_and_metrics_were_both_measured():
    rows = [("none", "Flow", "LLM judge", "J", 0.9, 1), ("none", "Flow", "metric", "M", np.nan, np.nan),
            ("none", "Wit", "LLM judge", "J", 0.5, 1), ("none", "Wit", "metric", "M", 0.6, 1),
            ("none", "Pace", "LLM judge", "J", 0.7, 1)]
    table = pd.DataFrame(rows, columns=["grouping", "criterion", "kind", "label", "r", "rank"])
    table = table.sort_values(["criterion", "r"], ascending=[True, False]).assign(kind_best=True)
    text = best_answer(table, "ttcw, released scores", "pearson")
    assert "Of the 1 cells where LLM judges and metrics were both measured, an LLM judge leads 0, a metric 1" in text
    assert "2 cells held one kind alone and are not counted." in text
    alone = best_answer(table[table["kind"] == "LLM judge"], "ttcw", "pearson")
    assert "No cell holds both an LLM judge and a metric: which kind leads is not measured." in alone


def test_the_captions_settings_are_the_configs_defaults():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text(encoding="utf-8"))

    def default(*keys):
        node = schema
        for key in keys:
            node = node["properties"][key]
        return node["default"]

    assert SETTINGS == {"orientation": default("analysis", "orientation"),
                        "confound_margin": default("stats", "confound_margin"),
                        "length_confound": default("stats", "length_confound"),
                        "k_min": default("stats", "topk", "k_min"), "p_values": default("figures", "p_values")}


CONFIG_KEY = re.compile(r"(?<![\w.])(?:config|analysis|stats|figures)\.[a-z_]+")  # a module path is no key


@pytest.mark.parametrize("paper", [True, False])
def test_captions_give_values_and_the_datasets_own_name(paper):
    settings = {**SETTINGS, "confound_margin": 0.35, "length_confound": 0.75, "k_min": 6}
    facts = caption_facts(SHAPE, paper, paper, "", ["none"], settings=settings)
    wildcards = defaultdict(lambda: "x", dataset="hanna" if paper else "ttcw", scoreset="computed")
    captions = [path for path in sorted(REPORT.glob("*.rst"))  # a score set's (the benchmark's has facts of its own)
                if {"paper", "levels"} & set(FACT.findall(path.read_text(encoding="utf-8")))
                or set(FACT.findall(path.read_text(encoding="utf-8"))) <= set(facts) and path.name != "workflow.rst"]
    assert {"top_metrics.rst", "heatmap.rst", "williams.rst", "meta_best.rst"} <= {path.name for path in captions}
    for path in captions:
        text = fill_caption(path.read_text(encoding="utf-8"), wildcards, facts)
        assert not CONFIG_KEY.findall(text), (path.name, CONFIG_KEY.findall(text))
        assert paper or not re.match(r"HANNA (Tab|Fig)\.", text), path.name  # ttcw's pages are ttcw's
    filled = {name: " ".join(fill_caption((REPORT / f"{name}.rst").read_text(encoding="utf-8"), wildcards,
                                          facts).split()) for name in ("top_metrics", "borda", "topk")}
    assert "0.35" in filled["top_metrics"] and "0.75" in filled["top_metrics"] and "down to 6 systems" in filled["topk"]
    assert filled["borda"].startswith("HANNA Tab. 6 (hanna" if paper else
                                      "Tab. 6 (ttcw, computed scores; numbered and laid out as in HANNA")
