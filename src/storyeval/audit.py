"""The reproduction audit: each number that HANNA (Chhun et al. 2022), Mendras & Nietge's reanalysis and StoryER
(Chen et al. 2022) printed, beside storyeval's under the default settings and under the paper-exact profile, with
its printed precision, a status and, for every deviation, why.

The printed numbers come from a YAML file of tables (`columns` + `rows`, or `cells`; see read_paper_values);
storyeval's from the workflow's outputs. The printed precision of a column is the most decimals any of its values
shows (the transcription drops trailing zeros). A ranked name (top-k tables) matches when it is the metric at that
rank, or ties with it (equal |r|: the order inside a tie is not set by the data).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from storyeval.analysis import as_written, rankings, system_means, system_variant
from storyeval.configfiles import DataLoader, check_config_file
from storyeval.data.load import needs_exact_means, reanalysis_recomputes
from storyeval.data.registry import RELEASED_RATERS, resolve_metrics
from storyeval.data.scoreset import Cube
from storyeval.errors import InputError
from storyeval.grading import decimals, grade_number
from storyeval.io import markdown_table
from storyeval.stats.correlation import COEFFICIENTS, authors_means, merge_float_ties
from storyeval.stats.kendall import kendall
from storyeval.stats.reanalysis import mendras_nietge

STATUSES = ("exact", "within printed precision", "explained deviation", "unexplained", "not computed")
SHORT = {"exact": "exact", "within printed precision": "within", "explained deviation": "explained",
         "unexplained": "unexplained", "not computed": "not computed"}
# The paper-exact profile's switches: config key -> what its non-default value reproduces (one sentence each).
SWITCHES = {
    "analysis.system_ties": "HANNA's notebook broke equal system means by their last float bit "
                            "(analysis.system_ties: authors), storyeval merges such ties by default",
    "analysis.system_coefficients": "the papers' scipy coefficients differ from storyeval's vectorised ones in the "
                                    "last bit, which decides how a Wilcoxon test ranks equal |r| differences "
                                    "(analysis.system_coefficients: scipy)",
    "analysis.orientation": "HANNA's tables rank metrics by |r| (analysis.orientation: absolute), storyeval by r "
                            "after orientation (a lower-is-better metric's r negated), so a metric that correlates "
                            "against its own direction ranks low instead of high",
    "analysis.borda_ties": "HANNA's Borda points order equal |r| by numpy's 2022 quicksort "
                           "(analysis.borda_ties: ordinal), storyeval shares average ranks by default",
    "analysis.system_means_unit": "HANNA's Tab. 4 averages every rating alike (analysis.system_means_unit: rating), "
                                  "storyeval averages the story means (a story's raters are not independent), "
                                  "which weigh a story with fewer raters as much as one with more",
    "reanalysis.system_ties": "Mendras & Nietge's system means keep the real ties that HANNA's floats broke "
                              "(reanalysis.system_ties: merged while analysis.system_ties is authors)",
    "reanalysis.top_k_metrics": "Mendras & Nietge ranked only the 17 metrics of HANNA's notebook "
                                "(METRICS_FILTERED; reanalysis.top_k_metrics), storyeval ranks all 72 by default",
}
# Why a printed number stays out of reach of the released data, by table (applies only where it deviates).
DATA_LIMITS = {
    "hanna_tab3_icc2k": RELEASED_RATERS,
}
NOT_COMPUTED = {  # printed numbers storyeval has nothing to compare with: neither explained nor unexplained
    "storyer_tab3": "StoryER's trained model and its perplexity baseline's setup were not released; storyeval's "
                    "own evaluator is a retrained stand-in and is not compared",
}
UNEXPLAINED = {
    "mendras_tab2_wilcoxon_system": "no rule reproduces this cell: tried merged and float ties, scipy's or "
                                    "vectorised coefficients, |r| or signed r, zero_method wilcox/pratt/zsplit",
}
RANK_TIE = (
    "the printed metric ties with storyeval's at this rank (equal |r|): the order inside a tie is not set by the data"
)
WITHIN = {  # why a number within printed precision is not exact, by table
    "hanna_tab4_system_means": "equal to the best mean at the printed precision, and marked as well",
    "hanna_tab5_top3_pearson": "Tab. 8, 9's two-decimal |r| rounded once more, half up",
    "hanna_tab8_tab9_top5": RANK_TIE,
    "mendras_tab1_3_4_top5_system": RANK_TIE,
}


@dataclass(frozen=True)
class Inputs:
    """The workflow outputs the audit reads (hanna/released)."""

    humans: Mapping[bool, Cube]  # per-story mean ratings, rounded and exact (storyeval.data.load.human_cube)
    metrics: Cube
    registry: pd.DataFrame  # slug, label, order, degenerate_release
    correlations: pd.DataFrame  # correlations.csv (criteria and metric_criterion rows)
    system_means: pd.DataFrame
    icc: pd.DataFrame
    reference_system: str  # left out of Tab. 4's '*' (the best generated system)
    top_k_criteria: tuple[str, ...]  # Mendras & Nietge's criteria (config reanalysis.top_k_criteria)
    # stories.csv and rater_ratings.csv: Tab. 4 recomputed under each analysis.system_means_unit; None: the
    # workflow's system_means.csv under every setting.
    stories: pd.DataFrame | None = None
    ratings: pd.DataFrame | None = None


def read_paper_values(path: str | Path) -> dict:
    """The papers' printed numbers: {table: {columns, rows} or {cells}}; one error line names the file and fix."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            f"{path}: the papers' printed numbers are not there; fix: set audit.paper_values in config "
            "to the file (src/storyeval/printed_numbers.yaml in the repository)"
        )
    tables = yaml.load(path.read_text(encoding="utf-8"), Loader=DataLoader)  # aliases bounded, keys once
    bad = [
        name
        for name, table in (tables or {}).items()
        if not isinstance(table, dict) or not ({"columns", "rows"} <= set(table) or "cells" in table)
    ]
    if not tables or bad:
        raise InputError(
            f"{path}: table {bad[0] if bad else '<none>'} has neither columns + rows nor cells; "
            "fix: write each table as columns and rows, or cells [y, x, value]"
        )
    return tables


