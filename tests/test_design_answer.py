"""The design's answer on simulated studies whose right answer is planted (storyeval.stats.design, .answer)."""

import numpy as np
import pandas as pd
import pytest

from storyeval.stats.answer import (
    Cell,
    Settings,
    block_r,
    cell_rows,
    design_answer,
    leave_out_means,
    spearman_brown,
    weighted_r,
)
from storyeval.stats.design import infer_design, rater_groups, story_blocks, writers_of
from storyeval.stats.grouping import grouped_correlation

SETTINGS = Settings(seed=7, resamples=400, splits=10)


def registry(*rows):
    """slug, label, family, direction of the simulated metrics."""
    return pd.DataFrame([{"slug": slug, "label": slug.title(), "family": "string", "direction": direction}
                         for slug, direction in rows])


def long_scores(ids, columns: dict) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"story_id": ids, "metric": name, "value": values})
                      for name, values in columns.items()], ignore_index=True)


def answer(stories, ratings, scores, table, layout=None, groups=None):
    """What the workflow's rule computes: the design, then the answer (rows, summary)."""
    human = ratings.groupby(["story_id", "criterion"], sort=False)["rating"].mean().rename("score").reset_index()
    design = infer_design(stories, ratings, layout, groups)
    grouped = rater_groups(ratings) if design.groups else {}
    rows, summary = design_answer(stories, human, ratings, scores, table, design,
                                  story_blocks(stories, ratings, design), writers_of(stories), grouped, SETTINGS)
    return design, rows, summary


def two_writers(seed=1, prompts=50):
    """Two writers on `prompts` prompts: `long` writes longer and better-rated stories; within a writer, length
    has nothing to do with the ratings, while `tracker` follows each story's own quality."""
    rng = np.random.default_rng(seed)
    stories = pd.DataFrame([{"story_id": f"p{p}-{w}", "prompt_id": p + 7, "system": w, "writer": w}
                            for p in range(prompts) for w in ("long", "short")])
    better = (stories["system"] == "long").to_numpy() * 2.0
    quality = better + rng.normal(0, 0.6, len(stories))
    length = better * 40 + 100 + rng.normal(0, 10, len(stories))
    tracker = (quality - better) + rng.normal(0, 0.3, len(stories))
    ratings = pd.DataFrame([{"story_id": sid, "criterion": "Coherence", "rater": f"w{(i + k) % 12}",
                             "rating": q + rng.normal(0, 0.5)}
                            for i, (sid, q) in enumerate(zip(stories["story_id"], quality)) for k in range(3)])
    scores = long_scores(stories["story_id"], {"text-length": length, "tracker": tracker})
    return stories, ratings, scores, registry(("text-length", "higher"), ("tracker", "higher"))


def test_two_writers_answer_within_writers_where_pooling_measures_the_writer():
    stories, ratings, scores, table = two_writers()
    design, rows, summary = answer(stories, ratings, scores, table)
    assert design.describe() == "2 writers x 50 prompts, 1 story a cell; 12 raters, 3 a story (layout read off the ids)"
    story = rows[rows["level"] == "story"].set_index("metric")
    assert set(story["statistic"]) == {"within"}
    # Text length: pooled r high (it says which writer wrote the story), within writers nothing
    assert story.at["text-length", "pooled_r"] > 0.6
    assert abs(story.at["text-length", "r"]) < 0.2 and story.at["text-length", "ci_low"] < 0
    assert not story.at["text-length", "beats_writer"]
    assert story.at["tracker", "r"] > 0.6 and story.at["tracker", "beats_writer"]
    cell = summary.iloc[0]
    assert cell["best"] == "Tracker" and cell["writer_baseline"] == 0
    assert cell["writer_baseline_pooled"] > 0.6  # which writer alone, pooled
    assert "the 2 writers fixed" in cell["resampled"] and "50 prompts" in cell["resampled"]
    assert (summary["level"] == "system").sum() == 0  # two writer means: no system level


def test_no_metric_agrees_is_said_when_nothing_beats_the_writer():
    stories, ratings, scores, table = two_writers(seed=3)
    _, _, summary = answer(stories, ratings, scores[scores["metric"] == "text-length"], table.iloc[:1])
    assert summary.iloc[0]["verdict"].startswith("no metric agrees")
    assert not summary.iloc[0]["decided"]


