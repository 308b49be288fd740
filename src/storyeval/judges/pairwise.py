"""Pairwise judges (mode pairwise): the judge reads two stories of one prompt (of one group where there is no
prompt) and answers which is better on one criterion, A or B. As PairS (Liu et al., "Aligning with Human
Judgement: The Role of Pairwise Preference in Large Language Model Evaluators", COLM 2024), P(A is better) is the
label tokens' probabilities renormalised over the two (storyeval.judges.rate, the answer position), and every
pair is asked in both orders.

- Which pairs (`pairs`): every pair of a prompt's stories where that is no more than n ceil(log2 n); else, and
  for `pairs: <k>`, the union of ceil(log2 n) (or k) random Hamiltonian cycles through them, seeded: about
  n log2 n pairs, as PairS's merge sort compares, each story in about 2 log2 n of them, and each cycle connects
  the prompt's stories (a Bradley-Terry fit needs a connected comparison graph). Unlike PairS's sort, the pairs
  do not depend on earlier answers, so every prompt is known before the judge runs: batched, cached, exported.
- A verdict per pair: `ties: flip` (MT-Bench, Zheng et al. 2023) counts a verdict that flips with the order as a
  tie; `ties: average` decides by P(A beats B) = (P(A first wins) + 1 - P(B first wins)) / 2.
- Position bias (Shi et al., "Judging the Judges: A Systematic Study of Position Bias in LLM-as-a-Judge", 2024):
  position consistency, the share of pairs whose verdict survives the swap; first-position share, the share of
  presentations whose more likely answer is the first story (0.5: no preference), with a two-sided binomial test.
- A story's score: its win rate (a win 1, a tie 1/2, over its pairs), or a Bradley-Terry strength fitted to the
  verdicts by choix's iterative Luce spectral ranking (`pair_score: bradley_terry`; ties as half a win each way).
  Both compare a story with the others of its prompt only.
- Against the humans (`verdict_table`): pairwise accuracy with ties (Deutsch, Foster & Freitag, EMNLP 2023): the
  share of pairs whose verdict (A, B or tie) is the humans' (the sign of the difference of the stories' mean
  ratings).
"""

from __future__ import annotations

import logging
from itertools import combinations
from math import ceil, log2

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.judges.gaps import stated

PAIRS = ("auto", "all")  # or a number of random cycles per prompt
TIES = ("flip", "average")
SCORES = ("win_rate", "bradley_terry")
ORDERS = ("o0", "o1")  # the pair as drawn (a first), swapped (b first)
BIAS_P = 0.05  # a first-position share whose binomial p is below this is reported as a position bias
log = logging.getLogger(__name__)


def check_settings(settings, key: str) -> None:
    if settings.pairs not in PAIRS and not (isinstance(settings.pairs, int) and settings.pairs >= 1):
        raise InputError(f"{key}: pairs {settings.pairs!r}; fix: use auto, all or a number of cycles (1 or more)")
    for name, allowed in (("ties", TIES), ("pair_score", SCORES)):
        if getattr(settings, name) not in allowed:
            raise InputError(f"{key}: {name} {getattr(settings, name)!r}; fix: use one of {', '.join(allowed)}")


