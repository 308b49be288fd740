"""storyeval.benchmark: the cross-dataset table, its summary and answer, the criteria vocabulary, the heatmap, and the
workflow's plan of it (storyeval.workflow.benchmark)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.patches import Rectangle
from test_workflow_plan import checked, example_run, in_repository  # noqa: F401 (fixture)

from storyeval import benchmark, vocabulary
from storyeval.errors import InputError
from storyeval.plots import save_figure
from storyeval.plots.heatmaps import benchmark_heatmap
from storyeval.workflow import benchmark as workflow_benchmark
from storyeval.workflow import startup, targets
from storyeval.workflow.run import Run
from storyeval.workflow.sources import Pinned

from conftest import HANNA_MIRROR, REPO
from workflow_helpers import make_workdir, run_snakemake

METRICS = {"alpha": ("Alpha", "string"), "beta": ("Beta", "embedding"), "gamma": ("Gamma", "model")}


def score_set(dataset: str, grouping: str, criterion: str, r: dict[str, float], clusters: dict[str, int],
              confounds: dict[str, tuple[bool, bool]] | None = None, agreement: pd.DataFrame | None = None,
              terms: pd.DataFrame | None = None) -> benchmark.ScoreSetResults:
    """One score set's meta-evaluation files as the workflow writes them, one criterion."""
    registry = pd.DataFrame([(slug, label, family) for slug, (label, family) in METRICS.items()],
                            columns=["slug", "label", "family"])
    intervals = pd.DataFrame({"grouping": grouping, "coefficient": "pearson", "metric": list(r),
                              "label": [METRICS[slug][0] for slug in r], "family": [METRICS[slug][1] for slug in r],
                              "criterion": criterion, "r": list(r.values())})
    intervals = intervals.assign(ci_low=intervals["r"] - 0.1, ci_high=intervals["r"] + 0.1)
    ranks = pd.DataFrame({"grouping": grouping, "coefficient": "pearson", "criterion": criterion,
                          "metric": list(clusters), "rank": list(clusters.values())})
    flags = confounds or {}
    confound = pd.DataFrame({"coefficient": "pearson", "metric": list(r), "criterion": criterion,
                             "system": [flags.get(slug, (False, False))[0] for slug in r],
                             "length": [flags.get(slug, (False, False))[1] for slug in r]})
    confound["confound"] = [
        "; ".join(name for name, on in (("system", system), ("length", length)) if on)
        for system, length in zip(confound["system"], confound["length"])]
    return benchmark.ScoreSetResults(dataset, "computed", grouping, intervals, ranks, registry, confound, agreement,
                                     terms if terms is not None else pd.DataFrame())


def three_datasets() -> list[benchmark.ScoreSetResults]:
    """alpha is in the top cluster on two datasets, beta (tied top on one) and gamma on one each."""
    return [
        score_set("grid", "item", "Coherence", {"alpha": 0.6, "beta": 0.3, "gamma": 0.1},
                  {"alpha": 1, "beta": 2, "gamma": 2}),
        score_set("delta", "none", "logicality", {"alpha": 0.5, "beta": 0.45, "gamma": 0.0},
                  {"alpha": 1, "beta": 1, "gamma": 2}, confounds={"beta": (True, False)}),
        score_set("union", "none", "reasonable", {"alpha": 0.1, "beta": 0.2, "gamma": 0.6},
                  {"gamma": 1, "beta": 2, "alpha": 2}),
    ]


