"""One orientation everywhere: on a set where a lower-is-better metric agrees best with the humans and a
higher-is-better one correlates more strongly but against its own direction, every output names the same best
metric (Tab. 5, Borda, Kemeny, the direction of the Williams tests, the meta clusters and consensus), and the
paper-exact |r| (analysis.orientation absolute) names the wrong-way metric instead."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from storyeval import tables
from storyeval.analysis import BORDA_LEVELS, correlation_table, metric_criterion_table, rankings
from storyeval.data.scoreset import Cube
from storyeval.stats import meta
from storyeval.stats.kemeny import kemeny_table
from storyeval.stats.williams import williams_inputs, williams_table

CRITERIA = ["Relevance", "Coherence"]
# slug -> (direction, how its scores follow the human rating: weight, noise)
METRICS = {
    "distance": ("lower", -1.0, 0.2),  # a distance that falls as quality rises: the best agreement
    "wrong-way": ("higher", -1.0, 0.1),  # higher-is-better, yet falls as quality rises: largest |r|
    "similarity": ("higher", 1.0, 2.5),  # agrees, with more noise
    "noisy-distance": ("lower", -1.0, 3.0),
}
BEST = "distance"


@pytest.fixture(scope="module")
def cubes():
    rng = np.random.default_rng(11)
    prompts, systems = 16, 6
    quality = rng.normal(size=(1, systems)) + rng.normal(size=(prompts, systems))  # systems differ, stories too
    human = quality[..., None] + 0.5 * rng.normal(size=(prompts, systems, len(CRITERIA)))
    values = np.stack([weight * quality + noise * (rng.normal(size=(1, systems)) + rng.normal(size=quality.shape))
                       for _, weight, noise in METRICS.values()], axis=-1)  # noise at both levels
    ids, names = list(range(prompts)), [f"s{k}" for k in range(systems)]
    registry = pd.DataFrame({"slug": list(METRICS), "label": [slug.title() for slug in METRICS], "family": "string",
                             "direction": [direction for direction, _, _ in METRICS.values()],
                             "order": range(len(METRICS)), "degenerate_release": False})
    return Cube(human, ids, names, CRITERIA), Cube(values, ids, names, list(METRICS)), registry


def analysis_outputs(cubes, orientation):
    human, metrics, registry = cubes
    correlations = correlation_table(human, metrics, ["story", "system"], ["pearson", "spearman", "kendall"])
    top, borda = rankings(correlations, registry, 4, "average", orientation)
    consensus, _ = kemeny_table(metric_criterion_table(correlations, registry), BORDA_LEVELS, 16, 10, orientation)
    return top, borda, consensus


def test_every_analysis_ranking_names_the_same_best_metric(cubes):
    top, borda, consensus = analysis_outputs(cubes, "oriented")
    assert set(top.loc[top["rank"] == 1, "metric"]) == {BEST}  # Tab. 5, 8, 9: every level, coefficient, criterion
    assert set(borda.loc[borda["rank"] == 1, "metric"]) == {BEST}  # Tab. 6, every level
    assert set(consensus.loc[consensus["kemeny_rank"] == 1, "metric"]) == {BEST}
    assert top.loc[top["metric"] == "wrong-way", "ranked_r"].lt(0).all()  # strong, but against its direction
    tab5 = tables.tab5_top_pearson(top, 1)
    assert tab5[["Story 1", "System 1"]].map(lambda cell: cell.startswith("Distance (")).all().all()


def test_williams_tests_point_the_same_way(cubes):
    human, metrics, registry = cubes
    directions = list(registry["direction"])
    for level in ("story", "system"):
        r_mc, r_mm, n = williams_inputs(human.values, metrics.values, level)
        table = williams_table(r_mc, r_mm, n, metrics.names, human.names, level, directions)
        from_best = table[table["metric_a"] == BEST]
        assert (from_best["t"] > 0).all()  # the best beats every other metric's oriented r
        assert (table[table["metric_b"] == BEST]["t"] < 0).all()
        assert (from_best.loc[from_best["metric_b"] == "wrong-way", "p"] < 0.01).all()


def test_meta_clusters_and_consensus_name_the_same_best_metric(cubes):
    human, metrics, registry = cubes
    meta_set = meta.MetaSet.build(human, metrics, registry)
    tests, clusters = meta.perm_both_table(meta_set, "none", "pearson", 200, 3, (0.02, 0.5), None, 0.05)
    intervals = meta.boot_both_table(meta_set, "none", "pearson", 200, 3, 0.95)
    best = meta.best_table(intervals, clusters)
    assert set(best["metric"]) == {BEST} and (best["rank"] == 1).all()
    assert set(clusters.loc[clusters["metric"] == "wrong-way", "rank"]) == {clusters["rank"].max()}
    assert (tests["p"] > 0).all() and (tests["p"] >= tests["p_min"]).all()  # (k + 1) / (n + 1): never 0
    correlations = meta.correlation_table(meta_set, ["none", "system"], ["pearson", "kendall"], False)
    consensus, _ = meta.consensus_tables(correlations, meta_set.registry, ["pearson", "kendall"], 16, 10)
    assert set(consensus.loc[consensus["kemeny_rank"] == 1, "item"]) == {BEST}
    assert set(consensus.loc[consensus["borda_rank"] == 1, "item"]) == {BEST}


def test_paper_exact_absolute_r_ranks_the_wrong_way_metric_first(cubes):
    top, borda, consensus = analysis_outputs(cubes, "absolute")
    pearson = top[(top["coefficient"] == "pearson") & (top["rank"] == 1)]
    assert set(pearson["metric"]) == {"wrong-way"} and (pearson["ranked_r"] == pearson["r"].abs()).all()
    assert set(borda.loc[borda["rank"] == 1, "metric"]) == {"wrong-way"}
