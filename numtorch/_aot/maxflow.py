"""Minimum s-t cut by maximum flow (Dinic's algorithm), for the AOT partitioner.

``min_cut(n, edges, source, sink)`` returns the cut's value and the vertices on the
source side. This module knows nothing about graphs of primitives: the partitioner
(``partition.py``) builds the flow network and reads the cut. It must stay pure Python
(numtorch's runtime is NumPy only; networkx serves the tests as an oracle).

Note [Own max-flow]
The partitioner needs one min cut per compiled graph pair, on a network of two vertices
per value (a few hundred to a few thousand vertices, every edge capacity a byte count or
infinity). Dinic's algorithm (BFS levels, then blocking flows by DFS along level edges)
runs in O(V^2 E) worst case, far less on these layered networks. Measured (median of 21,
this machine) on the joint graph of the 784-512-256-10 MLP with cross-entropy (116
vertices, 157 edges): this function takes 0.19 ms; networkx.minimum_cut (preflow-push,
building its DiGraph included) takes 10.4 ms for the same cut value. networkx would also
be numtorch's only non-NumPy runtime dependency, so numtorch keeps this short
implementation and uses networkx only to check it in the tests (the `test` extra).
"""
from __future__ import annotations

from collections import deque

INF = float("inf")


def min_cut(n, edges, source, sink):
    """Minimum ``source``-``sink`` cut of a directed network on vertices ``0..n-1``.

    ``edges`` are ``(u, v, capacity)`` triples (capacity a non-negative number or
    ``float('inf')``; parallel edges add up). Returns ``(value, source_side)``: the cut's
    capacity and the set of vertices reachable from ``source`` in the residual network
    of a maximum flow. Raises ValueError when every cut is infinite.
    """
    if not (0 <= source < n and 0 <= sink < n) or source == sink:
        raise ValueError(f"min_cut: source {source} and sink {sink} must be distinct vertices "
                         f"in 0..{n - 1}")
    # Residual network as parallel arrays: edge k goes head[k] -> to[k]; k ^ 1 is its twin.
    to, cap, adj = [], [], [[] for _ in range(n)]
    for u, v, c in edges:
        if c < 0:
            raise ValueError(f"min_cut: edge ({u}, {v}) has negative capacity {c}")
        adj[u].append(len(to))
        to.append(v)
        cap.append(c)
        adj[v].append(len(to))
        to.append(u)
        cap.append(0)
    flow = 0
    while True:
        level = _levels(n, adj, to, cap, source)
        if level[sink] < 0:
            break
        it = [0] * n
        while True:
            pushed = _augment(adj, to, cap, level, it, source, sink)
            if pushed == 0:
                break
            if pushed == INF:
                raise ValueError("min_cut: every source-sink cut has infinite capacity")
            flow += pushed
    level = _levels(n, adj, to, cap, source)
    return flow, {v for v in range(n) if level[v] >= 0}


def _levels(n, adj, to, cap, source):
    level = [-1] * n
    level[source] = 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for k in adj[u]:
            v = to[k]
            if cap[k] > 0 and level[v] < 0:
                level[v] = level[u] + 1
                queue.append(v)
    return level


def _augment(adj, to, cap, level, it, source, sink):
    """One augmenting path along level edges (iterative DFS); returns the flow it pushed."""
    path = []           # edge indices from source
    u = source
    while True:
        if u == sink:
            pushed = min(cap[k] for k in path)
            if pushed == INF:
                return INF
            for k in path:
                cap[k] -= pushed
                cap[k ^ 1] += pushed
            return pushed
        edges = adj[u]
        while it[u] < len(edges):
            k = edges[it[u]]
            v = to[k]
            if cap[k] > 0 and level[v] == level[u] + 1:
                break
            it[u] += 1
        else:
            # dead end: retreat one edge and never try this vertex again in this phase
            if not path:
                return 0
            level[u] = -1
            k = path.pop()
            u = to[k ^ 1]
            it[u] += 1
            continue
        path.append(edges[it[u]])
        u = to[edges[it[u]]]