@dataclass(frozen=True)
class Ranked:
    """One ranking as storyeval computed it: labels best first, their values (|r| % or Borda count)."""

    labels: list[str]
    values: list[float]


def grade_ranked(
    ranking: Ranked, rank: int, name: str, printed: float | None, places: int, family: bool = False
) -> tuple[str, str]:
    """(grade, shown) of a printed `name` at 1-based `rank`, with its printed value if any.

    The printed metric is ours at that rank (exact), or ties with it (within: equal value), or neither (differs).
    `family`: the paper printed only the family ('SUPERT'), the value picks the variant among ours.
    """
    if rank > len(ranking.labels):
        return "differs", "–"
    value = ranking.values[rank - 1]
    shown = ranking.labels[rank - 1] + (f" {value:.{places}f}" if places else f" {value:g}") * (printed is not None)
    matches = [
        i
        for i, label in enumerate(ranking.labels)
        if label == name or (family and (label.startswith(f"{name} ") or label.startswith(f"{name}-")))
    ]
    if not matches:
        return "differs", shown
    if rank - 1 in matches:
        index = rank - 1
    else:
        index = min(matches, key=lambda i: abs(ranking.values[i] - printed)) if printed is not None else matches[0]
    if index == rank - 1:
        name_grade = "exact"
    else:
        name_grade = (
            "within" if math.isclose(ranking.values[index], ranking.values[rank - 1], rel_tol=1e-9) else "differs"
        )
    value_grade = "exact" if printed is None else grade_number(printed, ranking.values[index], places)
    return worst(name_grade, value_grade), shown


def worst(*grades: str) -> str:
    return max(grades, key=["exact", "within", "differs"].index)


