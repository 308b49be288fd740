"""Meta-evaluation of metrics and LLM judges against the human ratings, criterion by criterion.

Composes storyeval.stats for the workflow: correlations by grouping with the Kendall variants (Deutsch, Foster &
Freitag 2023), pairwise and soft pairwise accuracy (Kocmi et al. 2021; Thompson et al. 2024), PERM-BOTH tests,
BOOT-BOTH intervals (Deutsch, Dror & Roth 2021), Benjamini-Hochberg (1995) adjusted p-values and WMT
significance clusters.

Columns are oriented higher-is-better first (a lower-is-better metric's r changes sign), so that "agrees best"
is "largest r" for metrics and judges alike. An LLM judge (HANNA's TACL 2024 release, Chhun, Suchanek & Clavel
2024) is meta-evaluated against the criterion it rated, and its Average against every criterion
(hanna_judges.judges_for); the metrics against every criterion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from storyeval.data.hanna_judges import AVERAGE, FAMILY, judges_for
from storyeval.data.load import load_cubes
from storyeval.data.registry import marked, slugify
from storyeval.data.scoreset import Cube
from storyeval.errors import InputError
from storyeval.io import read_table
from storyeval.stats import fdr, grouping, pairwise, permutation
from storyeval.stats.bootstrap import oriented
from storyeval.stats.kemeny import kemeny_table
from storyeval.stats.kendall import CALIBRATED
from storyeval.stats.ranking import borda
from storyeval.stats.williams import williams_inputs, williams_table

LABELS = ["label", "family"]  # registry columns copied beside each row's metric slug


@dataclass(frozen=True)
class MetaSet:
    human: Cube  # [P, S, criteria]
    metrics: Cube  # [P, S, metrics and judges], oriented higher-is-better
    registry: pd.DataFrame  # slug, label, family, direction, ...; judges also judge, criterion, task

    @classmethod
    def build(
        cls,
        human: Cube,
        metrics: Cube,
        registry: pd.DataFrame,
        judges: Cube | None = None,
        judge_registry: pd.DataFrame | None = None,
    ) -> MetaSet:
        if judges is not None:
            if (judges.prompts, judges.systems) != (metrics.prompts, metrics.systems):
                raise InputError(
                    "meta: the judge scores cover other stories than the metrics; fix: use the same "
                    "release (hanna_metric_scores.csv and hanna_metric_scores_llm.csv)"
                )
            metrics = Cube(
                np.concatenate([metrics.values, judges.values], axis=-1),
                metrics.prompts,
                metrics.systems,
                metrics.names + judges.names,
            )
            registry = pd.concat([registry, judge_registry], ignore_index=True)
        registry = registry.set_index("slug").loc[metrics.names].reset_index()
        values = oriented(metrics.values, list(registry["direction"]))
        return cls(human, Cube(values, metrics.prompts, metrics.systems, metrics.names), registry)

    def columns(self, criterion: str) -> list[str]:
        """The metrics, then the judges that rate `criterion` and the judges' Averages."""
        judged = self.registry["family"] == FAMILY
        judges = judges_for(self.registry[judged], criterion) if judged.any() else []
        return list(self.registry.loc[~judged, "slug"]) + judges

    def cubes(self, criterion: str) -> tuple[Cube, Cube]:
        """(human [P, S, 1], metrics [P, S, columns(criterion)]) for one criterion."""
        c = self.human.names.index(criterion)
        index = {slug: k for k, slug in enumerate(self.metrics.names)}
        keep = [index[slug] for slug in self.columns(criterion)]
        human = Cube(self.human.values[..., [c]], self.human.prompts, self.human.systems, [criterion])
        return human, Cube(
            self.metrics.values[..., keep],
            self.metrics.prompts,
            self.metrics.systems,
            [self.metrics.names[k] for k in keep],
        )

    def labelled(self, table: pd.DataFrame, column: str = "metric") -> pd.DataFrame:
        """`table` with each metric's label and family right after `column`."""
        labels = self.registry.set_index("slug")[LABELS]
        at = table.columns.get_loc(column) + 1
        for offset, name in enumerate(LABELS):
            table.insert(at + offset, name, table[column].map(labels[name]).to_numpy())
        return table


