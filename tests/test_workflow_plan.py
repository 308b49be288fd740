"""storyeval.workflow: what the rule files plan (targets, input lists, parameters, start-up checks), on the real
config.yaml and its example layers, with the schema's defaults filled as the workflow fills them."""

from __future__ import annotations

import copy
from functools import cache

import pytest
import yaml
from snakemake.utils import update_config, validate

from storyeval import plan
from storyeval.config import ConfigSources
from storyeval.datasets import metric_names
from storyeval.errors import InputError
from storyeval.workflow import analysis, audit, judges, meta, metrics, shards, startup, storyer, targets
from storyeval.workflow.run import Run
from storyeval.workflow.sources import Pinned

from conftest import REPO
from workflow_helpers import set_dotted

NO_SOURCES = ConfigSources()


@cache
def _checked(*layers: str) -> dict:
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    for layer in layers:
        update_config(config, yaml.safe_load((REPO / layer).read_text()))
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"))  # the schema's defaults, as common.smk
    for name, entry in config["datasets"].items():
        entry["metrics"] = metric_names(entry, name)
    return config


def checked(*layers: str, **changes) -> dict:
    """config.yaml with `layers` (config files) over it, checked, then the dotted `changes` applied."""
    return set_dotted(copy.deepcopy(_checked(*layers)), changes)


def example_run(layout: str = "long", **changes) -> Run:
    """The run of config/examples/<layout>.yaml, its table fitted as at start-up (paths relative to REPO)."""
    config = checked(f"config/examples/{layout}.yaml", **changes)
    fitted, _ = startup.fit_tables(config, ["example"], Pinned(config))
    return Run(config, fitted=fitted)


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    monkeypatch.chdir(REPO)  # config paths are relative to the working directory, as in a run


def figure_names(paths: list[str], base: str) -> set[str]:
    """The figures of storyeval.plan among `paths` (not the meta-evaluation's and the unrated ranking's)."""
    names = {path.split("/")[-1].rsplit(".", 1)[0] for path in paths if path.startswith(f"{base}/figures/")}
    return names - {"meta_best", "system_ranking"}


def test_the_example_dataset_gets_its_analysis_and_meta_evaluation_and_nothing_of_another_dataset():
    run = example_run()
    wanted = targets.dataset_targets(run, "example")
    base = "results/example/computed"
    for path in ["scores.parquet", "correlations.csv", "williams_bh.csv", "meta/correlations.csv",
                 "meta/perm_both_system.csv", "tables/meta_best.md", "tables/tab6_borda.csv",
                 "tables/computation_times.md", "report/about.html"]:
        assert f"{base}/{path}" in wanted, path
    assert all(path.startswith(f"{base}/") for path in wanted)
    assert not any("hanna" in path or "williams_judges" in path for path in wanted)  # no judges configured
    # The rated example: the whole analysis, no unrated ranking; its figures are whole families of its own rules.
    assert "results/example/computed/tables/system_ranking.md" not in wanted
    rules = targets.figure_rules(run)
    own = [figures for name, (datasets, figures) in rules.items() if datasets is None or "example" in datasets]
    drawn = figure_names(wanted, base)
    assert drawn and drawn <= {name for figures in own for name in figures}
    for figures in own:
        assert set(figures) <= drawn or not set(figures) & drawn  # a family is drawn whole or not at all
    assert "williams_story_fluency" in drawn and not any(name.startswith("fig27") for name in drawn)


