"""A small fake of the reference release (agentodyssey 0.1.0's layout), written by the tests.

It has the files the importer reads for one game, ``base``: a world definition, a main quest with a
linear chapter and a DAG chapter, a tutorial, side-quest settings and one extra verb. Every Python file
also carries a *payload*, code that would create ``marker`` if the file were ever run or imported, so a
test can show that importing the release never executes it.
"""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

WORLD = {
    "entities": {
        "places": [
            {
                "type": "place",
                "id": "place_hamlet",
                "name": "Hamlet",
                "unlocked": True,
                "areas": [
                    {"type": "area", "id": "area_hamlet_green", "name": "green", "level": 1, "light": True},
                    {"type": "area", "id": "area_hamlet_forge", "name": "forge", "level": 1, "light": True},
                ],
            },
            {
                "type": "place",
                "id": "place_wood",
                "name": "Dark Wood",
                "unlocked": True,
                "areas": [
                    {"type": "area", "id": "area_wood_glade", "name": "glade", "level": 2, "light": False},
                    {"type": "area", "id": "area_wood_den", "name": "den", "level": 2, "light": True},
                ],
            },
        ],
        "objects": [
            {"type": "object", "id": "obj_coin", "name": "coin", "category": "currency", "usage": "exchange",
             "value": 1, "size": 1, "description": "A coin \u2014 round.",
             "craft": {"ingredients": {}, "dependencies": []},
             "level": 1},
            {"type": "object", "id": "obj_stick", "name": "stick", "category": "material", "usage": "craft",
             "value": 1, "size": 1, "description": "A stick.", "craft": {"ingredients": {}, "dependencies": []},
             "level": 1, "areas": ["area_hamlet_green", "area_wood_glade"]},
            {"type": "object", "id": "obj_cloth", "name": "cloth", "category": "material", "usage": "craft",
             "value": 1, "size": 1, "description": "Cloth.", "craft": {"ingredients": {}, "dependencies": []},
             "level": 1},
            {"type": "object", "id": "obj_workbench", "name": "workbench", "category": "station", "usage": "craft",
             "value": 0, "size": 9, "description": "A bench.", "craft": {"ingredients": {}, "dependencies": []},
             "level": 1},
            {"type": "object", "id": "obj_club", "name": "club", "category": "weapon", "usage": "attack",
             "value": 4, "size": 2, "attack": 6, "description": "A club.",
             "craft": {"ingredients": {"obj_stick": 2, "obj_cloth": 0.5}, "dependencies": ["obj_workbench"]},
             "level": 1},
            {"type": "object", "id": "obj_vest", "name": "vest", "category": "armor", "usage": "defend",
             "value": 5, "size": 2, "defense": 3, "description": "A vest.",
             "craft": {"ingredients": {"obj_cloth": 2}, "dependencies": []}, "level": 1},
            {"type": "object", "id": "obj_paper", "name": "paper", "category": "tool", "usage": "writable",
             "value": 1, "size": 1, "text": "", "max_text_length": 100, "description": "Paper.",
             "craft": {"ingredients": {}, "dependencies": []}, "level": 1},
            {"type": "object", "id": "obj_pen", "name": "pen", "category": "tool", "usage": "write", "value": 2,
             "size": 1, "description": "A pen.", "craft": {"ingredients": {}, "dependencies": []}, "level": 1},
            {"type": "object", "id": "obj_small_pouch", "name": "small_pouch", "category": "container",
             "usage": "store", "value": 3, "size": 2, "capacity": 6, "description": "A bag.",
             "craft": {"ingredients": {"obj_cloth": 1}, "dependencies": []}, "level": 1},
            {"type": "object", "id": "obj_key", "name": "key", "category": "tool", "usage": "unlock", "value": 3,
             "size": 1, "description": "A key.", "craft": {"ingredients": {"obj_stick": 1}, "dependencies": []},
             "level": 1},
            {"type": "object", "id": "obj_apple", "name": "apple", "category": "food", "usage": "consume",
             "value": 1, "size": 1, "hp_restore": 5, "description": "An apple.",
             "craft": {"ingredients": {}, "dependencies": []}, "level": 1},
        ],
        "npcs": [
            {"type": "npc", "id": "npc_nell_ash", "name": "nell_ash", "enemy": False, "unique": True,
             "role": "merchant", "description": "a trader", "objects": ["obj_cloth", "obj_stick"]},
            {"type": "npc", "id": "npc_wolf", "name": "wolf", "enemy": True, "unique": False, "role": "beast",
             "description": "a wolf", "objects": ["obj_stick"], "base_hp": 12, "slope_hp": 4,
             "base_attack_power": 3, "slope_attack_power": 1, "combat_pattern": ["attack", "wait"]},
        ],
    },
    "initializations": {
        "spawn": {"area": "area_hamlet_green", "npcs": {}, "objects": {"obj_coin": 8, "obj_pen": 1, "obj_paper": 1,
                                                                        "obj_workbench": 1, "obj_cloth": 3}},
        "undistributable_objects": [],
    },
    "graph": {
        "connections": [
            {"from": "area_hamlet_green", "to": "area_hamlet_forge", "locked": False, "key": None},
            {"from": "area_hamlet_forge", "to": "area_wood_glade", "locked": False, "key": None},
            {"from": "area_wood_glade", "to": "area_wood_den", "locked": False, "key": None},
        ]
    },
    "custom_events": ["main_quest", "side_quest", "tutorial"],
}  # fmt: skip

