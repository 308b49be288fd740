"""A run's view of its datasets: which are read from their texts, what each score set holds and supports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from storyeval.datasets import Dataset, describe
from storyeval.datasets.hanna import RELEASED
from storyeval.judges import config as judge_config
from storyeval.metrics import catalog
from storyeval.workflow import metrics


def text_datasets(config: Mapping, annotations: bool) -> list[str]:
    """The configured datasets whose texts the run reads: HANNA's only with its raw annotation file."""
    return [name for name in config["datasets"] if name != "hanna" or annotations]


def present(names: list[str], held: set[str] | None) -> int:
    """How many of the configured metric `names` a score set holds (all of them when not yet known)."""
    return len(names) if held is None else sum(name in held for name in names)


@dataclass(eq=False)
class Run:
    """The checked config (schema defaults filled, `metrics: all` expanded) and what start-up found: whether
    HANNA's raw annotations are used, the user tables' declarations reduced to what their files allow
    (storyeval.text.fit), and the slugs and labels of the released scores' metrics (None before the file is
    fetched)."""

    config: Mapping
    annotations: bool = False
    fitted: Mapping[str, Dataset] = field(default_factory=dict)
    released: set[str] | None = None

    def __post_init__(self):
        self._shapes = {}

    @property
    def text_datasets(self) -> list[str]:
        return text_datasets(self.config, self.annotations)

    @property
    def datasets(self) -> list[str]:
        """Every dataset with results: HANNA (its released scores) and those read from their texts."""
        return list(dict.fromkeys(["hanna", *self.text_datasets]))

    @property
    def released_sets(self) -> list[str]:
        """The datasets read from their texts whose authors released scores beside them (rule normalise_released;
        HANNA's released scores come from their own file, rule normalise_hanna)."""
        return [name for name in self.text_datasets
                if name != "hanna" and describe(self.config["datasets"][name], name).released is not None]

    @property
    def analysed_sets(self) -> list[tuple[str, str]]:
        """(dataset, score set) of every analysis the run makes: HANNA's released scores, the scores other datasets'
        authors released, each dataset scored by metrics or judges (as storyeval.workflow.targets plans them)."""
        return ([("hanna", "released")] + [(name, "released") for name in self.released_sets]
                + [(name, "computed") for name in self.text_datasets
                   if self.enabled_metrics(name) or self.judge_jobs(name)])

    @property
    def recipe_sets(self) -> list[str]:
        """The datasets read from their texts whose kind recomputes printed numbers by its paper's recipes."""
        return [name for name in self.text_datasets if describe(self.config["datasets"][name], name).recipes]

    def described(self, dataset: str, scoreset: str) -> Dataset:
        """What the score set's dataset is: HANNA's released scores, or a configured dataset (another dataset's
        released scores are scores of its own stories)."""
        if scoreset == "released" and dataset == "hanna":
            return RELEASED
        return self.fitted.get(dataset) or describe(self.config["datasets"][dataset], dataset)

    def reference_system(self, dataset: str, scoreset: str = "computed") -> str | None:
        """The dataset's human "system", left out of its correlations and rankings: the entry's
        `reference_system`, else its kind's (HANNA's kinds: config hanna.reference_system, which the released
        file's check reads too); None where the stories hold no human reference system."""
        described = self.described(dataset, scoreset)
        if described.kind.startswith("hanna-"):
            return self.config["hanna"]["reference_system"]
        return self.config["datasets"].get(dataset, {}).get("reference_system", described.reference_system)

    def enabled_metrics(self, dataset: str) -> list[str]:
        return metrics.enabled(self.config, dataset)

    def judge_jobs(self, dataset: str) -> list[tuple[str, str]]:
        """(judge, template) of the dataset's judge jobs; none for a dataset that is not run."""
        return judge_config.jobs(self.config, dataset) if dataset in self.text_datasets else []

    def scoreset_metrics(self, dataset: str, scoreset: str) -> set[str] | None:
        """Slugs and labels of the metrics a score set will hold: HANNA's released file's header (None before it
        is fetched: all the configured names count as held), none of the configured HANNA metric lists for another
        dataset's released scores (its authors' own metrics or judges, read only once normalised), or the columns
        of the dataset's enabled metrics."""
        if scoreset == "released":
            return self.released if dataset == "hanna" else set()
        columns = [(slug, column.label) for metric in self.enabled_metrics(dataset)
                   for slug, column in catalog.entry(metric).columns.items()]
        return {name for pair in columns for name in pair}

    def structure(self, dataset: str, scoreset: str) -> dict:
        """What a score set's analysis can do: its levels, criteria, systems (a prompt x system grid of three or more),
        paired (two systems a prompt: storyeval.stats.paired) and raters, and which config lists
        (representative subset, Fig. 8 metrics, the reanalyses' metrics) it holds enough metrics of."""
        if (dataset, scoreset) not in self._shapes:
            config = self.config
            data = self.described(dataset, scoreset)
            held = self.scoreset_metrics(dataset, scoreset)
            rated = bool(data.criteria)
            self._shapes[dataset, scoreset] = {
                "levels": [level for level in config["analysis"]["levels"] if level in data.levels],
                "systems": data.grouped,
                "paired": data.paired,
                "raters": data.raters,
                "ratings": rated,
                "criteria": list(data.criteria),
                "subset": rated and data.grouped and present(config["figures"]["representative_metrics"], held) >= 2,
                "topk": data.grouped and present(config["stats"]["topk"]["metrics"], held) >= 1,
                "reanalyses": rated and present(config["reanalysis"]["sum_of_ranks_metrics"], held) >= 2,
            }
        return self._shapes[dataset, scoreset]
