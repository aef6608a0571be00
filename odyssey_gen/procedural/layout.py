"""Places, areas, levels and the area graph.

Areas are laid out in one *level order*, spawn first, deepest last; levels rise along it and places
are contiguous runs of it. Locked paths cut the order into *zones*: each zone is connected inside,
and zone ``z`` is joined to the zones before it by exactly one locked path, so every lock guards what
lies behind it and its key can always be made from what lies before it. Extra links inside a place
make loops, never bypasses of a lock.
"""

from __future__ import annotations

from odyssey_gen.procedural.draft import AreaDraft, Draft, Lock, PlaceDraft
from odyssey_gen.procedural.names import article, sentence, words_of

#: ``{m}`` is a motif of the theme's lexicon: a noun phrase ("the slap of the tide", "cold starlight").
AREA_TEXT = (
    "{a} in {place}. The first thing I notice is {m}.",
    "{a}, full of {m}. Paths lead off in several directions.",
    "{a}; {m} hangs over everything here.",
    "{a} at the edge of {place}, quiet but for {m}.",
    "{a}. Even here there is {m}.",
)
PLACE_TEXT = (
    "A part of the world known for {m}.",
    "Here {m} never quite goes away.",
    "Those who live here would know it anywhere by {m}.",
)


def lay_out(d: Draft) -> None:
    """Fill ``d.places``, ``d.areas``, ``d.links`` and ``d.locks`` (keys are named later)."""
    spec, rng, namer = d.spec, d.rng, d.namer
    n_areas = spec.areas
    levels = [1 + (i * spec.max_level) // n_areas for i in range(n_areas)]
    place_of = [p for p, size in enumerate(spec.place_sizes) for _ in range(size)]
    cuts = _lock_cuts(d, place_of)
    zone_of = [sum(1 for c in cuts if c <= i) for i in range(n_areas)]
    for _ in range(spec.places):
        title = namer.place_title()
        d.places.append(PlaceDraft(title, sentence(rng, PLACE_TEXT, m=namer.motif()), []))
    for i in range(n_areas):
        name = namer.name("area")
        place = d.places[place_of[i]]
        text = sentence(rng, AREA_TEXT, a=article(words_of(name)), m=namer.motif(), place=place.title)
        area = AreaDraft(name, i, place_of[i], levels[i], zone_of[i], description=text)
        d.areas.append(area)
        place.areas.append(area)

    # A tree inside each zone, preferring parents of the same place, then one locked link per zone.
    for i in range(1, n_areas):
        z = zone_of[i]
        start = cuts[z - 1] if z else 0
        if i == start:
            before = [j for j in range(i) if zone_of[j] == z - 1]
            j = max(before, key=lambda k: (levels[k], rng.random()))  # the deepest area of the zone before
            d.locks.append(Lock(d.areas[j].name, d.areas[i].name, zone=z))
            continue
        candidates = list(range(start, i))
        same = [j for j in candidates if place_of[j] == place_of[i]]
        j = rng.choice(same if same and rng.random() < 0.85 else candidates)
        d.links.append((d.areas[j].name, d.areas[i].name))
    # A few loops inside places (never across a lock).
    linked = {frozenset(pair) for pair in d.links}
    for p in range(spec.places):
        members = [i for i in range(n_areas) if place_of[i] == p]
        pairs = [
            (x, y)
            for k, x in enumerate(members)
            for y in members[k + 1 :]
            if zone_of[x] == zone_of[y] and frozenset((d.areas[x].name, d.areas[y].name)) not in linked
        ]
        for x, y in rng.sample(pairs, min(len(pairs), rng.randint(0, 1))):
            d.links.append((d.areas[x].name, d.areas[y].name))


def _lock_cuts(d: Draft, place_of: list[int]) -> list[int]:
    """Indices in the level order where a zone begins (one per lock): place boundaries first."""
    spec, rng = d.spec, d.rng
    n = spec.lock_count
    if n == 0:
        return []
    boundaries = [i for i in range(1, len(place_of)) if place_of[i] != place_of[i - 1]]
    if len(boundaries) >= n:
        # spread over the boundaries, deepest ones preferred: the lock guards the world's later part
        step = len(boundaries) / n
        chosen = sorted({boundaries[min(len(boundaries) - 1, int(len(boundaries) - 1 - k * step))] for k in range(n)})
        if len(chosen) == n:
            return chosen
        boundaries = chosen + [b for b in boundaries if b not in chosen]
        return sorted(boundaries[:n])
    others = [i for i in range(1, len(place_of)) if i not in boundaries]
    extra = sorted(rng.sample(others, n - len(boundaries)))
    return sorted(boundaries + extra)
