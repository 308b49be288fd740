"""End-to-end: the real workflow on the released HANNA files, and its refusals of bad input."""

import filecmp
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_report_pages import HANNA_SHAPE, assert_pages_tell_the_truth

from storyeval.datasets import metric_names
from storyeval.workflow import jobserver

from conftest import REPO
from workflow_helpers import comment_appended, copy_checkout, copy_mirror, make_workdir, run_snakemake

# The default config, except that neural metrics run on a 3-prompt slice of hanna-llm
# (28 stories) instead of all 672: the full neural pass is `make reproduce`'s job.
STRING_METRICS = ["bleu", "rouge", "meteor", "chrf", "cider", "datastats"]
NEURAL_METRICS = ["bertscore", "moverscore", "baryscore", "depthscore", "supert"]
# The learned evaluator trains for minutes: tests/test_workflow_storyer.py runs it on a tiny configuration.
WITHOUT_STORYER = {f"datasets.{name}.metrics": [metric for metric in metric_names(dataset, name) if metric != "storyer"]
                   for name, dataset in yaml.safe_load((REPO / "config.yaml").read_text())["datasets"].items()}
# The built-in datasets beside HANNA: tests/test_dataset_<kind>.py test each kind on its real files, and
# tests/test_workflow_datasets.py (slow) runs TTCW's rules, the datasets' audit and the benchmark.
OTHER_BUILT_IN = ("union-roc", "union-wp", "deltascore-roc", "deltascore-wp", "pds", "ttcw")
TEST_DATASETS = {
    **{key: value for key, value in WITHOUT_STORYER.items() if key.split(".")[1] not in OTHER_BUILT_IN},
    "datasets.hanna-llm.metrics": STRING_METRICS,
    "meta.n_permutations": 100,  # the meta rules' own test runs 1,000; here they only need to finish
    "meta.n_resamples": 100,
    # a quarter of the default's pixels, every figure drawn and encoded all the same; the other workflow tests
    # (tests/test_own_data.py, the docs' snippets) draw at the default 200
    "figures.dpi": 100,
    "datasets.hanna-llm-mini": {
        "kind": "hanna-llm",
        "file": "hanna/stories_llm",
        "max_prompts": 3,
        "metrics": NEURAL_METRICS,
    },
}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, hanna_mirror):
    workdir = make_workdir(tmp_path_factory.mktemp("run"), OTHER_BUILT_IN, **TEST_DATASETS)
    result = run_snakemake(workdir, "--cores", "2", **{jobserver.ACCOUNTING: str(workdir / "handed_off.tsv")})
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


def test_light_jobs_ran_in_the_job_server(finished_run):
    """The run's analysis, table and figure jobs ran in its job server (storyeval.workflow.jobserver), sent there
    by Snakemake itself (storyeval.workflow.scriptjobs); the neural ones that import torch ran in their own
    interpreters."""
    handed_off = pd.read_csv(finished_run / "handed_off.tsv", sep="\t", names=["rule", "wildcards", "cpu", "own"])
    rules = set(handed_off.rule)
    assert {"correlations", "williams", "tables_common", "fig_williams_story", "metric", "merge_scores",
            "neural_metric"} <= rules
    assert "embed_texts" not in rules
    assert (handed_off.own == 0).all()  # no job had an interpreter of its own to hand off from