def reproduce(inputs: Inputs, switches: Mapping[str, object], cache: dict | None = None) -> dict:
    """The tables the audit compares, computed under `switches` (the SWITCHES keys) by the package functions the
    workflow's rules call: the story level from the workflow's correlations, the system level recomputed
    (`analysis.system_variant`, ten systems: cheap; `cache` keeps each variant) and stored as correlations.csv
    stores it, the rankings (`analysis.rankings`) and Mendras & Nietge's tables (`stats.reanalysis.mendras_nietge`)
    on its system level (the papers' tables are at system level), or on their own as rule reanalyses recomputes it,
    and Tab. 4's system means (`analysis.system_means`) where `inputs` has the ratings."""
    cache = {} if cache is None else cache
    backend = switches["analysis.system_coefficients"]

    def correlations(ties):
        if (ties, backend) not in cache:
            human = inputs.humans[needs_exact_means(ties, backend)]
            cache[ties, backend] = system_variant(
                inputs.correlations, human, inputs.metrics, list(COEFFICIENTS), ties, backend
            )
        return cache[ties, backend]

    ties, mendras_ties = switches["analysis.system_ties"], switches["reanalysis.system_ties"]
    hanna = as_written(correlations(ties), backend)
    mendras = correlations(mendras_ties) if reanalysis_recomputes(mendras_ties, ties) else hanna
    labels = dict(zip(inputs.registry["slug"], inputs.registry["label"]))
    top, counts = rankings(hanna, inputs.registry, len(labels), switches["analysis.borda_ties"],
                           switches["analysis.orientation"])
    subset = switches["reanalysis.top_k_metrics"]
    top_k, agreement = mendras_nietge(
        mendras[mendras["level"] == "system"],
        inputs.top_k_criteria,
        len(labels),
        None if subset is None else resolve_metrics(subset, inputs.registry, "reanalysis.top_k_metrics"),
    )

    unit = switches.get("analysis.system_means_unit")
    if inputs.ratings is not None and ("means", unit) not in cache:
        cache["means", unit] = system_means(inputs.stories, inputs.ratings, unit=unit)
    means = cache.get(("means", unit), inputs.system_means)

    def ranked(frame, keys, value="abs_r", scale=100):
        return {
            key: Ranked([labels[m] for m in group["metric"]], list(scale * group[value]))
            for key, group in frame.groupby(keys, sort=False)
        }

    return {
        "criteria": hanna[hanna["kind"] == "criteria"].set_index(["level", "coefficient", "x", "y"])["r"],
        "top": ranked(top, ["level", "coefficient", "criterion"], "ranked_r"),
        "mendras": ranked(top_k, ["coefficient", "criterion"]),
        "borda": ranked(counts[counts["level"] != "global"], "level", "borda", 1),
        "wilcoxon": agreement.set_index(["criterion", "coefficient_a", "coefficient_b"])["wilcoxon_statistic"],
        "system_means": means,
    }


@dataclass(frozen=True)
class Item:
    """One printed number and how to grade storyeval's against it."""

    table: str
    item: str
    printed: object
    places: int | None  # None: a name or mark, not a number
    grade: Callable[[dict, Inputs], tuple[str, str]]  # (reproduction, inputs) -> (grade, shown)


def _number(value: float | None, places: int) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{places}f}"


def _numeric(table: str, item: str, printed: float, places: int, ours: Callable[[dict, Inputs], float | None]) -> Item:
    def grade(repro, inputs):
        value = ours(repro, inputs)
        return grade_number(printed, value, places), _number(value, places)

    return Item(table, item, printed, places, grade)


def _rows(spec: dict) -> list[dict]:
    return [dict(zip(spec["columns"], row)) for row in spec["rows"]]


def hanna_tab3(name, spec):
    def icc(criterion, column):
        def ours(repro, inputs):
            rows = inputs.icc[(inputs.icc["criterion"] == criterion) & (inputs.icc["form"] == "ICC2k")]
            rows = rows.sort_values("layout", key=lambda s: s.str.startswith("rater positions"))  # workers first
            return None if rows.empty else float(rows.iloc[0][column])

        return ours

    places = decimals(value for row in spec["rows"] for value in row[1:])
    return [
        _numeric(
            name,
            f"{row['criterion']} {column}",
            row[column],
            places,
            icc(row["criterion"], {"lb": "ci_low", "icc2k": "icc", "ub": "ci_high"}[column]),
        )
        for row in _rows(spec)
        for column in ("lb", "icc2k", "ub")
    ]


def hanna_tab4(name, spec):
    columns = spec["columns"][1:]
    places = decimals(value for row in spec["rows"] for value in row[1:])

    def mean(system, criterion):
        def ours(repro, inputs):
            means = repro.get("system_means", inputs.system_means)
            hit = means[(means["system"] == system) & (means["criterion"] == criterion)]["mean"]
            return float(hit.iloc[0]) if len(hit) else None

        return ours

    def best(system, criterion):  # '*': the best generated system of a column (the human reference left out)
        def grade(repro, inputs):
            means = repro.get("system_means", inputs.system_means)
            column = means[(means["criterion"] == criterion) & (means["system"] != inputs.reference_system)]
            column = column.set_index("system")["mean"]
            if system not in column.index:
                return "differs", "–"
            winner = column.idxmax()
            if winner == system:
                return "exact", f"* {winner}"
            tied = round(column[system], places) == round(column[winner], places)  # equal as printed
            return ("within" if tied else "differs"), f"* {winner}"

        return grade

    items = [
        _numeric(name, f"{row['system']} {column}", row[column], places, mean(row["system"], column))
        for row in _rows(spec)
        for column in columns
    ]
    return items + [
        Item(name, f"{system} {column} *", "*", None, best(system, column))
        for system, column in spec.get("asterisk", [])
    ]