def test_the_default_run_plans_hannas_figures_the_unrated_set_and_the_learned_evaluator():
    run = Run(checked())
    assert run.text_datasets[:3] == ["hanna-llm", "wp200", "scary200"] and run.datasets[0] == "hanna"
    # a built-in kind that declares its released columns (TTCW's judges) plans no reanalysis of metrics it lacks
    assert not run.structure("ttcw", "released")["reanalyses"] and run.structure("ttcw", "released")["systems"]
    everything = targets.all_targets(run)
    assert len(everything) == len(set(everything))
    released = targets.released_targets(run)
    assert set(released) <= set(everything) and "resources/hanna/LICENSE" in released
    drawn = figure_names(released, "results/hanna/released")
    assert {f"fig{n:02d}" for n in range(1, 39)} <= {name[:5] for name in drawn}  # every numbered figure
    # hanna-llm has no human ratings: metric x metric heatmaps and the systems ranked by each metric, no analysis.
    assert not run.structure("hanna-llm", "computed")["ratings"]
    unrated = targets.dataset_targets(run, "hanna-llm")
    assert "results/hanna-llm/computed/tables/system_ranking.md" in unrated
    assert "results/hanna-llm/validation.csv" in unrated
    unrated_figures = plan.enabled_figures(run.config, [])
    assert {unrated_figures[name]["kind"] for name in figure_names(unrated, "results/hanna-llm/computed")} == {
        "metric_metric"}
    assert not any("/meta/" in path or "williams" in path for path in unrated)
    # The StoryER-kind datasets score metric storyer: the model, its evaluation and wp200's reasons.
    model = run.config["models"]["sentence_encoder"]["name"]
    assert storyer.evaluation_datasets(run) == ["wp200", "scary200"]
    assert set(storyer.targets(run)) == {
        f"results/storyer-model/{model}/model.safetensors",
        *[f"results/storyer-evaluation/{model}/evaluation.{ext}" for ext in ("csv", "md", "pdf", "png")],
        f"results/wp200/storyer/reasons-retrieved@{model}.csv"} <= set(everything)
    without_encoder = Run(checked(**{"models.sentence_encoder": None}))
    assert storyer.targets(without_encoder) == [] and "storyer" not in without_encoder.enabled_metrics("wp200")


def test_a_score_set_shape_decides_its_statistics_groupings_and_inputs():
    run = example_run("per_rater")
    shape = run.structure("example", "computed")
    assert shape["systems"] and shape["raters"] and shape["criteria"] == ["Fluency", "Plot", "Delight"]
    assert meta.groupings(run, "example", "computed") == ["none", "item", "system"]
    flat = example_run(**{"analysis.levels": ["story"]})
    assert flat.structure("example", "computed")["levels"] == ["story"]
    specs = plan.enabled_figures(flat.config, shape["criteria"])
    drawn = figure_names(targets.analysis_targets(flat, "example", "computed"), "results/example/computed")
    assert drawn and all(specs[name].get("level") != "system" for name in drawn)
    # HANNA's released scores are compared with its released LLM judges (meta.judges); a user's set is not.
    hanna = Run(checked())
    assert "judge_registry" in meta.inputs(hanna.config, "hanna", "released")
    assert "judge_registry" not in meta.inputs(hanna.config, "example", "computed")
    assert "results/hanna/released/meta/williams_judges.csv" in meta.targets(hanna, "hanna", "released")
    no_judges = Run(checked(**{"meta.judges": False}))
    assert "results/hanna/released/meta/williams_judges.csv" not in meta.targets(no_judges, "hanna", "released")
    # The exact per-story means: read where a switch asks for them (config/paper-exact.yaml).
    assert "ratings" not in analysis.correlation_inputs(hanna, "hanna", "released")
    exact = Run(checked("config/paper-exact.yaml"))
    assert analysis.correlation_inputs(exact, "hanna", "released")["ratings"] == "results/hanna/data/rater_ratings.csv"
    assert set(analysis.correlation_inputs(hanna, "hanna-llm", "computed")) == {"stories", "scores", "registry"}
    assert "workers" in analysis.icc_inputs(True, "hanna") and "workers" not in analysis.icc_inputs(True, "example")


