"""BaryScore and its optimal-transport helpers, each against an independent formulation on small inputs:
the exact cost against scipy's linprog on the full transport LP, the entropic solver against a plain numpy
log-domain Sinkhorn loop and POT, the barycenter against a brute force over the transport vertices and against
POT's own `free_support_barycenter`, the whole metric against the library's pipeline rebuilt from POT calls."""

import itertools
import math
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import ot
import pandas as pd
import pytest
from scipy.optimize import linprog

from storyeval.errors import InputError
from storyeval.metrics import baryscore
from storyeval.neural import ot as barycenters
from storyeval.neural.embeddings import EmbeddingCache
from storyeval.neural.ot import barycenter
from storyeval.neural.transport import Problem, start_potential, transport

CLS, SEP = 101, 102


def synthetic_cache(texts: list[str], layers=(1, 2, 3, 4, 5, 6), dim: int = 8, seed: int = 0) -> EmbeddingCache:
    """A real EmbeddingCache from numpy: [CLS] + 4..9 word ids from a 12-id vocabulary + [SEP] per text, random
    hidden states per layer (seeded), so idf weights and barycenters are non-trivial."""
    rng = np.random.default_rng(seed)
    distinct = sorted(set(texts))
    ids = [np.array([CLS, *rng.integers(1000, 1012, size=rng.integers(4, 10)), SEP]) for _ in distinct]
    offsets = np.cumsum([0, *map(len, ids)])
    special = np.concatenate([np.isin(row, (CLS, SEP)) for row in ids])
    hidden = {layer: rng.normal(size=(offsets[-1], dim)).astype(np.float32) for layer in layers}
    vocab = {int(token): f"t{token}" for token in np.unique(np.concatenate(ids))}
    return EmbeddingCache(distinct, offsets, np.concatenate(ids), special, hidden, vocab,
                          {"model": "synthetic", "num_hidden_layers": max(layers)})


def synthetic_texts(prompts: int = 3, systems=("Human", "a", "b")) -> pd.DataFrame:
    """A text table: per prompt a human reference and one story per system (the Human story is the reference)."""
    rows = [{"story_id": f"p{p}-{system}", "prompt_id": p, "system": system, "prompt": f"prompt {p}",
             "story": f"reference {p}" if system == "Human" else f"story {p} {system}", "reference": f"reference {p}"}
            for p in range(prompts) for system in systems]
    return pd.DataFrame(rows)


def clouds(n: int, m: int, dim: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, dim)), rng.normal(size=(m, dim))


def test_exact_cost_equals_the_full_transport_linear_program():
    x, y = clouds(6, 5)
    cost = ot.dist(x, y)
    n, m = cost.shape
    rows = np.kron(np.eye(n), np.ones(m))  # sum_j P_ij = 1/n
    cols = np.kron(np.ones(n), np.eye(m))  # sum_i P_ij = 1/m
    lp = linprog(cost.ravel(), A_eq=np.vstack([rows, cols]), b_eq=np.r_[np.full(n, 1 / n), np.full(m, 1 / m)],
                 bounds=(0, None), method="highs")
    assert transport(x, y, [1.0]).exact == pytest.approx(lp.fun, abs=1e-10)


def sinkhorn_loop(cost: np.ndarray, reg: float, sweeps: int = 200_000) -> tuple[float, float]:
    """Plain log-domain Sinkhorn, uniform masses, until the row marginal is exact to 1e-13: (<P, C>, OT_eps)."""
    n, m = cost.shape
    log_a, log_b = np.full(n, -math.log(n)), np.full(m, -math.log(m))
    f, g = np.zeros(n), np.zeros(m)
    for _ in range(sweeps):
        f = -reg * np.logaddexp.reduce(log_b[None, :] + (g[None, :] - cost) / reg, axis=1)
        g = -reg * np.logaddexp.reduce(log_a[:, None] + (f[:, None] - cost) / reg, axis=0)
        plan = np.exp(log_a[:, None] + log_b[None, :] + (f[:, None] + g[None, :] - cost) / reg)
        if np.abs(plan.sum(axis=1) - 1 / n).sum() < 1e-13:
            break
    entropy = np.sum(plan * (np.log(plan) - log_a[:, None] - log_b[None, :]))
    return float(np.sum(plan * cost)), float(np.sum(plan * cost) + reg * entropy)


