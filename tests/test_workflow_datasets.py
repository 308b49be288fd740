"""A built-in dataset beside HANNA through the whole workflow (slow: minutes): TTCW's 36 stories stand for all,
since its released judges, its paper's recipes and its printed numbers take every rule of theirs."""

import pandas as pd
import pytest

from storyeval.datasets import metric_names
from storyeval.stats.agreement import RATER_LAYOUTS

from workflow_helpers import make_workdir, run_snakemake

pytestmark = pytest.mark.slow
OTHERS = ("union-roc", "union-wp", "deltascore-roc", "deltascore-wp", "pds")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, hanna_mirror):
    """The default config with TTCW the one other built-in dataset, the meta tests' draws cut to 100."""
    workdir = make_workdir(tmp_path_factory.mktemp("datasets"), OTHERS, **{
        "meta.n_permutations": 100, "meta.n_resamples": 100,
        **{f"datasets.{name}.metrics": [metric for metric in metric_names({"kind": "storyer"}, name)
                                        if metric != "storyer"] for name in ("wp200", "scary200")},
        "datasets.hanna-llm.metrics": ["bleu", "chrf"], "datasets.ttcw.metrics": ["datastats"]})
    result = run_snakemake(workdir, "--cores", "2", "dataset_ttcw", "results/audit/datasets.csv", "benchmark")
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


def test_a_built_in_dataset_runs_beside_hanna(finished_run):
    """TTCW beside HANNA: its expert ratings' agreement, its released judges' analysis, the notebook's numbers in the
    datasets' audit, its cells in the benchmark, and rule dataset_ttcw's figures."""
    audit = pd.read_csv(finished_run / "results/audit/datasets.csv")
    assert set(audit["dataset"]) == {"ttcw"} and len(audit) >= 35
    # exact, but for the abstract's "3-10X", a range that both LLMs' ratios fall inside
    assert set(audit.loc[audit["status"] != "exact", "status"]) == {"within"}
    assert set(audit.loc[audit["status"] != "exact", "paper_value"].astype(str)) == {"3-10"}
    agreement = pd.read_csv(finished_run / "results/ttcw/computed/agreement.csv")
    assert set(agreement["criterion"]) == {"Tests passed", "Fluency", "Flexibility", "Originality", "Elaboration"}
    assert agreement["alpha_interval"].between(-1, 1).all() and agreement["ceiling"].notna().any()
    hanna = pd.read_csv(finished_run / "results/hanna/released/agreement.csv")  # each kind's rater layout
    assert (agreement["layout"] == RATER_LAYOUTS["rater"]).all()
    assert (hanna["layout"] == RATER_LAYOUTS["position"]).all()
    alt = pd.read_csv(finished_run / "results/ttcw/released/alt_test.csv")
    tested = alt[alt["omega"].notna()]  # TTCW's experts: epsilon 0.2, a permutation p for every tested judge
    assert (alt["epsilon"] == 0.2).all() and tested["chance_p"].between(0, 1).all()
    assert (tested["chance_draws"] >= 199).all()
    table = pd.read_csv(finished_run / "results/benchmark/benchmark.csv")
    assert {("ttcw", "released"), ("ttcw", "computed"), ("hanna", "released")} <= set(
        zip(table["dataset"], table["scoreset"]))
    assert table.loc[table["dataset"] == "ttcw", "ceiling"].notna().any()  # the human ceiling beside the metrics
    assert set(table.loc[table["dataset"] == "ttcw", "alt_test"]) <= {"passes", "passes, not beyond chance", "fails",
                                                                      "untested"}
    assert (finished_run / "results/ttcw/released/report/about.html").is_file()
    figures = {path.name for path in (finished_run / "results/ttcw/released/figures").iterdir()}
    assert "meta_best.png" in figures and any(name.startswith("fig") for name in figures)  # dataset_ttcw: all
