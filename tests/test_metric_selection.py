"""Which metrics a run computes, decided at start-up without trial and error: `metrics: all` takes every metric whose
texts, model and files this run has and lists the rest with their reasons; no `metrics:` key takes the model-free
default and says so; every named metric that cannot run is refused in one message."""

import copy
import hashlib
import re
import shutil

import pytest
import yaml

from storyeval.datasets import choose_metrics
from storyeval.errors import InputError
from storyeval.metrics import catalog
from storyeval.workflow import selection
from storyeval.workflow.sources import Pinned

from conftest import REPO, STORYER_MIRROR
from workflow_helpers import make_workdir, run_snakemake

# The export of a crowdsourcing task: prompt ids but no prompt texts, two systems, no reference.
EXPORT = {"kind": "table", "path": "export.csv", "sha256": "0" * 64,
          "columns": {"story_id": "id", "prompt_id": "prompt", "system": "model", "story": "text", "rater": "worker",
                      "criteria": {"Coherence": "coherence"}}}
MODEL_FREE = [name for name, entry in catalog.CATALOG.items() if not (entry.resource or entry.pinned)]


def run_config(tmp_path, layer: dict | None = None, **datasets) -> dict:
    """config.yaml with `layer` over it, the schema's defaults filled as at start-up, no mirror, no downloads,
    resources/ in tmp_path, and `datasets` as the only datasets."""
    from snakemake.utils import update_config, validate

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    update_config(config, copy.deepcopy(layer or {}))
    config["datasets"] = copy.deepcopy(datasets) or config["datasets"]
    config["data"] |= {"mirrors": {}, "allow_download": False, "resources_dir": str(tmp_path / "resources")}
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"))
    return config


def select(config, run=None) -> list[str]:
    from storyeval.config import ConfigSources

    pinned = Pinned(config)
    return selection.select_metrics(config, run or list(config["datasets"]), pinned, {},
                                    f"{pinned.resources}/recorded-checksums.tsv", ConfigSources())


@pytest.mark.parametrize("layout", ["long", "wide", "per_rater"])
def test_the_shipped_example_runs_its_list_and_says_nothing_of_it(tmp_path, layout):
    layer = yaml.safe_load((REPO / f"config/examples/{layout}.yaml").read_text())
    config = run_config(tmp_path, layer)
    notes = select(config, ["example"])
    assert config["datasets"]["example"]["metrics"] == layer["datasets"]["example"]["metrics"]
    assert not [note for note in notes if "example" in note]
    del layer["datasets"]["example"]["metrics"]  # the default: every model-free metric, its texts have them all
    config = run_config(tmp_path, layer)
    notes = select(config, ["example"])
    assert config["datasets"]["example"]["metrics"] == [name for name in MODEL_FREE if name != "textstats"]
    default = "dataset example: no metrics: key, so the default, the model-free metrics its texts allow"
    assert [note.split(" (")[0] for note in notes] == [default]


def test_all_takes_what_the_run_has_and_lists_the_rest_one_line_each(tmp_path):
    config = run_config(tmp_path, mine={**EXPORT, "metrics": "all"})
    notes = select(config)
    assert config["datasets"]["mine"]["metrics"] == ["textstats"]  # no model is configured but MiniLM's
    # One line a reason, naming the metrics it leaves out: every metric but textstats once.
    lines = {line.split(": ", 1)[1]: line.split(" left out (mine): ")[0].split(", ") for line in notes}
    assert sorted(sum(lines.values(), [])) == sorted(set(catalog.CATALOG) - {"textstats"})
    assert len(lines) == len(notes) and lines["no prompt text"] == ["datastats"]
    reference = [name for name, entry in catalog.CATALOG.items() if entry.needs == {"reference"}]
    assert lines["no reference text"] == reference
    assert lines["no reference or prompt text"] == ["bartscore", "blanc", "supert"]
    assert lines["no model, models.causal_lm is null (config/paper.yaml sets one)"] == ["perplexity"]
    # StoryER's training file: in no mirror, not fetched, no download: left out at start-up, never a fetch error
    missing = next(reason for reason, names in lines.items() if names == ["storyer"])
    assert missing.startswith("missing file train_rank_data_small.pkl: in no mirror (none configured) and "
                                       "https://raw.githubusercontent.com/sairin1202/StoryER/")


