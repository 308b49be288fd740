"""Pairwise judges (storyeval.judges.pairwise): the pairs drawn, verdicts under both tie rules, win rates and
Bradley-Terry strengths, pairwise accuracy against the humans, each on data whose answer is planted; tiny judges
with a planted position bias (storyeval.judges.rate, in process), and a workflow run whose report names the biased
judge and not the fair one (a served judge on the loopback address that prefers the longer story in either
order)."""

import hashlib
import json
import math
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tiny_models import CORPUS, completions_server, tiny_pair_judge
from workflow_helpers import make_workdir, run_snakemake

PLOT = {"Plot": "how interesting the plot is"}


def texts(sizes: list[int]) -> pd.DataFrame:
    from storyeval.api import texts_table

    prompts = [f"Write about topic {k}." for k, n in enumerate(sizes) for _ in range(n)]
    stories = [f"{CORPUS[j % len(CORPUS)]} {'And then more happened.' * (j % 4)}" for j in range(len(prompts))]
    return texts_table(stories, prompts=prompts, story_ids=[f"s{j}" for j in range(len(prompts))])


def connected(pairs: pd.DataFrame, ids: list) -> bool:
    reached, edges = {ids[0]}, list(zip(pairs["a"], pairs["b"]))
    for _ in ids:
        reached |= {b for a, b in edges if a in reached} | {a for a, b in edges if b in reached}
    return reached == set(ids)


def test_pairs_are_every_pair_where_few_else_seeded_cycles():
    from storyeval.judges.pairwise import pairs

    table = texts([5, 9, 10, 40])
    drawn = pairs(table, "auto", seed=1)
    sizes = drawn.groupby("prompt_id").size()
    assert sizes[0] == 10 and sizes[1] == 36  # n = 5, 9: all n(n-1)/2 pairs (at most n ceil(log2 n))
    assert 20 <= sizes[2] <= 40 and 120 <= sizes[3] <= 240  # ceil(log2 n) cycles of n draws, repeats dropped
    for prompt, own in table.groupby("prompt_id"):
        mine = drawn[drawn["prompt_id"] == prompt]
        assert connected(mine, list(own["story_id"])) and (mine["a"] != mine["b"]).all()
        assert not mine.duplicated(["a", "b"]).any()
    pd.testing.assert_frame_equal(drawn, pairs(table, "auto", seed=1))  # seeded
    assert not drawn.equals(pairs(table, "auto", seed=2))
    assert len(pairs(table, "all")) == 10 + 36 + 45 + 780
    assert (pairs(table, 1).groupby("prompt_id").size() == [5, 9, 10, 40]).all()  # one cycle: n pairs (n > 2)
    assert pairs(texts([1, 2]), "auto")[["a", "b"]].values.tolist() == [["s1", "s2"]]  # a lone story: no pair


def test_a_dataset_takes_rating_and_pairwise_judges_each_with_its_templates():
    from storyeval.errors import InputError
    from storyeval.judges.config import check_judges, jobs

    config = {"datasets": {"mine": {"kind": "table", "path": "mine.csv", "columns": {"story": "text",
                                                                                     "prompt": "prompt"}}},
              "judges": {"models": {"rater": {"path": "x"}, "pair": {"path": "y", "mode": "pairwise"}},
                         "templates": ["tacl-1"], "mode": "expected",
                         "datasets": {"mine": {"criteria": PLOT, "templates": ["tacl-1", "geval", "pairwise"]}}}}
    assert jobs(config, "mine") == [("rater", "tacl-1"), ("rater", "geval"), ("pair", "pairwise")]
    config["judges"]["datasets"]["mine"]["templates"] = ["tacl-1"]
    with pytest.raises(InputError, match=r"judges.datasets.mine: judge pair \(mode pairwise\) has no template that "
                                         r"would compare two stories; fix: add one to judges.datasets.mine.templates"):
        check_judges(config)


def details(answers: dict) -> pd.DataFrame:
    """A pairwise job's details from {(a, b): (P(a first wins), P(b first wins))}, criterion Plot."""
    rows = []
    for (a, b), (p0, p1) in answers.items():
        rows += [{"story_id": f"{a} vs {b}", "order": "o0", "first": a, "second": b, "criterion": "Plot", "value": p0,
                  "failure": "", "truncated": 0},
                 {"story_id": f"{a} vs {b}", "order": "o1", "first": b, "second": a, "criterion": "Plot", "value": p1,
                  "failure": "", "truncated": 0}]
    return pd.DataFrame(rows)


