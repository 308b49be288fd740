"""The metric jobs of a dataset: which metrics run (a neural one only with its model role configured), the
files each reads and writes, and what the neural ones are given."""

from __future__ import annotations

from collections.abc import Mapping

from storyeval.errors import InputError
from storyeval.metrics import catalog
from storyeval.workflow import judges

MODELLED = [name for name, entry in catalog.CATALOG.items() if entry.resource]  # scores named <metric>@<model>
LEARNED = [name for name in MODELLED if catalog.entry(name).resource[0] == "model_file"]  # trained: storyer.smk
NEURAL = [name for name in MODELLED if name not in LEARNED]  # rule neural_metric
STRING = [name for name in catalog.CATALOG if name not in MODELLED]  # rule metric
CACHED = [name for name in NEURAL if catalog.entry(name).resource[0] == "cache"]  # read the embedding cache
# The cache readers by their time on hanna-llm, one core (docs/performance.md: BaryScore 380 s, DepthScore 90,
# MoverScore 9, SUPERT 6, BERTScore 2.5): all become ready when the embedding pass ends.
SLOWEST_FIRST = ("baryscore", "depthscore", "moverscore", "supert", "bertscore")


def neural_priority(metric: str, base: int) -> int:
    """A neural job's priority: `base`, raised by the metric's place in SLOWEST_FIRST (the slowest highest), so
    that of the jobs ready at once the longest starts first (longest processing time first, Graham 1969) and
    BaryScore, the end of the longest path, waits for no shorter reader of the same cache."""
    return base + (len(SLOWEST_FIRST) - SLOWEST_FIRST.index(metric) if metric in SLOWEST_FIRST else 0)


def neural_model(config: Mapping, metric: str) -> Mapping | None:
    """The configured model (name, path) a neural metric reads, or None when its role is disabled."""
    return config["models"][catalog.entry(metric).resource[1]]


def stem(config: Mapping, metric: str) -> str:
    """File stem of a metric's scores: the model is part of a neural metric's name."""
    return f"{metric}@{neural_model(config, metric)['name']}" if metric in MODELLED else metric


def enabled(config: Mapping, dataset: str) -> list[str]:
    """The dataset's metrics whose model role is configured (config.yaml disables roles with no offline model)."""
    return [metric for metric in config["datasets"][dataset]["metrics"]
            if metric not in MODELLED or neural_model(config, metric)]


def texts(dataset: str) -> dict:
    return {"texts": f"results/{dataset}/data/texts.parquet"}


def neural_inputs(pinned, dataset: str, metric: str, model: str) -> dict:
    """The texts; the embedding cache of a cache-based metric; the pinned files a metric reads (S3's models),
    with the license and notice fetched beside the files they cover."""
    inputs = texts(dataset)
    if catalog.entry(metric).resource[0] == "cache":
        inputs["cache"] = f"results/{dataset}/computed/embeddings/{model}.safetensors"
    return inputs | {keyword: pinned.path(*file) for keyword, file in pinned_files(pinned, metric).items()}


def pinned_files(pinned, metric: str) -> dict[str, tuple[str, str]]:
    """{keyword: (source, key)} of the pinned files a metric reads (S3's models), with the license and notice of
    their source fetched beside the files they cover."""
    found = {}
    for keyword, file in catalog.entry(metric).pinned.items():
        source, key = file.split("/")[:2]
        found[keyword] = (source, key)
        extras = sorted({"license", "notice"} & set(pinned.files(source)))
        found |= {f"{source}_{extra}": (source, extra) for extra in extras}
    return found


def neural_resource(config: Mapping, metric: str) -> dict:
    """What a neural metric's compute() reads besides the texts: its keyword, the model's path and revision."""
    model = neural_model(config, metric)
    return {"keyword": catalog.entry(metric).resource[0], "path": model["path"], "revision": model.get("revision")}


def cache_metrics(config: Mapping, dataset: str, encoder: str) -> dict:
    """{metric: options} of the dataset's cache-based metrics that read `encoder` (the layers to cache)."""
    return {metric: config["metric_params"].get(metric, {}) for metric in enabled(config, dataset)
            if metric in CACHED and neural_model(config, metric)["name"] == encoder}


def sentence_metrics(config: Mapping, dataset: str, encoder: str) -> list[str]:
    """Cache-based metrics of the dataset that encode sentences on their own (SUPERT) with `encoder`."""
    return [metric for metric in enabled(config, dataset)
            if metric == "supert" and neural_model(config, metric)["name"] == encoder]


def encoder_model(config: Mapping, encoder: str) -> dict:
    """The configured encoder called `encoder`: its role, path, layers to cache and revision."""
    for role in ("encoder", "sentence_encoder"):
        model = config["models"][role]
        if model and model["name"] == encoder:
            layers = model.get("layers") or config["embedding"]["layers"]
            return {"role": role, "path": model["path"], "layers": layers, "revision": model.get("revision")}
    raise InputError(f"no configured encoder is named {encoder!r}; fix: set models.encoder.name in config")


def encoders(config: Mapping) -> list[str]:
    """The names of the configured encoders (sorted): the values of the `encoder` wildcard."""
    return sorted({model["name"] for role, model in config["models"].items()
                   if model and role in ("encoder", "sentence_encoder")})


def merge_inputs(run, dataset: str) -> dict:
    """Every metric's and judge job's scores of the dataset's computed set."""
    base = f"results/{dataset}/computed/scores"
    return {
        "scores": [f"{base}/{stem(run.config, metric)}.parquet" for metric in run.enabled_metrics(dataset)],
        "signatures": [f"{base}/{stem(run.config, metric)}.signature.json" for metric in run.enabled_metrics(dataset)],
        "judge_scores": judges.outputs(run, dataset, "scores"),
        "judge_registries": judges.outputs(run, dataset, "registry"),
        "judge_details": judges.outputs(run, dataset, "details"),
    }


def warnings_file(dataset: str, scoreset: str) -> list[str]:
    """The warnings of a computed score set's metric jobs (rule merge_scores; read by its About paragraph)."""
    return [f"results/{dataset}/computed/metric_warnings.csv"] if scoreset == "computed" else []


def benchmark_inputs(run, dataset: str) -> dict:
    """The benchmark files of the dataset's metric and judge jobs (the computation-times table), its texts."""
    stems = [stem(run.config, metric) for metric in run.enabled_metrics(dataset)]
    return {
        "benchmarks": [f"benchmarks/metrics/{dataset}/{name}.tsv" for name in stems]
        + [f"benchmarks/judges/{dataset}/{judge}@{template}.tsv" for judge, template in run.judge_jobs(dataset)],
        "texts": f"results/{dataset}/data/texts.parquet",
    }
