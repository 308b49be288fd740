"""storyeval.benchmark: the cross-dataset table, its summary and answer, the criteria vocabulary, the heatmap, and the
workflow's plan of it (storyeval.workflow.benchmark)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.patches import Rectangle
from test_workflow_plan import checked, in_repository  # noqa: F401 (fixture)

from storyeval import benchmark, vocabulary
from storyeval.data.joined import joined_score_sets
from storyeval.errors import InputError
from storyeval.plots import save_figure
from storyeval.plots.heatmaps import benchmark_heatmap
from storyeval.workflow import benchmark as workflow_benchmark
from storyeval.workflow import startup, targets
from storyeval.workflow.run import Run
from storyeval.workflow.sources import Pinned

from conftest import HANNA_MIRROR, REPO
from workflow_helpers import make_workdir, run_snakemake

METRICS = {"alpha": "Alpha", "beta": "Beta", "gamma": "Gamma", "delta": "Delta"}


def answered(dataset: str, criterion: str, r: dict[str, float], top: set[str], decided: bool = True,
             study: str | None = None, terms: pd.DataFrame | None = None, ceiling: float = 0.7,
             alt_test: pd.DataFrame | None = None) -> benchmark.DatasetAnswer:
    """One dataset's answer files as rule dataset_answer writes them: one story-level criterion."""
    rows = pd.DataFrame({"level": "story", "criterion": criterion, "statistic": "item", "metric": list(r),
                         "label": [METRICS[slug] for slug in r], "kind": "metric", "r": list(r.values()),
                         "top": [slug in top for slug in r], "against_direction": False, "beats_writer": True,
                         "scoreset": "computed"})
    rows = rows.assign(ci_low=rows["r"] - 0.1, ci_high=rows["r"] + 0.1, source_slug=rows["metric"],
                       item=rows["metric"], item_label=rows["label"])
    summary = pd.DataFrame([{"level": "story", "criterion": criterion, "stories": 100, "writers": 5,
                             "top_size": len(top), "decided": decided, "ceiling": ceiling, "writer_baseline": 0.2}])
    return benchmark.DatasetAnswer(dataset, study or dataset, rows, summary,
                                   terms if terms is not None else pd.DataFrame(), alt_test)


def four_datasets() -> list[benchmark.DatasetAnswer]:
    """alpha is measured everywhere and middling; beta on two studies only, best on both; gamma on one study only,
    best there; delta last everywhere it is measured."""
    return [
        answered("grid", "Coherence", {"beta": 0.7, "alpha": 0.4, "delta": 0.1}, {"beta"}),
        answered("delta", "logicality", {"beta": 0.6, "alpha": 0.5, "delta": 0.0}, {"beta", "alpha"}),
        answered("union", "reasonable", {"gamma": 0.6, "alpha": 0.3, "delta": 0.2}, {"gamma"}),
        answered("pds", "Fluency", {"alpha": 0.3, "delta": 0.29}, {"alpha", "delta"}, decided=False, ceiling=-0.1),
    ]


def test_the_summary_ranks_by_quality_where_measured_and_gates_on_coverage():
    """The old order counted top-cluster places, so the column measured most often led; quality where measured
    puts beta (best in both of its cells) first, and gamma (one study only) below the coverage gate, unranked."""
    table = benchmark.benchmark_table(four_datasets())
    assert list(table.columns) == benchmark.TABLE_COLUMNS and len(table) == 11
    grid = table[table["dataset"] == "grid"].set_index("metric")
    assert grid["rank"].to_dict() == {"beta": 1, "alpha": 2, "delta": 3}
    assert grid["rank_share"].to_dict() == {"beta": 0.0, "alpha": 0.5, "delta": 1.0}
    assert set(table["term"]) == {"coherence", "overall", "fluency"}  # logicality joins coherence
    ranked = benchmark.summary(table, min_studies=2).set_index("item")
    assert list(ranked.index) == ["beta", "alpha", "delta", "gamma"]
    assert ranked["rank"].tolist()[:3] == [1.0, 2.0, 3.0] and np.isnan(ranked.loc["gamma", "rank"])
    assert ranked.loc["alpha", ["studies", "cells", "wins", "cells_decided"]].tolist() == [4, 4, 1, 3]
    assert ranked.loc["alpha", "mean_rank_share"] == pytest.approx(np.mean([0.5, 0.5, 0.5, 0.0]))
    assert ranked.loc["beta", "win_cells"] == "grid Coherence; delta logicality"
    assert ranked.loc["delta", "wins"] == 0  # its place in pds's top cluster is in an undecided cell
    everything = benchmark.summary(table, min_studies=1)
    assert everything["rank"].notna().all() and everything.set_index("item").loc["gamma", "rank"] == 1  # ties beta
    text = benchmark.answer(table, ranked.reset_index(), min_studies=2)
    assert text.startswith("**Across 4 studies (grid, delta, union, pds) and 4 story-level dataset x criterion cells**")
    assert "over the 3 of 4 metrics and judges measured in at least 2 studies" in text
    assert "3 of the 4 cells are decided" in text and "decide nothing" in text and "pds Fluency" in text
    assert "Best metric: Beta (mean normalised rank 0.00 over 2 cells, 2 wins)" in text
    table_lines = [line for line in text.splitlines() if line.startswith(("1 ", "2 ", "3 "))]
    assert [line.split()[1] for line in table_lines] == ["Beta", "Alpha", "Delta"]
    assert "====" not in benchmark.answer(table, ranked.reset_index(), shown=None)