# One cloud on both sides (started at g = 0) only at large eps: there plain Sinkhorn takes 10^5 sweeps below 0.1.
@pytest.mark.parametrize("reg, same", [(5.0, False), (1.0, False), (0.1, False), (0.05, False), (5.0, True),
                                       (1.0, True)])
def test_entropic_transport_matches_a_log_domain_sinkhorn_loop_and_pot(reg, same):
    x, y = clouds(7, 6, seed=1)
    y = x.copy() if same else y
    result = transport(x, y, [reg], tolerance=1e-12)
    cost, objective = sinkhorn_loop(ot.dist(x, y), reg)
    assert result.costs[0] == pytest.approx(cost, abs=1e-10)
    assert result.objectives[0] == pytest.approx(objective, abs=1e-10)
    pot = ot.sinkhorn2(np.full(7, 1 / 7), np.full(len(y), 1 / len(y)), ot.dist(x, y), reg, method="sinkhorn_log",
                       numItermax=200_000, stopThr=1e-14)
    assert result.costs[0] == pytest.approx(float(pot), abs=1e-9)


@pytest.mark.parametrize("same", [True, False], ids=["one-cloud", "two-clouds"])
def test_equal_sizes_start_elsewhere_and_reach_the_solution_from_the_exact_duals(same):
    """n = m starts at g = 0 (one cloud) or between two dual vertices (two clouds), not at POT's duals."""
    x, y = clouds(30, 30, seed=4)
    y = x.copy() if same else y
    ours = transport(x, y, baryscore.REGULARISATIONS, tolerance=1e-12)
    cost, mass = ot.dist(x, y), np.full(30, 1 / 30)
    exact, log = ot.emd2(mass, mass, cost, log=True)
    start = start_potential(x, y, mass, mass, cost, log["v"])
    assert np.array_equal(start, np.zeros(30)) if same else not np.allclose(start, log["v"])
    potential, problem = np.asarray(log["v"]), Problem(mass, mass, cost)
    for index in np.argsort(baryscore.REGULARISATIONS):
        potential, expected, _, error = problem.entropic(baryscore.REGULARISATIONS[index], potential, 1e-12, 100)
        assert error <= 1e-12
        assert ours.costs[index] == pytest.approx(expected, abs=1e-10)
    assert ours.exact == pytest.approx(exact, abs=1e-15)


def test_small_regularisation_is_stable_and_within_its_bound_of_the_exact_cost():
    x, y = clouds(40, 35, dim=5, seed=2)
    result = transport(x, y, baryscore.REGULARISATIONS)
    assert np.isfinite(result.costs).all() and (result.errors < 1e-8).all()
    # W <= <P_eps, C> <= W + eps log(nm) (KL(P | a x b) <= log(nm) for uniform masses); the cost grows with eps
    bound = result.exact + np.array(baryscore.REGULARISATIONS) * math.log(40 * 35)
    assert (result.costs >= result.exact - 1e-12).all() and (result.costs <= bound).all()
    assert np.all(np.diff(result.costs) <= 1e-12)
    assert result.costs[-1] == pytest.approx(result.exact, abs=2e-3)
    # the library's plain Sinkhorn on the same problem underflows at 0.001 (the released SD-0.001 values)
    with np.errstate(all="ignore"), pytest.warns(UserWarning):
        plain = ot.bregman.sinkhorn2(np.full(40, 1 / 40), np.full(35, 1 / 35), ot.dist(x, y), reg=0.001,
                                     numItermax=10000)
    assert not np.isclose(float(plain), result.exact, atol=0.05)


