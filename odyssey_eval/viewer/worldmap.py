"""The world graph of a run: areas grouped by place, their connections, and where to draw them.

The graph is what the observations say (every observation names its place and area and lists the
exits, locked or not), so it needs nothing but the trajectory and holds every area the run reached,
tutorial rooms and areas added while playing included. For a shipped game whose files are those the
run recorded (their SHA-256 is in ``cell.json``), the areas the agent never saw are added from the
seed's initial world, so the map shows what was left unexplored; a game folder is never loaded
(reading a run executes nothing from it), and its map is the part the run saw.

The layout (:func:`layout`) draws places as a graph (a seeded ForceAtlas2 layout from networkx) and
each place's areas around its centre: the same graph gives the same picture in any process.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WorldMap", "layout"]

#: Where areas are drawn: x and y in [MARGIN, 1 - MARGIN] of the map's box.
MARGIN = 0.08


@dataclass
class WorldMap:
    """Areas (in first-seen order), their places, and undirected connections.

    ``unlocked[(a, b)]`` is the first step at which the connection was seen open, None if it was only
    ever seen locked; ``source[area]`` says whether the run saw the area (``"seen"``) or it comes from
    the game's initial world only (``"game"``); ``seen`` holds the connections the run saw, and
    ``locked_seen`` those it saw locked at least once (the others were open from the start).
    """

    places: dict[str, str] = field(default_factory=dict)  # area -> place ("" when unknown)
    source: dict[str, str] = field(default_factory=dict)
    unlocked: dict[tuple[str, str], int | None] = field(default_factory=dict)
    seen: set[tuple[str, str]] = field(default_factory=set)
    locked_seen: set[tuple[str, str]] = field(default_factory=set)

    def area(self, name: str, place: str | None = None, source: str = "seen") -> None:
        if name not in self.places:
            self.places[name] = place or ""
            self.source[name] = source
        elif place and not self.places[name]:
            self.places[name] = place
        if source == "seen":
            self.source[name] = "seen"

    def exit(self, a: str, b: str, locked: bool, step: int | None, source: str = "seen") -> None:
        """Record that ``a`` has an exit to ``b`` (seen at ``step``; None: from the game's world)."""
        self.area(a, source=source)
        self.area(b, source=source if source != "seen" else self.source.get(b, "seen"))
        key = (a, b) if a <= b else (b, a)
        opened = None if locked else (step if step is not None else 0)
        if source == "seen":
            self.seen.add(key)
            if locked:
                self.locked_seen.add(key)
        known = self.unlocked.get(key, -1)
        if known == -1 or (opened is not None and (known is None or opened < known)):
            self.unlocked[key] = opened

    def add_world(self, areas: Mapping[str, Any]) -> None:
        """Add a world state's areas (``WorldState.areas``): those not seen yet are marked ``"game"``."""
        for name, area in areas.items():
            self.area(name, area.place, source="game")
        for name, area in areas.items():
            for other, ex in area.exits.items():
                key = (name, other) if name <= other else (other, name)
                if key not in self.unlocked:
                    self.exit(name, other, bool(ex.locked), None, source="game")

    def opened(self, key: tuple[str, str]) -> int | None:
        """From which step the connection is drawn open: 0 if the run never saw it locked, None if it
        never saw it open."""
        first_open = self.unlocked[key]
        if first_open is not None and key in self.seen and key not in self.locked_seen:
            return 0
        return first_open

    def to_json(self, positions: Mapping[str, tuple[float, float]]) -> dict[str, Any]:
        names = list(self.places)
        index = {n: i for i, n in enumerate(names)}
        place_names = list(dict.fromkeys(p for p in self.places.values()))
        return {
            "places": place_names,
            "areas": [
                {
                    "n": n,
                    "p": place_names.index(self.places[n]),
                    "x": round(positions[n][0], 4),
                    "y": round(positions[n][1], 4),
                    "s": self.source[n],
                }
                for n in names
            ],
            "edges": [
                [index[key[0]], index[key[1]], self.opened(key), int(key in self.seen)] for key in sorted(self.unlocked)
            ],
        }


def layout(
    areas: Sequence[str], places: Mapping[str, str], edges: Iterable[tuple[str, str]], seed: int = 0
) -> dict[str, tuple[float, float]]:
    """Positions in the unit square (aspect kept, centred): places laid out as a graph of their own, then
    each place's areas on a small circle around its centre, turned so that an area faces the places
    it leads to. An area of unknown place (seen only as an exit) counts as a place of its own.
    """
    if not areas:
        return {}
    group = {a: places.get(a) or f"\0{a}" for a in areas}  # "\0": cannot clash with a real place name
    edges = [(a, b) for a, b in edges if a in group and b in group and a != b]
    centers = _place_centers(list(dict.fromkeys(group[a] for a in areas)), group, edges, seed)
    neighbours: dict[str, list[str]] = {a: [] for a in areas}
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    pos: dict[str, tuple[float, float]] = {}
    for place, (cx, cy) in centers.items():
        members = [a for a in areas if group[a] == place]
        if len(members) == 1:
            pos[members[0]] = (cx, cy)
            continue
        want = {}
        for a in members:  # the direction of the other places this area leads to
            vx = sum(centers[group[b]][0] - cx for b in neighbours[a] if group[b] != place)
            vy = sum(centers[group[b]][1] - cy for b in neighbours[a] if group[b] != place)
            if abs(vx) + abs(vy) > 1e-9:
                want[a] = math.atan2(vy, vx)
        slots, turn = _arrange(members, want)
        radius = PLACE_RADIUS * max(1.0, len(members) / 3)
        for a, slot in zip(members, slots, strict=True):
            angle = 2 * math.pi * slot / len(members) + turn
            pos[a] = (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
    return _fit(pos)


#: An area's distance from its place's centre, where the closest two places' centres are 1 apart.
PLACE_RADIUS = 0.28


def _place_centers(
    names: list[str], group: Mapping[str, str], edges: Sequence[tuple[str, str]], seed: int
) -> dict[str, tuple[float, float]]:
    """Centres of the places: a seeded ForceAtlas2 layout of the place graph with strong gravity (a chain
    of places curls up rather than running off in a line), scaled so the closest two are 1 apart and
    turned so its long side is horizontal."""
    import networkx as nx
    import numpy as np

    if len(names) == 1:
        return {names[0]: (0.0, 0.0)}
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(names)
    for a, b in edges:
        if group[a] != group[b]:
            graph.add_edge(group[a], group[b])
    raw = nx.forceatlas2_layout(graph, seed=seed, max_iter=500, strong_gravity=True, gravity=1.0, scaling_ratio=2.0)
    pts = np.array([raw[n] for n in names], dtype=float)
    pts -= pts.mean(axis=0)
    _, _, turn = np.linalg.svd(pts, full_matrices=False)
    pts = pts @ turn.T
    gaps = [float(np.hypot(*(pts[i] - pts[j]))) for i in range(len(pts)) for j in range(i)]
    pts /= max(min(gaps), 1e-9)
    return {n: (float(x), float(y)) for n, (x, y) in zip(names, pts, strict=True)}


def _arrange(members: Sequence[str], want: Mapping[str, float]) -> tuple[tuple[int, ...], float]:
    """Slots on the circle (one per area) and the circle's turn that best match the wanted directions
    (least squared angle error; ties keep the first found, so the result is deterministic)."""
    k = len(members)
    best: tuple[float, tuple[int, ...], float] | None = None
    orders = itertools.permutations(range(k)) if k <= 6 else iter([tuple(range(k))])
    for order in orders:
        for step in range(24):
            turn = 2 * math.pi * step / 24
            cost = 0.0
            for a, slot in zip(members, order, strict=True):
                if a in want:
                    miss = (2 * math.pi * slot / k + turn - want[a] + math.pi) % (2 * math.pi) - math.pi
                    cost += miss * miss
            if best is None or cost < best[0] - 1e-12:
                best = (cost, order, turn)
    assert best is not None
    return best[1], best[2]


def _fit(pos: Mapping[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """Scale into [MARGIN, 1 - MARGIN] keeping the aspect, centred on the shorter side."""
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    inner = 1 - 2 * MARGIN
    ox = MARGIN + inner * (1 - (max(xs) - min(xs)) / span) / 2
    oy = MARGIN + inner * (1 - (max(ys) - min(ys)) / span) / 2
    return {a: (ox + inner * (x - min(xs)) / span, oy + inner * (y - min(ys)) / span) for a, (x, y) in pos.items()}
