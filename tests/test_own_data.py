"""A user's own rated stories, configured beside the defaults: every analysis runs on them with no code change.

The synthetic dataset plants a signal: each system has a quality; better stories are longer and copy more of
the prompt's reference, and raters score them higher on three criteria that are not HANNA's.
"""

import hashlib
import shutil

import pandas as pd
import pytest
import yaml

from storyeval.examples import CRITERIA, SYSTEMS, rated_stories

from conftest import REPO
from workflow_helpers import clone_alone, make_workdir, run_snakemake

SYSTEMS = list(SYSTEMS)  # planted quality rises from alpha to epsilon
COLUMNS = {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text", "reference": "human_story",
           "rater": "annotator", "criteria": CRITERIA}
METRICS = ["bleu", "rouge", "chrf", "datastats"]  # datastats holds textstats' columns too


def write_dataset(workdir, name="mine.csv", frame=None):
    path = workdir / name
    (rated_stories() if frame is None else frame).to_csv(path, index=False)
    return {
        "kind": "table",
        "path": name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "columns": COLUMNS,
        "metrics": METRICS,
    }


@pytest.mark.parametrize("suffix", [".tsv", ".jsonl", ".parquet"])
def test_every_format_loads_the_same_dataset(tmp_path, suffix):
    from storyeval.datasets import describe

    frame = rated_stories()
    frame.to_csv(tmp_path / "mine.csv", index=False)
    writers = {
        ".tsv": lambda path: frame.to_csv(path, sep="\t", index=False),
        ".jsonl": lambda path: frame.to_json(path, orient="records", lines=True),
        ".parquet": lambda path: frame.to_parquet(path, index=False),
    }
    writers[suffix](tmp_path / f"mine{suffix}")
    dataset = describe({"kind": "table", "columns": COLUMNS})
    expected, loaded = dataset.load(tmp_path / "mine.csv", "mine"), dataset.load(tmp_path / f"mine{suffix}", "mine")
    pd.testing.assert_frame_equal(loaded.texts, expected.texts)
    pd.testing.assert_frame_equal(loaded.human_scores, expected.human_scores)
    assert len(expected.texts) == 60 and len(expected.ratings) == 60 * 3 * 3
    assert dataset.criteria == tuple(CRITERIA) and dataset.levels == ["story", "system"] and dataset.raters


def test_what_a_file_lacks_follows_from_its_columns():
    from storyeval.datasets import describe

    flat = describe({"kind": "table", "columns": {"story_id": "id", "story": "text", "criteria": ["fluency"]}})
    assert flat.levels == ["story"] and not flat.raters and flat.texts == {"story"}
    said = "; ".join(flat.lacks(["bleu", "chrf"]))
    assert "no reference text, so reference-based metrics are refused (bleu, chrf)" in said
    assert "no systems, so story-level correlations over all stories and no system level" in said


def test_bad_rows_are_one_line_naming_the_column(tmp_path):
    from storyeval.datasets import describe
    from storyeval.errors import InputError
    from storyeval.text.fit import fit_to_data

    dataset = describe({"kind": "table", "columns": COLUMNS})
    frame = rated_stories()
    frame["plot_score"] = frame["plot_score"].astype(object)
    frame.loc[4, "plot_score"] = "n/a"
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InputError, match=r"'n/a' in column 'plot_score', data row 5, is not a number .*fix: correct "
                                         r"it, or leave the cell empty"):
        dataset.load(tmp_path / "bad.csv", "mine")
    rated_stories().drop(columns="model").to_csv(tmp_path / "nomodel.csv", index=False)
    with pytest.raises(InputError, match=r"has no column 'model' \(datasets.mine.columns.system\); fix"):
        dataset.load(tmp_path / "nomodel.csv", "mine")
    twice = rated_stories().assign(model=lambda f: f["model"].replace("beta", "alpha"))
    twice.to_csv(tmp_path / "twice.csv", index=False)
    # several stories of one writer on a prompt are a design, not an error: the cubes pool them, the writer stays
    fitted, notes = fit_to_data(dataset.load(tmp_path / "twice.csv", "mine"))
    assert fitted.texts["system"].isna().all() and set(fitted.texts["writer"]) == set(SYSTEMS) - {"beta"}
    assert any("stories a prompt and system" in note for note in notes)