def test_debiased_divergence_is_zero_on_itself_and_non_negative():
    x, y = clouds(9, 8, seed=3)
    xy, xx, yy = transport(x, y, baryscore.REGULARISATIONS), transport(x, x, baryscore.REGULARISATIONS), \
        transport(y, y, baryscore.REGULARISATIONS)
    divergence = xy.objectives - (xx.objectives + yy.objectives) / 2
    assert (divergence > 0).all()
    assert divergence[-1] == pytest.approx(xy.exact, abs=0.001 * math.log(72))
    assert xx.exact == pytest.approx(0, abs=1e-12)


def barycenter_objective(support: np.ndarray, layers: np.ndarray, weights: np.ndarray) -> float:
    mass = np.full(len(support), 1 / len(support))
    return float(np.mean([ot.emd2(mass, weights, ot.dist(support, layer)) for layer in layers]))


def vertex_plans(weights: np.ndarray) -> list[np.ndarray]:
    """T = 2, mass (1/2, 1/2) to (w, 1 - w): the transport polytope's two vertices (entry (0, 0) at its bounds)."""
    return [np.array([[t, 0.5 - t], [weights[0] - t, weights[1] - 0.5 + t]])
            for t in (max(0.0, weights[0] - 0.5), min(weights[0], 0.5))]


@pytest.mark.parametrize("seed", range(4))
def test_two_point_barycenter_is_a_brute_force_fixed_point(seed):
    """Brute force over every combination of transport vertices (one per layer): each gives its best support,
    the plan-weighted mean; the global optimum is the best of these 2^L candidates. The library's fixed point
    (started at zeros) must be one candidate, stationary (its own best vertices give it back) and no better than
    the optimum; the objective is not convex, so it may be a local optimum (seed 0: 0.934 against 0.884)."""
    rng = np.random.default_rng(seed)
    layers, weights = rng.normal(size=(3, 2, 2)), np.array([0.3, 0.7])
    candidates = [np.mean([2 * plan @ layer for plan, layer in zip(plans, layers)], axis=0)
                  for plans in itertools.product(vertex_plans(weights), repeat=len(layers))]
    optimum = min(barycenter_objective(support, layers, weights) for support in candidates)
    for solver in ("certified", "pot"):
        found = barycenter(layers, weights, solver=solver)
        objective = barycenter_objective(found, layers, weights)
        assert objective >= optimum - 1e-12
        assert min(np.abs(found - support).max() for support in candidates) < 1e-12
        best = [min(vertex_plans(weights), key=lambda plan: np.sum(plan * ot.dist(found, layer))) for layer in layers]
        np.testing.assert_allclose(np.mean([2 * plan @ layer for plan, layer in zip(best, layers)], axis=0), found,
                                   atol=1e-12)
    assert barycenter_objective(barycenter(layers, weights), layers, weights) == pytest.approx(
        barycenter_objective(barycenter(layers, weights, solver="pot"), layers, weights), abs=1e-14)


@pytest.mark.parametrize("uniform", [False, True])
def test_certified_barycenter_equals_pots(uniform):
    rng = np.random.default_rng(5)
    layers = rng.normal(size=(4, 40, 6))
    layers /= np.linalg.norm(layers, axis=-1, keepdims=True)
    weights = np.ones(40) if uniform else np.r_[0.0, rng.random(38), 0.0]  # idf-like: zero-weight specials
    weights /= weights.sum()
    np.testing.assert_allclose(barycenter(layers, weights), barycenter(layers, weights, solver="pot"), atol=1e-12)