@pytest.mark.skipif(not (STORYER_MIRROR / "train_rank_data_small.pkl").is_file(), reason="no StoryER mirror")
@pytest.mark.parametrize("where", ["mirror", "fetched"])
def test_a_file_in_a_mirror_or_fetched_already_is_had(tmp_path, where):
    config = run_config(tmp_path, mine={**EXPORT, "metrics": "all"})
    if where == "mirror":
        config["data"]["mirrors"]["storyer"] = [str(STORYER_MIRROR)]
    else:
        (tmp_path / "resources/storyer").mkdir(parents=True)
        for name in ("train_rank_data_small.pkl", "train_rate_reason_data_small.json"):
            shutil.copy(STORYER_MIRROR / name, tmp_path / "resources/storyer" / name)
    notes = select(config)
    assert config["datasets"]["mine"]["metrics"] == ["storyer", "textstats"]
    assert not [note for note in notes if note.startswith("storyer")]
    (tmp_path / "resources/storyer").mkdir(parents=True, exist_ok=True)
    (tmp_path / "resources/storyer/train_rank_data_small.pkl").write_bytes(b"edited")  # a fetched copy is checked
    with pytest.raises(InputError, match="does not match the pinned"):
        select(run_config(tmp_path, mine={**EXPORT, "metrics": "all"}))


def test_no_metrics_key_takes_the_model_free_default_and_says_so(tmp_path):
    full = {**EXPORT, "columns": {**EXPORT["columns"], "prompt": "prompt_text", "reference": "human"}}
    config = run_config(tmp_path, mine=full, bare=EXPORT)
    notes = select(config)
    assert config["datasets"]["mine"]["metrics"] == [name for name in MODEL_FREE if name != "textstats"]
    assert config["datasets"]["bare"]["metrics"] == ["textstats"]
    said = [note for note in notes if note.startswith("dataset mine: no metrics: key, so the default")]
    assert len(said) == 1 and "(bleu, chrf, cider, datastats, meteor, rouge)" in said[0]
    assert "dataset bare: no metrics: key, so the default, the model-free metrics its texts allow (textstats)" in (
        " ".join(notes))
    assert not [note for note in notes if "left out (mine" in note]  # the default names no model or file to lack


def test_every_named_metric_that_cannot_run_is_refused_in_one_message(tmp_path):
    config = run_config(tmp_path, mine={**EXPORT, "metrics": ["textstats", "bleu", "datastats", "storyer"]},
                        other={**EXPORT, "metrics": ["bleurt", "textstats", "perplexity"]})
    with pytest.raises(InputError) as error:
        select(config)
    message = str(error.value)
    assert "\n" not in message and message.startswith("config.yaml datasets.mine.metrics, datasets.other.metrics: "
                                                      "4 named metric(s) cannot run: bleu on mine (no reference text)")
    assert "datastats on mine (writes column 'repetition-1' as textstats does, list one of them)" in message
    assert "storyer on mine (missing file train_rank" in message
    assert "bleurt on other (unknown metric" in message and "perplexity" not in message  # a null role: left out
    assert "; fix: remove them from the list" in message


def test_an_empty_list_is_said(tmp_path):
    config = run_config(tmp_path, mine={**EXPORT, "metrics": []})
    assert select(config) == ["dataset mine: its metrics list is empty, so no metric is computed on it (metrics: all, "
                              "or no metrics: key for the model-free default)"]


def test_a_null_role_in_a_list_is_left_out_with_a_line(tmp_path):
    config = run_config(tmp_path, mine={**EXPORT, "metrics": ["textstats", "perplexity"]})
    notes = select(config)
    assert config["datasets"]["mine"]["metrics"] == ["textstats"]
    assert notes == ["perplexity left out (mine): no model, models.causal_lm is null (config/paper.yaml sets one)"]


def test_use_prompt_needs_prompt_text(tmp_path):
    config = run_config(tmp_path, {"storyer_evaluator": {"training": {"use_prompt": True}}},
                        mine={**EXPORT, "metrics": ["textstats", "storyer"]})
    with pytest.raises(InputError, match=r"storyer on mine \(no prompt text \(storyer_evaluator.training.use_prompt"):
        select(config)