def criteria_cells(level):
    def build(name, spec):
        def ours(y, x):
            return lambda repro, inputs: 100 * abs(float(repro["criteria"][(level, "kendall", x, y)]))

        places = decimals(cell[2] for cell in spec["cells"])
        return [_numeric(name, f"{y} x {x}", value, places, ours(y, x)) for y, x, value in spec["cells"]]

    return build


def _ranked(name, rows, places, group, metric, ranking, value=None, family=False, item=None):
    """Items of a top-k table: each printed row's `metric` at its rank (and its `value`) in storyeval's ranking
    `ranking(reproduction)[group(row)]`."""

    def grade(row):
        return lambda repro, inputs: grade_ranked(
            ranking(repro)[group(row)], row["rank"], row[metric], row.get(value), places, family
        )

    return [
        Item(
            name, item(row), (row[metric], row[value]) if value else row[metric], places if value else None, grade(row)
        )
        for row in rows
    ]


def hanna_tab5(name, spec):
    rows = _rows(spec)
    places = decimals(row["abs_r_percent"] for row in rows)
    return _ranked(
        name,
        rows,
        places,
        lambda row: (row["level"], "pearson", row["criterion"]),
        "metric (family as printed)",
        lambda repro: repro["top"],
        "abs_r_percent",
        True,
        lambda row: f"{row['level']} {row['criterion']} #{row['rank']}",
    )


def hanna_tab6(name, spec):
    rows = _rows(spec)
    return _ranked(
        name,
        rows,
        decimals(row["borda"] for row in rows),
        lambda row: row["level"],
        "metric",
        lambda repro: repro["borda"],
        "borda",
        item=lambda row: f"{row['level']} #{row['rank']}",
    )


def hanna_tab89(name, spec):
    rows = _rows(spec)
    return _ranked(
        name,
        rows,
        decimals(row["abs_r_percent"] for row in rows),
        lambda row: (row["level"], row["coefficient"], row["criterion"]),
        "metric",
        lambda repro: repro["top"],
        "abs_r_percent",
        item=lambda row: f"{row['level']} {row['coefficient']} {row['criterion']} #{row['rank']}",
    )


def mendras_top(name, spec):
    return _ranked(
        name,
        _rows(spec),
        None,
        lambda row: (row["header"].lower(), row["criterion"]),
        "metric",
        lambda repro: repro["mendras"],
        item=lambda row: f"Tab. {row['table']} {row['criterion']} {row['header']} #{row['rank']}",
    )


def mendras_tab2(name, spec):
    def ours(criterion, pair):
        first, second = (part.strip().lower() for part in pair.split("-"))
        return lambda repro, inputs: float(repro["wilcoxon"][(criterion, first, second)])

    places = decimals(value for row in spec["rows"] for value in row[1:])
    return [
        _numeric(name, f"{row['pair']} {column}", row[column], places, ours(column, row["pair"]))
        for row in _rows(spec)
        for column in spec["columns"][1:]
    ]


def storyer_tab3(name, spec):
    places = decimals(value for row in spec["rows"] for value in row[1:])
    return [
        _numeric(name, f"{row['system']} {column}", row[column], places, lambda repro, inputs: None)
        for row in _rows(spec)
        for column in spec["columns"][1:]
        if row[column] is not None
    ]


READERS = {  # printed_numbers.yaml table -> (paper, items)
    "hanna_tab3_icc2k": ("HANNA Tab. 3", hanna_tab3),
    "hanna_tab4_system_means": ("HANNA Tab. 4", hanna_tab4),
    "hanna_fig1_criteria_kendall_story": ("HANNA Fig. 1", criteria_cells("story")),
    "hanna_fig2_criteria_kendall_system": ("HANNA Fig. 2", criteria_cells("system")),
    "hanna_tab5_top3_pearson": ("HANNA Tab. 5", hanna_tab5),
    "hanna_tab6_borda": ("HANNA Tab. 6", hanna_tab6),
    "hanna_tab8_tab9_top5": ("HANNA Tab. 8, 9", hanna_tab89),
    "mendras_tab1_3_4_top5_system": ("Mendras & Nietge Tab. 1, 3, 4", mendras_top),
    "mendras_tab2_wilcoxon_system": ("Mendras & Nietge Tab. 2", mendras_tab2),
    "storyer_tab3": ("StoryER Tab. 3", storyer_tab3),
}


