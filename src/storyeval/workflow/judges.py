"""The LLM judge jobs of a dataset (storyeval.judges): one per (judge, template), their files, the validation
beside HANNA's released judges (Chhun, Suchanek & Clavel 2024), the judges' distance to the raters' histograms
(storyeval.stats.distribution), and the start-up line of each job's cost."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from storyeval.judges import config as judge_config
from storyeval.judges.prompts import load_template

OUT = "results/{dataset}/computed/judges/{judge}@{template}"
SHARD = "results/{dataset}/computed/judges/shards/{judge}@{template}/{shard}"
DISTRIBUTION = "results/{dataset}/computed/judge_distribution.csv"
DISTRIBUTION_PAGE = "results/{dataset}/computed/report/judge_distribution.html"
RELEASED = "results/{dataset}/released_judges.csv"  # the released judges measured as computed ones
RELEASED_PAGE = "results/{dataset}/report/released_judges.html"
PAIRWISE = "results/{dataset}/computed/judge_pairwise.csv"  # the pairwise judges' verdicts and position bias
PAIRWISE_PAGE = "results/{dataset}/computed/report/judge_pairwise.html"
FILES = {"scores": ".parquet", "registry": ".registry.csv", "details": ".details.parquet"}


def outputs(run, dataset: str, kind: str, jobs: list[tuple[str, str]] | None = None) -> list[str]:
    """The `kind` file (scores, registry, details, signature) of each of the dataset's judge jobs (or of `jobs`)."""
    suffix = FILES.get(kind, ".signature.json")
    return [OUT.format(dataset=dataset, judge=judge, template=template) + suffix
            for judge, template in (run.judge_jobs(dataset) if jobs is None else jobs)]


def batch_file(config: Mapping, wildcards) -> str | None:
    """The results of a judge job's batch run elsewhere (judges.models.<judge>.batch_results), or None."""
    return judge_config.batch_file(config, wildcards.dataset, wildcards.judge, wildcards.template)


def left_out_file(dataset: str, scoreset: str) -> list[str]:
    """The judge columns rule merge_scores left out of a computed score set (read by its About paragraph)."""
    return [f"results/{dataset}/computed/left_out_judges.csv"] if scoreset == "computed" else []


def template_text(config: Mapping, template: str) -> str:
    """The template's text, a parameter of its jobs: editing the file reruns them."""
    loaded = load_template(judge_config.template_spec(config, template))
    return f"{loaded.user}\n{loaded.answer}"


def templates(run) -> list[str]:
    """The templates of every judge job of the run (the values of the `template` wildcard)."""
    return sorted({template for dataset in run.text_datasets for _, template in run.judge_jobs(dataset)})


def validation_wanted(run, dataset: str) -> bool:
    """A validation table beside HANNA's released judges: a HANNA dataset, a judge configured as a released one
    and a template that follows an Eval-Prompt of the TACL paper."""
    config = run.config
    return config["datasets"][dataset]["kind"] in judge_config.HANNA_KINDS and any(
        config["judges"]["models"][judge].get("released")
        and load_template(judge_config.template_spec(config, template)).task is not None
        for judge, template in run.judge_jobs(dataset)
    )


def mode_jobs(run, dataset: str, mode: str) -> list[tuple[str, str]]:
    """(judge, template) of the dataset's judge jobs in `mode`."""
    return [(judge, template) for judge, template in run.judge_jobs(dataset)
            if judge_config.mode(run.config, judge) == mode]


def distribution_jobs(run, dataset: str) -> list[tuple[str, str]]:
    """(judge, template) of the dataset's judge jobs in mode expected: those whose details hold the judge's
    distribution over the ratings (storyeval.stats.distribution)."""
    return mode_jobs(run, dataset, "expected")


def pairwise_file(run, dataset: str, scoreset: str) -> list[str]:
    """The pairwise judges' table of a computed score set (read by its About paragraph: their position bias)."""
    return [PAIRWISE.format(dataset=dataset)] if scoreset == "computed" and mode_jobs(run, dataset, "pairwise") else []


def distribution_wanted(run, dataset: str) -> bool:
    """The judges' distance to the raters' histograms: per-rater ratings and a judge job in mode expected."""
    return bool(distribution_jobs(run, dataset)) and bool(run.structure(dataset, "computed")["raters"])


