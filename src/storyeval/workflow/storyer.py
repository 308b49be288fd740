"""The learned StoryER-style evaluator (StoryER, Chen et al. 2022): trained once per encoder on StoryER's
released samples, scored as metric `storyer`, evaluated on the StoryER-kind datasets, explained (reasons)."""

from __future__ import annotations

from collections.abc import Mapping

from storyeval.config import ConfigSources
from storyeval.errors import InputError
from storyeval.learned.config import TrainConfig
from storyeval.metrics import catalog
from storyeval.workflow.metrics import STRING

ROLE = catalog.entry("storyer").resource[1]  # the model role of its encoder (models.sentence_encoder)
MODEL = "results/storyer-model/{encoder}"
MODEL_FILE = f"{MODEL}/model.safetensors"
EVALUATION = "results/storyer-evaluation/{model}"
REASONS = "results/{textset}/storyer/reasons-{method}@{model}.csv"
VECTORS = "results/{dataset}/computed/embeddings/storyer@{model}.vectors.npz"


def encoder(config: Mapping) -> Mapping | None:
    """The configured model of the evaluator's encoder role (name, path), or None: the metric is disabled."""
    return config["models"][ROLE]


def source(config: Mapping, name: str) -> tuple[str, str]:
    """(source, key) of the pinned training file `pairs` or `ratings` (config storyer_evaluator)."""
    return tuple(config["storyer_evaluator"][name].split("/"))


def datasets(run) -> list[str]:
    """The datasets that score metric storyer."""
    return [name for name in run.text_datasets if "storyer" in run.enabled_metrics(name)]


def evaluation_datasets(run) -> list[str]:
    """Datasets correlated in the evaluation: the StoryER-kind ones (one human score per story) scored by storyer."""
    return [name for name in datasets(run) if run.config["datasets"][name]["kind"] == "storyer"]


def pair_metrics(run) -> list[str]:
    """The model-free metrics of the evaluation datasets, also scored on the held-out pairs."""
    return list(dict.fromkeys(metric for name in evaluation_datasets(run) for metric in run.enabled_metrics(name)
                              if metric in STRING))


def reasons_seq2seq(config: Mapping) -> Mapping | None:
    """The seq2seq model that generates reasons: storyer_evaluator.reasons.seq2seq, else models.seq2seq."""
    return config["storyer_evaluator"]["reasons"]["seq2seq"] or config["models"]["seq2seq"]


def targets(run) -> list[str]:
    """The trained model, the evaluation (with StoryER-kind datasets) and the configured reasons; none when the
    encoder role is disabled or no dataset scores storyer."""
    model = encoder(run.config)
    if not (model and datasets(run)):
        return []
    found = [MODEL_FILE.format(encoder=model["name"])]
    if evaluation_datasets(run):
        base = EVALUATION.format(model=model["name"])
        found += [f"{base}/evaluation.{ext}" for ext in ("csv", "md", "pdf", "png")]
    reasons = run.config["storyer_evaluator"]["reasons"]
    found += [REASONS.format(textset=name, method=reasons["method"], model=model["name"])
              for name in reasons["datasets"] if name in run.text_datasets]
    return found


def check(run, pinned, sources: ConfigSources) -> None:
    """A valid training section, data the rules can read, reasons that can be produced; else one line naming the
    key (and the file that set it) and the fix."""
    config, section = run.config, run.config["storyer_evaluator"]

    def key(name):
        return f"{sources.origin(name)} {name}"

    try:
        training = TrainConfig.from_mapping(section["training"])
    except InputError as error:
        raise InputError(f"{key('storyer_evaluator.training')}: {error}") from None
    for name in ("pairs", "ratings"):
        pinned_source, pinned_key = source(config, name)
        if pinned_key not in pinned.files(pinned_source):
            raise InputError(f"{key(f'storyer_evaluator.{name}')}: no pinned file {pinned_key!r} under "
                             f"{pinned_source}.files; fix: add it or correct the key")
    if training.heldout_share == 0 and evaluation_datasets(run):
        raise InputError(f"{key('storyer_evaluator.training.heldout_share')} is 0: no held-out pairs to evaluate "
                         "on; fix: set it above 0 (default 0.2)")
    # use_prompt on a dataset without prompt text: refused or left out with the other metrics (selection)
    unknown = sorted(set(section["reasons"]["datasets"]) - set(config["datasets"]))
    if unknown:
        raise InputError(f"{key('storyer_evaluator.reasons.datasets')}: unknown datasets {unknown}; "
                         f"fix: use names under datasets ({', '.join(config['datasets'])})")
    if section["reasons"]["method"] == "generated" and not reasons_seq2seq(config):
        raise InputError(f"{key('storyer_evaluator.reasons.method')} is generated, but no seq2seq model is set; "
                         "fix: set storyer_evaluator.reasons.seq2seq or models.seq2seq, or use method retrieved")
    # Its pinned training files are checked when a target needs them (rule fetch's pinned entry).


def evaluation_inputs(run, pinned, model: str) -> dict:
    found = evaluation_datasets(run)
    return {
        "model": MODEL_FILE.format(encoder=model),
        "pairs": pinned.path(*source(run.config, "pairs")),
        "scores": [f"results/{name}/computed/scores.parquet" for name in found],
        "registries": [f"results/{name}/computed/metrics.csv" for name in found],
        "human": [f"results/{name}/data/human_scores.csv" for name in found],
    }


def reasons_inputs(run, textset: str, model: str) -> dict:
    """Texts and model; the story vectors of the dataset's storyer job when it has one (no second encoding)."""
    inputs = {"texts": f"results/{textset}/data/texts.parquet", "model": MODEL_FILE.format(encoder=model)}
    if textset in datasets(run):
        inputs["vectors"] = VECTORS.format(dataset=textset, model=model)
    return inputs


def metric_options(run) -> dict:
    """{metric: options} of the metrics scored on the held-out pairs."""
    return {name: run.config["metric_params"].get(name, {}) for name in pair_metrics(run)}