def items(paper_values: Mapping) -> list[Item]:
    unknown = sorted(set(paper_values) - set(READERS))
    if unknown:
        raise InputError(
            f"paper values: no audit reader for table(s) {unknown}; fix: add one to storyeval.audit.READERS"
        )
    return [item for name, spec in paper_values.items() for item in READERS[name][1](name, spec)]


def status(grade: str, table: str, switched: list[str], evidence: str | None = None) -> tuple[str, str]:
    """(status, explanation) of a grade: a deviation is explained by the switches that change it (each one's
    claim checked against the numbers, `claims_hold`), by the table's data limits, or by `evidence` computed from
    the data (`swap_evidence`); else it is unexplained. A table storyeval does not compute is not computed."""
    if table in NOT_COMPUTED:
        return "not computed", NOT_COMPUTED[table] + "."
    if grade == "exact":
        return "exact", ""
    if grade == "within":
        return "within printed precision", WITHIN.get(table, "another rounding rule at the printed precision") + "."
    if switched:
        return "explained deviation", "; ".join(SWITCHES[key] for key in switched) + "."
    if table in DATA_LIMITS:
        return "explained deviation", DATA_LIMITS[table] + "."
    if evidence:
        return "explained deviation", evidence
    return "unexplained", UNEXPLAINED.get(table, "no switch or data limit accounts for it") + "."


def likert_system_means(cube: Cube, max_raters: int = 100) -> list[list[Fraction]]:
    """System means [S][K] in exact arithmetic: each per-story mean is a fraction of integer ratings with at most
    `max_raters` raters, recovered from its float, then averaged over prompts without rounding."""
    stories = [[[Fraction(float(v)).limit_denominator(max_raters) for v in row] for row in prompt]
               for prompt in cube.values]
    prompts = len(stories)
    return [[sum((stories[p][s][k] for p in range(prompts)), Fraction(0)) / prompts
             for k in range(len(cube.names))] for s in range(len(cube.systems))]


def _same_ties(means: np.ndarray, exact: list[list[Fraction]]) -> bool:
    """Whether two systems have equal `means` [S, K] exactly when their `exact` means are equal."""
    systems, criteria = means.shape
    return all(
        (means[a, k] == means[b, k]) == (exact[a][k] == exact[b][k])
        for k in range(criteria) for a, b in itertools.combinations(range(systems), 2)
    )


def _ties_claims(inputs: Inputs, default: Mapping, runs: Mapping, cache: Mapping) -> dict[str, bool]:
    """The claims about ties of system means: the default run ties two systems exactly when their exact means tie
    (ties merged), and HANNA's float means break at least one such tie."""
    exact_cube = inputs.humans[True]
    exact = likert_system_means(exact_cube)
    used = inputs.humans[needs_exact_means(default["analysis.system_ties"], default["analysis.system_coefficients"])]
    merged = default["analysis.system_ties"] == "merged"
    means = merge_float_ties(used.values.mean(axis=0)) if merged else authors_means(used.values)
    broken = not _same_ties(authors_means(exact_cube.values), exact)
    return {"analysis.system_ties": merged and _same_ties(means, exact) and broken,
            "reanalysis.system_ties": broken}


def _last_bit_claim(inputs: Inputs, default: Mapping, runs: Mapping, cache: Mapping) -> bool:
    """scipy's and the vectorised coefficients differ, and only in the last bits."""
    frames = [cache.get((default["analysis.system_ties"], backend)) for backend in ("vectorised", "scipy")]
    if any(frame is None for frame in frames):
        return False
    a, b = (frame[frame["level"] == "system"]["r"].to_numpy() for frame in frames)
    gap = np.abs(a - b)[np.isfinite(a) & np.isfinite(b)]
    return len(a) == len(b) and 0 < gap.max() < 1e-12


def _borda_ties_claim(inputs: Inputs, default: Mapping, runs: Mapping, cache: Mapping) -> bool:
    """The default Borda counts see equal |r| within a ranking (which average ranks share)."""
    return any(len(set(ranked.values)) < len(ranked.values) for ranked in runs["default"]["top"].values())


def _orientation_claim(inputs: Inputs, default: Mapping, runs: Mapping, cache: Mapping) -> bool:
    """Some metric correlates against its own direction in the default run (a negative oriented r), where |r|
    and r after orientation rank differently."""
    return default["analysis.orientation"] == "oriented" and any(
        min(ranked.values) < 0 for ranked in runs["default"]["top"].values()
    )


def _subset_claim(inputs: Inputs, default: Mapping, runs: Mapping, cache: Mapping) -> bool:
    """The default ranks every metric, more than the notebook's 17."""
    return all(len(ranked.labels) == len(inputs.registry) > 17 for ranked in runs["default"]["mendras"].values())