def test_kept_sums_and_cost_rows_give_the_bits_of_computing_every_row_again(monkeypatch):
    """The barycenter keeps the plan sums of rows whose arcs did not change and looks for moved support points
    only among those that changed (`Transported`); summing every row and checking every point each step must
    give the same support to the last bit (and steps must keep rows for this to test anything)."""
    rng = np.random.default_rng(11)
    layers = rng.normal(size=(5, 80, 8))
    layers /= np.linalg.norm(layers, axis=-1, keepdims=True)
    weights = np.r_[0.0, rng.random(78), 0.0]
    weights /= weights.sum()
    kept_shares = []

    class Counted(barycenters.Transported):
        def update(self, support, share):
            update, changed = super().update(support, share)
            kept_shares.append(1 - len(changed) / len(update))
            return update, changed

    class EveryRow(barycenters.Transported):
        def sparse(self, layer, *plan):
            self.arcs[layer] = None
            super().sparse(layer, *plan)

        def update(self, support, share):
            self.changed[:] = True
            return super().update(support, share)

    monkeypatch.setattr(barycenters, "Transported", Counted)
    kept = barycenter(layers, weights)
    assert sum(share > 0.3 for share in kept_shares) >= 3  # the last steps keep most rows
    monkeypatch.setattr(barycenters, "Transported", EveryRow)
    assert np.array_equal(barycenter(layers, weights), kept)


def library_unit_vectors(layers: list[np.ndarray]) -> np.ndarray:
    """The library's normalisation: its hidden states stacked by `torch.cat` and divided in place by torch's norm."""
    import torch

    stacked = torch.cat([torch.from_numpy(np.array(layer)).unsqueeze(0) for layer in layers])
    return stacked.div_(torch.norm(stacked, dim=-1).unsqueeze(-1)).numpy()


def test_unit_vectors_are_torchs_bits_on_real_token_vectors(minilm, hanna_llm_texts):
    """Three real texts' MiniLM vectors (layers 2-6, 36-400 tokens): storyeval's unit vectors under the library's
    zero start are the library's bits, also when a text sits in a padded batch as in the library; numpy's float32
    norm differs in the last bit."""
    from storyeval.neural.embeddings import encode_texts

    chosen = hanna_llm_texts[hanna_llm_texts["prompt_id"] == 80]
    texts = [chosen["prompt"].iloc[0], *chosen.sort_values("story", key=lambda s: s.str.len())["story"].iloc[:2]]
    cache = encode_texts(texts, minilm, [2, 3, 4, 5, 6])
    layers = (2, 3, 4, 5, 6)
    stacked = {text: np.stack([cache.get(text).layers[layer] for layer in layers]) for text in texts}
    longest = max(len(vectors[0]) for vectors in stacked.values())
    padding = np.random.default_rng(0).normal(size=(len(layers), longest, 384)).astype(np.float32)
    padded = [np.concatenate([vectors, padding[:, len(vectors[0]):]], axis=1) for vectors in stacked.values()]
    batch = library_unit_vectors([np.stack([text[layer] for text in padded]) for layer in range(len(layers))])
    numpy_differs = 0
    for index, (text, vectors) in enumerate(stacked.items()):
        ours, _ = baryscore.measure(cache, text, layers, None, library_bits=True)
        size = len(vectors[0])
        assert ours.dtype == np.float32 and ours.shape == (len(layers), size, 384)
        assert np.array_equal(ours, library_unit_vectors(list(vectors)))
        assert np.array_equal(ours, batch[:, index, :size])
        numpy_differs += int((ours != vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).any(-1).sum())
    assert numpy_differs > 100