def planned_outputs(dry_run_stdout: str, prefix: str) -> list[str]:
    """Output files of the planned jobs under `prefix`, from `snakemake -n` (every job prints its outputs)."""
    files = [
        name.strip()
        for line in dry_run_stdout.splitlines()
        if line.startswith("    output:")
        for name in line.split(":", 1)[1].split(",")
    ]
    return sorted({name for name in files if name.startswith(prefix)})


@pytest.fixture(scope="module")
def own_run(tmp_path_factory, hanna_mirror):
    """The default config plus the user's dataset in layout long: its one target builds every analysis of it, the
    meta-evaluation included, and nothing of HANNA's."""
    from storyeval.examples import long_layout

    workdir = tmp_path_factory.mktemp("own")
    entry = write_dataset(workdir, "mine.csv", long_layout(rated_stories()))
    entry["layout"], entry["scale"], entry["integer"] = "long", [1, 5], True
    entry["columns"] = {**COLUMNS, "criterion": "criterion", "score": "score"}
    make_workdir(workdir, **{"datasets.mine": entry})
    dry = run_snakemake(workdir, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "results/hanna/released/tables/tab6_borda.csv" in planned_outputs(dry.stdout, "results/hanna/")
    # The dataset's own target, from a copy of the repository with no mirror of anyone's data and no network.
    nowhere = {f"data.mirrors.{source}": [str(workdir / "no-mirror")] for source in ("hanna", "storyer", "s3")}
    make_workdir(workdir, **{"datasets.mine": entry, **nowhere, "data.allow_download": False})
    result = run_snakemake(workdir, "--cores", "2", "dataset_mine", repository=clone_alone(workdir / "elsewhere"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (workdir / "results/hanna").exists() and not (workdir / "resources").exists()
    targets = sorted(str(path.relative_to(workdir)) for path in (workdir / "results/mine").rglob("*") if path.is_file())
    return workdir, targets, result.stdout + result.stderr


def read(workdir, name):
    return pd.read_csv(workdir / "results/mine/computed" / name)


def test_every_analysis_runs_on_the_users_criteria(own_run):
    workdir, targets, _ = own_run
    base = "results/mine/computed"
    for name in [
        "correlations",
        "williams",
        "borda",
        "kemeny",
        "bootstrap_f1",
        "correlation_ci",
        "topk",
        "icc",
        "system_means",
        "reanalysis1_sum_of_ranks",
        "reanalysis2_top_k",
    ]:
        assert f"{base}/{name}.csv" in targets, name
    # A Williams figure per criterion and level (and for the representative subset), named by the criterion.
    williams = sorted(path.name for path in (workdir / base / "figures").glob("williams_*.pdf"))
    assert williams == sorted(
        f"williams_{level}_{criterion.lower()}{subset}.pdf"
        for level in ("story", "system")
        for criterion in CRITERIA
        for subset in ("", "_subset")
    )
    for name in [
        "fig01_criteria_story_kendall",
        "fig09_rating_violins",
        "fig08_topk_systems",
        "fig03_metric_criteria_story_kendall_subset",
    ]:
        assert (workdir / base / "figures" / f"{name}.png").stat().st_size > 0, name
    assert not list((workdir / base / "figures").glob("fig2[7-9]_*"))  # HANNA's numbered Williams figures


def test_the_meta_evaluation_runs_on_the_users_criteria(own_run):
    workdir, targets, _ = own_run
    base = "results/mine/computed/meta"
    for grouping in ("none", "item", "system"):
        for name in ("perm_both", "clusters", "boot_both"):
            assert f"{base}/{name}_{grouping}.csv" in targets, (name, grouping)
    correlations = read(workdir, "meta/correlations.csv")
    assert set(correlations["criterion"]) == set(CRITERIA)
    assert set(correlations["grouping"]) == {"none", "item", "system"}
    assert {"tau_c", "acc23"} <= set(correlations["coefficient"])
    pairwise = read(workdir, "meta/pairwise.csv")
    assert pairwise["pairwise_accuracy"].between(0, 1).all() and set(pairwise["criterion"]) == set(CRITERIA)
    tests = read(workdir, "meta/perm_both_system.csv")
    tested = tests["delta"].notna()  # a column constant on the system means has no r, so its pairs no test
    assert tests["p"].isna().equals(~tested) and tests.loc[tested, "p_bh"].between(0, 1).all()
    assert (tests.loc[tested, "p_bh"] >= tests.loc[tested, "p"] - 1e-12).all()
    length = read(workdir, "meta/clusters_system.csv").query("metric == 'text-length'")
    assert (length["rank"] == 1).all()  # the planted signal: story length ranks first for every criterion


def test_the_planted_signal_is_found(own_run):
    workdir, _, _ = own_run
    correlations = read(workdir, "correlations.csv")
    rows = correlations.query("kind == 'metric_criterion' and coefficient == 'pearson' and x == 'text-length'")
    assert set(rows["y"]) == set(CRITERIA)
    assert (rows.query("level == 'system'")["r"] > 0.9).all()  # five systems, planted quality
    assert (rows.query("level == 'story'")["r"] > 0.5).all()  # within a prompt, across systems
    means = read(workdir, "tables/tab4_system_means.csv")
    assert list(means.columns) == ["System", *sorted(CRITERIA), "Average"]
    assert sorted(means["System"]) == sorted(SYSTEMS)
    average = means["Average"].str.extract(r"([\d.]+)", expand=False).astype(float)
    assert list(average) == sorted(average, reverse=True)  # the systems best first
    assert means.set_index("System").loc["epsilon", "Fluency"].startswith("**")  # the best system, marked
    icc = read(workdir, "icc.csv")
    assert set(icc["criterion"]) == set(CRITERIA)
    assert set(icc["layout"]) == {"judge slots of each criterion's raters (dataset file; the log says how)"}
    agreement = icc.query("form == 'ICC1k'").set_index("criterion")["icc"]  # planted: Fluency's signal is strongest
    assert agreement["Fluency"] > agreement["Plot"] > agreement["Delight"] > 0.2


def test_consensus_and_reanalyses_over_the_datasets_criteria(own_run):
    workdir, _, log = own_run
    borda = read(workdir, "borda.csv")
    # Each metric is ranked once per criterion and coefficient: 3 x 3 rankings a level, 18 for both levels.
    top = borda.query("level == 'global'").sort_values("rank").iloc[0]
    metrics = read(workdir, "metrics.csv")
    assert top["borda"] <= 18 * (len(metrics) - 1) and len(borda.query("level == 'story'")) == len(metrics)
    assert set(read(workdir, "kemeny_summary.csv")["level"]) == {"story", "system", "global"}
    ranks = read(workdir, "reanalysis1_sum_of_ranks.csv")
    assert [column for column in ranks.columns if column in CRITERIA] == sorted(CRITERIA)
    assert set(read(workdir, "reanalysis2_top_k.csv")["criterion"]) == set(CRITERIA)  # none of HANNA's rated here
    topk = read(workdir, "topk.csv")
    assert set(topk["metric"]) == {"bleu", "rouge-1-recall", "chrf"}  # Fig. 8's metrics this set computed
    logs = {path: path.read_text() for path in (workdir / "logs").rglob("*.log") if "mine" in str(path)}
    assert any(
        "stats.topk.metrics: not in this score set, skipped: ['BERTScore Recall'" in text for text in logs.values()
    )
    assert any("figures.representative_metrics: not in this score set, skipped" in text for text in logs.values())


def test_a_dataset_without_reference_or_systems_degrades_and_says_so(tmp_path, hanna_mirror):
    averaged = rated_stories().groupby(["id", "prompt", "text"], as_index=False)[["fluency", "delight"]].mean()
    averaged.to_json(tmp_path / "flat.jsonl", orient="records", lines=True)
    entry = {
        "kind": "table",
        "path": "flat.jsonl",
        "sha256": hashlib.sha256((tmp_path / "flat.jsonl").read_bytes()).hexdigest(),
        "columns": {"story_id": "id", "prompt": "prompt", "story": "text", "criteria": ["fluency", "delight"]},
        "metrics": ["datastats"],
    }
    make_workdir(tmp_path, **{"datasets.flat": entry})
    result = run_snakemake(tmp_path, "--cores", "2", "results/flat/computed/correlations.csv")
    assert result.returncode == 0, result.stderr[-3000:]
    notes = [line for line in result.stderr.splitlines() if "storyeval: dataset flat:" in line]
    assert len(notes) == 1 and "no reference text, so reference-based metrics are refused (bartscore, " in notes[0]
    assert " bleu, " in notes[0] and " chrf, " in notes[0]
    assert "no systems, so story-level correlations over all stories and no system level" in notes[0]
    correlations = pd.read_csv(tmp_path / "results/flat/computed/correlations.csv")
    assert set(correlations["level"]) == {"story"} and set(correlations["items"]) == {len(averaged)}
    assert set(correlations.query("kind == 'metric_criterion'")["y"]) == {"fluency", "delight"}
    make_workdir(tmp_path, **{"datasets.flat": {**entry, "metrics": ["bleu"]}})
    refused = run_snakemake(tmp_path, "-n")
    assert refused.returncode != 0
    assert "datasets.flat.metrics: 1 named metric(s) cannot run: bleu on flat (no reference text); fix: remove" in (
        refused.stdout + refused.stderr
    )


def test_a_dataset_at_a_pinned_url(tmp_path, hanna_mirror):
    """A URL dataset is fetched once into resources/datasets/ and checked against its sha256 at every start;
    with no copy and no network, start-up says so in one line."""
    entry = write_dataset(tmp_path)
    entry = {
        **{key: value for key, value in entry.items() if key != "path"},
        "url": "https://example.invalid/d/mine.csv",
    }
    make_workdir(tmp_path, **{"datasets.mine": entry, "data.allow_download": False})
    missing = run_snakemake(tmp_path, "-n")
    said = missing.stdout + missing.stderr
    assert (
        missing.returncode != 0
        and "mine.csv: in no mirror (none configured) and https://example.invalid/d/mine.csv" in said
    )
    (tmp_path / "resources/datasets").mkdir(parents=True)
    (tmp_path / "mine.csv").rename(tmp_path / "resources/datasets/mine.csv")
    planned = run_snakemake(tmp_path, "-n")
    assert planned.returncode == 0, planned.stderr[-2000:]
    assert "results/mine/computed/tables/tab4_system_means.csv" in planned_outputs(planned.stdout, "results/mine/")
    (tmp_path / "resources/datasets/mine.csv").write_text("edited\n")
    edited = run_snakemake(tmp_path, "-n")
    assert edited.returncode != 0 and "does not match the pinned" in edited.stdout + edited.stderr


def test_degenerate_data_plans_what_it_allows_and_says_why(tmp_path, hanna_mirror):
    """One system: a start-up line, and a plan without system level, grouped meta-evaluation or Fig. 8; a file
    where no criterion varies: one line naming the dataset and the fix, before any job."""
    solo = write_dataset(tmp_path, "solo.csv", rated_stories(prompts=6, systems=("solo",)))
    flat = write_dataset(tmp_path, "flat.csv", rated_stories(prompts=2).assign(fluency=3, plot_score=3, delight=3))
    make_workdir(tmp_path, **{"datasets.solo": solo})
    planned = run_snakemake(tmp_path, "-n", "dataset_solo")
    assert planned.returncode == 0, planned.stderr[-3000:]
    started = run_snakemake(tmp_path, "--cores", "1", "results/solo/data/texts.parquet")  # start-up notes: a run
    said = [line for line in started.stderr.splitlines() if line.startswith("storyeval: dataset solo:")]
    assert len(said) == 1 and "1 system ('solo'), fewer than the 3 a correlation needs" in said[0]
    assert pd.read_parquet(tmp_path / "results/solo/data/texts.parquet")["system"].isna().all()
    outputs = planned_outputs(planned.stdout, "results/solo/")
    assert "results/solo/computed/meta/perm_both_none.csv" in outputs
    assert not [name for name in outputs if "system" in name.split("/")[-1] or "item" in name.split("/")[-1]]
    make_workdir(tmp_path, **{"datasets.flat": flat})
    refused = run_snakemake(tmp_path, "-n", "dataset_flat")
    assert refused.returncode != 0
    assert "dataset flat: no criterion varies (every story has the same rating on Delight, Fluency, Plot); fix:" in (
        refused.stdout + refused.stderr)


# Two systems on every prompt: described as they are, paired comparisons, system means, violins, and the confound
# flags beside the pooled story-level correlations.
PAIR = "results/pair/computed"
PAIR_TARGETS = [f"{PAIR}/paired_accuracy.csv", f"{PAIR}/tables/paired_accuracy.md", f"{PAIR}/confounds.csv",
                f"{PAIR}/top_metrics.csv", f"{PAIR}/tables/tab4_system_means.csv",
                f"{PAIR}/tables/tab5_top3_pearson.csv", f"{PAIR}/report/about.html"]


def test_two_systems_get_paired_comparisons_and_confounds(tmp_path, hanna_mirror):
    entry = write_dataset(tmp_path, "pair.csv", rated_stories(prompts=10, systems=("alpha", "beta")))
    make_workdir(tmp_path, **{"datasets.pair": {**entry, "metrics": ["textstats", "bleu"]},
                              "stats.n_resamples": 200})
    planned = run_snakemake(tmp_path, "-n", "dataset_pair")
    assert planned.returncode == 0, planned.stderr[-3000:]
    outputs = planned_outputs(planned.stdout, f"{PAIR}/")
    assert {f"{PAIR}/figures/fig09_rating_violins.png", *PAIR_TARGETS} <= set(outputs)
    assert not [name for name in outputs if "bootstrap_f1" in name or "system_level" in name]
    result = run_snakemake(tmp_path, "--cores", "2", *PAIR_TARGETS)
    assert result.returncode == 0, result.stderr[-3000:]
    said = [line for line in result.stderr.splitlines() if line.startswith("storyeval: dataset pair:")]
    assert len(said) == 1 and "10 prompts, 2 systems ('alpha', 'beta')" in said[0]
    about = (tmp_path / f"{PAIR}/report/about.html").read_text()
    assert "written for 10 prompts by 2 systems" in about and "without prompts and systems" not in about

    paired = pd.read_csv(tmp_path / f"{PAIR}/paired_accuracy.csv")
    assert set(paired["criterion"]) == {"Fluency", "Plot", "Delight"} and (paired["pairs"] == 10).all()
    assert paired["accuracy"].between(0, 1).all() and (paired["calibrated"] >= paired["accuracy"]).all()
    assert (paired["calibrated_low"] <= paired["calibrated"]).all()
    assert "Tie-calibrated" in (tmp_path / f"{PAIR}/tables/paired_accuracy.md").read_text()
    means = pd.read_csv(tmp_path / f"{PAIR}/system_means.csv")
    assert set(means["system"]) == {"alpha", "beta"}

    # The planted quality rises from alpha to beta and beta writes longer stories: over the 20 pooled stories
    # Text length follows the ratings more than within each system; BLEU against the reference is mostly length.
    confounds = pd.read_csv(tmp_path / f"{PAIR}/confounds.csv")
    length = confounds.query("metric == 'text-length'")
    assert (length["systems"] == 2).all() and (length["pooled_r"] > length["within_r"] + 0.2).any()
    assert confounds.query("metric == 'bleu'")["length"].all()
    flagged = confounds.dropna(subset=["confound"])
    assert set(flagged["confound"]) == {"system", "length", "system; length"}
    assert set(flagged.loc[flagged["system"], "metric"]) >= {"text-length"}
    log = (tmp_path / "logs/confounds/pair/computed.log").read_text()
    assert "WARNING confound: text-length x Plot (spearman): pooled +0.8" in log
    top = pd.read_csv(tmp_path / f"{PAIR}/top_metrics.csv", keep_default_na=False)
    assert set(top.query("metric == 'bleu' and level == 'story'")["confound"]) <= {"length", "system; length"}
    assert "BLEU (89) [confound: length]" in (tmp_path / f"{PAIR}/tables/tab5_top3_pearson.csv").read_text()


def test_the_crowd_example_runs_as_shipped(tmp_path, hanna_mirror):
    """config/examples/crowd.yaml, one task file per criterion with its own workers: start-up checks every file's
    sha256, plans the dataset's target, and its ICC comes per criterion from the workers that exist, the choice
    in the job's log."""
    shutil.copytree(REPO / "config/examples/crowd", tmp_path / "config/examples/crowd")
    entry = yaml.safe_load((REPO / "config/examples/crowd.yaml").read_text())["datasets"]["crowd"]
    make_workdir(tmp_path, **{"datasets.crowd": entry})
    planned = run_snakemake(tmp_path, "-n", "dataset_crowd")
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert "results/crowd/computed/meta/perm_both_none.csv" in planned_outputs(planned.stdout, "results/crowd/")
    result = run_snakemake(tmp_path, "--cores", "2", "results/crowd/computed/tables/tab3_icc.csv")
    assert result.returncode == 0, result.stderr[-3000:]
    icc = pd.read_csv(tmp_path / "results/crowd/computed/icc.csv")
    assert list(icc["criterion"].unique()) == ["Coherence", "Fluency", "Interestingness"]
    assert icc["icc"].between(0.5, 1).all()  # planted: one quality a story, rater noise around it
    log = (tmp_path / "logs/icc/crowd/computed.log").read_text()
    assert "criterion 'Fluency': 3 ratings a story by " in log and "raters, as judge slots J1-J3" in log
    ratings = pd.read_csv(tmp_path / "results/crowd/data/rater_ratings.csv")
    assert len(ratings) == 100 * 3 * 3 and ratings.groupby("criterion")["rater"].nunique().between(9, 11).all()
    edited = tmp_path / "config/examples/crowd/fluency.csv"
    edited.write_text(edited.read_text().replace(",5\n", ",4\n", 1))
    refused = run_snakemake(tmp_path, "-n", "dataset_crowd")
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "datasets.crowd.files[1].path config/examples/crowd/fluency.csv" in said


def test_the_report_pages_say_nothing_of_hannas(own_run):
    """The pages of one's own dataset carry none of HANNA's conventions (its reference stories, the TACL judges,
    the † release, the paper's Williams numbers, the reanalyses of its scores) and define the levels as computed."""
    import re

    workdir, _, _ = own_run
    pages = (workdir / "results/mine/computed/report").glob("*.html")
    text = " ".join(re.sub(r'"data:[^"]*"', "", page.read_text(encoding="utf-8")) for page in pages)  # no base64
    for phrase in ["Human reference stories", "TACL", "†", "Houairi & Thiounn's Tab. 2", "of HANNA's scores",
                   "Fig. 27-32", "LLM judge"]:
        assert phrase not in text, phrase
    assert "one figure per criterion and level (story, system), each also for the representative subset" in text
    assert "Story level: for each prompt, the correlation over the systems' stories, averaged over the prompts" in text