def test_metric_jobs_follow_the_configured_model_roles():
    config = checked()
    enabled = metrics.enabled(config, "hanna-llm")
    assert "bleu" in enabled and "bertscore" in enabled and "bartscore" not in enabled  # models.seq2seq: null
    assert metrics.stem(config, "bertscore") == "bertscore@all-minilm-l6-v2" and metrics.stem(config, "bleu") == "bleu"
    assert metrics.encoder_model(config, "all-minilm-l6-v2")["role"] == "encoder"
    with pytest.raises(InputError, match="no configured encoder is named 'bert'"):
        metrics.encoder_model(config, "bert")
    assert "bertscore" in metrics.cache_metrics(config, "hanna-llm", "all-minilm-l6-v2")
    assert metrics.sentence_metrics(config, "hanna-llm", "all-minilm-l6-v2") == ["supert"]
    s3 = metrics.neural_inputs(Pinned(config), "hanna-llm", "s3", "glove")  # S3's models and their license
    assert {"s3_license", "s3_notice"} <= set(s3) and s3["texts"] == "results/hanna-llm/data/texts.parquet"
    assert metrics.neural_inputs(Pinned(config), "x", "bertscore", "m")["cache"] == \
        "results/x/computed/embeddings/m.safetensors"
    run = Run(config)
    merged = metrics.merge_inputs(run, "hanna-llm")
    assert len(merged["scores"]) == len(enabled) and merged["judge_scores"] == []


def test_the_slowest_reader_of_the_embedding_cache_starts_first():
    """Every cache reader has its place (a new one must be timed and placed); BaryScore, the end of the
    longest path, outranks the others; other neural metrics keep the base priority."""
    assert sorted(metrics.SLOWEST_FIRST) == sorted(metrics.CACHED)
    ranked = sorted(metrics.CACHED, key=lambda metric: metrics.neural_priority(metric, 3000), reverse=True)
    assert ranked[0] == "baryscore" and ranked[-1] == "bertscore"
    assert metrics.neural_priority("perplexity", 3000) == 3000 < metrics.neural_priority("bertscore", 3000)


def test_a_dataset_scored_by_judges_alone_gets_the_figure_rules_of_its_targets():
    """metrics: [] and a judge: the dataset's analysis is planned (its targets), so its Williams figures need rules
    of their own criteria (figure_rules follows analysed_sets)."""
    run = example_run("wide", **{"datasets.example.metrics": [],
                                 "judges.models": {"tiny": {"path": "tiny", "revision": None}},
                                 "judges.datasets": {"example": {"criteria": {"Fluency": "how fluent"}}}})
    assert run.enabled_metrics("example") == [] and run.judge_jobs("example")
    assert ("example", "computed") in run.analysed_sets
    drawn = figure_names(targets.dataset_targets(run, "example"), "results/example/computed")
    ruled = {name for datasets, figures in targets.figure_rules(run).values()
             if datasets is None or "example" in datasets for name in figures}
    assert "williams_story_fluency" in drawn and drawn <= ruled


def test_judge_jobs_their_files_and_validation():
    config = checked(**{"judges.models": {"tiny": {"path": "tiny", "revision": None, "released": "Beluga-13B"}},
                        "judges.datasets": {"hanna-llm": {}}})
    run = Run(config)
    assert run.judge_jobs("hanna-llm") and run.judge_jobs("wp200") == []
    scores = judges.outputs(run, "hanna-llm", "scores")
    assert scores == [f"results/hanna-llm/computed/judges/tiny@{template}.parquet"
                      for _, template in run.judge_jobs("hanna-llm")]
    assert scores == metrics.merge_inputs(run, "hanna-llm")["judge_scores"]
    assert judges.released_names(config) == {"tiny": "Beluga-13B"}
    assert judges.targets(run, "hanna-llm") == ["results/hanna-llm/judge_validation.csv"]
    assert "results/hanna-llm/computed/meta/williams_judges.csv" not in targets.dataset_targets(run, "hanna-llm")
    gathered = judges.gather_inputs("d", "j", "t", ["0000", "0001"])
    assert gathered["benchmarks"] == ["benchmarks/judges/d/j@t/0000.tsv", "benchmarks/judges/d/j@t/0001.tsv"]