def _unit_claim(inputs: Inputs, default: Mapping, runs: Mapping, cache: Mapping) -> bool:
    """Some system's stories have unequal numbers of raters on a criterion: only there do the mean of its story
    means and the mean of its ratings differ."""
    if inputs.ratings is None:
        return False
    counts = inputs.ratings.merge(inputs.stories[["story_id", "system"]], on="story_id")
    counts = counts.groupby(["system", "criterion", "story_id"]).size()
    return bool((counts.groupby(["system", "criterion"]).nunique() > 1).any())


def claims_hold(inputs: Inputs, default: Mapping, runs: Mapping, cache: Mapping) -> dict[str, bool]:
    """Whether each switch's sentence in SWITCHES is true of this run, checked on its numbers: an explanation
    that names a switch is only given when its claim holds."""
    return {
        **_ties_claims(inputs, default, runs, cache),
        "analysis.system_coefficients": _last_bit_claim(inputs, default, runs, cache),
        "analysis.borda_ties": _borda_ties_claim(inputs, default, runs, cache),
        "analysis.orientation": _orientation_claim(inputs, default, runs, cache),
        "reanalysis.top_k_metrics": _subset_claim(inputs, default, runs, cache),
        "analysis.system_means_unit": _unit_claim(inputs, default, runs, cache),
    }


def swap_evidence(metric: np.ndarray, human: np.ndarray, kendall_printed: float, spearman_printed: float) -> str:
    """Why a printed system-level Kendall cannot be the data's: no ordering of the systems that gives it also gives
    the Spearman printed for the same metric and criterion. Tries the computed means and every swap of two
    systems' values (on either side: one discordant pair more or less); returns '' when one fits both."""
    def pair(x, y):
        return round(100 * abs(stats.kendalltau(x, y)[0]), 2), round(100 * abs(stats.spearmanr(x, y)[0]), 2)

    fits, spearmans, pairs = [], [], set()
    for side, (a, b) in itertools.product((0, 1), itertools.combinations(range(len(metric)), 2)):
        x, y = metric.copy(), human.copy()
        moved = (x, y)[side]
        moved[[a, b]] = moved[[b, a]]
        tau, rho = pair(x, y)
        if tau == kendall_printed:
            pairs.add((a, b))
            spearmans.append(rho)
            fits.append(rho == spearman_printed)
    if pair(metric, human) == (kendall_printed, spearman_printed) or any(fits) or not spearmans:
        return ""
    tau_c = 100 * abs(float(kendall(metric[:, None], human[:, None], "tau_c")[0, 0]))
    return (f"no ordering of the systems gives both printed numbers of this metric: each of the {len(pairs)} "
            f"swaps of two systems (metric or human means) that gives tau-b {kendall_printed:.2f} moves Spearman to "
            f"{min(spearmans):.2f}-{max(spearmans):.2f}, not the printed {spearman_printed:.2f}, which the data give; "
            f"tau-c is {tau_c:.2f}; the printed Kendall is not reproducible from the released data.")


def printed_pair_evidence(item: Item, all_items: list[Item], inputs: Inputs, shown: str) -> str:
    """`swap_evidence` for a system-level Kendall row of Tab. 8, 9: of its printed metric, or of the metric that
    storyeval's ranking puts at its rank (`shown`), when that metric also has a printed Spearman for the same
    criterion; computed on the authors' float means. '' for any other row."""
    words = item.item.split(" ")
    if item.table != "hanna_tab8_tab9_top5" or words[:2] != ["system", "kendall"]:
        return ""
    criterion = words[2]
    group = [other for other in all_items if other.table == item.table]
    printed = {other.printed[0]: other.printed[1] for other in group
               if other.item.startswith(f"system kendall {criterion} #")}
    spearman = {other.printed[0]: other.printed[1] for other in group
                if other.item.startswith(f"system spearman {criterion} #")}
    slugs = dict(zip(inputs.registry["label"], inputs.registry["slug"]))
    human = inputs.humans[True]
    if criterion not in human.names:
        return ""
    for label in dict.fromkeys([item.printed[0], shown.rsplit(" ", 1)[0]]):
        if label in printed and label in spearman and label in slugs:
            metric = authors_means(inputs.metrics.values)[:, inputs.metrics.names.index(slugs[label])]
            evidence = swap_evidence(metric, authors_means(human.values)[:, human.names.index(criterion)],
                                     printed[label], spearman[label])
            if evidence:
                return f"{label}'s printed Kendall {printed[label]:.2f}: {evidence}"
    return ""