def test_a_metric_top_on_two_of_three_datasets_leads_the_summary_and_the_answer():
    table = benchmark.benchmark_table(three_datasets())
    assert list(table.columns) == benchmark.TABLE_COLUMNS and len(table) == 9
    assert table.groupby("set")["top"].sum().to_dict() == {"grid (computed)": 1, "delta (computed)": 2,
                                                           "union (computed)": 1}
    # rank by r within each cell, 1 the best, and its share of the cell: 0 best, 1 last
    grid = table[table["dataset"] == "grid"].set_index("metric")
    assert grid["rank"].to_dict() == {"alpha": 1, "beta": 2, "gamma": 3}
    assert grid["rank_share"].to_dict() == {"alpha": 0.0, "beta": 0.5, "gamma": 1.0}
    assert set(table["term"]) == {"coherence", "overall"}  # logicality joins coherence, UNION's reasonable overall
    ranked = benchmark.summary(table).set_index("item")
    assert list(ranked.index) == ["alpha", "beta", "gamma"]  # beta before gamma: its ranks are better elsewhere
    assert ranked.loc["alpha", ["datasets", "datasets_top", "cells", "cells_top"]].tolist() == [3, 2, 3, 2]
    assert ranked.loc["beta", "mean_rank_share"] == pytest.approx(np.mean([0.5, 0.5, 0.5]))
    assert ranked.loc["gamma", "mean_rank_share"] == pytest.approx(np.mean([1.0, 1.0, 0.0]))
    assert ranked.loc["beta", "top_confounded"] == 1 and ranked.loc["alpha", "top_confounded"] == 0
    assert ranked.loc["gamma", "top_in"] == "union (computed): reasonable"
    text = benchmark.answer(table, ranked.reset_index())
    assert text.startswith("**Across 3 datasets (grid, delta, union; 3 score sets) and 3 dataset x criterion cells**")
    several, _, one = text.partition("on one dataset only")
    assert "Alpha (2 datasets" in several and "Beta" not in several.split("two or more datasets")[1]
    assert "Beta (delta, 1/3 cells)" in one and "Gamma (union, 1/3 cells)" in one
    assert "Best metric by the summary's order: Alpha" in text
    assert "Measured on two or more datasets: 3 of 3 (Alpha, Beta, Gamma)." in text
    assert "Beta on delta (computed) logicality [system]" in text  # a confounded top cell is said


def test_one_dataset_says_no_metric_is_top_on_two():
    table = benchmark.benchmark_table(three_datasets()[:1])
    text = benchmark.answer(table, benchmark.summary(table))
    assert "no metric or judge is in the top significance cluster on two or more datasets (one dataset" in text
    assert "on one dataset only: Alpha" in text


def test_two_score_sets_of_one_dataset_count_as_one_dataset():
    grid = three_datasets()[0]
    released = benchmark.ScoreSetResults("grid", "released", "item", grid.intervals, grid.clusters, grid.registry,
                                         grid.confounds)
    ranked = benchmark.summary(benchmark.benchmark_table([grid, released])).set_index("item")
    assert ranked.loc["alpha", ["datasets", "datasets_top", "cells", "cells_top"]].tolist() == [1, 1, 2, 2]


def test_the_system_confound_counts_only_where_the_grouping_pools_the_systems():
    flags = {"alpha": (True, True), "beta": (True, False)}
    for grouping, expected in (("none", {"alpha": "system; length", "beta": "system"}),
                               ("item", {"alpha": "length", "beta": ""})):
        results = score_set("d", grouping, "Coherence", {"alpha": 0.5, "beta": 0.2}, {"alpha": 1, "beta": 2},
                            confounds=flags)
        table = benchmark.benchmark_table([results]).set_index("metric")
        assert table["confound"].to_dict() == expected


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
    results = score_set("a", "none", "Delight", {"alpha": 0.5}, {"alpha": 1}, terms=terms)
    assert benchmark.benchmark_table([results])["term"].tolist() == ["interestingness/engagement"]


