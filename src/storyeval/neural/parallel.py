"""Worker processes for the per-group metric jobs (BaryScore, DepthScore, MoverScore): a lazy, order-keeping map over
spawned processes, each limited to one BLAS thread."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np


def one_blas_thread():
    """Limit every loaded BLAS to one thread; POT and scipy.linalg are imported first, since a BLAS library
    loaded after the limit (scipy ships its own OpenBLAS) would keep its default threads."""
    import ot  # noqa: F401
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def single_threaded() -> None:
    """Worker initialiser: one BLAS thread for the worker's life."""
    global _LIMITS
    _LIMITS = one_blas_thread()


def parallel_map(function: Callable, jobs: Iterable, processes: int = 1) -> list:
    """[function(job) for job in jobs], over `processes` worker processes when > 1 (same results, same order).

    Jobs are drawn lazily, at most 2 per worker unfinished, so a generator of large jobs never sits in memory
    at once (results must be small: all are kept until the end). The window counts unfinished jobs, not
    unread results: waiting on the oldest job leaves a worker idle whenever a later one finishes first
    (no gain measured on BaryScore's hanna-llm run: 291-292 s either way). One BLAS thread per process: on
    these small (<= 512) matrices threaded OpenBLAS only adds contention (measured on 2 busy cores: a
    511x511 Cholesky takes 330 ms threaded, 8 ms single-threaded).
    """
    if processes <= 1:
        with one_blas_thread():
            return [function(job) for job in jobs]
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from multiprocessing import get_context

    futures, unfinished = [], set()
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn"), initializer=single_threaded) as pool:
        for job in jobs:
            if len(unfinished) >= 2 * processes:
                unfinished = wait(unfinished, return_when=FIRST_COMPLETED).not_done
            futures.append(pool.submit(function, job))
            unfinished.add(futures[-1])
        return [future.result() for future in futures]


def map_reference_groups(function: Callable, texts, group_job: Callable, processes: int = 1,
                         order: Callable | None = None) -> np.ndarray:
    """`function(group_job(reference, stories))` for each reference's rows of `texts` (a story table), over
    `processes` workers (`parallel_map`); its results, one value or row per story, placed back at those rows.
    `order(reference, stories)`: a sort key for the order the groups are handed out (default: as they come)."""
    groups = texts.groupby("reference", sort=False).indices
    stories = texts["story"].to_numpy()
    references = list(groups)
    if order is not None:
        references.sort(key=lambda reference: order(reference, stories[groups[reference]]))
    blocks = parallel_map(function, (group_job(reference, stories[groups[reference]]) for reference in references),
                          processes)
    values = np.full((len(texts), *np.shape(blocks[0])[1:]) if blocks else len(texts), np.nan)
    for reference, block in zip(references, blocks):
        values[groups[reference]] = block
    return values