def targets(run, dataset: str) -> list[str]:
    return ([f"results/{dataset}/judge_validation.csv"] * validation_wanted(run, dataset)
            + [path.format(dataset=dataset) for path in (DISTRIBUTION, DISTRIBUTION_PAGE)]
            * distribution_wanted(run, dataset)
            + [path.format(dataset=dataset) for path in (PAIRWISE, PAIRWISE_PAGE)]
            * bool(mode_jobs(run, dataset, "pairwise")))


def released_kind(config: Mapping, dataset: str) -> str | None:
    """The kind of storyeval.judges.released that measures the dataset's released LLM judges (HANNA's TACL 2024
    judges for hanna), or None where its authors released none."""
    from storyeval.datasets import describe
    from storyeval.judges.released import KINDS

    kind = "hanna" if dataset == "hanna" else describe(config["datasets"][dataset], dataset).kind
    return kind if kind in KINDS else None


def released_sets(run) -> list[str]:
    """HANNA and the datasets read from their texts whose authors released LLM judges."""
    return ["hanna", *(name for name in run.released_sets if released_kind(run.config, name))]


def released_files(pinned, config: Mapping, dataset: str) -> list[str]:
    """The pinned files storyeval.judges.released.released_judges reads for the dataset, in its order."""
    from storyeval.datasets import describe

    if dataset == "hanna":
        return [pinned.path("hanna", "scores_llm")]
    declared = describe(config["datasets"][dataset], dataset)
    return [pinned.path(declared.source, key) for key in dict.fromkeys([*declared.inputs, *declared.released_inputs])]


def released_targets(dataset: str) -> list[str]:
    return [RELEASED.format(dataset=dataset), RELEASED_PAGE.format(dataset=dataset)]


def released_names(config: Mapping) -> dict[str, str]:
    """{judge: its name in HANNA's released LLM scores} of the judges configured as released ones."""
    return {name: model.get("released") for name, model in config["judges"]["models"].items() if model.get("released")}


def gather_inputs(dataset: str, judge: str, template: str, shards: list[str]) -> dict:
    """The files of a sharded judge job's shards, joined by rule gather_judge."""
    paths = [SHARD.format(dataset=dataset, judge=judge, template=template, shard=shard) for shard in shards]
    benchmarks = f"benchmarks/judges/{dataset}/{judge}@{template}"
    return {
        "scores": [f"{path}.parquet" for path in paths],
        "details": [f"{path}.details.parquet" for path in paths],
        "registries": [f"{path}.registry.csv" for path in paths],
        "signatures": [f"{path}.signature.json" for path in paths],
        "benchmarks": [f"{benchmarks}/{Path(path).name}.tsv" for path in paths],
    }


class JobCost:
    """Start-up line of a judge job's cost: forward passes and prompt tokens, counted with the judge's tokenizer
    on the dataset's texts when the line is said (str), by then the texts' source is verified: `verified` maps
    a pinned file (source, key) to its checked local copy."""

    def __init__(self, config: Mapping, dataset: str, judge: str, template: str, verified: Mapping):
        self.config, self.dataset, self.judge, self.template, self.verified = config, dataset, judge, template, verified

    def __str__(self):
        from storyeval.judges.plan import describe_plan

        entry = self.config["datasets"][self.dataset]
        pinned = entry.get("file")
        source = self.verified.get(tuple(pinned.split("/"))) if pinned else entry.get("path")
        return describe_plan(self.config, self.dataset, self.judge, self.template, source)


def asked(notes: list, jobs) -> list:
    """`notes` without the JobCost lines of judge jobs that are not in the run's DAG (`jobs`, Snakemake's), nor the
    lines about datasets or rules none of whose jobs it has (DatasetNote): start-up speaks of the asked targets."""
    jobs = list(jobs)
    wanted = {(job.wildcards_dict.get("dataset"), job.wildcards_dict.get("judge"), job.wildcards_dict.get("template"))
              for job in jobs}
    # a dataset's jobs write under results/<dataset>/ (with a wildcard `dataset` or `textset`, or none: HANNA's)
    datasets = {Path(path).parts[1] for job in jobs for path in job.output
                if Path(path).parts[0] == "results" and len(Path(path).parts) > 2}
    rules = {job.rule.name for job in jobs}
    return [note.only(datasets) if hasattr(note, "only") else note for note in notes
            if (not isinstance(note, JobCost) or (note.dataset, note.judge, note.template) in wanted)
            and (not hasattr(note, "datasets") or datasets.intersection(note.datasets)
                 or rules.intersection(note.rules))]