def library_pipeline(cache, reference: str, story: str, reference_idf, story_idf, layers, regs) -> list[float]:
    """The authors' `BaryScoreMetric.baryscore`, rebuilt from POT calls (log-domain Sinkhorn for stability,
    started at the layer mean: from zeros the result hinges on the last bit, see storyeval.neural.ot)."""
    def bary(text, idf):
        tokens = cache.get(text)
        vectors = library_unit_vectors([tokens.layers[layer] for layer in layers]).astype(np.float64)
        weights = np.array([idf[int(token)] for token in tokens.input_ids])
        size = len(weights)
        return ot.lp.free_support_barycenter(list(vectors), [weights / weights.sum()] * len(layers),
                                             vectors.mean(axis=0), b=np.full(size, 1 / size), numItermax=1000)
    bary_reference, bary_story = bary(reference, reference_idf), bary(story, story_idf)
    cost = ot.dist(bary_reference, bary_story)
    a, b = np.full(len(cost), 1 / len(cost)), np.full(cost.shape[1], 1 / cost.shape[1])
    return [ot.emd2(a, b, cost)] + [float(ot.sinkhorn2(a, b, cost, reg, method="sinkhorn_log", numItermax=100_000,
                                                       stopThr=1e-13)) for reg in regs]


def manual_idf(documents) -> dict:
    """The library's `ref_list_to_idf`: log((N+1)/(df+1)), log(N+1) for an id absent from every document."""
    counts = Counter(token for ids in documents for token in set(ids.tolist()))
    idf = defaultdict(lambda: math.log(len(documents) + 1))
    idf.update({token: math.log((len(documents) + 1) / (count + 1)) for token, count in counts.items()})
    return idf


@pytest.mark.parametrize("swap_idf", [False, True])
def test_metric_equals_the_library_pipeline_with_per_side_idf(swap_idf):
    texts = synthetic_texts()
    cache = synthetic_cache(baryscore.required_texts(texts))
    regs = (1.0, 0.1)
    scores = baryscore.compute(texts, cache=cache, idf="per-side", regularisations=regs, swap_idf=swap_idf)
    assert list(scores.columns) == ["baryscore-w", "baryscore-sd-1", "baryscore-sd-0.1"]
    story_idf = manual_idf([cache.get(text).input_ids for text in texts["story"]])
    reference_idf = manual_idf([cache.get(text).input_ids for text in texts["reference"]])
    if swap_idf:  # the library's bug, reproduced on request
        story_idf, reference_idf = reference_idf, story_idf
    for row in texts.itertuples():
        expected = library_pipeline(cache, row.reference, row.story, reference_idf, story_idf, [2, 3, 4, 5, 6], regs)
        np.testing.assert_allclose(scores.loc[row.story_id].to_numpy(), expected, atol=1e-8)


def test_authors_idf_is_the_library_lookup_that_always_misses():
    """The library looks its idf tables up with 0-d tensors, which hash by identity: every lookup misses and
    returns log(N+1), so every token, [CLS] and [SEP] included, has the same mass."""
    import torch

    texts = synthetic_texts(prompts=2)
    cache = synthetic_cache(baryscore.required_texts(texts))
    library_table = manual_idf([cache.get(text).input_ids for text in texts["reference"]])
    ids = cache.get(texts["reference"][0]).input_ids
    assert library_table[CLS] == 0 and max(library_table[int(key)] for key in ids) > 0  # the table is right
    assert {library_table[key] for key in torch.as_tensor(ids)} == {math.log(len(texts) + 1)}
    story_table, reference_table = baryscore.idf_tables(texts, cache, "authors", swap_idf=False)
    assert story_table is reference_table
    layers = baryscore.chosen_layers(cache, None)
    for text in baryscore.required_texts(texts):
        _, masses = baryscore.measure(cache, text, layers, story_table)
        np.testing.assert_allclose(masses, np.full(len(masses), 1 / len(masses)), rtol=1e-15, atol=0)
    pd.testing.assert_frame_equal(baryscore.compute(texts, cache=cache, idf="authors"),
                                  baryscore.compute(texts, cache=cache, idf="uniform"), atol=1e-12, rtol=0)


def test_library_start_gives_the_same_scores_with_either_solver():
    texts = synthetic_texts(prompts=2)
    cache = synthetic_cache(baryscore.required_texts(texts))
    options = {"init": "zeros", "regularisations": (0.1,)}
    certified = baryscore.compute(texts, cache=cache, **options)
    pd.testing.assert_frame_equal(certified, baryscore.compute(texts, cache=cache, solver="pot", **options),
                                  atol=1e-12, rtol=0)
    assert not np.allclose(certified, baryscore.compute(texts, cache=cache, regularisations=(0.1,)))