def test_a_model_this_machine_lacks_is_left_out(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    models = {"models": {"causal_lm": {"name": "gpt2", "path": "gpt2"},
                         "seq2seq": {"name": "bart", "path": str(tmp_path / "nowhere/bart")}}}
    config = run_config(tmp_path, models, mine={**EXPORT, "metrics": "all"})
    lines = select(config)
    assert ("perplexity left out (mine): no model: hub id gpt2 (models.causal_lm) is not in the local Hugging Face "
            "cache and HF_HUB_OFFLINE is set") in lines
    assert selection.missing_model(config, "bartscore") == f"no model: models.seq2seq.path {tmp_path}/nowhere/bart " \
                                                          "does not exist"
    assert selection.missing_model(config, "bertscore") is None  # the bundled MiniLM


def test_without_the_run_the_texts_decide():
    """The pure choice (no models or files checked), as tests and the Python API read a config."""
    entry = {**EXPORT, "metrics": "all"}
    assert choose_metrics(entry).metrics == ["perplexity", "storyer", "textstats"]
    assert choose_metrics({**EXPORT, "metrics": ["bleu", "textstats"]}).refused == {"bleu": "no reference text"}
    prompted = {**EXPORT, "columns": {**EXPORT["columns"], "prompt": "prompt_text"}}
    assert choose_metrics({**prompted, "metrics": ["datastats", "textstats"]}).refused == {"textstats": (
        "writes column 'repetition-1' as datastats does, list one of them; datastats computes its columns and more")}


def test_a_run_says_what_it_left_out_and_runs_offline(tmp_path, hanna_mirror):
    """`metrics: all` on an export with no reference or prompt text, from no mirror and no network: the start-up
    lines, and a run of the metrics it has, with no fetch."""
    from storyeval.examples import rated_stories

    frame = rated_stories(prompts=4, systems=("alpha", "beta")).drop(columns=["prompt", "human_story"])
    frame = frame.assign(prompt=frame["id"].str.split("-").str[0])
    frame.to_csv(tmp_path / "export.csv", index=False)
    entry = {"kind": "table", "path": "export.csv", "sha256": hashlib.sha256((tmp_path / "export.csv").read_bytes())
             .hexdigest(), "columns": {"story_id": "id", "prompt_id": "prompt", "system": "model", "story": "text",
                                       "rater": "annotator", "criteria": {"Fluency": "fluency"}}}
    nowhere = {f"data.mirrors.{source}": [str(tmp_path / "no-mirror")] for source in ("hanna", "storyer", "s3")}
    make_workdir(tmp_path, **{"datasets.mine": {**entry, "metrics": "all"}, **nowhere, "data.allow_download": False})
    result = run_snakemake(tmp_path, "--cores", "1", "results/mine/computed/metrics.csv")
    assert result.returncode == 0, result.stderr[-3000:]
    said = [line for line in result.stderr.splitlines() if line.startswith("storyeval: ")]
    assert ("storyeval: storyer left out (mine): missing file train_rank_data_small.pkl: in no mirror"
            in "\n".join(said))
    # one line per group of metrics and datasets; config.yaml's other datasets share the reasons, but only the
    # asked dataset's jobs are in this run, so only it is named
    assert "storyeval: dataset mine: metrics: all" not in "\n".join(said)  # nothing to load: perplexity has no model
    lacking = re.compile(r"storyeval: (?P<metrics>.*) left out \((?P<datasets>[^)]*)\): no reference text")
    named = {metric: set(match["datasets"].split(", ")) for match in map(lacking.fullmatch, said) if match
             for metric in match["metrics"].split(", ")}
    assert sorted(named) == ["baryscore", "bertscore", "bleu", "chrf", "cider", "depthscore", "infolm", "meteor",
                             "moverscore", "rouge", "rouge-we", "s3", "summaqa"]
    assert all(datasets == {"mine"} for datasets in named.values()), said
    assert not (tmp_path / "resources").exists()
    make_workdir(tmp_path, **{"datasets.mine": entry, **nowhere, "data.allow_download": False})
    page = "results/mine/computed/report/tab8_top5_story.html"
    result = run_snakemake(tmp_path, "--cores", "1", "results/mine/computed/metrics.csv", page)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "storyeval: dataset mine: no metrics: key, so the default, the model-free metrics its texts allow " \
           "(textstats)" in result.stderr
    # Two systems: one group. The caption defines the story level as it was computed, and nothing of HANNA's.
    caption = (tmp_path / page).read_text(encoding="utf-8").split('<p class="caption">')[1].split("</p>")[0]
    assert "Story level: the correlation over all stories at once (these tables pool" in caption
    assert "averaged over the prompts" not in caption and "Tab. 9" not in caption and "Human reference" not in caption