PAYLOAD = """
import pathlib as _p
_p.Path({marker!r}).write_text("the release's code ran")
"""

MAIN_QUEST = """
{payload}
from games.base.rule import BaseStepRule


class MainQuestStepRule(BaseStepRule):
    name = "main_quest_step"
    priority = 2
    OBJECTIVE_NPC_BASE_ID = "npc_quest_guide"
    OBJECTIVE_NPC_NAME_POOL = ["ada_lark", "bo_finch"]
    OBJECTIVE_NPC_MAX_HP = 10**9
    HIJACK = __import__("pathlib").Path({marker!r}).write_text("class body ran")
    WOLF_HP = 30
    required_objects = [
        {{"type": "object", "id": "obj_moon_token", "name": "moon_token", "category": "material", "usage": "craft",
         "value": None, "size": 1, "description": "A token.", "craft": {{"ingredients": {{}}, "dependencies": []}},
         "level": 2, "quest": True}},
    ]
    required_npcs = [
        {{"type": "npc", "id": "npc_quest_elder", "name": "elder_rue", "enemy": False, "unique": True,
         "role": "scout", "quest": True, "description": "an elder", "base_hp": 200, "base_attack_power": 200,
         "objects": []}},
        {{"type": "npc", "id": "npc_boss_alpha", "name": "alpha_wolf", "enemy": True, "unique": True,
         "role": "boss_minor", "quest": True, "description": "a big wolf", "base_hp": WOLF_HP,
         "base_attack_power": 4, "combat_pattern": ["attack", "wait"], "objects": []}},
        {{"type": "npc", "id": OBJECTIVE_NPC_BASE_ID, "name": "mira", "enemy": False, "unique": True,
         "role": "guide", "quest": True, "description": "", "base_hp": OBJECTIVE_NPC_MAX_HP, "objects": []}},
    ]
    undistributable_objects = ["obj_moon_token"]
    QUEST_CONFIG = {{
        "title": "The Small Test",
        "intro": "=== MAIN QUEST: The Small Test ===\\n",
        "chapters": [
            {{
                "id": "chapter_1",
                "title": "Meet",
                "intro": "Talk to {{mq_guide_name}}.",
                "stages": [
                    {{"id": "ch1_meet", "objective": "Find {{ch1_elder_name}}.",
                     "done_any": [{{"kind": "state", "type": "in_area_with_npc", "npc_key": "ch1_elder_npc"}}],
                     "on_complete_feedback": "The word is {{ch1_word}}."}},
                    {{"id": "ch1_arm", "objective": "Hold a club.",
                     "done_any": [{{"kind": "state", "type": "has_any_of", "base_objs": ["obj_club"]}}]}},
                    {{"id": "ch1_write", "objective": "Leave the word at {{ch1_far_area}}.",
                     "done_all": [
                        {{"kind": "state", "type": "in_area", "area_key": "ch1_far_area"}},
                        {{"kind": "state", "type": "paper_text_equals_in_area", "text_key": "ch1_word"}}],
                     "spawns_boss_key": "ch1_boss_npc"}},
                    {{"id": "ch1_boss", "objective": "Defeat {{ch1_boss_name}}.",
                     "done_any": [{{"kind": "event", "type": "npc_killed", "npc_key": "ch1_boss_npc"}},
                                  {{"kind": "state", "type": "boss_already_defeated", "boss_key": "ch1_boss_npc"}}],
                     "chapter_complete": True}},
                ],
            }},
            {{
                "id": "chapter_2",
                "title": "Tree",
                "intro": "Two things.",
                "root_goal": "ch2_root",
                "stages": [
                    {{"id": "ch2_root", "objective": "Both.", "quest_complete": True,
                     "requires": ["ch2_vest", "ch2_token"], "children": ["ch2_vest", "ch2_token"]}},
                    {{"id": "ch2_vest", "objective": "Wear a vest.",
                     "done_all": [{{"kind": "state", "type": "equipped_any_of", "base_objs": ["obj_vest"]}}]}},
                    {{"id": "ch2_token", "objective": "Carry the token.",
                     "done_all": [{{"kind": "state", "type": "has_any_of", "base_objs": ["obj_moon_token"]}}]}},
                ],
            }},
        ],
    }}

    def _bootstrap(self, env, world):
        rng = env.rng
        spawn_area = env.world_definition["initializations"]["spawn"]["area"]

        def pick_progressive(n=1):
            return []

        self._generated["ch1_word"] = "moonrise"
        self._generated["ch1_elder_area"] = "area_hamlet_forge"
        _picks_far = pick_progressive(1)
        self._generated["ch1_far_area"] = "area_wood_den"
        self._generated["ch1_payload"] = __import__("os").system("touch " + {marker!r})

    def _ensure_static_quest_npcs(self, env, world):
        rng = env.rng
        if "ch1_elder_npc" not in self._generated:
            inst = self._create_npc_instance(world, "npc_quest_elder", self._generated["ch1_elder_area"], rng)
            if inst:
                self._generated["ch1_elder_npc"] = inst

    def _ensure_named_boss_spawned(self, env, world, boss_key):
        if boss_key == "ch1_boss_npc":
            base_id = "npc_boss_alpha"
            area_id = self._generated["ch1_far_area"]
            base_hp, base_atk = 30, 4
        else:
            return

    def apply(self, ctx, res):
        sid = "x"
        if sid == "ch1_boss":
            self._ensure_reward_available(ctx.agent.id, ctx.world, "area", "obj_moon_token", res)
"""

