"""A network simplex for the transportation problem that starts from a given basis (numba-compiled).

Why by hand: BaryScore's barycenter re-solves L dense T x T transport problems at each of its 20-100
fixed-point steps, and between two steps only the costs move a little: the previous optimal basis stays
primal feasible and a hundred-odd pivots from the new optimum. POT's network simplex (and every solver in
scipy) starts from scratch each time; its `potentials_init` warm start changes which plan it returns in
ties. Here a basis is a spanning tree of the bipartite graph (rows 0..n-1, columns n..n+m-1), kept as arc
arrays with incidence lists; a pivot re-hangs only the subtree the leaving arc cuts off (parents, depths,
potentials by one search of it). Entering arcs come from a candidate list; the leaving arc is the last
blocking arc met from the cycle's apex (the rule of strongly feasible trees, Ahuja, Magnanti & Orlin 1993,
ch. 11; the starting trees are not made strongly feasible, so a pivot limit guards against cycling: BaryScore's
problems are nondegenerate in practice, 0 degenerate pivots in 4,506 measured).
Correctness does not rest on this solver: its result is used only with the certificate of
`storyeval.neural.ot.certified_plan` (every arc priced, no arc outside the tree tight = unique optimum).
"""

from __future__ import annotations

import numpy as np
from numba import njit

OPTIMAL, PIVOT_LIMIT, NOT_SPANNING = 1, 0, -1


@njit(cache=True, nogil=True)
def _root(parent: np.ndarray, node: int) -> int:
    while parent[node] != node:
        parent[node] = parent[parent[node]]  # path halving
        node = parent[node]
    return node


@njit(cache=True, nogil=True)
def spanning_tree(rows: np.ndarray, cols: np.ndarray, flows: np.ndarray, n: int, m: int):
    """A spanning tree containing the given arcs (a plan's support, which must be a forest), completed by
    zero-flow arcs: (tree rows, tree cols, tree flows), or empty arrays when the arcs have a cycle."""
    size = n + m - 1
    tree_rows, tree_cols, tree_flows = np.empty(size, np.int64), np.empty(size, np.int64), np.zeros(size)
    parent = np.arange(n + m)
    count = 0
    for k in range(len(rows)):
        a, b = _root(parent, rows[k]), _root(parent, n + cols[k])
        if a == b or count == size:
            return tree_rows[:0], tree_cols[:0], tree_flows[:0]
        parent[a] = b
        tree_rows[count], tree_cols[count], tree_flows[count] = rows[k], cols[k], flows[k]
        count += 1
    for i in range(n):  # join the components: row i to column j, flow 0
        for j in range(m):
            if count == size:
                break
            a, b = _root(parent, i), _root(parent, n + j)
            if a != b:
                parent[a] = b
                tree_rows[count], tree_cols[count] = i, j
                count += 1
    return tree_rows, tree_cols, tree_flows


@njit(cache=True, nogil=True)
def _is_spanning_tree(tree_rows: np.ndarray, tree_cols: np.ndarray, n: int, m: int) -> bool:
    """n + m - 1 arcs without a cycle (union-find)."""
    if len(tree_rows) != n + m - 1:
        return False
    parent = np.arange(n + m)
    for k in range(len(tree_rows)):
        a, b = _root(parent, tree_rows[k]), _root(parent, n + tree_cols[k])
        if a == b:
            return False
        parent[a] = b
    return True


@njit(cache=True, nogil=True)
def _row_violations(cost: np.ndarray, row: int, column_potential: np.ndarray, threshold: float) -> int:
    """How many j have c_ij - v_j < threshold. A count, not a minimum: LLVM vectorises this reduction (a float
    minimum it leaves scalar), 58 against 140 us per 512 x 512 pass measured, on C-contiguous costs only."""
    count = 0
    for j in range(cost.shape[1]):
        count += cost[row, j] - column_potential[j] < threshold
    return count


@njit(cache=True, nogil=True)
def _end(slot: int, tree_rows: np.ndarray, tree_cols: np.ndarray, n: int) -> int:
    """The node at one end of a tree arc: slot 2k is arc k's row end, 2k + 1 its column end."""
    return tree_rows[slot >> 1] if slot & 1 == 0 else n + tree_cols[slot >> 1]