def test_the_ceiling_is_nan_with_a_note_without_agreement_and_the_groupings_level_with_it():
    sets = three_datasets()
    table = benchmark.benchmark_table(sets)
    assert table["ceiling"].isna().all()
    assert benchmark.ceiling_note(sets).startswith("No human ceiling for grid (computed), delta (computed)")
    agreement = pd.DataFrame({"criterion": ["Coherence"] * 3, "level": ["story", "system", "story"],
                              "coefficient": ["alpha", "alpha", "pearson"], "ceiling": [0.4, 0.9, 0.55]})
    item = score_set("grid", "item", "Coherence", {"alpha": 0.6}, {"alpha": 1}, agreement=agreement)
    row = benchmark.benchmark_table([item]).iloc[0]
    assert (row["ceiling"], row["ceiling_coefficient"]) == (0.55, "pearson")  # story level, the benchmark's coefficient
    system = score_set("grid", "system", "Coherence", {"alpha": 0.6}, {"alpha": 1}, agreement=agreement)
    assert benchmark.benchmark_table([system])["ceiling"].tolist() == [0.9]
    assert benchmark.ceiling_note([item]) == ""
    table = benchmark.benchmark_table([item])
    assert list(benchmark.heatmap_matrix(table, benchmark.summary(table), 5)[0].columns) == [
        "grid · Coherence (ceiling 0.55)"]