def test_identity_story_equals_reference():
    texts = synthetic_texts(systems=("Human", "a"))
    cache = synthetic_cache(baryscore.required_texts(texts))
    human = texts["system"] == "Human"
    pooled = baryscore.compute(texts, cache=cache, idf="pooled").to_numpy()
    assert np.abs(pooled[human, 0]).max() < 1e-12  # W
    small = np.array(baryscore.REGULARISATIONS) <= 0.01
    sizes = np.array([len(cache.get(text).input_ids) for text in texts.loc[human, "story"]])
    assert (pooled[human][:, 1:][:, small] <= 0.01 * 2 * np.log(sizes)[:, None]).all()
    assert (pooled[~human, 0] > 0.1).all()
    divergence = baryscore.compute(texts, cache=cache, idf="uniform", sinkhorn="divergence").to_numpy()
    assert np.abs(divergence[human]).max() < 1e-12
    assert (divergence[~human] > 0).all()
    # per-side idf: a human story is weighted by the story column's idf, its reference by the reference column's
    per_side = baryscore.compute(texts, cache=cache, idf="per-side").to_numpy()
    assert (per_side[human, 0] > 1e-3).all()


def test_identity_when_every_story_is_its_reference():
    texts = synthetic_texts(systems=("Human",))
    cache = synthetic_cache(baryscore.required_texts(texts))
    scores = baryscore.compute(texts, cache=cache)  # both sides' idf tables are equal
    assert scores["baryscore-w"].abs().max() < 1e-12


def test_deterministic_and_the_same_over_worker_processes():
    texts = synthetic_texts(prompts=2)
    cache = synthetic_cache(baryscore.required_texts(texts))
    first = baryscore.compute(texts, cache=cache, regularisations=(0.1,))
    pd.testing.assert_frame_equal(first, baryscore.compute(texts, cache=cache, regularisations=(0.1,)))
    pd.testing.assert_frame_equal(first, baryscore.compute(texts, cache=cache, regularisations=(0.1,), processes=2))