@njit(cache=True, nogil=True)
def _link(arc, tree_rows, tree_cols, n, first, following, preceding) -> None:
    """Add a tree arc to both its nodes' incidence lists (doubly linked through slots)."""
    for slot in (2 * arc, 2 * arc + 1):
        node = _end(slot, tree_rows, tree_cols, n)
        following[slot], preceding[slot] = first[node], -1
        if first[node] >= 0:
            preceding[first[node]] = slot
        first[node] = slot


@njit(cache=True, nogil=True)
def _unlink(arc, tree_rows, tree_cols, n, first, following, preceding) -> None:
    for slot in (2 * arc, 2 * arc + 1):
        if preceding[slot] >= 0:
            following[preceding[slot]] = following[slot]
        else:
            first[_end(slot, tree_rows, tree_cols, n)] = following[slot]
        if following[slot] >= 0:
            preceding[following[slot]] = preceding[slot]


@njit(cache=True, nogil=True)
def _hang(top, tree_rows, tree_cols, tree_costs, n, first, following, up, up_arc, depth, potential,
          queue) -> None:
    """Parents, parent arcs, depths and potentials (u_i + v_j = c_ij on tree arcs) of the subtree below `top`,
    whose own are set, by a breadth-first search (the arcs must form a tree: `queue` has room for each node
    once)."""
    queue[0], head, tail = top, 0, 1
    while head < tail:
        node = queue[head]
        head += 1
        slot = first[node]
        while slot >= 0:
            arc = slot >> 1
            if arc != up_arc[node]:
                other = _end(slot ^ 1, tree_rows, tree_cols, n)
                up[other], up_arc[other], depth[other] = node, arc, depth[node] + 1
                potential[other] = tree_costs[arc] - potential[node]
                queue[tail] = other
                tail += 1
            slot = following[slot]