def per_criterion(meta: MetaSet, compute) -> pd.DataFrame:
    """`compute(human, metrics)` on each criterion's cubes, concatenated and labelled."""
    return meta.labelled(pd.concat([compute(*meta.cubes(name)) for name in meta.human.names], ignore_index=True))


def correlation_table(
    meta: MetaSet, groupings: list[str], coefficients: list[str], calibrate_none: bool
) -> pd.DataFrame:
    """grouped_table per criterion; the tie-calibrated variants at grouping none only if `calibrate_none`
    (their epsilon search over all P x S stories costs about a minute on HANNA)."""

    chosen = {
        name: [c for c in coefficients if name != "none" or calibrate_none or c not in CALIBRATED] for name in groupings
    }

    def compute(human, metrics):
        frames = [grouping.grouped_table(human, metrics, [name], chosen[name]) for name in groupings if chosen[name]]
        return pd.concat(frames, ignore_index=True)

    return per_criterion(meta, compute)


def pairwise_accuracy_table(meta: MetaSet, n_permutations: int, seed: int) -> pd.DataFrame:
    """Pairwise and soft pairwise accuracy of the system rankings (grouping system by definition)."""
    table = per_criterion(meta, lambda human, metrics: pairwise.pairwise_table(human, metrics, n_permutations, seed))
    table.insert(0, "grouping", "system")
    return table