TUTORIAL = """
{payload}
class TutorialRoomStepRule(BaseStepRule):
    required_objects = [{{"type": "object", "id": "obj_small_pouch"}}, {{"type": "object", "id": "obj_key"}},
                        {{"type": "object", "id": "obj_stick"}}]
    required_npcs = [
        {{"type": "npc", "id": "npc_tutorial_merchant", "name": "selma_tutor", "enemy": False, "unique": True,
         "role": "merchant", "level": 1, "attack_power": 0, "hp": 1, "coins": 100, "description": "a tutor"}},
        {{"type": "npc", "id": "npc_tutorial_enemy", "name": "straw_raider", "enemy": True, "unique": False,
         "role": "enemy", "level": 1, "attack_power": 1, "hp": 1, "coins": 0, "description": "a dummy"}},
    ]
    STEPS = [
        {{"id": "pick_bag", "setup": {{"instances_on_ground_if_missing": ["bag"]}},
         "instruction": "Pick up the bag: `pick up {{bag}}`",
         "done_any": [{{"kind": "event", "type": "object_picked_up", "base_obj": "obj_small_pouch"}}]}},
        {{"id": "buy_stick", "setup": {{"ensure_ground_base": {{"obj_coin": 2}},
                                      "ensure_npcs": [{{"kind": "merchant", "stock": {{"obj_stick": 1}}}}]}},
         "instruction": "Buy: `buy 1 {{stick}} {{merchant}}`",
         "done_any": [{{"kind": "event", "type": "object_bought", "base_obj": "obj_stick"}}]}},
        {{"id": "craft_key", "setup": {{"ensure_ground_base": {{"obj_stick": 1}}}},
         "instruction": "Craft a key.",
         "done_any": [{{"kind": "event", "type": "object_crafted", "base_obj": "obj_key"}}]}},
        {{"id": "leave", "setup": {{"lock_exit": True}}, "instruction": "Leave.",
         "done_any": [{{"kind": "event", "type": "area_entered"}}]}},
    ]
"""