def audit(paper_values: Mapping, inputs: Inputs, default: Mapping, profile: Mapping) -> pd.DataFrame:
    """One row per printed number: the paper's value, storyeval's under `default` and `profile` switches, the
    printed precision, the status under the profile (and under the default), the switches that change the row,
    and one sentence for every deviation."""
    cache = {}
    runs = {"default": reproduce(inputs, default, cache), "profile": reproduce(inputs, profile, cache)}
    changed = [key for key in SWITCHES if profile[key] != default[key]]
    single = {key: reproduce(inputs, {**default, key: profile[key]}, cache) for key in changed}
    true_claims = claims_hold(inputs, default, runs, cache)
    degenerate = set(inputs.registry.loc[inputs.registry["degenerate_release"].astype(bool), "label"])
    all_items = items(paper_values)
    rows = []
    for item in all_items:
        graded = {name: item.grade(repro, inputs) for name, repro in runs.items()}
        switched = [key for key in changed
                    if true_claims[key] and item.grade(single[key], inputs)[1] != graded["default"][1]]
        evidence = (printed_pair_evidence(item, all_items, inputs, graded["profile"][1])
                    if graded["profile"][0] == "differs" else "")
        profile_status, why = status(graded["profile"][0], item.table, [], evidence)
        default_status, default_why = status(graded["default"][0], item.table, switched, evidence)
        explanation = " ".join(dict.fromkeys(text for text in (default_why, why) if text))
        shown = " ".join(
            str(part)
            for part in (item.printed if isinstance(item.printed, tuple) else (item.printed,))
            if part is not None
        )
        if any(label in f"{shown} {graded['default'][1]}" for label in degenerate):
            explanation += (
                (" " if explanation else "") + f"{', '.join(sorted(degenerate))}: released values are "
                "plain-Sinkhorn underflow noise, a win rests on numerical noise."
            )
        rows.append(
            {
                "paper": READERS[item.table][0],
                "item": item.item,
                "paper_value": shown,
                "storyeval_default": graded["default"][1],
                "storyeval_paper_exact": graded["profile"][1],
                "precision": "name" if item.places is None else f"{10.0**-item.places:g}",
                "status": profile_status,
                "default_status": default_status,
                "switches": ", ".join(switched),
                "explanation": explanation,
            }
        )
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> dict[str, int]:
    counts = table["status"].value_counts()
    return {"numbers": len(table), **{status: int(counts.get(status, 0)) for status in STATUSES}}


def _counts(table: pd.DataFrame) -> str:
    counts = summary(table)
    return (
        f"{counts['exact']} of {counts['numbers']} published numbers reproduced exactly "
        f"({counts['within printed precision']} more within printed precision), "
        f"{counts['explained deviation']} explained, {counts['unexplained']} unexplained"
        + (f", {counts['not computed']} not computed" if counts["not computed"] else "")
    )


def headline(table: pd.DataFrame) -> str:
    """The audit's line: N of M published numbers reproduced exactly, K explained."""
    return f"{_counts(table)} (paper-exact profile)"


def landing_text(table: pd.DataFrame) -> str:
    """The report landing page's paragraph on the audit: both profiles' counts (reStructuredText)."""
    default = summary(table.assign(status=table["default_status"]))
    tally = ", ".join(f"{default[status]} {status}" for status in STATUSES)
    return (f"**Reproduction audit: {_counts(table)}** under config/paper-exact.yaml; under the default settings "
            f"{tally}. Every number with its status and reason: *Reproduction audit*.\n")


def readme_counts(table: pd.DataFrame) -> str:
    """The README's first-screen counts (a test compares them with the README): the paper-exact profile's, then
    the default settings'."""
    default = summary(table.assign(status=table["default_status"]))
    tally = ", ".join(f"{default[status]} {SHORT[status]}" for status in STATUSES if default[status])
    return f"**Reproduction audit: {_counts(table)}** under `config/paper-exact.yaml` (default settings: {tally})."


def float_ties(cube: Cube) -> list[str]:
    """Equal system means of a criterion that the authors' float means tell apart: 'Complexity: GPT
    2.4930555555555554 vs TD-VAE 2.493055555555556'."""
    found = []
    floats, merged = authors_means(cube.values), merge_float_ties(cube.values.mean(axis=0))
    for k, name in enumerate(cube.names):
        for a in range(len(cube.systems)):
            for b in range(a + 1, len(cube.systems)):
                if merged[a, k] == merged[b, k] and floats[a, k] != floats[b, k]:
                    found.append(
                        f"{name}: {cube.systems[a]} {float(floats[a, k])!r} "
                        f"vs {cube.systems[b]} {float(floats[b, k])!r}"
                    )
    return found