def test_shard_inputs(tmp_path):
    for name in ("0001", "0000"):
        (tmp_path / f"{name}.parquet").touch()
    assert shards.names(tmp_path) == ["0000", "0001"]
    inputs = shards.metric_inputs("d", "m", "0001", ["0000", "0001"])
    assert inputs["cache"] == "results/d/computed/embeddings/m/0001.safetensors"
    assert len(inputs["shard_caches"]) == 2
    assert shards.gather_inputs("d", "bertscore", "m", ["0000"])["scores"] == [
        "results/d/computed/scores/shards/bertscore@m/0000.parquet"]


def test_pinned_files_and_start_up_checks(tmp_path):
    config = checked("config/examples/long.yaml")
    pinned = Pinned(config)
    assert pinned.path("hanna", "scores") == "resources/hanna/hanna_metric_scores.csv"
    assert pinned.url("storyer", "wp200").endswith("/data/story_correlation.pkl")
    assert pinned.entry("hanna", "LICENSE")["key"] == "license"
    with pytest.raises(InputError, match="no pinned hanna file is called 'nope.csv'"):
        pinned.entry("hanna", "nope.csv")
    assert pinned.text_source("example") == "config/examples/long.csv"
    assert pinned.text_source("wp200") == "resources/storyer/story_correlation.pkl"
    startup.check_local_tables(config, NO_SOURCES)
    moved = checked("config/examples/long.yaml", **{"datasets.example.path": str(tmp_path / "gone.csv")})
    with pytest.raises(InputError, match="datasets.example.path: no file"):
        startup.check_local_tables(moved, NO_SOURCES)
    assert startup.annotations_available(checked(**{"hanna.annotations": "skip"}), pinned) == (False, None)
    offline = checked(**{"data.allow_download": False, "data.mirrors": {}, "data.resources_dir": str(tmp_path)})
    used, note = startup.annotations_available(offline, Pinned(offline))
    assert not used and note.startswith("skipping the raw-annotation outputs")
    verified = {}
    with pytest.raises(InputError, match="in no mirror"):
        startup.verify_sources(Pinned(offline), [("hanna", "license")], verified, str(tmp_path / "recorded.tsv"))
    assert verified == {}


def test_the_learned_evaluator_is_checked_before_any_job():
    run = Run(checked())
    storyer.check(run, Pinned(run.config), NO_SOURCES)
    held_none = Run(checked(**{"storyer_evaluator.training.heldout_share": 0}))
    with pytest.raises(InputError, match="heldout_share is 0"):
        storyer.check(held_none, Pinned(held_none.config), NO_SOURCES)
    unknown = Run(checked(**{"storyer_evaluator.reasons.datasets": ["nope"]}))
    with pytest.raises(InputError, match=r"unknown datasets \['nope'\]"):
        storyer.check(unknown, Pinned(unknown.config), NO_SOURCES)
    vectors = storyer.reasons_inputs(run, "wp200", "m")["vectors"]
    assert vectors == "results/wp200/computed/embeddings/storyer@m.vectors.npz"
    assert "vectors" not in storyer.reasons_inputs(example_run(), "example", "m")  # its metrics leave storyer out


def test_the_audit_reads_the_papers_numbers_or_says_where_they_are_missing(tmp_path):
    config = checked()
    assert audit.inputs(config, REPO)["paper_values"] == "src/storyeval/printed_numbers.yaml"
    elsewhere = checked(**{"audit.paper_values": "nowhere.yaml"})
    with pytest.raises(InputError, match="audit.paper_values: nowhere.yaml is not there"):
        audit.inputs(elsewhere, REPO)


