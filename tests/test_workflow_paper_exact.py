"""The paper-exact profile (config/paper-exact.yaml) on the released scores: the workflow's own tables reproduce the
papers' printed numbers (src/storyeval/printed_numbers.yaml), and the README's counts line is the audit's."""

import re

import pandas as pd
import pytest
import yaml

from conftest import REPO
from workflow_helpers import clone_alone, copy_mirror, make_workdir, run_snakemake

PAPER_VALUES = REPO / "src/storyeval/printed_numbers.yaml"
BASE = "results/hanna/released"
TARGETS = [f"{BASE}/{name}.csv" for name in ("correlations", "top_metrics", "borda", "reanalysis2_top_k",
                                             "reanalysis2_coefficient_agreement")]


@pytest.fixture(scope="module")
def paper():
    return yaml.safe_load(PAPER_VALUES.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def profile_run(tmp_path_factory, hanna_mirror, paper):
    """The rules the switches change, and the audit, under the profile layered over the default config, from a
    copy of the repository with no ../shared beside it and the data in a mirror the test makes."""
    tmp = tmp_path_factory.mktemp("paper_exact")
    clone = clone_alone(tmp)
    workdir = make_workdir(tmp / "work", **{"data.mirrors.hanna": [str(copy_mirror(tmp))]})
    result = run_snakemake(workdir, "--cores", "2", *TARGETS, "audit", "--configfile", str(workdir / "config.yaml"),
                           str(clone / "config/paper-exact.yaml"), repository=clone)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


def rows(spec):
    return [dict(zip(spec["columns"], row)) for row in spec["rows"]]


def test_fig2_system_kendall_is_the_papers(profile_run, paper):
    correlations = pd.read_csv(profile_run / BASE / "correlations.csv")
    kendall = correlations[(correlations["kind"] == "criteria") & (correlations["level"] == "system")
                           & (correlations["coefficient"] == "kendall")].set_index(["y", "x"])["r"]
    cells = paper["hanna_fig2_criteria_kendall_system"]["cells"]
    assert [round(100 * abs(kendall[y, x])) for y, x, _ in cells] == [value for _, _, value in cells]
    complexity = [value for y, _, value in cells if y == "Complexity"]
    assert complexity and complexity != [60, 82, 64, 91, 82]  # the authors' float ties, not the merged ones


def test_tab6_borda_is_the_papers(profile_run, paper):
    borda = pd.read_csv(profile_run / BASE / "borda.csv")
    for row in rows(paper["hanna_tab6_borda"]):
        ours = borda[(borda["level"] == row["level"]) & (borda["label"].str.rstrip("†") == row["metric"])]
        assert ours["borda"].tolist() == [row["borda"]], row


def test_mendras_nietge_wilcoxon_statistics_are_theirs(profile_run, paper):
    agreement = pd.read_csv(profile_run / BASE / "reanalysis2_coefficient_agreement.csv")
    statistics = agreement[agreement["level"] == "system"].set_index(
        ["criterion", "coefficient_a", "coefficient_b"])["wilcoxon_statistic"]
    spec = paper["mendras_tab2_wilcoxon_system"]
    for row in rows(spec):
        first, second = (part.strip().lower() for part in row["pair"].split("-"))
        assert [statistics[criterion, first, second] for criterion in spec["columns"][1:]] == \
               [row[criterion] for criterion in spec["columns"][1:]], row["pair"]


def test_mendras_nietge_top5_rank_their_17_metrics(profile_run, paper):
    """Each printed metric is in the workflow's top 5, or ties at the cut (equal |r|, as the audit says)."""
    top = pd.read_csv(profile_run / BASE / "reanalysis2_top_k.csv")
    subset = yaml.safe_load((REPO / "config/paper-exact.yaml").read_text())["reanalysis"]["top_k_metrics"]
    assert set(top["label"].str.rstrip("†")) <= set(subset)
    audit = pd.read_csv(profile_run / "results/audit/audit.csv", keep_default_na=False).set_index(["paper", "item"])
    for row in rows(paper["mendras_tab1_3_4_top5_system"]):
        column = top[(top["coefficient"] == row["header"].lower()) & (top["criterion"] == row["criterion"])]
        if row["metric"] not in set(column["label"].str.rstrip("†")):
            item = f"Tab. {row['table']} {row['criterion']} {row['header']} #{row['rank']}"
            assert audit.loc[("Mendras & Nietge Tab. 1, 3, 4", item), "status"] == "within printed precision", row


def test_readme_states_the_audits_counts(profile_run):
    """The README's first screen cannot drift from the audit: its counts line is the audit's."""
    from storyeval.audit import readme_counts

    table = pd.read_csv(profile_run / "results/audit/audit.csv", keep_default_na=False)
    readme = re.sub(r"\s+", " ", (REPO / "README.md").read_text(encoding="utf-8"))
    assert readme_counts(table) in readme
    assert "unexplained" not in set(table["status"])