def test_outputs_hold_the_papers_numbers(finished_run):
    base = finished_run / "results/hanna/released"
    borda = pd.read_csv(base / "borda.csv")
    story = borda[borda.level == "story"].sort_values("rank").head(3)
    assert story["label"].tolist() == ["chrF", "S3-Pyramid", "ROUGE-1 Recall"]  # HANNA Tab. 6's story top 3
    # HANNA's counts are 1237, 1198, 1186 by |r| (tests/test_ranking.py, the paper-exact profile); the default ranks
    # by r after orientation, where a distance or repetition share that rises with quality no longer scores high
    assert story["borda"].tolist() == pytest.approx([1240, 1204, 1189])
    correlations = pd.read_csv(base / "correlations.csv")
    assert set(correlations.columns) >= {"level", "coefficient", "x", "y", "r", "n"}
    # 2 levels x 3 coefficients x (6x6 + 72x6 + 72x72)
    assert len(correlations) == 6 * (36 + 432 + 5184)
    means = pd.read_csv(base / "system_means.csv")
    assert set(means.loc[means.best, "system"]) == {"Human"}
    top = pd.read_csv(base / "top_metrics.csv")
    assert set(top.columns) >= {"level", "coefficient", "criterion", "rank", "metric", "label", "ranked_r"}


def test_every_figure_and_table_rendered(finished_run):
    base = finished_run / "results/hanna/released"
    figures = sorted(path.stem for path in (base / "figures").glob("fig*.png"))  # the papers' figures
    assert (base / "figures/meta_best.png").exists() and (base / "report/meta_best.html").exists()
    numbers = sorted({name[3:5] for name in figures})
    assert numbers == [f"{n:02d}" for n in range(1, 39)]  # every HANNA figure
    assert len([name for name in figures if "williams" in name]) == 24  # 27-38, all metrics and subset
    assert all((base / "figures" / f"{name}.pdf").stat().st_size > 1000 for name in figures)
    assert sorted(path.stem for path in (base / "report").glob("fig*.html")) == figures  # a report page each
    tables = {path.name for path in (base / "tables").iterdir()}
    assert {f"tab{n}" for n in [3, 4, 5, 6, 8, 9]} <= {name.split("_")[0] for name in tables}
    assert {
        "kemeny_consensus.md",
        "reanalysis1_sum_of_ranks.md",
        "reanalysis2_top_k.md",
        "reanalysis2_coefficient_agreement.md",
    } <= tables


def test_report_pages_tell_the_truth(finished_run):
    from storyeval.plots.pages import caption_facts

    judged = yaml.safe_load((REPO / "config.yaml").read_text())["meta"]["judges"]
    for dataset, scoreset in (("hanna", "released"), ("hanna-llm", "computed")):
        released = scoreset == "released"
        # hanna-llm's stories are LLMs', not HANNA's: its pages follow HANNA's layout without the paper's name
        facts = caption_facts(HANNA_SHAPE, True, released, "released" * (released and bool(judged)),
                              ["none", "item", "system"], paper=released)
        assert_pages_tell_the_truth(finished_run / "results" / dataset / scoreset,
                                    {"dataset": dataset, "scoreset": scoreset}, facts)


def test_rerun_gives_identical_tables(finished_run, tmp_path):
    """Same config, another directory, --cores 1 instead of 2: byte-identical tables, resampling included."""
    workdir = make_workdir(tmp_path / "again", OTHER_BUILT_IN, **TEST_DATASETS)
    base = "results/hanna/released"
    targets = [
        f"{base}/{name}"
        for name in [
            "correlations.csv",
            "borda.csv",
            "bootstrap_f1.csv",
            "correlation_ci.csv",
            "williams.csv",
            "kemeny.csv",
            "topk.csv",
            "icc.csv",
            "tables/tab4_system_means.csv",
            "tables/tab8_top5_story.md",
        ]
    ]
    result = run_snakemake(workdir, "--cores", "1", *targets)
    assert result.returncode == 0, result.stderr[-2000:]
    for target in targets:
        assert filecmp.cmp(finished_run / target, workdir / target, shallow=False), target