def test_the_heatmap_groups_columns_by_term_and_frames_the_top_cluster(tmp_path):
    table = benchmark.benchmark_table(three_datasets())
    ranked = benchmark.summary(table)
    r, top = benchmark.heatmap_matrix(table, ranked, rows=2)
    assert list(r.index) == ["Alpha", "Beta"] and r.shape == top.shape == (2, 3)
    assert list(r.columns) == ["grid · Coherence", "delta · logicality [coherence]", "union · reasonable [overall]"]
    assert int(top.to_numpy().sum()) == 3 and r.loc["Alpha", top.loc["Alpha"]].gt(0.4).all()
    figure = benchmark_heatmap(r, top, "benchmark")
    frames = [patch for patch in figure.axes[0].patches if isinstance(patch, Rectangle)]
    assert len(frames) == int(top.to_numpy().sum())
    save_figure(figure, tmp_path / "h.pdf", tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 1000
    with pytest.raises(InputError, match="correlations"):
        benchmark_heatmap(r * 2, top, "benchmark")


def test_the_workflow_compares_each_rated_set_at_the_grouping_its_design_has():
    grid = example_run("per_rater")
    assert workflow_benchmark.rated_sets(grid)[-1] == ("example", "computed")
    assert workflow_benchmark.grouping(grid, "example", "computed") == "item"
    systemwise = example_run("per_rater", **{"benchmark.groupings": ["system", "item"]})
    assert workflow_benchmark.grouping(systemwise, "example", "computed") == "system"
    crowd = run_of("config/examples/crowd.yaml")
    assert workflow_benchmark.grouping(crowd, "crowd", "computed") == "none"  # two systems a prompt: no grid
    found = {entry["dataset"]: entry for entry in workflow_benchmark.sets(crowd)}
    assert found["crowd"]["intervals"] == "results/crowd/computed/meta/boot_both_none.csv"
    assert found["hanna"]["registries"] == ["results/hanna/released/metrics.csv", "results/hanna/judges/metrics.csv"]
    terms = {(row["dataset"], row["criterion"]): row["term"] for row in workflow_benchmark.terms(crowd)}
    assert terms[("crowd", "Interestingness")] == "interestingness/engagement"
    assert terms[("hanna", "Surprise")] == "Surprise"
    everything = targets.all_targets(crowd)
    assert set(workflow_benchmark.outputs(crowd)) <= set(everything)
    assert "results/benchmark/report/benchmark.html" in everything
    assert workflow_benchmark.coefficient(crowd.config) == "pearson"
    with pytest.raises(InputError, match="benchmark.coefficient: kendall"):
        workflow_benchmark.coefficient(checked(**{"benchmark.coefficient": "kendall"}))


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
    done = run_snakemake(workdir, "--cores", "1", "benchmark")
    assert done.returncode == 0, done.stderr[-3000:]
    out = workdir / "results/benchmark"
    table = pd.read_csv(out / "benchmark.csv")
    assert set(table["set"]) == {"hanna (released)", "crowd (computed)"}
    assert table.groupby(["set", "criterion"])["top"].any().all()  # every cell has a top cluster
    # the table's r is the meta-evaluation's at the chosen grouping, row for row
    boot = pd.read_csv(workdir / "results/hanna/released/meta/boot_both_item.csv")
    merged = table[table["set"] == "hanna (released)"].merge(boot, on=["criterion", "metric"], suffixes=("", "_boot"))
    assert len(merged) == len(boot) and np.allclose(merged["r"], merged["r_boot"], equal_nan=True)
    ranked = pd.read_csv(out / "summary.csv")
    assert ranked["datasets_top"].le(2).all() and ranked["cells_top"].sum() == table["top"].sum()
    assert ranked["item"].is_unique
    answer = (out / "report/benchmark.rst").read_text()
    assert ranked["label"].iloc[0] in answer
    assert (out / "heatmap.png").stat().st_size > 0 and (out / "report/benchmark.html").is_file()


def test_a_top_cluster_of_every_column_counts_for_none():
    """Too few stories to tell metrics apart: PERM-BOTH puts every column in cluster 1, and a place there says
    nothing; the cell is said to be undecided and the summary counts it for no one."""
    decided = score_set("grid", "item", "Coherence", {"alpha": 0.6, "beta": 0.1}, {"alpha": 1, "beta": 2})
    undecided = score_set("small", "none", "Coherence", {"alpha": 0.2, "beta": 0.5}, {"alpha": 1, "beta": 1})
    table = benchmark.benchmark_table([decided, undecided])
    assert table.groupby("dataset")["separates"].all().to_dict() == {"grid": True, "small": False}
    assert table.groupby("dataset")["top_size"].first().to_dict() == {"grid": 1, "small": 2}
    ranked = benchmark.summary(table).set_index("item")
    assert ranked.loc["beta", ["datasets", "datasets_top", "cells_top", "cells_undecided"]].tolist() == [2, 0, 0, 1]
    assert ranked.loc["alpha", ["datasets_top", "cells_top"]].tolist() == [1, 1]
    text = benchmark.answer(table, ranked.reset_index())
    assert "1 of the 2 cells tell no column apart from the best" in text and "small (computed) Coherence" in text
    assert "Beta (small" not in text  # a place in an undecided cluster is no win


def test_the_alt_tests_verdict_tells_a_pass_from_one_that_shuffled_scores_get_too():
    """alt_test.csv beside a score set: alpha passes and no shuffle of its scores does; beta passes as its shuffles
    do (a pass that means nothing); gamma fails; a column without an omega was not tested. The summary counts only
    the real passes, and the answer says both counts."""
    alt = pd.DataFrame({"metric": ["alpha", "beta", "gamma"], "criterion": "Coherence", "omega": [1.0, 0.67, 0.0],
                        "passed": [True, True, False], "chance_passes": [0, 4, 0]})
    grid = dataclasses.replace(three_datasets()[0], alt_test=alt)
    table = benchmark.benchmark_table([grid, *three_datasets()[1:]])
    verdicts = table[table["dataset"] == "grid"].set_index("metric")["alt_test"]
    assert verdicts.to_dict() == {"alpha": "passes", "beta": "passes shuffled too", "gamma": "fails"}
    assert table.loc[table["dataset"] != "grid", "alt_test"].isna().all()  # no alt_test.csv: no verdict
    ranked = benchmark.summary(table)
    assert ranked.set_index("item")["cells_alt_pass"].to_dict() == {"alpha": 1, "beta": 0, "gamma": 0}
    text = benchmark.answer(table, ranked)
    assert ("The Alternative Annotator Test (may it replace a rater?) passes in 1 of 3 tested cells where no "
            "shuffle of the scores passes too: Alpha (1 cell); 1 more pass as shuffled scores do") in text
    untested = dataclasses.replace(grid, alt_test=alt.assign(omega=np.nan, passed=False))
    assert (benchmark.benchmark_table([untested])["alt_test"] == "untested").all()
