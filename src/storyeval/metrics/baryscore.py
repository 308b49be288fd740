"""BaryScore of the story against the human reference (Colombo et al. 2021), from the shared token-embedding
cache (`storyeval.neural.embeddings`); lower is better (distances).

Method, as the authors' library (`nlg_eval_via_simi_measures`, `BaryScoreMetric`; Colombo et al. 2021):
- per text, the token vectors (special tokens included) of the last 5 hidden states (`layers`; bert-base:
  8..12 in `config/paper.yaml`, MiniLM: 2..6), L2-normalised (under the library's zero start with its torch
  arithmetic, `unit_vectors`), one discrete measure per layer;
- token weights: idf = log((N+1)/(df+1)), normalised to sum 1 (special tokens occur in every text, so their
  weight is 0). `idf="pooled"` (the default): one table over the story and reference columns, so both
  sides of a pair are weighted alike and story = reference scores 0 (as the release's human row);
  `idf="per-side"`: the layout the library meant, the story column for stories and the reference column for
  references (one document per row, as its `prepare_idfs` on the pair lists); `idf="uniform"`: 1 per token;
  `idf="authors"`: what the library computed (HANNA's release). Its `evaluate_batch` looks the weights up
  with 0-d torch tensors as keys (`idf_ref[i] for i in ref_ids_idf[ref_ids]`); tensors hash by identity, so
  every lookup misses its defaultdict and gets the default log(N+1): every token, [CLS] and [SEP] included,
  weighs the same. Reproduced as an idf table with no entries (N = rows of the table), which differs from
  "uniform" only in the last bits of the normalised masses, the bits the library's zero start hinges on
  (with `init="zeros"`, from the texts, W equals the library's to 8e-16 on 24 hanna-llm pairs that it runs
  unpadded: bench/bench_authors_library.py --batch-size 1, docs/ot-metrics.md);
- per text, the free-support Wasserstein barycenter of its layers (`storyeval.neural.ot.barycenter`: T points
  of mass 1/T, at most `max_iterations` fixed-point steps), started at each token's mean over the layers
  (the library started at zeros, `init="zeros"`, which makes the result hinge on the last bit of the
  inputs: see `storyeval.neural.ot`);
- between the reference's and the story's barycenters, with uniform masses and squared-Euclidean cost
  (`ot.dist`), as the library: W = exact transport cost (`ot.emd2`); SD-eps = the transport cost <P_eps, C>
  of the entropic plan at regularisation eps, what the library's `ot.bregman.sinkhorn2` returned
  (`sinkhorn="cost"`, the released semantics: SD-10 of the human row is ~1.25, not 0), or the debiased
  Sinkhorn divergence OT_eps(x, y) - (OT_eps(x, x) + OT_eps(y, y)) / 2 (Feydy et al. 2019;
  `sinkhorn="divergence"`: 0 for story = reference at every eps, non-negative, -> W as eps -> 0).
Fixes of the library: (1) its `prepare_idfs` stores (reference idf, story idf) and
`evaluate_batch` unpacks them as (story idf, reference idf), so stories would be weighted by the references'
idf and references by the stories' if the lookups hit (they miss: `idf="authors"`); we weight each side by
its own (`swap_idf=True` swaps them as the library).
(2) Its zero start: above. (3) Its plain Sinkhorn underflowed at eps = 0.001 (released SD-0.001 values
1.2e-178..1.1e-9); ours is solved in the log domain and stays finite, non-negative and within eps log(nm) of W.
Identity: with the same weights on both sides (`idf="pooled"`, one idf over both columns, "uniform", "authors"),
story = reference gives W = 0 (to 1e-15) and SD-divergence = 0; with per-side idf the human row's two
barycenters differ by the two idf tables. Speed: each distinct (text, side) barycenter is computed once
per reference group (the library rebuilt both per pair), with the certified sparse solver of
`storyeval.neural.ot`, and the transports with `storyeval.neural.transport`; groups run over `processes`
worker processes, largest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from storyeval.errors import InputError
from storyeval.metrics import base
from storyeval.metrics.base import Resource, check_texts, defaults_of, describe, scores_frame
from storyeval.neural.embeddings import EmbeddingCache, IdfWeights, idf_weights, require_texts, resolve_layer
from storyeval.neural.parallel import map_reference_groups

NAME = "baryscore"
NEEDS = frozenset({"reference"})
REGULARISATIONS = (10, 5, 1, 0.5, 0.1, 0.01, 0.001)
IDF = ("per-side", "pooled", "uniform", "authors")
SINKHORN = ("cost", "divergence")
LAST_LAYERS = 5
COLUMNS = base.columns("embedding", "based", "BaryScore-W", *[f"BaryScore-SD-{reg:g}" for reg in REGULARISATIONS],
                       direction="lower")
RESOURCE = Resource("cache", "encoder")


@dataclass(frozen=True)
class Settings:
    regularisations: tuple[float, ...]
    sinkhorn: str
    solver: str
    init: str
    max_iterations: int
    stop_threshold: float
    tolerance: float


def columns(regularisations: Sequence[float] = REGULARISATIONS) -> list[str]:
    """baryscore-w, then baryscore-sd-<eps> (HANNA's label slugs: `BaryScore-SD-0.001` -> baryscore-sd-0.001)."""
    return ["baryscore-w", *[f"baryscore-sd-{float(reg):g}" for reg in regularisations]]


def required_texts(texts: pd.DataFrame) -> list[str]:
    """The texts the embedding cache must hold for this metric."""
    return sorted(set(texts["story"]) | set(texts["reference"]))


def chosen_layers(cache: EmbeddingCache, layers: Sequence[int] | None) -> tuple[int, ...]:
    """`None`: the model's last 5 hidden states, as the library; every layer must be in the cache."""
    if layers is None:
        top = int(cache.signature["num_hidden_layers"])
        if top < LAST_LAYERS:
            raise InputError(f"metric {NAME}: {cache.model} has {top} layers, fewer than BaryScore's last "
                             f"{LAST_LAYERS}; fix: set baryscore layers explicitly")
        layers = range(top - LAST_LAYERS + 1, top + 1)
    chosen = tuple(resolve_layer(cache, layer, NAME) for layer in layers)
    if not chosen:
        raise InputError(f"metric {NAME}: no layers chosen; fix: give at least one hidden-state index")
    return chosen


def idf_tables(texts: pd.DataFrame, cache: EmbeddingCache, idf: str, swap_idf: bool):
    """(story-side table, reference-side table); None means uniform weights."""
    if idf == "uniform":
        return None, None
    if idf == "authors":  # the library's lookups all miss: log(N+1) for every token (module docstring)
        table = IdfWeights({}, len(texts))
        return table, table
    if idf == "pooled":
        table = idf_weights(cache, [*texts["story"], *texts["reference"]])
        return table, table
    stories, references = idf_weights(cache, list(texts["story"])), idf_weights(cache, list(texts["reference"]))
    # The library's bug: its prepare_idfs returns/stores the tables in swapped order.
    return (references, stories) if swap_idf else (stories, references)


def measure(cache: EmbeddingCache, text: str, layers: tuple[int, ...], table, library_bits: bool = False
            ) -> tuple[np.ndarray, np.ndarray]:
    """[L, T, D] float32 unit token vectors and [T] weights. `library_bits` (the library's zero start): normalised
    with the library's torch arithmetic (`unit_vectors`), whose last bits decide that start's tie; else with
    numpy, which the default layer-mean start does not hinge on (the defaults' scores stay as they were)."""
    tokens = cache.get(text)
    stacked = np.stack([tokens.layers[layer] for layer in layers])
    weights = table.of(tokens.input_ids) if table is not None else np.ones(len(tokens.input_ids))
    units = unit_vectors(stacked) if library_bits else stacked / np.linalg.norm(stacked, axis=-1, keepdims=True)
    return units, masses(weights, text)


def unit_vectors(vectors: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm in float32 with torch's arithmetic, as the library
    (`x.div_(torch.norm(x, dim=-1).unsqueeze(-1))`), in place. Why torch: numpy's float32 norm sums the squares
    in another order and differs in the last bit on most tokens (18,209 of 21,307 on 24 hanna-llm pairs), and
    from the library's zero start those bits decide the first barycenter step's tie."""
    import torch

    tensor = torch.from_numpy(vectors)  # shares the array's memory
    return tensor.div_(torch.norm(tensor, dim=-1).unsqueeze(-1)).numpy()


def masses(weights: np.ndarray, text: str) -> np.ndarray:
    """Token weights normalised to sum 1, as the library: twice, with Python's sequential sum; kept: from its
    zero start (init="zeros") the first barycenter step is a tie broken at the last bit (storyeval.neural.ot)."""
    total = sum(weights.tolist())
    if not total > 0:
        raise InputError(f"metric {NAME}: every token of {text[:60]!r} has idf 0 (each occurs in every text of "
                         "its column, e.g. a one-text dataset); fix: set baryscore idf to uniform")
    weights = weights / total
    return weights / sum(weights.tolist())


def score_group(job) -> np.ndarray:
    """Barycenters of one reference group's measures, then [W, SD..., max marginal error] per pair."""
    from storyeval.neural.ot import barycenter
    from storyeval.neural.transport import transport

    measures, pairs, settings = job
    centers = {key: barycenter(locations.astype(np.float64), weights, settings.max_iterations,
                               settings.stop_threshold, settings.solver, settings.init)
               for key, (locations, weights) in measures.items()}
    regs = settings.regularisations
    selfs = {}
    if settings.sinkhorn == "divergence":
        selfs = {key: transport(center, center, regs, settings.tolerance) for key, center in centers.items()}
    rows = []
    for reference, story in pairs:
        result = transport(centers[reference], centers[story], regs, settings.tolerance)
        if settings.sinkhorn == "divergence":
            sinkhorn = result.objectives - (selfs[reference].objectives + selfs[story].objectives) / 2
            errors = np.concatenate([result.errors, selfs[reference].errors, selfs[story].errors])
        else:
            sinkhorn, errors = result.costs, result.errors
        rows.append([result.exact, *sinkhorn, errors.max(initial=0.0)])
    return np.array(rows)


def check_options(idf: str, sinkhorn: str, solver: str, init: str, regularisations: Sequence[float],
                  max_iterations: int) -> None:
    from storyeval.neural.ot import INITS, SOLVERS

    for name, value, allowed in [("idf", idf, IDF), ("sinkhorn", sinkhorn, SINKHORN), ("solver", solver, SOLVERS),
                                 ("init", init, INITS)]:
        if value not in allowed:
            raise InputError(f"metric {NAME}: unknown {name} {value!r}; fix: use one of {', '.join(allowed)}")
    if not len(regularisations) or min(regularisations) <= 0:
        raise InputError(f"metric {NAME}: regularisations {list(regularisations)} must be positive; "
                         f"fix: e.g. {list(REGULARISATIONS)}")
    if max_iterations < 1:
        raise InputError(f"metric {NAME}: max_iterations {max_iterations} must be at least 1; fix: 1000 as the library")


def compute(texts: pd.DataFrame, *, cache: EmbeddingCache, layers: Sequence[int] | None = None, idf: str = "pooled",
            swap_idf: bool = False, regularisations: Sequence[float] = REGULARISATIONS, sinkhorn: str = "cost",
            solver: str = "certified", init: str = "layer-mean", max_iterations: int = 1000,
            stop_threshold: float = 1e-7, tolerance: float = 1e-9, processes: int = 1) -> pd.DataFrame:
    from storyeval.neural.transport import warn_unconverged

    check_texts(texts, NEEDS, NAME)
    check_options(idf, sinkhorn, solver, init, regularisations, max_iterations)
    layers = chosen_layers(cache, layers)
    require_texts(cache, required_texts(texts), NAME)
    story_idf, reference_idf = idf_tables(texts, cache, idf, swap_idf)
    settings = Settings(tuple(float(reg) for reg in regularisations), sinkhorn, solver, init, int(max_iterations),
                        float(stop_threshold), float(tolerance))
    shared = story_idf is reference_idf  # same weights on both sides: one barycenter per text

    def group_job(reference, stories):
        cache.release()  # the previous group's mapped vectors: memory bounded by a group, not the dataset
        reference_key = (reference, "shared" if shared else "reference")
        measures = {reference_key: measure(cache, reference, layers, reference_idf, settings.init == "zeros")}
        pairs = []
        for story in stories:
            story_key = (story, "shared" if shared else "story")
            if story_key not in measures:
                measures[story_key] = measure(cache, story, layers, story_idf, settings.init == "zeros")
            pairs.append((reference_key, story_key))
        return measures, pairs, settings

    def largest_first(reference, stories):
        """Work grows with the tokens squared: the last jobs are then the short ones, and no worker sits idle
        while another finishes a long one."""
        return -sum(len(cache.get(text).input_ids) ** 2 for text in {reference, *stories})

    values = map_reference_groups(score_group, texts, group_job, processes, largest_first)
    warn_unconverged(NAME, values[:, -1], tolerance)
    return scores_frame(texts["story_id"], dict(zip(columns(regularisations), values[:, :-1].T)))


@defaults_of(compute)
def signature(*, cache: EmbeddingCache | dict, layers: Sequence[int] | None, idf: str, swap_idf: bool,
              regularisations: Sequence[float], sinkhorn: str, solver: str, init: str, max_iterations: int,
              stop_threshold: float, tolerance: float, processes: int) -> dict:
    encoder = cache.signature if isinstance(cache, EmbeddingCache) else dict(cache)
    top = int(encoder["num_hidden_layers"])
    chosen = list(range(top - LAST_LAYERS + 1, top + 1)) if layers is None else [int(layer) for layer in layers]
    return describe(NAME, ["POT", "numpy", "scipy"], {"candidate": "story", "reference": "reference"},
                    {"layers": chosen, "idf": idf, "swap_idf": bool(swap_idf),
                     "regularisations": [float(reg) for reg in regularisations], "sinkhorn": sinkhorn,
                     "solver": solver, "init": init, "max_iterations": int(max_iterations),
                     "stop_threshold": float(stop_threshold), "tolerance": float(tolerance)},
                    method="free-support barycenter of the layers per text (uniform mass); exact EMD and "
                           "log-domain entropic transport (semi-dual Newton) between barycenters, uniform masses, "
                           "squared-Euclidean cost; special tokens included", encoder=encoder)