def tested_pairs(r: np.ndarray, best_k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (best_k None), else every column against each of the `best_k` best by r (NaN last)."""
    m = len(r)
    if best_k is None or best_k >= m:
        return np.triu_indices(m, k=1)
    top = np.argsort(np.where(np.isnan(r), -np.inf, -r), kind="stable")[:best_k]
    chosen = np.zeros((m, m), dtype=bool)
    chosen[top, :] = chosen[:, top] = True
    first, second = np.nonzero(np.triu(chosen, k=1))
    return first, second


def bh_safe_stop(early_stop: tuple[float, float] | None, alpha: float, tests: int) -> tuple[float, float] | None:
    """Early stopping whose stop below costs no power after BH: a pair stops as significant only once its p is
    at most alpha / tests, which BH rejects whatever the other p are (it never rejects less than Bonferroni).
    mt-metrics-eval's fixed 0.02 stops a pair at p = 1 / (block + 1) (0.0099 with blocks of 100), which BH over
    90 tests (10 metrics) lifts above 0.05 unless a fifth of the tests are as small: every metric would share the
    top cluster, as UNION's released metrics did on 400 stories."""
    if early_stop is None:
        return None
    return min(early_stop[0], alpha / max(tests, 1)), early_stop[1]


def perm_both_table(
    meta: MetaSet,
    grouping_name: str,
    coefficient: str,
    n_permutations: int,
    seed: int,
    early_stop: tuple[float, float] | None,
    best_k: int | None,
    alpha: float,
    block: int = 100,
    system_perm: str = "cells",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tests, clusters) of one grouping: PERM-BOTH per criterion with p_bh (one BH family per criterion), and
    the WMT significance clusters on p_bh. With `best_k`, pairs not tested count as not separated, so ranks
    below the best's cluster rest on the tested pairs only. Early stopping below (`early_stop`) takes the lower
    of its threshold and alpha / m (m tests in the family), `bh_safe_stop`."""
    tests, clusters = [], []
    for criterion in meta.human.names:
        human, metrics = meta.cubes(criterion)
        r = permutation.batch_correlation(metrics.values, human.values, grouping_name, coefficient)[:, 0]
        pairs = tested_pairs(r, best_k)
        table = permutation.perm_both(
            human.values[..., 0],
            metrics.values,
            metrics.names,
            grouping_name,
            coefficient,
            n_permutations,
            seed,
            block=block,
            early_stop=bh_safe_stop(early_stop, alpha, 2 * len(pairs[0])),  # both orders of a pair are tests
            pairs=pairs,
            system_perm=system_perm,
        )
        table = fdr.with_bh(table, "p")
        ranks = permutation.significance_clusters(table, alpha, "p_bh")
        for frame, rows in ((table, tests), (ranks, clusters)):
            frame.insert(0, "criterion", criterion)
            rows.append(frame)
    tests, clusters = (pd.concat(rows, ignore_index=True) for rows in (tests, clusters))
    for frame in (tests, clusters):
        frame.insert(0, "coefficient", coefficient)
        frame.insert(0, "grouping", grouping_name)
    return meta.labelled(tests, "metric_a"), meta.labelled(clusters)


def boot_both_table(
    meta: MetaSet, grouping_name: str, coefficient: str, n_resamples: int, seed: int, confidence: float
) -> pd.DataFrame:
    """BOOT-BOTH percentile intervals of every column's correlation with its criterion, one grouping. The
    resamples are drawn once for all columns and criteria (each metric column serves six criteria), then each
    criterion keeps its columns (MetaSet.columns)."""
    names, criteria = meta.metrics.names, meta.human.names
    table = permutation.boot_both(
        meta.human.values,
        meta.metrics.values,
        names,
        criteria,
        grouping_name,
        coefficient,
        n_resamples,
        seed,
        confidence,
    ).set_index(["criterion", "metric"], drop=False)
    table = meta.labelled(
        pd.concat([table.loc[criterion].loc[meta.columns(criterion)] for criterion in criteria], ignore_index=True)
    )
    table.insert(0, "coefficient", coefficient)
    table.insert(0, "grouping", grouping_name)
    return table


def best_table(intervals: pd.DataFrame, clusters: pd.DataFrame, top: int = 1) -> pd.DataFrame:
    """Per criterion, grouping and family (metrics, LLM judges): the `top` best by r, with the BOOT-BOTH interval,
    the significance-cluster rank, and how many columns share rank 1; groupings and criteria in the order of
    `intervals`, and within each the best first whatever its kind (column kind_best marks each kind's best)."""
    keys = ["grouping", "coefficient", "criterion"]
    rows = intervals.merge(clusters[keys + ["metric", "rank"]], on=keys + ["metric"], how="left", validate="1:1")
    rows["rank1_size"] = rows.groupby(keys)["rank"].transform(lambda rank: int((rank == 1).sum()))
    rows["kind"] = np.where(rows["family"] == FAMILY, "LLM judge", "metric")
    rows["order"] = rows.groupby(keys, sort=False).ngroup()  # the groupings and criteria in the inputs' order
    rows = rows.sort_values(["order", "r", "metric"], ascending=[True, False, True], kind="stable", na_position="last")
    best = rows.groupby(keys + ["kind"], sort=False).head(top)
    best = best.assign(kind_best=best.groupby(keys + ["kind"], sort=False).cumcount() == 0)
    columns = ["kind", "metric", "label", "family", "r", "ci_low", "ci_high", "rank", "rank1_size", "kind_best"]
    return best[keys + columns]


def design_best(answer: pd.DataFrame, family: pd.Series, top: int = 1) -> pd.DataFrame:
    """best_table's rows from the design's answer (answer.csv, storyeval.stats.answer): per level and criterion,
    each kind's `top` best under the statistic the design calls for, as grouping "design: <statistic>" (Pearson;
    rank 1: the answer's top cluster, 2: below it), so that the table shows the answer beside the papers'
    groupings. `family`: slug -> family of the answer's columns."""
    rows = answer[answer["r"].notna()]
    criteria = {name: order for order, name in enumerate(pd.unique(rows["criterion"]))}
    rows = rows.assign(order=rows["criterion"].map(criteria)).sort_values(["level", "order", "rank"], kind="stable")
    keys = ["grouping", "coefficient", "criterion"]
    rows = rows.assign(grouping="design: " + rows["statistic"], coefficient="pearson",
                       family=rows["metric"].map(family), rank=np.where(rows["top"].astype(bool), 1, 2))
    rows["rank1_size"] = rows.groupby(keys)["top"].transform(lambda top: int(top.astype(bool).sum()))
    best = rows.groupby(keys + ["kind"], sort=False).head(top)
    best = best.assign(kind_best=best.groupby(keys + ["kind"], sort=False).cumcount() == 0)
    columns = ["kind", "metric", "label", "family", "r", "ci_low", "ci_high", "rank", "rank1_size", "kind_best"]
    return best[keys + columns].reset_index(drop=True)


def task_name(task, short: bool = False) -> str:
    """"task 2" ("t2" `short`) for an Eval-Prompt number of HANNA's release (also read back as 2.0 or "2"), else
    the name of the prompt template (a judge computed here, storyeval.judges)."""
    number = pd.to_numeric(task, errors="coerce")
    if pd.isna(number):
        return slugify(str(task)) if short else str(task)
    return f"t{int(number)}" if short else f"task {int(number)}"


def ranked_items(registry: pd.DataFrame) -> pd.DataFrame:
    """slug -> item, label, family: what a consensus ranking ranks. A judge's ratings of the six criteria are one
    item (judge x task, or judge x template for a judge computed here), ranked in each criterion's ranking by the
    rating of that criterion, so that every ranking holds every item as Borda and Kemeny need; its Average is an
    item of its own. Metrics are their own items."""
    items = registry[["slug", "label", "family"]].assign(item=registry["slug"])
    if "judge" in registry:
        rated = (registry["family"] == FAMILY) & (registry["criterion"] != AVERAGE)
        judge, task = registry.loc[rated, "judge"], registry.loc[rated, "task"]
        if "template" in registry:  # a judge computed here: its prompt template names the item
            task = registry.loc[rated, "template"].where(registry.loc[rated, "template"].notna(), task)
        items.loc[rated, "item"] = judge.map(slugify) + "-" + task.map(lambda t: task_name(t, short=True))
        items.loc[rated, "label"] = judge + " (" + task.map(task_name) + ")"
    return items


def consensus_tables(
    correlations: pd.DataFrame,
    registry: pd.DataFrame,
    coefficients: list[str],
    dp_limit: int,
    ilp_time_limit: float,
    answer: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Borda counts and Kemeny consensus of the metrics and LLM judges (`ranked_items`), one ranking per grouping,
    `coefficients` member and criterion of meta/correlations.csv; per grouping and over all groupings ('all').
    `answer` (answer.csv, storyeval.stats.answer): its story-level Pearson r under the statistic the design calls
    for, one ranking per criterion, as level "design" (outside 'all', which aggregates the papers' groupings).

    Returns (consensus: level, item, label, family, kemeny_rank, borda, borda_rank; summary: kemeny_table's)."""
    missing = sorted(set(coefficients) - set(correlations["coefficient"]))
    if missing:
        raise InputError(
            f"meta consensus: coefficient(s) {missing} not in meta/correlations.csv; fix: add them to config "
            "meta.coefficients or drop them from meta.consensus_coefficients"
        )
    items = ranked_items(registry).set_index("slug")
    rows = correlations[correlations["coefficient"].isin(coefficients)]
    frame = pd.DataFrame(
        {
            "level": rows["grouping"],
            "coefficient": rows["coefficient"],
            "x": rows["metric"].map(items["item"]),
            "y": rows["criterion"],
            "r": rows["r"],
            # meta/correlations.csv holds r after orientation already (MetaSet): rank by it as is
            "direction": "higher",
        }
    )
    groupings = list(dict.fromkeys(frame["level"]))
    levels = {name: [name] for name in groupings} | {"all": groupings}
    if answer is not None:
        story = answer[answer["level"] == "story"]
        frame = pd.concat([pd.DataFrame({"level": "design", "coefficient": "pearson",
                                         "x": story["metric"].map(items["item"]), "y": story["criterion"],
                                         "r": story["r"], "direction": "higher"}), frame], ignore_index=True)
        levels = {"design": ["design"], **levels}
    consensus, summary = kemeny_table(frame, levels, dp_limit, ilp_time_limit)
    counts = borda(frame, levels).rename(columns={"metric": "item", "rank": "borda_rank"})
    consensus = consensus.rename(columns={"metric": "item"}).merge(
        counts[["level", "item", "borda"]], on=["level", "item"], validate="1:1"
    )
    labels = items.drop_duplicates("item").set_index("item")[["label", "family"]]
    for offset, name in enumerate(["label", "family"]):
        consensus.insert(2 + offset, name, consensus["item"].map(labels[name]))
    columns = ["level", "item", "label", "family", "kemeny_rank", "borda", "borda_rank"]
    return consensus[columns], summary


def best_consensus(consensus: pd.DataFrame, top: int) -> pd.DataFrame:
    """The `top` metrics and `top` LLM judges of each consensus level by Kemeny rank, the best first whatever its
    kind (column kind_best marks each kind's best)."""
    kind = np.where(consensus["family"] == FAMILY, "LLM judge", "metric")
    table = consensus.assign(kind=kind, level_order=consensus.groupby("level", sort=False).ngroup())
    table = table.sort_values(["level_order", "kemeny_rank", "borda_rank"], kind="stable")
    table = table.groupby(["level", "kind"], sort=False).head(top)
    table = table.assign(kind_best=table.groupby(["level", "kind"], sort=False).cumcount() == 0)
    return table[["level", "kind", "kemeny_rank", "item", "label", "family", "borda", "borda_rank", "kind_best"]]


# meta grouping -> williams_inputs (level, story_mode): Pearson over all stories (n = P x S), per prompt (mean r,
# n = S), over the system means (n = S).
WILLIAMS_MODES = {"none": ("story", "pooled"), "item": ("story", "per_prompt"), "system": ("system", "pooled")}


def judge_williams_table(meta: MetaSet, groupings: list[str], best_k: int) -> pd.DataFrame:
    """Williams tests (Pearson, one-sided) of every LLM-judge column against each of the `best_k` metrics with the
    largest r after orientation (the MetaSet's columns are oriented), both ways (judge > metric, metric > judge), per
    grouping and criterion, with BH-adjusted p-values (one family per grouping and criterion, as Chhun, Suchanek &
    Clavel 2024 adjust theirs)."""
    tables = []
    judged = set(meta.registry.loc[meta.registry["family"] == FAMILY, "slug"])
    for grouping_name in groupings:
        level, story_mode = WILLIAMS_MODES[grouping_name]
        for criterion in meta.human.names:
            human, metrics = meta.cubes(criterion)
            r_mc, r_mm, n = williams_inputs(human.values, metrics.values, level, story_mode)
            is_judge = np.isin(metrics.names, list(judged))
            strength = np.where(np.isnan(r_mc[:, 0]) | is_judge, -np.inf, r_mc[:, 0])
            best = set(np.asarray(metrics.names)[np.argsort(-strength, kind="stable")[:best_k]])
            table = williams_table(r_mc, r_mm, n, metrics.names, [criterion], level, ["higher"] * len(metrics.names))
            a_judge, b_judge = table["metric_a"].isin(judged), table["metric_b"].isin(judged)
            keep = (a_judge & table["metric_b"].isin(best)) | (b_judge & table["metric_a"].isin(best))
            table = fdr.with_bh(table[keep].reset_index(drop=True), "p")
            table.insert(0, "grouping", grouping_name)
            tables.append(table)
    table = meta.labelled(pd.concat(tables, ignore_index=True), "metric_a")
    labels = meta.registry.set_index("slug")["label"]
    table.insert(table.columns.get_loc("metric_b") + 1, "label_b", table["metric_b"].map(labels).to_numpy())
    return table


def one_blas_thread():
    """Limit the loaded BLAS libraries to one thread for the rest of the process. The workflow runs its jobs side
    by side on the cores, where threaded OpenBLAS only contends (PERM-BOTH's per-system products on 2 busy cores:
    3 CPU-ms with one thread, 21 threaded), and one thread sums in the same order whatever --cores."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def load_meta(paths, reference_system: str | None) -> MetaSet:
    """The score set of `paths` (stories, human, scores, registry) and, with `judge_scores` and `judge_registry`,
    the LLM judges (rule judge_scores)."""
    human, metrics = load_cubes(paths, reference_system)
    if human is None:
        raise InputError(f"meta: {paths['scores']} has no human ratings to meta-evaluate against")
    registry = marked(read_table(paths["registry"], ["slug", "label", "family", "direction"]))
    if "judge_scores" not in paths.keys():
        return MetaSet.build(human, metrics, registry)
    judge_paths = {"stories": paths["stories"], "scores": paths["judge_scores"], "registry": paths["judge_registry"]}
    _, judges = load_cubes(judge_paths, reference_system)
    judge_registry = read_table(paths["judge_registry"], ["slug", "label", "family", "direction", "judge", "criterion"])
    return MetaSet.build(human, metrics, registry, judges, judge_registry)