def cycles(n: int, budget: str | int) -> int | None:
    """Random cycles through a prompt's n stories; None: every pair."""
    rounds = ceil(log2(n))
    if budget == "all" or (budget == "auto" and n * (n - 1) // 2 <= n * rounds):
        return None
    return rounds if budget == "auto" else int(budget)


def pairs(texts: pd.DataFrame, budget: str | int = "auto", seed: int = 0) -> pd.DataFrame:
    """The pairs compared (prompt_id, a, b: story ids, a before b in the text table), prompt by prompt in order of
    appearance (module docstring)."""
    rows = []
    for index, (group, ids) in enumerate(texts.groupby("prompt_id", sort=False)["story_id"]):
        ids, n = list(ids), len(ids)
        if n < 2:
            continue
        k = cycles(n, budget)
        if k is None:
            found = combinations(range(n), 2)
        else:
            rng, found = np.random.default_rng([seed, index]), set()
            for _ in range(k):
                order = rng.permutation(n)
                found |= {tuple(sorted((int(order[i]), int(order[(i + 1) % n])))) for i in range(n)}
            found = sorted(found)
        rows += [(group, ids[i], ids[j]) for i, j in found]
    return pd.DataFrame(rows, columns=["prompt_id", "a", "b"])


def pair_name(a, b) -> str:
    return f"{a} vs {b}"


def presentations(texts: pd.DataFrame, drawn: pd.DataFrame) -> pd.DataFrame:
    """The rows a pairwise job prompts: each pair in both orders (story_id: the pair's name; order; first and
    second: story ids; story_a and story_b: their texts; the prompt)."""
    by_id = texts.set_index("story_id")
    prompts = by_id["prompt"] if "prompt" in by_id else pd.Series(None, index=by_id.index, dtype=object)
    rows = []
    for pair in drawn.itertuples(index=False):
        for order, (first, second) in zip(ORDERS, ((pair.a, pair.b), (pair.b, pair.a))):
            rows.append({"story_id": pair_name(pair.a, pair.b), "order": order, "first": first, "second": second,
                         "prompt_id": pair.prompt_id, "prompt": prompts[first],
                         "story_a": by_id.at[first, "story"], "story_b": by_id.at[second, "story"]})
    return pd.DataFrame(rows, columns=["story_id", "order", "first", "second", "prompt_id", "prompt", "story_a",
                                       "story_b"])


def side(p: pd.Series) -> pd.Series:
    """+1 where the first story is the more likely answer, -1 the second, 0 an even split, NaN none."""
    return np.sign(p - 0.5)


def verdicts(details: pd.DataFrame, ties: str = "flip") -> pd.DataFrame:
    """One row per pair and criterion (a, b, p_o0: P(a is better) shown first, p_o1: P(b is better) shown first,
    p: P(a beats b) over both orders, consistent: the verdict survives the swap, verdict: +1 a, -1 b, 0 a tie,
    NaN where an order has no answer) from a pairwise job's details."""
    wide = details.pivot_table(index=["story_id", "criterion"], columns="order", values="value", dropna=False)
    wide = wide.reindex(columns=list(ORDERS))
    firsts = details[details["order"] == ORDERS[0]].set_index(["story_id", "criterion"])
    table = pd.DataFrame({"a": firsts["first"], "b": firsts["second"]}).join(
        wide.rename(columns={"o0": "p_o0", "o1": "p_o1"}))
    first, second = side(table["p_o0"]), -side(table["p_o1"])  # each order's verdict, +1 for a
    table["p"] = (table["p_o0"] + 1 - table["p_o1"]) / 2
    answered = first.notna() & second.notna()
    table["consistent"] = (first == second).where(answered)
    verdict = first.where(first == second, 0.0) if ties == "flip" else side(table["p"])
    table["verdict"] = verdict.where(answered)
    return table.reset_index().rename(columns={"story_id": "pair"})


def win_rates(stories: list, table: pd.DataFrame) -> pd.Series:
    """A story's share of wins over its decided pairs, a tie half a win (NaN: no pair)."""
    decided = table.dropna(subset=["verdict"])
    credit = pd.concat([pd.Series((1 + decided["verdict"]).to_numpy() / 2, index=decided["a"].to_numpy()),
                        pd.Series((1 - decided["verdict"]).to_numpy() / 2, index=decided["b"].to_numpy())])
    return credit.groupby(level=0).mean().reindex(stories)


def bradley_terry(stories: list, table: pd.DataFrame, alpha: float = 0.01) -> pd.Series:
    """Bradley-Terry log-strengths fitted to the verdicts (choix.ilsr_pairwise, a small ridge `alpha` so that a
    story that wins every pair has a finite strength); a tie is half a win each way (both orders, twice)."""
    import choix

    decided = table.dropna(subset=["verdict"])
    index = {story: k for k, story in enumerate(stories)}
    data = []
    for a, b, verdict in zip(decided["a"].map(index), decided["b"].map(index), decided["verdict"]):
        data += [(a, b), (a, b)] if verdict > 0 else [(b, a), (b, a)] if verdict < 0 else [(a, b), (b, a)]
    if not data:
        return pd.Series(np.nan, index=stories)
    strengths = pd.Series(choix.ilsr_pairwise(len(stories), data, alpha=alpha), index=stories)
    compared = set(decided["a"]) | set(decided["b"])
    return strengths.where(strengths.index.isin(compared))


def position_bias(details: pd.DataFrame, table: pd.DataFrame) -> dict:
    """Position consistency, the first position's share of the presentations' verdicts (even splits left out) and
    its two-sided binomial p against 1/2."""
    from scipy.stats import binomtest  # here: the About paragraph reads BIAS_P without scipy

    sides = side(details["value"]).dropna()
    firsts, decided = int((sides > 0).sum()), int((sides != 0).sum())
    consistent = table["consistent"].dropna()
    return {"pairs_answered": int(len(consistent)),
            "position_consistency": float(consistent.mean()) if len(consistent) else np.nan,
            "first_share": firsts / decided if decided else np.nan,
            "first_p": binomtest(firsts, decided).pvalue if decided else np.nan}


def finish_pairs(texts: pd.DataFrame, criteria: dict[str, str], rows: pd.DataFrame, details: pd.DataFrame,
                 settings, key: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(scores: story x criterion, details: one row per pair, order and criterion, what was found: pairs, ties,
    position consistency, first-position share) of a pairwise job's answers to `rows` (its presentations)."""
    details, counts = stated(details, key)
    meta = rows[["story_id", "order", "first", "second"]]
    details = meta.merge(details, on=["story_id", "order"], how="right", validate="one_to_many")
    pairs_found = len(rows) // len(ORDERS)
    table = verdicts(details, settings.ties)
    scorer = win_rates if settings.pair_score == "win_rate" else bradley_terry
    stories, scores, found = list(texts["story_id"]), {}, {}
    for criterion in criteria:
        own = table[table["criterion"] == criterion]
        scores[criterion] = scorer(stories, own)
        found[criterion] = position_bias(details[details["criterion"] == criterion], own) | {
            "ties": int((own["verdict"] == 0).sum())}
    bias = position_bias(details, table) if len(details) else {}
    log.info("%s: %d pairs x 2 orders x %d criteria; position consistency %.2f, first position %.2f of verdicts",
             key, pairs_found, len(criteria), bias.get("position_consistency", np.nan),
             bias.get("first_share", np.nan))
    counts |= {"pairs": pairs_found, **bias, "per_criterion": found}
    return pd.DataFrame(scores, index=stories).rename_axis("story_id"), details, counts


def human_signs(human: pd.DataFrame, criterion: str, a: pd.Series, b: pd.Series) -> pd.Series:
    """+1 where the humans rate a above b on `criterion` (mean ratings; human_scores.csv's long form), -1 below,
    0 equal, NaN where either has none."""
    means = human[human["criterion"] == criterion].groupby("story_id")["score"].mean()
    return np.sign(a.map(means).astype(float) - b.map(means).astype(float)).set_axis(a.index)


def verdict_table(details: pd.DataFrame, human: pd.DataFrame, ties: str = "flip") -> pd.DataFrame:
    """Per criterion of a pairwise job's details: pairs, presentations asked, pairs with both answers, position
    consistency, first-position share and its binomial p, the tie rule and the ties it gave, and against the
    humans (`human`: story_id, criterion, score) the pairs compared, the humans' ties and the pairwise accuracy
    with ties (module docstring)."""
    rows = []
    for criterion, own in details.groupby("criterion", sort=False):
        table = verdicts(own, ties)
        humans = human_signs(human, criterion, table["a"], table["b"])
        both = table["verdict"].notna() & humans.notna()
        rows.append({"criterion": criterion, "pairs": len(table), "calls": len(own), **position_bias(own, table),
                     "ties_rule": ties, "ties": int((table["verdict"] == 0).sum()), "compared": int(both.sum()),
                     "human_ties": int((humans[both] == 0).sum()),
                     "accuracy": float((table["verdict"][both] == humans[both]).mean()) if both.any() else np.nan})
    return pd.DataFrame(rows)


def bias_line(row) -> str:
    """What a row of verdict_table says of the judge's position bias."""
    if not np.isfinite(row["first_share"]):
        return "no verdicts"
    where = "first" if row["first_share"] > 0.5 else "second"
    share = max(row["first_share"], 1 - row["first_share"])
    if row["first_p"] >= BIAS_P:
        return f"no position bias found ({row['first_share']:.0%} first, binomial p {row['first_p']:.2f})"
    return (f"prefers the {where} position: {share:.0%} of its verdicts (binomial p {row['first_p']:.1g}); "
            f"{row['position_consistency']:.0%} of pairs keep their verdict when swapped")