def test_williams_f1_intervals_kemeny_icc_topk_on_released_scores(finished_run):
    base = finished_run / "results/hanna/released"
    williams = pd.read_csv(base / "williams.csv")
    assert set(williams.columns) >= {"level", "criterion", "metric_a", "metric_b", "r_a", "r_b", "r_ab", "n", "t", "p"}
    assert len(williams) == 2 * 6 * 72 * 71
    assert williams.loc[williams.level == "system", "n"].eq(10).all()
    f1 = pd.read_csv(base / "bootstrap_f1.csv")
    assert len(f1) == 72 * 6 and f1["f1"].between(0, 1).all()
    intervals = pd.read_csv(base / "correlation_ci.csv")
    assert (intervals["ci_low"] <= intervals["ci_high"]).all()
    summary = pd.read_csv(base / "kemeny_summary.csv").set_index("level")
    assert (summary["kemeny_score"] <= summary["borda_score"]).all()
    icc = pd.read_csv(base / "icc.csv")
    assert set(icc["form"]) == {"ICC2k", "ICC1k"} and icc["layout"].str.contains("positions").all()
    topk = pd.read_csv(base / "topk.csv")
    assert sorted(topk["k"].unique()) == list(range(4, 11))


def test_system_rank_correlations_see_the_exact_ties_of_the_ratings(finished_run):
    """Every system-level Spearman and Kendall of the default run equals scipy's on exact system means: the humans'
    from the raters' integer ratings in fractions (HANNA's Complexity has two real ties), the metrics' as exact
    sums of their floats; no file between the ratings and the statistic may round a tie apart."""
    from fractions import Fraction

    from scipy import stats

    data, base = finished_run / "results/hanna/data", finished_run / "results/hanna/released"
    stories = pd.read_csv(data / "stories.csv")
    stories = stories[stories["system"] != "Human"]
    ratings = pd.read_csv(data / "rater_ratings.csv").merge(stories, on="story_id")
    assert ratings["rating"].eq(ratings["rating"].round()).all()
    per_story = ratings.groupby(["system", "criterion", "story_id"])["rating"].agg(
        lambda v: Fraction(int(v.sum()), len(v)))
    human = per_story.groupby(["system", "criterion"]).agg(lambda v: float(sum(v, Fraction(0)) / len(v))).unstack()
    scores = pd.read_parquet(base / "scores.parquet").merge(stories, on="story_id")
    metric = scores.groupby(["system", "metric"])["value"].agg(
        lambda v: float(sum(map(Fraction, v), Fraction(0)) / len(v))).unstack()
    assert human["Complexity"].duplicated().sum() == 2  # BertGeneration = RoBERTa, GPT = TD-VAE
    table = pd.read_csv(base / "correlations.csv")
    table = table[(table["kind"] == "metric_criterion") & (table["level"] == "system")]
    table = table.set_index(["coefficient", "x", "y"])
    checked = 0
    for coefficient, function in (("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        for criterion in human.columns:
            for name in metric.columns:
                expected = function(metric[name], human.loc[metric.index, criterion]).statistic
                assert table.loc[(coefficient, name, criterion), "r"] == pytest.approx(expected, abs=1e-9, nan_ok=True)
                checked += 1
    assert checked == 2 * 6 * 72


def test_report_builds(finished_run):
    """The report builds without an error or warning line, shows every figure once (its page) and every table."""
    result = run_snakemake(finished_run, "--report", "report.html")
    assert result.returncode == 0, result.stderr[-2000:]
    complaints = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if any(word in line for word in ("ERROR", "WARNING", "Warning", "warning"))
    ]
    assert not complaints, complaints[:5]
    html = (finished_run / "report.html").read_text()
    base = "results/hanna/released"
    for name in ["fig14_metric_criteria_story_kendall", "fig27_williams_story_relevance", "tab6_borda"]:
        assert html.count(f'"{base}/report/{name}.html": {{"name"') == 1, name  # one result record
    assert f"{base}/figures/fig14_metric_criteria_story_kendall.png" not in html  # shown through its page
    assert "storyeval: which automatic metrics agree" in html  # the landing text


def test_dry_run_and_lint(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path)
    dry = run_snakemake(workdir, "-n")
    assert dry.returncode == 0 and "normalise_hanna" in dry.stdout
    lint = run_snakemake(workdir, "--lint")
    # The rule files hold rules only (their planning: storyeval.workflow); common.smk's functions, no rules.
    text = lint.stdout + lint.stderr  # Snakemake writes its lints to stderr
    assert not re.findall(r"^\s+\* (.+?):$", text, re.M), text[-3000:]
    assert "Lints for rule" not in text and "Traceback" not in text, text[-3000:]
    # start-up notes are said before the job statistics of a run or a dry run (each once), not by a lint
    said = [line for line in (dry.stdout + dry.stderr).splitlines() if line.startswith("storyeval:")]
    assert said and len(said) == len(set(said)), said
    assert "storyeval:" not in lint.stdout + lint.stderr


def _refused(result, workdir, *phrases):
    assert result.returncode != 0
    text = result.stdout + result.stderr
    for phrase in phrases:
        assert phrase in text, text[-3000:]
    assert not list((workdir / "results").rglob("*.csv")) if (workdir / "results").exists() else True


def test_every_paper_figure_and_table_has_a_rule_that_names_it(tmp_path, hanna_mirror):
    """`snakemake --list-rules` names each of HANNA's 38 figures and its tables beside the rule that makes it."""
    listed = run_snakemake(make_workdir(tmp_path), "--list-rules")
    assert listed.returncode == 0, listed.stderr[-2000:]
    for number in [f"fig{n:02d}_" for n in range(1, 39)] + [f"tab{n}_" for n in (3, 4, 5, 6, 8, 9)]:
        assert re.search(rf"^(fig|tables)_\S+ \((draws|writes) .*{number}", listed.stdout, re.M), number
    assert re.search(r"^dataset_hanna-llm \(everything of dataset hanna-llm", listed.stdout, re.M)


def test_rejected_config_key(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path, **{"analysis.top_kk": 5})
    _refused(run_snakemake(workdir, "--cores", "1"), workdir, "config rejected", "top_kk")


def test_unknown_metric_name(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path, **{"figures.representative_metrics": ["chrF", "BLEURT"]})
    _refused(run_snakemake(workdir, "--cores", "1"), workdir, "unknown metric 'BLEURT'")


def test_checksum_mismatch(tmp_path, hanna_mirror):
    mirror = copy_mirror(tmp_path)
    with open(mirror / "hanna_metric_scores.csv", "a") as handle:
        handle.write("\n")
    workdir = make_workdir(tmp_path / "work", **{"data.mirrors.hanna": [str(mirror)]})
    _refused(run_snakemake(workdir, "--cores", "1"), workdir, "does not match the pinned")


def test_no_mirror_and_no_network(tmp_path):
    workdir = make_workdir(
        tmp_path, **{"data.mirrors.hanna": [str(tmp_path / "empty")], "hanna.base_url": "http://127.0.0.1:9"}
    )
    _refused(run_snakemake(workdir, "--cores", "1"), workdir, "in no mirror", "fix:")


def test_text_metrics_computed_and_validated(finished_run):
    validation = pd.read_csv(finished_run / "results/hanna-llm/validation.csv").set_index("metric")
    free = ["text-length", "coverage", "density", "compression"] + [
        f"{kind}-{n}" for kind in ("novelty", "repetition") for n in (1, 2, 3)
    ]
    assert (validation.loc[free, "share_exact"] >= 0.95).all()
    assert (validation.loc[free, "n"] == 96).all()
    scores = pd.read_parquet(finished_run / "results/hanna-llm/computed/scores.parquet")
    assert scores["story_id"].nunique() == 672
    signature = (finished_run / "results/hanna-llm/computed/scores/rouge.signature.json").read_text()
    assert "versions" in signature and "max_order" in signature
    times = pd.read_csv(finished_run / "results/hanna-llm/computed/tables/computation_times.csv")
    assert set(times["metric"]) == {"bleu", "rouge", "meteor", "chrf", "cider", "datastats"}


def test_wp200_correlations_are_over_stories(finished_run):
    from scipy.stats import spearmanr

    base = finished_run / "results/wp200"
    correlations = pd.read_csv(base / "computed/correlations.csv")
    row = correlations.query("kind == 'metric_criterion' and coefficient == 'spearman' and x == 'text-length'").iloc[0]
    scores = pd.read_parquet(base / "computed/scores.parquet").query("metric == 'text-length'")
    human = pd.read_csv(base / "data/human_scores.csv").merge(scores, on="story_id")
    assert row["items"] == 200 and row["level"] == "story"
    assert row["r"] == pytest.approx(
        spearmanr(human["value"], human["score"]).statistic, abs=1e-9
    )  # CSV keeps 10 digits
    assert set(correlations["level"]) == {"story"}


@pytest.fixture(scope="module")
def own_checkout(tmp_path_factory):
    """A copy of the checkout whose modules the tests below edit: an edit of the one other tests run (pytest -n)
    would change the digests their runs compute meanwhile, and rerun their jobs."""
    return copy_checkout(tmp_path_factory.mktemp("checkout") / "repo")


def planned_after_editing(run_dir: Path, checkout: Path, module: Path) -> dict[str, int]:
    """The jobs per rule that a dry run of `checkout`'s workflow plans after a comment is appended to its copy of
    the package's `module` (restored after)."""
    import storyeval

    with comment_appended(checkout / "src" / module.relative_to(Path(storyeval.__file__).parents[1])):
        dry = run_snakemake(run_dir, "-n", "--quiet", "rules", repository=checkout)
    assert dry.returncode == 0, dry.stderr[-2000:]
    return {
        line.split()[0]: int(line.split()[1])
        for line in (dry.stdout + dry.stderr).splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }


def test_touching_a_metric_module_reruns_that_metric_and_merge_only(finished_run, own_checkout):
    """Editing chrf's module reruns chrf and what depends on it, and no other metric."""
    from storyeval.metrics import catalog
    from storyeval.sources import module_file

    counts = planned_after_editing(finished_run, own_checkout, module_file(catalog.entry("chrf").module))
    assert counts.get("metric") == 1, counts  # chrf on hanna-llm, no other metric
    assert counts.get("merge_scores") == 1, counts
    assert "validate_against_released" in counts


def test_touching_a_helper_module_reruns_the_metrics_that_import_it(finished_run, own_checkout):
    """Editing the barycenter's network simplex (imported by storyeval.neural.ot) reruns BaryScore only."""
    from storyeval.neural import simplex

    counts = planned_after_editing(finished_run, own_checkout, Path(simplex.__file__))
    assert counts.get("neural_metric") == 1 and "metric" not in counts and "embed_texts" not in counts, counts


def test_neural_metrics_identities_on_the_human_row(finished_run):
    """Story = reference on the Human system: BERTScore 1, BaryScore 0, DepthScore 0."""
    scores = pd.read_parquet(finished_run / "results/hanna-llm-mini/computed/scores.parquet")
    human = scores[scores["story_id"].str.endswith("-human")].pivot(index="story_id", columns="metric", values="value")
    assert len(human) == 3
    assert human["bertscore-f1"].to_numpy() == pytest.approx(1.0, abs=1e-5)
    assert human["baryscore-w"].to_numpy() == pytest.approx(0.0, abs=1e-4)
    assert human["depthscore"].to_numpy() == pytest.approx(0.0, abs=1e-4)
    others = scores[~scores["story_id"].str.endswith("-human") & (scores["metric"] == "bertscore-f1")]
    assert len(others) == 18 and (others["value"] < 0.99).all()
    cache = finished_run / "results/hanna-llm-mini/computed/embeddings/all-minilm-l6-v2.safetensors"
    assert cache.stat().st_size > 0
    signatures = list(
        (finished_run / "results/hanna-llm-mini/computed/scores").glob("*@all-minilm-l6-v2.signature.json")
    )
    assert len(signatures) == len(NEURAL_METRICS)


def test_unrated_set_ranks_its_systems_and_correlates_its_metrics(finished_run):
    """hanna-llm has no human ratings: metric x metric heatmaps and the LLM systems ranked by each metric."""
    base = finished_run / "results/hanna-llm-mini/computed"
    ranking = pd.read_csv(base / "system_ranking.csv")
    systems = {"Llama-7b", "Mistral-7b", "Beluga-13b", "OrcaPlatypus-13b", "LlamaInstruct-30b", "Platypus2-70b"}
    assert set(ranking["system"]) == systems  # the Human reference is not ranked
    per_metric = ranking[ranking["family"] != "consensus"]
    assert set(per_metric["metric"]) == set(pd.read_csv(base / "metrics.csv")["slug"])
    assert per_metric.groupby("metric")["rank"].sum().round(9).eq(21).all()  # 1 + ... + 6, ties averaged
    assert {"borda-all", "borda-embedding"} <= set(ranking["metric"])
    correlations = pd.read_csv(base / "correlations.csv")
    assert set(correlations["kind"]) == {"metric_metric"}
    for name in ["system_ranking", "fig20_metric_metric_story_kendall", "fig21_metric_metric_system_kendall"]:
        assert (base / "figures" / f"{name}.png").stat().st_size > 1000, name
    assert (base / "tables/system_ranking.md").read_text().count("Borda consensus") >= 2


def hub_cache(folder: Path, model_ids) -> Path:
    """A Hugging Face hub cache that holds each model's config.json at a made-up commit (no weights): what start-up
    looks for before it plans a model's metrics."""
    for model_id in set(model_ids):
        repo = folder / f"models--{model_id.replace('/', '--')}"
        (repo / "snapshots/0000000000000000000000000000000000000000").mkdir(parents=True)
        (repo / "snapshots/0000000000000000000000000000000000000000/config.json").write_text("{}")
        (repo / "refs").mkdir()
        (repo / "refs/main").write_text("0000000000000000000000000000000000000000")
    return folder


def test_paper_config_plans_every_model_metric(tmp_path, hanna_mirror, monkeypatch):
    """config/paper.yaml validates and schedules the paper's models where the machine has them (a dry run on a hub
    cache of config files: no hub here), and without them leaves their metrics out (tests/test_metric_selection.py:
    the start-up lines)."""
    workdir = make_workdir(tmp_path)
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    args = ["-n", "--configfile", str(workdir / "config.yaml"), str(REPO / "config/paper.yaml")]
    bare = run_snakemake(workdir, *args)
    assert bare.returncode == 0, bare.stderr[-2000:]
    assert "bartscore@bart-large-cnn.parquet" not in bare.stdout  # left out: start-up says why when a run starts
    hub_ids = [model["path"] for model in paper["models"].values() if isinstance(model, dict) and "path" in model]
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache(tmp_path / "hub", hub_ids)))
    dry = run_snakemake(workdir, *args)
    assert dry.returncode == 0, dry.stderr[-2000:]
    for stem in [
        "bartscore@bart-large-cnn",
        "infolm@bert-base-uncased",
        "blanc@bert-base-uncased",
        "perplexity@gpt2",
        "bertscore@bert-base-uncased",
        "supert@bert-large-nli-stsb-mean-tokens",
        "summaqa@bert-large-squad",
    ]:
        assert f"{stem}.parquet" in dry.stdout, stem
    assert "embeddings/bert-base-uncased.safetensors" in dry.stdout


def test_touching_a_statistics_module_reruns_the_rules_whose_scripts_import_it(finished_run, own_checkout):
    """Analysis rules carry the digests of their scripts' storyeval imports: Williams tests rerun, metrics don't."""
    from storyeval.stats import williams

    counts = planned_after_editing(finished_run, own_checkout, Path(williams.__file__))
    assert counts.get("williams", 0) >= 1 and "metric" not in counts and "neural_metric" not in counts, counts