def test_verdicts_ties_and_position_bias_as_planted():
    from storyeval.judges.pairwise import position_bias, verdicts

    answers = {("a", "b"): (0.9, 0.2),  # a wins in both orders
               ("a", "c"): (0.8, 0.7),  # the first wins in both orders: flips, a tie under flip
               ("b", "c"): (0.3, 0.4),  # the first loses in both orders: flips the other way
               ("a", "d"): (0.6, np.nan)}  # one order unanswered: no verdict
    frame = details(answers)
    flip, average = verdicts(frame, "flip").set_index("pair"), verdicts(frame, "average").set_index("pair")
    assert flip["verdict"].tolist()[:3] == [1, 0, 0] and np.isnan(flip.loc["a vs d", "verdict"])
    assert average["verdict"].tolist()[:3] == [1, 1, -1]  # (0.8 + 0.3) / 2 > 1/2; (0.3 + 0.6) / 2 < 1/2
    assert flip["p"].round(6).tolist()[:3] == [0.85, 0.55, 0.45]
    assert flip["consistent"].tolist()[:3] == [True, False, False]
    bias = position_bias(frame, flip)
    assert bias["pairs_answered"] == 3 and bias["position_consistency"] == pytest.approx(1 / 3)
    assert bias["first_share"] == pytest.approx(4 / 7)  # firsts: 0.9, 0.8, 0.7, 0.6 of 7 answers


def test_scores_rank_a_planted_order():
    from storyeval.judges.pairwise import bradley_terry, verdicts, win_rates

    order = ["s1", "s2", "s3", "s4"]  # s1 beats all, s4 loses all; consistent answers in both orders
    answers = {(a, b): (0.8, 0.3) for k, a in enumerate(order) for b in order[k + 1:]}
    table = verdicts(details(answers), "flip")
    assert win_rates(order + ["alone"], table).tolist()[:4] == [1, 2 / 3, 1 / 3, 0]
    assert np.isnan(win_rates(order + ["alone"], table)["alone"])
    strengths = bradley_terry(order + ["alone"], table)
    assert strengths[order].is_monotonic_decreasing and strengths[order].diff().dropna().lt(0).all()
    assert np.isnan(strengths["alone"])
    tied = verdicts(details({("s1", "s2"): (0.9, 0.9)}), "flip")  # a tie is half a win each way
    assert win_rates(["s1", "s2"], tied).tolist() == [0.5, 0.5]
    assert bradley_terry(["s1", "s2"], tied).round(9).tolist() == [0, 0]


def test_pairwise_accuracy_with_ties_against_the_humans():
    from storyeval.judges.pairwise import bias_line, verdict_table

    answers = {("a", "b"): (0.9, 0.2), ("a", "c"): (0.8, 0.7), ("b", "c"): (0.3, 0.4), ("c", "d"): (0.1, 0.9)}
    human = pd.DataFrame({"story_id": list("aabbccdd"), "criterion": "Plot", "score": [5, 4, 3, 3, 3, 3, 4, 4]})
    row = verdict_table(details(answers), human, "flip").iloc[0]
    # humans: a 4.5 > b 3 = c 3 < d 4; verdicts: a, tie, tie, d: a-b right, a-c wrong (humans a), b-c right, c-d right
    assert (row["pairs"], row["calls"], row["compared"], row["human_ties"], row["ties"]) == (4, 8, 4, 1, 2)
    assert row["accuracy"] == 0.75 and row["ties_rule"] == "flip"
    assert bias_line(row).startswith("no position bias found (50% first")


@pytest.fixture(scope="module")
def biased_judges(tmp_path_factory):
    root = tmp_path_factory.mktemp("pair-judges")
    return {bias: tiny_pair_judge(root / f"bias{bias}", bias=bias) for bias in (4.0, -4.0)}


def test_a_planted_position_bias_is_measured(biased_judges):
    """A tiny judge leaning 4 logits towards A answers the first story on every presentation: no pair keeps its
    verdict when swapped, every verdict is a tie under flip; leaning towards B, the second. The mean of both orders
    cancels a constant lean: with ties average both judges give the same scores."""
    import storyeval

    table = texts([4, 4, 3])
    runs = {}
    for bias, folder in biased_judges.items():
        for ties in ("flip", "average"):
            runs[bias, ties] = storyeval.judge(list(table["story"]), criteria=PLOT, model=str(folder), mode="pairwise",
                                               prompts=list(table["prompt"]), ties=ties, device="cpu")
    first, second = runs[4.0, "flip"], runs[-4.0, "flip"]
    assert first.attrs["pairs"] == 6 + 6 + 3 and first.attrs["parse_failures"] == 0
    assert (first.attrs["first_share"], second.attrs["first_share"]) == (1.0, 0.0)
    assert first.attrs["position_consistency"] == second.attrs["position_consistency"] == 0.0
    assert (first["Plot"] == 0.5).all() and (second["Plot"] == 0.5).all()  # all ties: no information
    pd.testing.assert_frame_equal(runs[4.0, "average"], runs[-4.0, "average"], check_like=True, check_exact=False,
                                  obj="scores")