def test_a_papers_corpora_are_one_study_and_a_column_without_r_is_never_ranked():
    roc = answered("union-roc", "reasonable", {"alpha": 0.6, "beta": np.nan}, {"alpha"}, study="union")
    wp = answered("union-wp", "reasonable", {"alpha": 0.5, "beta": 0.4}, {"alpha"}, study="union")
    table = benchmark.benchmark_table([roc, wp])
    assert "beta" not in set(table.loc[table["dataset"] == "union-roc", "metric"])  # NaN r: no row, no cluster
    ranked = benchmark.summary(table, min_studies=2).set_index("item")
    assert ranked.loc["alpha", ["studies", "cells", "wins"]].tolist() == [1, 2, 2]
    assert ranked["rank"].notna().all()  # one study in the run: the gate is every study


def test_the_matrix_shows_r_with_its_interval_bold_where_a_decided_cell_is_won(tmp_path):
    table = benchmark.benchmark_table(four_datasets())
    ranked = benchmark.summary(table)
    r, top, text = benchmark.matrices(table, ranked)
    assert list(r.index) == ["Beta", "Alpha", "Delta", "Gamma"] and r.shape == top.shape == text.shape == (4, 4)
    assert list(r.columns) == ["grid · Coherence (n 100, ceiling 0.70)",
                               "delta · logicality [coherence] (n 100, ceiling 0.70)",
                               "pds · Fluency (n 100, raters' halves r -0.10)",  # no ceiling at or below 0
                               "union · reasonable [overall] (n 100, ceiling 0.70)"]
    assert text.iloc[0, 0] == "**0.70 [0.60, 0.80]**" and text.loc["Alpha", r.columns[0]] == "0.40 [0.30, 0.50]"
    assert text.loc["Gamma", r.columns[0]] == "" and np.isnan(r.loc["Gamma", r.columns[0]])
    assert not top.loc["Alpha", r.columns[2]]  # pds's cell decides nothing: no frame
    figure = benchmark_heatmap(r, top, "benchmark")
    frames = [patch for patch in figure.axes[0].patches if isinstance(patch, Rectangle)]
    assert len(frames) == int(top.to_numpy().sum()) == 4
    save_figure(figure, tmp_path / "h.pdf", tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 1000
    with pytest.raises(InputError, match="correlations"):
        benchmark_heatmap(r * 2, top, "benchmark")


def test_score_sets_of_one_dataset_join_on_the_stories_they_share():
    """HANNA's released BLEU and the BLEU computed here are two columns of one cell; a metric computed here is one
    item across datasets, the authors' same-named output its own; a set scoring fewer stories narrows the cell."""
    registry = pd.DataFrame({"slug": ["bleu", "chrf"], "label": ["BLEU", "chrF"], "family": "string",
                             "direction": "higher"})
    computed = pd.DataFrame({"story_id": [1, 2, 3, 4] * 2, "metric": ["bleu"] * 4 + ["chrf"] * 4,
                             "value": np.arange(8.0)})
    released = pd.DataFrame({"story_id": [1, 2, 3, 5], "metric": "bleu", "value": [1.0, 2.0, 3.0, 4.0]})
    scores, joined, shared = joined_score_sets([("released", released, registry.iloc[:1]),
                                                ("computed", computed, registry)])
    assert shared == [1, 2, 3] and set(scores["story_id"]) == {1, 2, 3}
    assert joined["slug"].tolist() == ["bleu@released", "bleu@computed", "chrf"]
    assert joined["label"].tolist() == ["BLEU (released)", "BLEU (computed)", "chrF"]
    assert joined["item"].tolist() == ["bleu@released", "bleu", "chrf"]
    assert joined["source_slug"].tolist() == ["bleu", "bleu", "chrf"]
    assert scores.groupby("metric").size().to_dict() == {"bleu@computed": 3, "bleu@released": 3, "chrf": 3}


def test_the_criteria_map_resolves_config_then_dataset_then_default_by_name():
    assert vocabulary.criterion_term("Narrative_Complexity") == ("complexity", "default")
    assert vocabulary.criterion_term("RELATEDNESS") == ("relevance", "default")
    assert vocabulary.criterion_term("Surprise") == ("Surprise", "unmapped")
    assert vocabulary.criterion_term("Plot", dataset_map={"Plot": "coherence"}) == ("coherence", "dataset")
    assert vocabulary.criterion_term("Plot", {"Plot": "overall"}, {"Plot": "coherence"}) == ("overall", "config")
    assert vocabulary.criterion_term("Fluency", {"Other": "overall"}, {"Fluency": "overall"}) == ("overall", "dataset")
    terms = benchmark.criteria_terms({"a": ["Coherence", "Delight"]}, {"a": {"Delight": "interestingness/engagement"}})
    assert terms.to_dict("records") == [
        {"dataset": "a", "criterion": "Coherence", "term": "coherence", "term_source": "default"},
        {"dataset": "a", "criterion": "Delight", "term": "interestingness/engagement", "term_source": "config"}]
    results = answered("a", "Delight", {"alpha": 0.5}, {"alpha"}, terms=terms)
    assert benchmark.benchmark_table([results])["term"].tolist() == ["interestingness/engagement"]


def test_the_workflow_reads_one_answer_per_dataset_over_all_its_score_sets():
    crowd = run_of("config/examples/crowd.yaml")
    assert workflow_benchmark.rated_sets(crowd)[-1] == ("crowd", "computed")
    found = {entry["dataset"]: entry for entry in workflow_benchmark.sets(crowd)}
    assert found["crowd"]["rows"] == "results/crowd/answer.csv" and found["crowd"]["study"] == "crowd"
    assert found["hanna"]["study"] == "hanna-annotations"
    assert [part[0] for part in workflow_benchmark.dataset_parts(crowd, "hanna")] == ["released", "judges"]
    assert workflow_benchmark.parts_inputs("hanna", workflow_benchmark.dataset_parts(crowd, "hanna"))["registry"] == [
        "results/hanna/released/metrics.csv", "results/hanna/judges/metrics.csv"]
    terms = {(row["dataset"], row["criterion"]): row["term"] for row in workflow_benchmark.terms(crowd)}
    assert terms[("crowd", "Interestingness")] == "interestingness/engagement"
    assert terms[("hanna", "Surprise")] == "Surprise"
    everything = targets.all_targets(crowd)
    assert set(workflow_benchmark.outputs(crowd)) <= set(everything)
    assert "results/benchmark/report/benchmark.html" in everything
    assert workflow_benchmark.facts(crowd)["min_studies"] == "2"


def run_of(layer: str) -> Run:
    """The run of config.yaml with `layer` over it, its tables fitted as at start-up."""
    config = checked(layer)
    fitted, _ = startup.fit_tables(config, [name for name, entry in config["datasets"].items()
                                            if entry["kind"] == "table"], Pinned(config))
    return Run(config, fitted=fitted)


@pytest.mark.slow
@pytest.mark.skipif(not HANNA_MIRROR.is_dir(), reason="needs the HANNA mirror (../shared/data/hanna)")
def test_the_benchmark_of_the_crowd_example_and_hannas_released_scores(tmp_path):
    crowd = yaml.safe_load((REPO / "config/examples/crowd.yaml").read_text())["datasets"]["crowd"]
    for part in crowd["files"]:
        part["path"] = str(REPO / part["path"])
    workdir = make_workdir(tmp_path, datasets={"crowd": crowd}, **{"hanna.annotations": "skip",
                                                                   "storyer_evaluator.reasons.datasets": []})
    done = run_snakemake(workdir, "--cores", "1", "benchmark", "results/hanna/released/answer.csv")
    assert done.returncode == 0, done.stderr[-3000:]
    out = workdir / "results/benchmark"
    table = pd.read_csv(out / "benchmark.csv")
    assert set(table["dataset"]) == {"hanna", "crowd"}
    hanna = table[table["dataset"] == "hanna"]
    assert set(hanna["scoreset"]) == {"released", "judges"}  # the released metrics and judges share each cell
    assert hanna.groupby(["level", "criterion"])["scoreset"].nunique().eq(2).all()
    # on the stories every set scores (all of HANNA's here) a column's r is its score set's own answer (the released
    # scores with the judges beside them, as their meta-evaluation compares them)
    own = pd.read_csv(workdir / "results/hanna/released/answer.csv")
    merged = hanna.merge(own, on=["level", "criterion", "metric"], suffixes=("", "_own"))
    assert len(merged) == len(hanna)
    assert np.allclose(merged["r"], merged["r_own"])
    crowd_cells = table[table["dataset"] == "crowd"].drop_duplicates("criterion")
    assert (crowd_cells["statistic"] == "within").all()  # two writers: the design's answer, within writers
    ranked = pd.read_csv(out / "summary.csv")
    assert ranked["item"].is_unique and ranked["rank"].notna().any()
    assert (ranked.loc[ranked["rank"].notna(), "studies"] >= 2).all()
    answer = (out / "report/benchmark.rst").read_text()
    assert ranked["label"].iloc[0] in answer
    matrix = pd.read_csv(out / "matrix.csv")
    assert len(matrix) == len(ranked) and matrix.columns[0] == "Metric or judge"
    for page in ("benchmark", "summary", "heatmap"):
        assert (out / f"report/{page}.html").is_file()


def test_an_undecided_cell_counts_for_nobody():
    """Too few stories to tell metrics apart: the top cluster holds most columns, the cell is undecided, and a
    place in it is no win."""
    decided = answered("grid", "Coherence", {"alpha": 0.6, "beta": 0.1}, {"alpha"})
    undecided = answered("small", "Coherence", {"alpha": 0.2, "beta": 0.5}, {"alpha", "beta"}, decided=False)
    table = benchmark.benchmark_table([decided, undecided])
    ranked = benchmark.summary(table).set_index("item")
    assert ranked.loc["beta", ["studies", "wins", "cells_decided"]].tolist() == [2, 0, 1]
    assert ranked.loc["alpha", ["wins", "win_cells"]].tolist() == [1, "grid Coherence"]
    text = benchmark.answer(table, ranked.reset_index())
    assert "1 of the 2 cells are decided" in text and "small Coherence" in text


def test_the_alt_tests_verdict_tells_a_pass_from_one_that_shuffled_scores_get_too():
    """alt_test.csv beside a score set: alpha passes beyond chance (its corrected permutation p at most q); beta
    passes, but not beyond chance (a pass that means nothing); gamma fails; a column without an omega was not
    tested. The summary counts only the real passes."""
    alt = pd.DataFrame({"metric": ["alpha", "beta", "gamma"], "criterion": "Coherence", "omega": [1.0, 0.67, 0.0],
                        "passed": [True, True, False], "beats_chance": [True, False, False],
                        "scoreset": "computed"})
    grid = answered("grid", "Coherence", {"alpha": 0.6, "beta": 0.3, "gamma": 0.1}, {"alpha"}, alt_test=alt)
    other = answered("delta", "Coherence", {"alpha": 0.6, "beta": 0.3, "gamma": 0.1}, {"alpha"})
    table = benchmark.benchmark_table([grid, other])
    verdicts = table[table["dataset"] == "grid"].set_index("metric")["alt_test"]
    assert verdicts.to_dict() == {"alpha": "passes", "beta": "passes, not beyond chance", "gamma": "fails"}
    assert table.loc[table["dataset"] != "grid", "alt_test"].isna().all()  # no alt_test.csv: no verdict
    ranked = benchmark.summary(table)
    assert ranked.set_index("item")["alt_passes"].to_dict() == {"alpha": 1, "beta": 0, "gamma": 0}
    untested = answered("grid", "Coherence", {"alpha": 0.6}, {"alpha"}, alt_test=alt.assign(omega=np.nan))
    assert (benchmark.benchmark_table([untested])["alt_test"] == "untested").all()
