"""LLM judges beside the metrics in the Borda / Kemeny consensus and in Williams tests against the best metrics
(storyeval.stats.meta), each checked against an independent computation on a small random set."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from storyeval.data.scoreset import Cube
from storyeval.errors import InputError
from storyeval.stats import meta
from storyeval.stats.williams import williams_test

CRITERIA = ["Relevance", "Coherence"]
CODES = {"Relevance": "re", "Coherence": "ch", "Average": "avg"}


def _meta_set(seed=0, prompts=8, systems=5, n_metrics=4):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=(prompts, systems, len(CRITERIA))).astype(float)
    metrics = rng.normal(size=(prompts, systems, n_metrics)) + human.mean(axis=-1, keepdims=True) * [0.2, 0.5, 1, 2]
    rows, columns = [], []
    for judge, task in itertools.product(["Judge-A", "Judge-B"], [1, 2]):
        for criterion in CRITERIA + ["Average"]:
            slug = f"{judge.lower()}-{CODES[criterion]}-t{task}"
            rows.append({"slug": slug, "label": f"{judge} {CODES[criterion].upper()} (task {task})",
                         "family": "llm-judge", "direction": "higher", "judge": judge, "criterion": criterion,
                         "task": task})
            source = human.mean(axis=-1) if criterion == "Average" else human[..., CRITERIA.index(criterion)]
            columns.append(source + rng.normal(scale=task, size=source.shape))
    judges = np.stack(columns, axis=-1)
    names = [f"m{k}" for k in range(n_metrics)]
    registry = pd.DataFrame({"slug": names, "label": [f"M{k}" for k in range(n_metrics)], "family": "metric",
                             "direction": ["higher", "lower", "higher", "higher"][:n_metrics]})
    prompt_ids, system_ids = list(range(prompts)), [f"s{k}" for k in range(systems)]
    return meta.MetaSet.build(
        Cube(human, prompt_ids, system_ids, CRITERIA),
        Cube(metrics, prompt_ids, system_ids, names),
        registry,
        Cube(judges, prompt_ids, system_ids, [row["slug"] for row in rows]),
        pd.DataFrame(rows),
    )


def _correlations(meta_set):
    return meta.correlation_table(meta_set, ["none", "system"], ["pearson", "kendall"], False)


def test_a_judge_is_one_item_across_criteria_and_its_average_another():
    items = meta.ranked_items(_meta_set().registry).set_index("slug")
    assert items.loc["judge-a-re-t1", "item"] == items.loc["judge-a-ch-t1", "item"] == "judge-a-t1"
    assert items.loc["judge-a-avg-t1", "item"] == "judge-a-avg-t1" and items.loc["m0", "item"] == "m0"
    assert items.loc["judge-b-ch-t2", "label"] == "Judge-B (task 2)"


def test_borda_counts_equal_a_loop_and_kemeny_is_no_worse_than_borda():
    meta_set = _meta_set()
    correlations = _correlations(meta_set)
    consensus, summary = meta.consensus_tables(correlations, meta_set.registry, ["pearson", "kendall"], 16, 10)
    items = meta.ranked_items(meta_set.registry).set_index("slug")["item"]
    assert set(consensus["level"]) == {"none", "system", "all"}
    assert consensus.groupby("level").size().eq(4 + 4 + 4).all()  # 4 metrics, 4 judge x task, 4 Averages
    for level, members in {"none": ["none"], "system": ["system"], "all": ["none", "system"]}.items():
        points = {}
        rows = correlations[correlations["grouping"].isin(members)]
        for _, ranking in rows.groupby(["grouping", "coefficient", "criterion"]):
            strength = dict(zip(ranking["metric"].map(items), ranking["r"]))  # r of oriented columns, as is
            assert len(strength) == 12  # every item in every ranking
            for item, value in strength.items():  # points: items strictly below, half of the ties
                below = sum(other < value for other in strength.values())
                ties = sum(other == value for other in strength.values()) - 1
                points[item] = points.get(item, 0) + below + ties / 2
        got = consensus[consensus["level"] == level].set_index("item")["borda"]
        assert got.to_dict() == pytest.approx(points)
    assert (summary["kemeny_score"] <= summary["borda_score"] + 1e-9).all()
    assert summary["method"].eq("exact").all()


def test_consensus_refuses_a_coefficient_not_computed():
    meta_set = _meta_set()
    with pytest.raises(InputError, match="meta.consensus_coefficients"):
        meta.consensus_tables(_correlations(meta_set), meta_set.registry, ["spearman"], 16, 10)


def test_best_consensus_keeps_the_top_of_each_family_per_level():
    meta_set = _meta_set()
    consensus, _ = meta.consensus_tables(_correlations(meta_set), meta_set.registry, ["pearson"], 16, 10)
    best = meta.best_consensus(consensus, 2)
    assert best.groupby(["level", "kind"]).size().eq(2).all() and list(dict.fromkeys(best["level"])) == [
        "none", "system", "all"]
    for (level, kind), rows in best.groupby(["level", "kind"]):
        family = consensus[(consensus["level"] == level) & ((consensus["family"] == "llm-judge") == (kind != "metric"))]
        assert list(rows["kemeny_rank"]) == sorted(family["kemeny_rank"])[:2]


@pytest.mark.parametrize("grouping", ["none", "system"])
def test_judge_williams_equals_scipy_pearson_and_the_formula(grouping):
    meta_set = _meta_set(seed=3)
    table = meta.judge_williams_table(meta_set, [grouping], best_k=2)
    for criterion in CRITERIA:
        c = CRITERIA.index(criterion)
        human = meta_set.human.values[..., c]
        names = meta_set.columns(criterion)
        values = {name: meta_set.metrics.values[..., meta_set.metrics.names.index(name)] for name in names}
        if grouping == "none":
            flat = {name: v.ravel() for name, v in values.items()}
            target = human.ravel()
        else:
            flat = {name: v.mean(axis=0) for name, v in values.items()}
            target = human.mean(axis=0)
        r = {name: stats.pearsonr(v, target)[0] for name, v in flat.items()}
        # the columns are oriented (m1 lower-is-better, negated): the best metrics have the largest r, not |r|
        best = sorted((name for name in names if not name.startswith("judge")), key=lambda n: -r[n])[:2]
        judges = [name for name in names if name.startswith("judge")]
        rows = table[table["criterion"] == criterion]
        expected = {(j, m) for j in judges for m in best} | {(m, j) for j in judges for m in best}
        assert set(zip(rows["metric_a"], rows["metric_b"])) == expected
        for row in rows.itertuples():
            r_ab = stats.pearsonr(flat[row.metric_a], flat[row.metric_b])[0]
            _, p = williams_test(r[row.metric_a], r[row.metric_b], r_ab, len(target))
            assert row.p == pytest.approx(float(p), rel=1e-9, abs=1e-12)
        assert (rows["p_bh"] >= rows["p"] - 1e-12).all()
        assert rows["p_bh"].to_numpy() == pytest.approx(stats.false_discovery_control(rows["p"].to_numpy()))


def test_the_designs_answer_is_a_consensus_level_of_its_own_outside_all():
    """answer.csv's story-level r (the statistic the design calls for) is one ranking per criterion: its Kemeny
    and Borda follow them, and 'all' stays the papers' groupings."""
    meta_set = _meta_set()
    correlations = _correlations(meta_set)
    plain, _ = meta.consensus_tables(correlations, meta_set.registry, ["pearson"], 16, 10)
    story = correlations[(correlations["grouping"] == "none") & (correlations["coefficient"] == "pearson")]
    answer = story.assign(level="story", r=-story["r"])[["level", "criterion", "metric", "r"]]  # reversed order
    consensus, _ = meta.consensus_tables(correlations, meta_set.registry, ["pearson"], 16, 10, answer)
    assert list(dict.fromkeys(consensus["level"]))[0] == "design"
    pd.testing.assert_frame_equal(consensus[consensus["level"] != "design"].reset_index(drop=True), plain)
    design = consensus[consensus["level"] == "design"].set_index("item")["borda"]
    none = plain[plain["level"] == "none"].set_index("item")["borda"]
    assert design.idxmax() == none.idxmin()  # reversed rankings: the last becomes the first