def test_a_pairwise_rerun_is_answered_by_the_cache(biased_judges, tmp_path):
    """Each order of each pair is one cached answer: a rerun asks nothing and gives the same scores; another tie
    rule reuses the answers (it only reads them differently)."""
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import Settings, rate

    table, cache = texts([4, 3]), tmp_path / "answers.sqlite"
    job = (table, PLOT, load_template("pairwise"), biased_judges[4.0])
    first = rate(*job, Settings(mode="pairwise"), device="cpu", cache=cache)
    again = rate(*job, Settings(mode="pairwise"), device="cpu", cache=cache)
    averaged = rate(*job, Settings(mode="pairwise", ties="average"), device="cpu", cache=cache)
    assert (first[2]["forward_passes"], first[2]["cached"]) == (18, 0)  # (6 + 3 pairs) x 2 orders
    assert (again[2]["forward_passes"], again[2]["cached"]) == (0, 18)
    assert averaged[2]["forward_passes"] == 0
    pd.testing.assert_frame_equal(again[0], first[0])


def fair_answer(prompt: str, request: dict) -> tuple[dict, int]:
    """A served pairwise judge without a position bias: A with probability 0.8 where story A is the longer, else
    0.2, in either order."""
    first, second = (len(prompt.split(f"Story {label}: ")[1].split("\n")[0]) for label in "AB")
    p = 0.8 if first > second else 0.2
    return {"text": " A", "logprobs": {"top_logprobs": [{" A": math.log(p), " B": math.log(1 - p)}]}}, 0


@pytest.fixture(scope="module")
def pairwise_run(tmp_path_factory, biased_judges, hanna_mirror):
    httpd = completions_server(fair_answer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    workdir = tmp_path_factory.mktemp("pairwise")
    table = texts([5] * 6)
    rng = np.random.default_rng(3)
    rows = [{"id": row.story_id, "prompt": row.prompt, "text": row.story, "rater": f"r{rater}",
             "plot": int(np.clip(round(len(row.story) / 40 + rng.normal(0, 0.5)), 1, 5))}
            for row in table.itertuples() for rater in range(3)]  # the humans like longer stories
    pd.DataFrame(rows).to_csv(workdir / "mine.csv", index=False)
    digest = hashlib.sha256((workdir / "mine.csv").read_bytes()).hexdigest()
    columns = {"story_id": "id", "prompt": "prompt", "story": "text", "rater": "rater", "criteria": {"Plot": "plot"}}
    models = {"first": {"path": str(biased_judges[4.0])},
              "fair": {"path": f"http://127.0.0.1:{httpd.server_address[1]}/v1", "served": "fair"}}
    make_workdir(workdir, **{
        "datasets.mine": {"kind": "table", "path": "mine.csv", "sha256": digest, "columns": columns,
                          "metrics": ["textstats"]},
        "judges.models": models, "judges.mode": "pairwise", "judges.templates": ["pairwise"],
        "judges.datasets": {"mine": {"criteria": PLOT}}, "device": "cpu"})
    targets = ["results/mine/computed/judge_pairwise.csv", "results/mine/computed/report/judge_pairwise.html",
               "results/mine/computed/report/about.rst", "results/mine/computed/correlations.csv"]
    result = run_snakemake(workdir, "--cores", "2", *targets)
    httpd.shutdown()
    return workdir, result


def test_the_report_names_the_biased_judge(pairwise_run):
    workdir, result = pairwise_run
    assert result.returncode == 0, result.stderr[-3000:]
    table = pd.read_csv(workdir / "results/mine/computed/judge_pairwise.csv").set_index("judge")
    assert table.loc["first", "first_share"] == 1.0 and table.loc["first", "position_consistency"] == 0
    assert table.loc["first", "position"].startswith("prefers the first position: 100% of its verdicts")
    assert table.loc["fair", "first_share"] == 0.5 and table.loc["fair", "position_consistency"] == 1
    assert table.loc["fair", "position"].startswith("no position bias found")
    assert table.loc["fair", "accuracy"] > 0.6 > table.loc["first", "accuracy"]  # humans like the longer story
    assert (table["pairs"] == 6 * 10).all() and (table["calls"] == 120).all()  # 5 stories a prompt: all 10 pairs
    page = (workdir / "results/mine/computed/report/judge_pairwise.html").read_text()
    assert "prefers the first position" in page
    about = (workdir / "results/mine/computed/report/about.rst").read_text()
    assert "Pairwise judges with a position bias: first Plot (pairwise) prefers the first position" in about
    assert "fair Plot" not in about
    correlations = pd.read_csv(workdir / "results/mine/computed/correlations.csv")
    assert {"judge-fair-pairwise-plot", "judge-first-pairwise-plot"} <= set(correlations["x"])
    signature = json.loads(Path(workdir / "results/mine/computed/judges/fair@pairwise.signature.json").read_text())
    assert signature["pairs"] == 60 and signature["forward_passes"] == 120
