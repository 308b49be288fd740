"""The meta-evaluation rules on HANNA's released scores and LLM judges, few resamples: real properties of the
outputs, and the same bytes with one core as with two."""

from __future__ import annotations

import filecmp

import pandas as pd
import pytest

from storyeval.criteria import CODES
from storyeval.data.hanna_judges import TASKS

from workflow_helpers import make_workdir, run_snakemake

BASE = "results/hanna/released"
SMALL = {"meta.n_permutations": 50, "meta.n_resamples": 50, "figures.p_values": "bh"}
WILLIAMS_PAGE = "report/fig33_williams_system_relevance.html"
TARGETS = [
    f"{BASE}/tables/meta_best.csv",
    f"{BASE}/meta/correlations.csv",
    f"{BASE}/meta/pairwise.csv",
    f"{BASE}/williams_bh.csv",
    f"{BASE}/meta/williams_judges.csv",
    f"{BASE}/tables/meta_consensus.csv",
    f"{BASE}/{WILLIAMS_PAGE}",
]
OUTPUTS = [
    "meta/correlations.csv",
    "meta/pairwise.csv",
    "williams_bh.csv",
    "meta/williams_judges.csv",
    "meta/consensus.csv",
    "meta/consensus_summary.csv",
    "tables/meta_consensus.csv",
    "tables/meta_consensus.md",
    "tables/meta_best.csv",
    "tables/meta_best.md",
    "figures/meta_best.pdf",
    "figures/meta_best.png",
    *[
        f"meta/{name}_{grouping}.csv"
        for name in ("perm_both", "clusters", "boot_both")
        for grouping in ("none", "item", "system")
    ],
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    workdirs = []
    for cores in ("1", "2"):
        workdir = make_workdir(tmp_path_factory.mktemp(f"meta{cores}"), **SMALL)
        result = run_snakemake(workdir, "--cores", cores, *TARGETS)
        assert result.returncode == 0, result.stderr[-3000:]
        workdirs.append(workdir)
    return workdirs


def read(workdir, name):
    return pd.read_csv(workdir / BASE / name)


@pytest.mark.slow
def test_meta_outputs(runs):
    workdir = runs[0]
    correlations = read(workdir, "meta/correlations.csv")
    assert set(correlations["grouping"]) == {"none", "item", "system"} and correlations["grouping"].notna().all()
    assert not correlations.query("grouping == 'none'")["coefficient"].isin(["acc23"]).any()  # calibrate_none false
    judges = correlations[correlations["family"] == "llm-judge"]
    slug = judges["metric"].str.extract(r"^(?P<judge>.+)-(?P<code>[a-z]+)-t(?P<task>\d)$")
    assert len(slug.drop_duplicates()) == 5 * 4 * 7 and set(slug["task"].astype(int)) == set(TASKS)
    code = {criterion: code.lower() for code, criterion in CODES.items()}
    for (_, _, criterion), rows in judges.groupby(["grouping", "coefficient", "criterion"]):
        # each judge x task: its rating of this criterion and its Average
        assert set(rows["metric"].str.extract(r"-([a-z]+)-t\d$")[0]) == {code[criterion], "avg"} and len(rows) == 40
    for grouping in ("none", "item", "system"):
        tests = read(workdir, f"meta/perm_both_{grouping}.csv")
        assert tests["p"].isna().equals(tests["delta"].isna())  # a pair without a delta (a constant column): no p
        tests = tests.dropna(subset=["p"])
        assert (tests["p_bh"] >= tests["p"] - 1e-12).all() and tests["permutations"].le(50).all()
        # (k + 1) / (n + 1): never 0, and never below the resolution of the permutations the pair ran
        assert (tests["p"] >= tests["p_min"]).all()
        assert tests["p_min"].to_numpy() == pytest.approx(1 / (tests["permutations"].to_numpy() + 1), rel=1e-9)
        clusters = read(workdir, f"meta/clusters_{grouping}.csv")
        assert clusters.groupby("criterion")["rank"].min().eq(1).all()
        assert clusters.groupby("criterion")["rank"].apply(lambda rank: rank.is_monotonic_increasing).all()
        boot = read(workdir, f"meta/boot_both_{grouping}.csv")
        assert (boot["ci_low"] <= boot["ci_high"]).all()
    williams = read(workdir, "williams_bh.csv")
    assert (williams["p_bh"].dropna() >= williams["p"][williams["p_bh"].notna()] - 1e-12).all()
    best = read(workdir, "tables/meta_best.csv")
    assert set(best["kind"]) == {"metric", "LLM judge"} and best["rank"].min() == 1
    design = best[best["grouping"].str.startswith("design: ")]  # the design's answer first, judges beside metrics
    assert best["grouping"].iat[0] == "design: item" and set(design["grouping"]) == {"design: item", "design: system"}
    assert set(design["kind"]) == {"metric", "LLM judge"}
    assert design.groupby(["grouping", "criterion", "kind"])["kind_best"].sum().eq(1).all()  # each kind's best once
    consensus = read(workdir, "meta/consensus.csv")
    assert consensus.groupby("level").size().eq(72 + 20 + 20).all()  # metrics, judge x task, judge averages
    assert list(dict.fromkeys(consensus["level"])) == ["design", "none", "item", "system", "all"]
    assert consensus.groupby("level")["kemeny_rank"].apply(lambda rank: sorted(rank) == list(range(1, 113))).all()
    summary = read(workdir, "meta/consensus_summary.csv")
    assert (summary["kemeny_score"] <= summary["borda_score"]).all()
    tests = read(workdir, "meta/williams_judges.csv")
    judged = tests["family"].eq("llm-judge") != tests["metric_b"].isin(judges["metric"])  # exactly one a judge
    assert judged.all() and (tests["p_bh"] >= tests["p"] - 1e-12).all()
    assert tests.groupby(["grouping", "criterion"]).size().eq(40 * 5 * 2).all()  # 40 judge columns x best 5, both ways
    assert "Pearson r, Relevance, BH-adjusted p" in (workdir / BASE / WILLIAMS_PAGE).read_text()


@pytest.mark.slow
def test_meta_same_bytes_whatever_the_cores(runs):
    for name in OUTPUTS:
        assert filecmp.cmp(runs[0] / BASE / name, runs[1] / BASE / name, shallow=False), name