def slot_study(seed=2, stories=483):
    """One group of stories, each rated by 2-5 annotators whose ids are per-story slots (annot0..annot4); a
    repetition count declared lower-is-better rises with the ratings (r about +0.3 against its direction)."""
    rng = np.random.default_rng(seed)
    ids = [f"s{k:03d}" for k in range(stories)]
    quality = rng.normal(0, 1, stories)
    rows = [{"story_id": sid, "criterion": "Coherence", "rater": f"annot{slot}", "rating": q + rng.normal(0, 1)}
            for sid, q, count in zip(ids, quality, rng.integers(2, 6, stories)) for slot in range(count)]
    repetition = 0.3 * quality + rng.normal(0, 0.95, stories)
    noise = rng.normal(0, 1, stories)
    frame = pd.DataFrame({"story_id": ids, "prompt_id": np.nan, "system": ids})
    return (frame, pd.DataFrame(rows), long_scores(ids, {"repetition-1": repetition, "noise": noise}),
            registry(("repetition-1", "lower"), ("noise", "higher")))


def test_slots_are_read_as_positions_and_a_metric_against_its_direction_is_named():
    stories, ratings, scores, table = slot_study()
    design, rows, summary = answer(stories, ratings, scores, table)
    assert design.layout == "position"
    assert design.describe() == ("483 stories in one group (no writers or prompts named); 2-5 ratings a story in 5 "
                                 "per-story positions (not persons) (layout read off the ids)")
    story = rows.set_index("metric")
    assert story.at["repetition-1", "against_direction"]
    assert story.at["repetition-1", "r"] < -0.2  # oriented: ranks last although |r| is the largest
    assert summary.iloc[0]["against_direction"].startswith("Repetition-1 +0.2")  # raw r, as people read it
    assert np.isfinite(summary.iloc[0]["ceiling"])  # per-story splits work on slots
    assert summary.iloc[0]["statistic"] == "pooled"


def test_declared_persons_override_the_guess():
    stories, ratings, scores, table = slot_study(stories=120)
    design, _, _ = answer(stories, ratings, scores, table, layout="rater")
    assert design.layout == "rater" and design.describe().endswith("5 raters, 2-5 a story")


def grouped_writers(seed=4, writers=13, per_writer=5, rater_sd=1.0):
    """`writers` writers x `per_writer` stories on one prompt; raters in `per_writer` groups of 2, group g rating
    story g of every writer. Writer quality ~ N(0, 1), a story's own ~ N(0, 0.5), a rating's noise ~ N(0,
    rater_sd)."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 1, writers)
    rows, ratings = [], []
    for w in range(writers):
        for k in range(per_writer):
            sid = f"w{w:02d}-{k}"
            quality = level[w] + rng.normal(0, 0.5)
            rows.append({"story_id": sid, "prompt_id": 0, "system": f"writer{w:02d}", "writer": f"writer{w:02d}",
                         "quality": quality})
            ratings += [{"story_id": sid, "criterion": "Overall", "rater": f"g{k}r{j}",
                         "rating": quality + rng.normal(0, rater_sd)} for j in range(2)]
    stories = pd.DataFrame(rows)
    length = np.repeat(level, per_writer) + rng.normal(0, 1.5, len(stories))  # a writer-level signal only
    return (stories.drop(columns="quality"), pd.DataFrame(ratings), long_scores(stories["story_id"],
                                                                                {"text-length": length}),
            registry(("text-length", "higher")))


def test_writers_on_one_prompt_with_rater_groups():
    stories, ratings, scores, table = grouped_writers()
    design, rows, summary = answer(stories, ratings, scores, table)
    assert design.describe() == ("13 writers x 5 stories on 1 prompt; 10 raters in 5 groups of 2 (layout read off "
                                 "the ids)")
    assert design.blocks == "group"  # each group rated one story of every writer: the story level's blocks
    story = summary[summary["level"] == "story"].iloc[0]
    system = summary[summary["level"] == "system"].iloc[0]
    assert story["statistic"] == "item" and system["statistic"] == "system"
    assert "5 rater groups" in story["statistic_words"] or "rater group" in story["statistic_words"]
    # like for like: the writers' means are far more reliable than single stories
    assert system["ceiling"] > story["ceiling"] + 0.1


def test_the_system_level_ceiling_recovers_the_planted_reliability():
    """Half-panel writer means share the stories (variance 1 + 0.25 / 5) and differ by one rater's noise per
    story (1 / 5): r_half = 1.05 / 1.25, Spearman-Brown 2 r / (1 + r) = 0.913."""
    stories, ratings, scores, table = grouped_writers(seed=5, writers=400)
    _, _, summary = answer(stories, ratings, scores, table)
    planted = spearman_brown(1.05 / 1.25)
    assert summary[summary["level"] == "system"].iloc[0]["ceiling"] == pytest.approx(planted, abs=0.03)


def grid(seed=6, prompts=20, systems=10):
    """HANNA's design: every system once on every prompt."""
    rng = np.random.default_rng(seed)
    stories = pd.DataFrame([{"story_id": f"p{p}-s{s}", "prompt_id": p, "system": f"s{s}", "writer": f"s{s}"}
                            for p in range(prompts) for s in range(systems)])
    quality = rng.normal(0, 1, len(stories))
    ratings = pd.DataFrame([{"story_id": sid, "criterion": "Coherence", "rater": f"slot{k}",
                             "rating": q + rng.normal(0, 1)}
                            for sid, q in zip(stories["story_id"], quality) for k in range(3)])
    metric = quality + rng.normal(0, 1, len(stories))
    return stories, ratings, long_scores(stories["story_id"], {"bleu": metric}), registry(("bleu", "higher"))