def resident_bytes(path: Path) -> int:
    """This process's resident bytes of its mappings of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):  # a mapping's header line: range perms ... path
            inside = fields[-1] == str(path)
        elif inside and fields[0] == "Rss:":
            total += int(fields[1]) * 1024
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads Linux's /proc/self/smaps")
def test_memory_mapped_vectors_are_released_before_each_reference_group(tmp_path, monkeypatch):
    """A job holds the mapped pages of one reference group, not of every text it read (the kernel maps pages
    around each read in up to 2 MB folios, so the bound is checked as: released once per group, and a release
    leaves nothing resident)."""
    from storyeval.neural.embeddings import FORMAT, load_cache, save_cache

    texts = synthetic_texts(prompts=4)
    cache = synthetic_cache(baryscore.required_texts(texts), dim=384)
    cache.signature["format"] = FORMAT
    path = (tmp_path / "cache.safetensors").resolve()
    save_cache(cache, path)
    mapped, released = load_cache(path), []
    release = mapped.release
    monkeypatch.setattr(mapped, "release", lambda: released.append(resident_bytes(path)) or release())
    scores = baryscore.compute(texts, cache=mapped, regularisations=(0.1,))
    assert len(released) == 4 and max(released[1:]) > 0  # before each group, the previous group's pages
    pd.testing.assert_frame_equal(scores, baryscore.compute(texts, cache=cache, regularisations=(0.1,)))
    for text in mapped.texts:
        for states in mapped.get(text).layers.values():
            float(states.sum())
    assert resident_bytes(path) >= sum(states.nbytes for states in cache.hidden.values())
    release()
    assert resident_bytes(path) <= 3 * 4096  # the token ids, flags and offsets (pages), not released


def test_layers_default_to_the_last_five_and_must_be_cached():
    cache = synthetic_cache(["x"], layers=(1, 2, 3, 4, 5, 6))
    assert baryscore.chosen_layers(cache, None) == (2, 3, 4, 5, 6)
    with pytest.raises(InputError, match="layer 7"):
        baryscore.chosen_layers(cache, [6, 7])
    with pytest.raises(InputError, match="fewer than"):
        baryscore.chosen_layers(synthetic_cache(["x"], layers=(1, 2, 3)), None)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"idf": "tfidf"}, "unknown idf"),
        ({"sinkhorn": "plain"}, "unknown sinkhorn"),
        ({"solver": "lp"}, "unknown solver"),
        ({"init": "random"}, "unknown init"),
        ({"regularisations": (1, 0)}, "must be positive"),
    ],
)
def test_bad_options_are_refused(options, message):
    texts = synthetic_texts(prompts=2)
    with pytest.raises(InputError, match=message):
        baryscore.compute(texts, cache=synthetic_cache(baryscore.required_texts(texts)), **options)


def test_bad_inputs_are_refused():
    texts = synthetic_texts(prompts=1)
    cache = synthetic_cache(baryscore.required_texts(texts))
    with pytest.raises(InputError, match="idf 0"):  # one reference text: every reference token has df = N
        baryscore.compute(texts, cache=cache, idf="per-side")
    with pytest.raises(InputError, match="not in the embedding cache"):
        baryscore.compute(synthetic_texts(prompts=2), cache=cache)


def test_signature_names_the_method_and_parameters():
    cache = synthetic_cache(["x"])
    signature = baryscore.signature(cache=cache)
    assert signature["parameters"]["layers"] == [2, 3, 4, 5, 6]
    assert signature["parameters"]["regularisations"] == list(map(float, baryscore.REGULARISATIONS))
    assert signature["encoder"]["model"] == "synthetic" and "POT" in signature["versions"]


@pytest.mark.parametrize(
    "share, iterations, residual",
    [(1.0, 100, 1e-13), (0.0, 100, 1e-6), (0.0, 0, 1e-13)],
    ids=["sparse-cholesky", "conjugate-gradients", "blas-cholesky"],
)
def test_newton_direction_solves_the_laplacian_system(share, iterations, residual, monkeypatch):
    """Each way of solving for the Newton step (Cholesky of the Laplacian built from the plan's entries above
    1e-13, conjugate gradients to a relative residual of 1e-6, Cholesky of the Laplacian built by BLAS syrk)
    gives d with L d = reg * gradient, L = diag(c) - pi^T diag(a) pi written out in numpy."""
    from storyeval.neural import transport as module

    rng = np.random.default_rng(3)
    rows = rng.random((7, 6)) * (rng.random((7, 6)) < 0.6)
    rows[:, 0] += 0.1  # every row carries mass, and the graph is connected through column 0
    rows /= rows.sum(axis=1, keepdims=True)
    a = rng.random(7)
    a /= a.sum()
    mass = a @ rows
    gradient = rng.random(6) / 6
    gradient -= gradient.mean()  # a gradient b - c sums to 0
    monkeypatch.setattr(module, "SPARSE_SHARE", share)
    monkeypatch.setattr(module, "CG_ITERATIONS", iterations)
    if residual > 1e-13:  # conjugate gradients must answer on their own
        monkeypatch.setattr(module, "cholesky_solve", lambda *args: pytest.fail("fell back to Cholesky"))
    direction, _ = module.newton_direction(a, rows, mass, gradient, 0.5)
    laplacian = np.diag(mass) - rows.T @ np.diag(a) @ rows
    assert np.linalg.norm(laplacian @ direction - 0.5 * gradient) <= residual * np.linalg.norm(0.5 * gradient)
