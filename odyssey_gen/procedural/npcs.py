"""NPC types: enemies scaled by level, merchants, villagers, a guide, a boss (and the tutorial's pair).

Enemy numbers follow the shipped games' curve (a level-``l`` enemy has about ``16 l`` health and
``4 l + 1`` attack); the boss is about two and a half enemies of the top level. Every enemy kind has
a home area where one always stands, so a quest may ask for it; merchants stock what their part of
the world needs (materials of their level, something to write with and on, food, a lockpick).
"""

from __future__ import annotations

from odyssey_gen.procedural.draft import Draft, NpcDraft
from odyssey_gen.procedural.names import words_of

STANCES = ("attack", "defend", "wait")

ENEMY_TEXT = (
    "A {w} that hunts anyone who strays near.",
    "A {w}, hungry and quick to anger.",
    "A {w} that guards its ground fiercely.",
    "A {w}; it fights in a rhythm you can learn.",
)


def roles(total: int) -> dict[str, int]:
    """How many NPC types of each role ``total`` makes (guide and boss always one)."""
    merchants = max(1, round((total - 2) * 0.2))
    villagers = max(0, round((total - 2) * 0.12)) if total >= 7 else 0
    return {
        "guide": 1,
        "boss": 1,
        "merchant": merchants,
        "villager": villagers,
        "enemy": total - 2 - merchants - villagers,
    }


def _pattern(rng) -> list[str]:
    n = rng.randint(4, 6)
    while True:
        p = [rng.choice(STANCES) for _ in range(n)]
        if p.count("attack") >= 2 and ("wait" in p or "defend" in p):
            return p


def build_npcs(d: Draft) -> None:
    spec, rng, namer = d.spec, d.rng, d.namer
    top = spec.max_level
    n = roles(spec.npcs)
    raws = d.of_kind("raw")

    for j in range(n["enemy"]):
        level = 1 + (j * top) // n["enemy"]
        name = namer.name("enemy")
        hp = round(16 * level * rng.uniform(0.9, 1.15))
        drops_pool = [m for m in raws if m.level <= level] or raws
        drops = {rng.choice(drops_pool).name: 1}
        npc = NpcDraft(
            name,
            "enemy",
            level,
            {
                "kind": "enemy",
                "role": "fighter",
                "level": level,
                "hp": hp,
                "attack": 4 * level + 1,
                "defense": max(0, round(2.6 * (level - 1))),
                "pattern": _pattern(rng),
                "drops": drops,
                "spawn_weight": 1.0,
            },
        )
        npc.description = rng.choice(ENEMY_TEXT).format(w=words_of(name))
        homes = [a for a in d.areas if a.index != 0]
        if homes:
            best = min(abs(a.level - level) for a in homes)
            home = rng.choice([a for a in homes if abs(a.level - level) == best])
            for _ in range(2 if level == 1 else 1):
                home.npcs.append(name)
                npc.homes.append(home.name)
        d.npcs[name] = npc

    trophy = d.of_kind("trophy")[0]
    boss_name = namer.name("boss")
    boss = NpcDraft(
        boss_name,
        "boss",
        top,
        {
            "kind": "enemy",
            "role": "boss",
            "level": top,
            "hp": round(40 * top + 30),
            "attack": 5 * top + 2,
            "defense": round(3 * top),
            "pattern": [*_pattern(rng), "wait"],
            "drops": {trophy.name: 1},
            "unique": True,
            "spawn_weight": 0,
        },
    )
    boss.description = (
        f"The {words_of(boss_name)}, master of the deepest part of the world. It fights in a "
        "long rhythm of blows and pauses."
    )
    d.npcs[boss_name] = boss

    zones = d.zones
    for j in range(n["merchant"]):
        zone = min(zones - 1, (j * zones) // n["merchant"])
        home = d.spawn if j == 0 else rng.choice(d.zone_areas(zone))
        level = home.level
        name = namer.person("merchant")
        stock: dict[str, int] = {}
        wares = [m for m in raws if m.zone <= zone and m.level <= level + 1]
        for m in rng.sample(wares, min(len(wares), rng.randint(3, 5))):
            stock[m.name] = rng.randint(2, 4)
        for kind in ("writable", "write", "food_raw", "lockpick"):
            options = [o for o in d.of_kind(kind) if o.level <= level + 1]
            if options and (j == 0 or rng.random() < 0.5):
                stock[rng.choice(options).name] = rng.randint(1, 3)
        npc = NpcDraft(
            name,
            "merchant",
            level,
            {
                "kind": "friendly",
                "role": "merchant",
                "level": level,
                "hp": 50 + 10 * level,
                "attack": 0,
                "stock": stock,
                "coins": rng.randint(8, 20),
                "unique": True,
                "spawn_weight": 0,
                "dialogue": [f"Coin for goods, goods for coin. Mind {namer.motif()} on your way."],
            },
        )
        npc.description = f"{words_of(name).title()}, a trader with a pack of wares and a sharp eye for coin."
        home.npcs.append(name)
        npc.homes.append(home.name)
        d.npcs[name] = npc

    for _ in range(n["villager"]):
        home = rng.choice(d.areas)
        name = namer.person("villager")
        thing = rng.choice(raws)
        npc = NpcDraft(
            name,
            "villager",
            home.level,
            {
                "kind": "friendly",
                "role": "villager",
                "level": home.level,
                "hp": 40,
                "attack": 0,
                "coins": rng.randint(2, 8),
                "unique": True,
                "spawn_weight": 0,
                "dialogue": [f"If you need {words_of(thing.name)}, look in {thing.home}."],
            },
        )
        npc.description = f"{words_of(name).title()}, who has lived here longer than anyone remembers."
        home.npcs.append(name)
        npc.homes.append(home.name)
        d.npcs[name] = npc

    guide_name = namer.person("guide")
    guide = NpcDraft(
        guide_name,
        "guide",
        1,
        {"kind": "friendly", "role": "guide", "level": 1, "hp": 40, "attack": 0, "unique": True, "spawn_weight": 0},
    )
    guide.description = f"{words_of(guide_name).title()}, who knows what must be done and will say so when asked."
    d.npcs[guide_name] = guide

    if spec.tutorial:
        cheap = min(d.of_kind("raw"), key=lambda o: (o.fields.get("value", 1), o.name))
        trainer = namer.person("merchant")
        d.npcs[trainer] = NpcDraft(
            trainer,
            "trainer",
            1,
            {
                "kind": "friendly",
                "role": "merchant",
                "level": 1,
                "hp": 30,
                "attack": 0,
                "unique": True,
                "spawn_weight": 0,
                "stock": {cheap.name: 2},
            },
            description=f"{words_of(trainer).title()}, who teaches newcomers how trade is done.",
        )
        dummy = namer.name("enemy")
        d.npcs[dummy] = NpcDraft(
            dummy,
            "dummy",
            1,
            {
                "kind": "enemy",
                "role": "fighter",
                "level": 1,
                "hp": 1,
                "attack": 1,
                "pattern": ["wait"],
                "unique": True,
                "spawn_weight": 0,
            },
            description=f"A practice {words_of(dummy)} stuffed with straw. It does not fight back much.",
        )