def test_hannas_design_keeps_hannas_story_level():
    stories, ratings, scores, table = grid()
    design, rows, _ = answer(stories, ratings, scores, table, layout="position")
    assert design.blocks == "prompt"
    human = ratings.groupby("story_id", sort=False)["rating"].mean().reindex(stories["story_id"]).to_numpy()
    metric = scores["value"].to_numpy()
    expected, _, _ = grouped_correlation(metric.reshape(20, 10, 1), human.reshape(20, 10, 1), "pearson", "item")
    story = rows[rows["level"] == "story"].iloc[0]
    assert story["statistic"] == "item" and story["r"] == pytest.approx(expected[0, 0], abs=1e-12)
    system = rows[rows["level"] == "system"].iloc[0]
    means = pd.DataFrame({"w": stories["writer"], "m": metric, "h": human}).groupby("w").mean()
    assert system["r"] == pytest.approx(np.corrcoef(means["m"], means["h"])[0, 1], abs=1e-12)


def test_weighted_r_is_pearson_and_demeans_by_group():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    groups = np.repeat([0, 1, 2], 10)
    plain = weighted_r(x, y, np.ones((1, 30)), np.zeros(30, int))[0]
    assert plain == pytest.approx([np.corrcoef(x[:, k], y)[0, 1] for k in range(2)])
    demeaned = pd.DataFrame(np.column_stack([x, y])).groupby(groups).transform(lambda v: v - v.mean()).to_numpy()
    within = weighted_r(x, y, np.ones((1, 30)), groups)[0]
    assert within == pytest.approx([np.corrcoef(demeaned[:, k], demeaned[:, 2])[0, 1] for k in range(2)])
    doubled = weighted_r(x, y, np.ones((1, 30)) * 2, np.zeros(30, int))[0]  # weights scale nothing
    assert doubled == pytest.approx(plain)


def test_block_r_is_pearson_within_each_block_from_the_blocks_stories_alone():
    """Blocks in any order, of uneven size, NaNs on either side dropped pair by pair; a block with fewer than 3
    pairs left is NaN. Per-block sums, never a blocks x stories matrix."""
    rng = np.random.default_rng(4)
    blocks = rng.permutation(np.repeat([7, 2, 5, 9], [12, 9, 3, 20]))
    x, y = rng.normal(size=(44, 3)), rng.normal(size=44)
    x[rng.random((44, 3)) < 0.15] = np.nan
    y[:2] = np.nan
    x[blocks == 5, 1] = np.nan  # no pair in block 5, column 1
    x[np.flatnonzero(blocks == 2)[:7], 2] = np.nan  # 2 pairs at most in block 2, column 2
    expected = np.full((4, 3), np.nan)
    for row, block in enumerate([2, 5, 7, 9]):
        for column in range(3):
            keep = (blocks == block) & np.isfinite(x[:, column]) & np.isfinite(y)
            if keep.sum() >= 3:
                expected[row, column] = np.corrcoef(x[keep, column], y[keep])[0, 1]
    assert np.isnan(expected[1, 1]) and np.isnan(expected[0, 2]) and np.isfinite(expected).sum() >= 9
    assert block_r(x, y, blocks) == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_columns_equal_but_for_the_last_bits_are_tied_in_rank_best_and_p():
    """Two metrics with the same r (ROUGE-4 recall and F-score where no 4-gram matches) come out of sums in
    different orders a few 1e-16 apart: the first column is best, the second ranks next and is never worse in a
    resample (p = 1), whichever of them the last bits favour."""
    rng = np.random.default_rng(5)
    base = rng.uniform(0.1, 0.5, size=(201, 1))
    for noise in (3e-16, -3e-16):
        draws = np.column_stack([base, base + noise, base - 0.2])
        cell = Cell(draws, ["a", "b", "c"], 0.05, 0.95)
        assert cell.best == 0 and cell.p[1] == 1.0 and cell.top.tolist() == [True, True, False]
        registry = pd.DataFrame({"slug": ["a", "b", "c"], "label": ["A", "B", "C"], "direction": "higher",
                                 "family": "f", "kind": "metric"})
        rows = cell_rows(cell, registry, "story", "x", "item", None)
        assert rows["metric"].tolist() == ["a", "b", "c"] and rows["rank"].tolist() == [1, 2, 3]