GENERAL = """
{payload}
class SideQuestStepRule(BaseStepRule):
    REWARD_COINS = {{"collect": (1, 3), "craft": (3, 6), "talk": (1, 3), "trade": (3, 6)}}
    MIN_EXPLORED_AREAS = 2


class FoodRespawnStepRule(BaseStepRule):
    name = "food_respawn_step"


class StrangeWeatherStepRule(BaseStepRule):
    name = "strange_weather_step"
"""

ACTIONS = """
{payload}
class EatRule(BaseActionRule):
    verb = "eat"


class JuggleRule(BaseActionRule):
    verb = "juggle"
"""

# The shape of the reference's World._distribute_objects that the importer reads (odyssey_eval.paper.
# distribution): a guarantee loop over the area's own materials and the draws' factors (3 and 6 here, so
# that a test sees them read rather than defaulted).
WORLD_CODE = """
{payload}
class World:
    @staticmethod
    def _distribute_objects(area_list, objects, rng):
        for area in area_list:
            non_comp_craft_materials = [oid for oid in objects if area.id in objects[oid].areas]
            for oid in non_comp_craft_materials:
                area.objects[oid] = area.objects.get(oid, 0) + max(1, area.level)
            materials = list(non_comp_craft_materials)
            n, d = len(materials), 7
            k_materials = rng.randint(min(int(n * 3), int(d * 3)), min(int(n * 6), int(d * 6)))
            for oid in rng.choices(materials, k=k_materials):
                area.objects[oid] = area.objects.get(oid, 0) + 1

    @staticmethod
    def _assign_npcs_to_areas(world_definition, rng, area_list):
        for home in area_list:
            enemy_count = rng.randint(math.floor(home.level / 2), home.level)
"""

ENV = """
{payload}
class AgentOdysseyEnv:
    def reset(self):
        self._intro = (f"\\n{{self.person_verbalized['subject_pronoun']}} wake in a small test world. "
                       "Everything is made up.\\n")
"""


def write_tree(root: Path, marker: Path, *, prefix: str = "") -> Path:
    """The fake release as a folder under ``root`` (files under ``prefix``, as in an sdist)."""
    base = root / prefix
    payload = PAYLOAD.format(marker=str(marker))
    files = {
        "assets/world_definitions/base/default.json": json.dumps(WORLD, indent=2),
        "assets/env_configs/base/initial.json": json.dumps({"step": 0}),
        "games/base/rules/step_rules/main_quest.py": MAIN_QUEST.format(payload=payload, marker=str(marker)),
        "games/base/rules/step_rules/tutorial.py": TUTORIAL.format(payload=payload),
        "games/base/rules/step_rules/general.py": GENERAL.format(payload=payload),
        "games/base/rules/action_rules.py": ACTIONS.format(payload=payload),
        "games/base/env.py": ENV.format(payload=payload),
        "games/base/world.py": WORLD_CODE.format(payload=payload),
        "games/__init__.py": payload,
        "games/base/__init__.py": payload,
    }
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def write_wheel(path: Path, marker: Path, tmp: Path) -> Path:
    tree = write_tree(tmp / "wheel-tree", marker)
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(tree.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(tree).as_posix())
        archive.writestr("agentodyssey-0.1.0.dist-info/METADATA", "Name: agentodyssey\nVersion: 0.1.0\n")
    return path


def write_sdist(path: Path, marker: Path, tmp: Path) -> Path:
    tree = write_tree(tmp / "sdist-tree", marker, prefix="agentodyssey-0.1.0")
    with tarfile.open(path, "w:gz") as archive:
        archive.add(tree / "agentodyssey-0.1.0", arcname="agentodyssey-0.1.0")
    return path