def switch_values(config: Mapping) -> dict:
    """The SWITCHES keys' values in a (defaults-filled) config."""
    values = {}
    for key in SWITCHES:
        section, name = key.split(".")
        values[key] = config[section][name]
    return values


def schema_defaults(schema: Mapping) -> dict:
    """The SWITCHES keys' defaults in the config schema: the statistically right settings."""
    return {
        key: schema["properties"][key.split(".")[0]]["properties"][key.split(".")[1]]["default"] for key in SWITCHES
    }


def layered(config: Mapping, profile: str | Path) -> dict:
    """`config` with the profile file's keys layered over it (as Snakemake layers a --configfile)."""
    path = Path(profile)
    if not path.is_file():
        raise InputError(
            f"{path}: the paper-exact profile is not there; fix: set audit.profile in config to it "
            "(config/paper-exact.yaml in the repository)"
        )
    check_config_file(path)  # plain YAML data, its aliases bounded, as every config file
    content = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    merged = {section: dict(values) if isinstance(values, Mapping) else values for section, values in config.items()}
    for section, values in content.items():
        if not isinstance(values, Mapping) or section not in merged:
            raise InputError(f"{path} {section}: not a config section; fix: write switches as section: {{key: value}}")
        merged[section].update(values)
    return merged


def findings(inputs: Inputs, table: pd.DataFrame) -> list[str]:
    """The header of the audit: what a reader of the papers should know, computed from the data."""
    registry = inputs.registry
    degenerate = registry[registry["degenerate_release"].astype(bool)]
    lines = []
    for slug, label in zip(degenerate["slug"], degenerate["label"]):
        values = inputs.metrics.values[:, :, inputs.metrics.names.index(slug)]
        wins = table[
            (table["paper"] == "HANNA Tab. 8, 9")
            & table["item"].str.startswith("system")
            & table["item"].str.endswith("#1")
            & table["paper_value"].str.startswith(f"{label} ")
        ]
        lines.append(
            f"{label}: every released value lies in [{values.min():.0e}, {values.max():.0e}] (plain Sinkhorn "
            f"underflows at that regularisation), yet it tops {len(wins)} system-level columns of Tab. 9 "
            f"({', '.join(item.removeprefix('system ').removesuffix(' #1') for item in wins['item'])}): "
            "those wins rest on numerical noise."
        )
    ties = float_ties(inputs.humans[True])
    if ties:
        lines.append(
            "Equal system means that HANNA's float means tell apart (its rank coefficients order these ties; "
            f"storyeval merges them unless analysis.system_ties is authors): {'; '.join(ties)}."
        )
    layouts = sorted(set(inputs.icc["layout"]))
    lines.append(
        f"Tab. 3 (ICC) here uses {', '.join(layouts)}: the released file numbers its raters by position "
        "1-3, while the paper's judges A, B, C are the three most frequent mTurk workers of the raw "
        "annotation file; the ICCs differ accordingly."
    )
    lines.append(
        "Mendras & Nietge's Tab. 1, 3, 4 rank the 17 metrics of HANNA's notebook (METRICS_FILTERED), not "
        "the 72; their headers are right (unlike HANNA's Tab. 8, 9). Their Tab. 2 needs scipy's floats and "
        "the real ties of the system means."
    )
    return lines


def per_table(table: pd.DataFrame) -> pd.DataFrame:
    """paper (its table), numbers and one count a status (paper-exact profile), in the audit's order: the
    summary the audit opens with."""
    tally = pd.crosstab(table["paper"], table["status"]).reindex(columns=list(STATUSES), fill_value=0)
    tally = tally.reindex(list(dict.fromkeys(table["paper"])))
    return tally.assign(numbers=tally.sum(axis=1))[["numbers", *STATUSES]].rename(columns=SHORT).reset_index()


def markdown(table: pd.DataFrame, notes: list[str]) -> str:
    counts = summary(table)
    head = "\n".join(f"- {line}" for line in notes)
    tally = ", ".join(f"{status}: {counts[status]}" for status in STATUSES)
    return (
        f"# Reproduction audit\n\n**{headline(table)}.**\n\n{tally} (paper-exact profile; default settings: "
        f"{', '.join(f'{status}: {n}' for status, n in table['default_status'].value_counts().items())}).\n\n"
        f"## Per table\n\n{markdown_table(per_table(table))}\n\n"
        f"## Findings\n\n{head}\n\n## Every printed number\n\n{markdown_table(table)}\n"
    )