@njit(cache=True, nogil=True)
def solve(cost: np.ndarray, tree_rows: np.ndarray, tree_cols: np.ndarray, tree_flows: np.ndarray, slack: float,
          max_pivots: int):
    """Pivot the primal feasible tree (arrays changed in place) until no arc has reduced cost below -slack.

    Entering arc by a candidate list (as LEMON's rule of that name): a pricing scan, resumed where the last
    stopped, collects up to sqrt(n m) / 4 violated arcs; the most violated of them enters, at each pivot's new
    potentials, until none is left and a new scan refills the list; a scan of every arc finding none proves
    optimality. Returns (status, u, v, pivots)."""
    n, m = cost.shape
    if not _is_spanning_tree(tree_rows, tree_cols, n, m):
        return NOT_SPANNING, np.zeros(n), np.zeros(m), 0
    nodes, total = n + m, n * m
    capacity = max(int(np.sqrt(total)) // 4, 16)
    candidate_rows, candidate_cols = np.empty(capacity, np.int64), np.empty(capacity, np.int64)
    candidate_costs = np.empty(capacity)  # kept beside them: scattered reads of the cost matrix are slow
    up, up_arc, depth = np.empty(nodes, np.int64), np.empty(nodes, np.int64), np.empty(nodes, np.int64)
    potential, queue = np.zeros(nodes), np.empty(nodes, np.int64)
    first, following, preceding = np.full(nodes, -1), np.empty(2 * nodes, np.int64), np.empty(2 * nodes, np.int64)
    tree_costs = np.empty(nodes - 1)
    for k in range(nodes - 1):
        tree_costs[k] = cost[tree_rows[k], tree_cols[k]]
        _link(k, tree_rows, tree_cols, n, first, following, preceding)
    up[0], up_arc[0], depth[0] = -1, -1, 0  # the root: row 0, potential 0
    _hang(0, tree_rows, tree_cols, tree_costs, n, first, following, up, up_arc, depth, potential, queue)
    pivots, listed, next_row = 0, 0, 0
    while True:
        row, col, best, kept = -1, -1, -slack, 0
        for c in range(listed):
            i, j = candidate_rows[c], candidate_cols[c]
            reduced = (candidate_costs[c] - potential[i]) - potential[n + j]
            if reduced < -slack:
                candidate_rows[kept], candidate_cols[kept], candidate_costs[kept] = i, j, candidate_costs[c]
                kept += 1
                if reduced < best:
                    row, col, best = i, j, reduced
        listed = kept
        if row < 0:
            # Refill, row by row from where the last scan stopped: a count over the row first, its violated arcs
            # collected only where it is non-zero (most rows have none).
            for step in range(n):
                i = (next_row + step) % n
                threshold = potential[i] - slack
                if _row_violations(cost, i, potential[n:], threshold):
                    for j in range(m):
                        if cost[i, j] - potential[n + j] < threshold and listed < capacity:
                            candidate_rows[listed], candidate_cols[listed], candidate_costs[listed] = i, j, cost[i, j]
                            listed += 1
                if listed >= capacity:
                    break
            next_row = (i + 1) % n
            if listed == 0:
                return OPTIMAL, potential[:n].copy(), potential[n:].copy(), pivots
            continue
        if pivots == max_pivots:
            return PIVOT_LIMIT, potential[:n].copy(), potential[n:].copy(), pivots
        pivots += 1
        # Flow goes row -> col on the entering arc, then back from col to row along the tree: up from col to
        # the apex (an arc is backward, loses flow, when its child end is a column), down to row (backward
        # when its child end is a row).
        a, b = row, n + col
        while a != b:
            if depth[a] >= depth[b]:
                a = up[a]
            else:
                b = up[b]
        apex = a
        delta = np.inf
        node = n + col
        while node != apex:
            if node >= n and tree_flows[up_arc[node]] < delta:
                delta = tree_flows[up_arc[node]]
            node = up[node]
        node = row
        while node != apex:
            if node < n and tree_flows[up_arc[node]] < delta:
                delta = tree_flows[up_arc[node]]
            node = up[node]
        # Leaving arc: the last blocking arc met going round the cycle from the apex (down to row, the
        # entering arc, up from col): the column side's blocking arc nearest the apex, else the row side's
        # nearest the row.
        leaving, top, outside = -1, n + col, row  # the subtree cut off by the leaving arc: below `top`
        node = n + col
        while node != apex:
            if node >= n and tree_flows[up_arc[node]] == delta:
                leaving = up_arc[node]
            node = up[node]
        if leaving < 0:
            top, outside = row, n + col
            node = row
            while node != apex:
                if node < n and tree_flows[up_arc[node]] == delta:
                    leaving = up_arc[node]
                    break
                node = up[node]
        node = n + col
        while node != apex:
            k = up_arc[node]
            tree_flows[k] = tree_flows[k] - delta if node >= n else tree_flows[k] + delta
            node = up[node]
        node = row
        while node != apex:
            k = up_arc[node]
            tree_flows[k] = tree_flows[k] - delta if node < n else tree_flows[k] + delta
            node = up[node]
        # The entering arc takes the leaving arc's slot; the cut subtree hangs from it, re-rooted at `top`.
        _unlink(leaving, tree_rows, tree_cols, n, first, following, preceding)
        tree_rows[leaving], tree_cols[leaving], tree_flows[leaving] = row, col, delta
        tree_costs[leaving] = cost[row, col]
        _link(leaving, tree_rows, tree_cols, n, first, following, preceding)
        up[top], up_arc[top], depth[top] = outside, leaving, depth[outside] + 1
        potential[top] = tree_costs[leaving] - potential[outside]
        _hang(top, tree_rows, tree_cols, tree_costs, n, first, following, up, up_arc, depth, potential, queue)


@njit(cache=True, nogil=True)
def unique_tight(cost: np.ndarray, u: np.ndarray, v: np.ndarray, tree_rows: np.ndarray, tree_cols: np.ndarray,
                 tie: float) -> bool:
    """Whether no arc outside the tree has reduced cost <= tie (then the tree's plan is the unique optimum):
    each row's count of such arcs must equal its number of tree arcs, whose reduced costs are 0 up to
    rounding. Counted without branches (a reduction LLVM vectorises, as `_row_violations`)."""
    n, m = cost.shape
    degree = np.zeros(n, np.int64)
    for k in range(len(tree_rows)):
        degree[tree_rows[k]] += 1
    for i in range(n):
        ui, count = u[i], 0
        for j in range(m):
            count += (cost[i, j] - ui) - v[j] <= tie
        if count != degree[i]:
            return False
    return True