def test_the_writer_baseline_leaves_the_story_out():
    y = np.array([1.0, 2.0, 3.0, 10.0, 20.0])
    writers = np.array([0, 0, 0, 1, 1])
    assert leave_out_means(y, writers, None) == pytest.approx([2.5, 2.0, 1.5, 20.0, 10.0])


def test_resamples_come_in_bounded_chunks_after_the_sample_itself(monkeypatch):
    from storyeval.stats import answer as module

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(40, 2)), rng.normal(size=40)
    statistic = lambda weights: weighted_r(x, y, weights, np.zeros(40, int))  # noqa: E731
    monkeypatch.setattr(module, "CHUNK", 40 * 7)  # seven resamples a chunk
    seen = []
    monkeypatch.setattr(module, "resample_weights", lambda *args: seen.append(args[2]) or np.ones((args[2], 40)))
    draws = module.resampled(statistic, np.arange(40), np.zeros(40, int), 30, rng)
    assert draws.shape == (31, 2) and seen == [7, 7, 7, 7, 2]
    assert draws[0] == pytest.approx([np.corrcoef(x[:, k], y)[0, 1] for k in range(2)])


def test_meta_best_shows_the_designs_answer_first_each_kinds_best():
    from storyeval.stats.meta import design_best

    answer = pd.DataFrame({
        "level": ["story", "story", "story", "system", "story", "story"],
        "criterion": ["Coherence", "Coherence", "Coherence", "Coherence", "Fluency", "Fluency"],
        "statistic": ["within", "within", "within", "system", "within", "within"],
        "metric": ["a", "judge", "b", "a", "b", "a"], "label": ["A", "Judge", "B", "A", "B", "A"],
        "kind": ["metric", "LLM judge", "metric", "metric", "metric", "metric"],
        "r": [0.5, 0.4, np.nan, 0.9, 0.3, 0.2], "ci_low": 0.0, "ci_high": 1.0, "rank": [1, 2, 3, 1, 1, 2],
        "top": [True, False, False, True, True, True]})
    best = design_best(answer, pd.Series({"a": "string", "b": "string", "judge": "llm-judge"}))
    assert best[["grouping", "criterion", "metric"]].values.tolist() == [
        ["design: within", "Coherence", "a"], ["design: within", "Coherence", "judge"],
        ["design: within", "Fluency", "b"], ["design: system", "Coherence", "a"]]
    assert best["rank"].tolist() == [1, 2, 1, 1] and best["rank1_size"].tolist() == [1, 1, 2, 1]
    assert best["kind_best"].all() and best.loc[1, "family"] == "llm-judge"


def test_tab5_and_borda_rank_the_designs_answer_beside_the_papers_levels():
    from storyeval.analysis import rankings
    from storyeval.tables import tab5_top_pearson

    registry = pd.DataFrame({"slug": ["up", "down"], "label": ["Up", "Down"], "order": [0, 1],
                             "degenerate_release": False, "direction": ["higher", "lower"]})
    pooled = pd.DataFrame({"kind": "metric_criterion", "level": "story", "coefficient": "pearson",
                           "x": ["up", "down"], "y": "Coherence", "r": [0.8, -0.1], "n": 100})
    # within writers the lower-is-better metric agrees (oriented +0.4) and the pooled leader does not
    answer = pd.DataFrame({"level": "story", "criterion": "Coherence", "metric": ["up", "down"], "r": [0.0, 0.4]})
    top, counts = rankings(pooled, registry, 2, answer=answer)
    design = top[top["level"] == "design"].set_index("metric")
    assert design["rank"].to_dict() == {"down": 1, "up": 2}
    assert design.loc["down", "ranked_r"] == pytest.approx(0.4) and design.loc["down", "r"] == pytest.approx(-0.4)
    assert top[top["level"] == "story"].set_index("metric")["rank"].to_dict() == {"up": 1, "down": 2}
    assert counts[counts["level"] == "design"].sort_values("rank")["metric"].tolist() == ["down", "up"]
    table = tab5_top_pearson(top, 1)
    assert table.loc[0, "Design 1"].startswith("Down (40)") and table.loc[0, "Story 1"].startswith("Up (80)")