def test_figure_and_table_families_cover_every_enabled_figure_once():
    config = checked()
    rules = plan.figure_rules(config, [("hanna", plan.CRITERIA), ("example", ["Fluency", "Plot"])])
    assert "fig_williams_story" in rules and rules["fig_williams_story_example"][0] == ["example"]
    hanna = [name for datasets, figures in rules.values() if datasets in (None, ["hanna"]) for name in figures]
    assert sorted(hanna) == sorted(plan.enabled_figures(config, plan.CRITERIA))
    tables = plan.table_families(config)
    assert sorted(name for names in tables.values() for name in names) == sorted(plan.enabled_tables(config))
    story_only = checked(**{"analysis.levels": ["story"], "analysis.coefficients": ["kendall"]})
    assert "tab9_top5_system" not in plan.enabled_tables(story_only)
    assert "tab5_top3_pearson" not in plan.enabled_tables(story_only)
    assert plan.family_params(config, {"f": {"kind": "topk", "subset": False}}) == {
        "dpi": 200, "topk_coefficient": "spearman"}
    williams = {"w": {"kind": "williams", "subset": False}}
    assert plan.figure_inputs(checked(**{"figures.p_values": "bh"}), williams)["williams"].endswith("williams_bh.csv")


def test_a_table_of_several_files_is_pinned_and_fitted_file_by_file(tmp_path):
    """config/examples/crowd.yaml: each task file checked against its own sha256 and read as one table; files
    given by URL are fetched one by one into resources/datasets/<dataset>-<k>."""
    config = checked("config/examples/crowd.yaml")
    pinned = Pinned(config)
    tasks = [f"config/examples/crowd/{task}.csv" for task in ("coherence", "fluency", "interestingness")]
    assert pinned.text_sources("crowd") == tasks and pinned.text_sources("wp200") == [pinned.text_source("wp200")]
    startup.check_local_tables(config, NO_SOURCES)
    fitted, _ = startup.fit_tables(config, ["crowd"], pinned)
    assert fitted["crowd"].criteria == ("Coherence", "Fluency", "Interestingness") and fitted["crowd"].raters
    parts = config["datasets"]["crowd"]["files"]
    edited = checked("config/examples/crowd.yaml", **{"datasets.crowd.files": [
        parts[0], {**parts[1], "sha256": "0" * 64}, parts[2]]})
    with pytest.raises(InputError, match=r"datasets.crowd.files\[1\].path config/examples/crowd/fluency.csv: "
                                         r"sha256 9a4da036\S* does not match the pinned 0000"):
        startup.check_local_tables(edited, NO_SOURCES)
    urls = [{"url": f"https://example.org/t/{path.split('/')[-1]}", "sha256": part["sha256"],
             **{key: value for key, value in part.items() if key not in ("path", "sha256")}}
            for path, part in zip(tasks, parts)]
    fetched = Pinned(checked("config/examples/crowd.yaml", **{"datasets.crowd.files": urls}))
    assert fetched.text_sources("crowd") == [f"resources/datasets/crowd-{k}.csv" for k in (1, 2, 3)]
    assert fetched.entry("datasets", "crowd-2.csv")["url"] == "https://example.org/t/fluency.csv"


def test_a_long_file_without_listed_criteria_rates_every_value_said_at_start_up():
    config = checked("config/examples/long.yaml", **{"datasets.example.columns.criteria": None})
    fitted, notes = startup.fit_tables(config, ["example"], Pinned(config))
    assert fitted["example"].criteria == ("delight", "fluency", "plot_score") and fitted["example"].raters
    assert notes == ["dataset example: design 4 writers x 6 prompts, 1 story a cell; 5 raters, 3 a story (layout read "
                     "off the ids); criteria delight, fluency, plot_score (every value of the criterion column; "
                     "columns.criteria lists none)"]


def test_the_default_run_leaves_the_other_datasets_figures_to_their_own_target():
    """all_figures: false (the built-in datasets beside HANNA in config.yaml): rule all makes their statistics,
    tables, meta-evaluation and agreement, and rule dataset_<name> their figures too."""
    run = Run(checked())
    everything = targets.all_targets(run)
    own = targets.dataset_targets(run, "ttcw")
    figures = [path for path in own if "/figures/fig" in path]
    assert figures and not set(figures) & set(everything)
    assert {"results/ttcw/released/agreement.csv", "results/ttcw/released/figures/meta_best.png",
            "results/ttcw/released/report/about.html"} <= set(everything)
    assert any("results/hanna/released/figures/fig" in path for path in everything)  # HANNA's stay
