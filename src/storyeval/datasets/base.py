"""What a dataset is: one declaration, built from named fields, that the loaders, the config check and the
workflow's rules read. A built-in dataset kind is one module of this package that declares `KINDS` (kind name ->
a function of the config entry and its name that returns the Dataset) and, for a pinned release, `SOURCE`: its
files at a fixed commit with their sha256 (rule fetch copies them from a mirror or downloads them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from storyeval.text.layouts import TABLE_FORMATS


@dataclass(frozen=True)
class Printed:
    """A number a dataset's paper printed, for the reproduction audit: where it is printed, what it measures and
    where storyeval's own value lies (a row of a result table of the dataset's analysis)."""

    paper: str  # "Guan and Huang 2020 (UNION)"
    table: str  # "Tab. 5, p. 9"
    item: str  # what the number is: "BLEU Pearson r, ROCStories"
    value: float
    result: str  # file under results/<dataset>/ that holds storyeval's value, e.g. "released/correlations.csv"
    where: Mapping[str, str] = field(default_factory=dict)  # column -> value selecting the row of `result`
    column: str = "value"  # the column of that row holding the number
    scale: float = 1.0  # printed = scale x storyeval's (percentages: 100)
    note: str = ""  # what was tried where no released file gives the number
    places: int | None = None  # printed decimals where the value drops trailing zeros (0.50 printed: 2)
    # What the number was read from (storyeval.audit_datasets.REFERENCES): "paper", the printed paper; "code", the
    # authors' code run on their released files; "notebook", an output cell of the authors' notebook.
    reference: str = "paper"
    printed_range: tuple[float, float] | None = None  # a range printed for it ("3-10X": (3, 10))
    # A row of `result` (column -> value, as `where`) whose value reproduces the printed number another way (the
    # paper's recipe): the evidence that makes a deviation "explained"; empty: a note alone explains nothing.
    evidence: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Dataset:
    kind: str
    # (path, or paths in the order of `inputs`; dataset name) -> TextDataset; None: HANNA's released scores.
    load: Callable | None
    texts: frozenset[str]  # text columns a metric can read: story, prompt, reference
    prompts: bool = False  # stories grouped by prompt
    systems: bool = False  # stories written by named systems
    raters: bool = False  # per-rater ratings (Tab. 3 ICC, Tab. 4 system means, agreement)
    # What a rater id is (storyeval.stats.agreement.RATER_LAYOUTS): "rater", a person; "position", a judge slot that
    # is not the same person across stories (HANNA's and UNION's releases), which agreement.csv says beside alpha.
    rater_layout: str = "rater"
    # Who the raters are, for the alt-test's margin epsilon (storyeval.stats.alttest.RATER_KINDS: crowd, skilled,
    # expert, as the dataset's paper describes them); "": not declared.
    rater_kind: str = ""
    criteria: tuple[str, ...] = ()  # human criteria; () for an unrated set
    rating_gaps: str | None = None  # a read table's ratings nobody gave, per criterion (the report's About page)
    suffixes: tuple[str, ...] = tuple(TABLE_FORMATS)  # the file types its loader reads
    # Two systems on several prompts (storyeval.text.fit): story level pooled, paired comparisons per prompt.
    paired: bool = False
    # A human "system" (its stories the references): kept in Tab. 4, left out of correlations and rankings.
    reference_system: str | None = None
    criteria_map: Mapping[str, str] = field(default_factory=dict)  # criterion -> the benchmark's shared term
    source: str | None = None  # the pinned source (a module's SOURCE) its files come from
    inputs: tuple[str, ...] = ()  # keys of the source's files the loader reads, in this order
    # Scores the authors released beside the texts (metric outputs, LLM judges): (paths of `released_inputs`,
    # dataset name, story ids) -> (scores: story_id, metric, value; registry: storyeval.data.registry's columns).
    released: Callable | None = None
    released_inputs: tuple[str, ...] = ()
    printed: tuple[Printed, ...] = ()  # the paper's numbers the audit compares
    # The paper's own recipes where no analysis of storyeval computes a printed number as the paper did (its
    # agreement statistic, its aggregation): (paths of `recipe_inputs`, dataset name) -> item, value, recipe rows,
    # written to results/<dataset>/paper_recipes.csv, which Printed entries may point at.
    recipes: Callable | None = None
    recipe_inputs: tuple[str, ...] = ()
    description: str = ""  # one sentence: what the stories and ratings are (docs, report)
    licence: str = ""  # of the released files

    def read(self, files: list[str], name: str):
        """Its loader on its input files: a built-in release's (or a table's parts) as a list, one file alone."""
        return self.load(files if self.source or len(files) > 1 else files[0], name)

    @property
    def levels(self) -> list[str]:
        """Story level (per prompt across systems, or over all stories at once), and system level where
        stories of named systems share prompts."""
        return ["story", "system"] if self.grouped else ["story"]

    @property
    def grouped(self) -> bool:
        """Stories lie on a prompt x system grid of at least three systems; otherwise all stories form one group
        (one 'prompt')."""
        return self.prompts and self.systems and not self.paired

    def lacks(self, reference_based: list[str]) -> list[str]:
        """What this dataset lacks and what follows, one phrase each (said once at start-up)."""
        phrases = []
        if "reference" not in self.texts:
            phrases.append(f"no reference text, so reference-based metrics are refused ({', '.join(reference_based)})")
        if not self.systems:
            phrases.append("no systems, so story-level correlations over all stories and no system level")
        elif not self.prompts:
            phrases.append("no prompts, so one group: story-level correlations over all stories and no system level")
        if not self.criteria:
            phrases.append("no human ratings, so metrics are correlated with each other only")
        elif not self.raters:
            phrases.append("no per-rater ratings, so no ICC (Tab. 3), system means (Tab. 4) or rater agreement")
        return phrases


def fixed(dataset: Dataset) -> Callable[[Mapping, str], Dataset]:
    """A kind whose declaration does not depend on its config entry."""
    return lambda entry, name: dataset


def pinned_files(base_url: str, commit: str, files: Mapping[str, tuple[str, str, str]]) -> dict:
    """A module's SOURCE: {key: (path in the repository, local file name, sha256)} at one commit of base_url.
    The local name is the mirror's (two corpora's files may share a repository file name)."""
    return {"base_url": base_url, "files": {key: {"path": path, "local": local, "commit": commit, "sha256": digest}
                                            for key, (path, local, digest) in files.items()}}

