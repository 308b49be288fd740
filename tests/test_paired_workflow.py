"""Two systems on every prompt through the workflow: described as they are, paired comparisons, system means,
violins, and the confound flags beside the pooled story-level correlations."""

import pandas as pd

from storyeval.examples import rated_stories

from test_own_data import planned_outputs, write_dataset
from workflow_helpers import make_workdir, run_snakemake

BASE = "results/pair/computed"
TARGETS = [f"{BASE}/paired_accuracy.csv", f"{BASE}/tables/paired_accuracy.md", f"{BASE}/confounds.csv",
           f"{BASE}/top_metrics.csv", f"{BASE}/tables/tab4_system_means.csv",
           f"{BASE}/tables/tab5_top3_pearson.csv", f"{BASE}/report/about.html"]


def test_two_systems_get_paired_comparisons_and_confounds(tmp_path, hanna_mirror):
    entry = write_dataset(tmp_path, "pair.csv", rated_stories(prompts=10, systems=("alpha", "beta")))
    make_workdir(tmp_path, **{"datasets.pair": {**entry, "metrics": ["textstats", "bleu"]},
                              "stats.n_resamples": 200})
    planned = run_snakemake(tmp_path, "-n", "dataset_pair")
    assert planned.returncode == 0, planned.stderr[-3000:]
    outputs = planned_outputs(planned.stdout, f"{BASE}/")
    assert {f"{BASE}/figures/fig09_rating_violins.png", *TARGETS} <= set(outputs)
    assert not [name for name in outputs if "bootstrap_f1" in name or "system_level" in name]
    result = run_snakemake(tmp_path, "--cores", "2", *TARGETS)
    assert result.returncode == 0, result.stderr[-3000:]
    said = [line for line in result.stderr.splitlines() if line.startswith("storyeval: dataset pair:")]
    assert len(said) == 1 and "10 prompts, 2 systems ('alpha', 'beta')" in said[0]
    about = (tmp_path / f"{BASE}/report/about.html").read_text()
    assert "written for 10 prompts by 2 systems" in about and "without prompts and systems" not in about

    paired = pd.read_csv(tmp_path / f"{BASE}/paired_accuracy.csv")
    assert set(paired["criterion"]) == {"Fluency", "Plot", "Delight"} and (paired["pairs"] == 10).all()
    assert paired["accuracy"].between(0, 1).all() and (paired["calibrated"] >= paired["accuracy"]).all()
    assert (paired["calibrated_low"] <= paired["calibrated"]).all()
    assert "Tie-calibrated" in (tmp_path / f"{BASE}/tables/paired_accuracy.md").read_text()
    means = pd.read_csv(tmp_path / f"{BASE}/system_means.csv")
    assert set(means["system"]) == {"alpha", "beta"}

    # The planted quality rises from alpha to beta and beta writes longer stories: over the 20 pooled stories
    # Text length follows the ratings more than within each system; BLEU against the reference is mostly length.
    confounds = pd.read_csv(tmp_path / f"{BASE}/confounds.csv")
    length = confounds.query("metric == 'text-length'")
    assert (length["systems"] == 2).all() and (length["pooled_r"] > length["within_r"] + 0.2).any()
    assert confounds.query("metric == 'bleu'")["length"].all()
    flagged = confounds.dropna(subset=["confound"])
    assert set(flagged["confound"]) == {"system", "length", "system; length"}
    assert set(flagged.loc[flagged["system"], "metric"]) >= {"text-length"}
    log = (tmp_path / "logs/confounds/pair/computed.log").read_text()
    assert "WARNING confound: text-length x Plot (spearman): pooled +0.8" in log
    top = pd.read_csv(tmp_path / f"{BASE}/top_metrics.csv", keep_default_na=False)
    assert set(top.query("metric == 'bleu' and level == 'story'")["confound"]) <= {"length", "system; length"}
    assert "BLEU (89) [confound: length]" in (tmp_path / f"{BASE}/tables/tab5_top3_pearson.csv").read_text()
