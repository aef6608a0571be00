"""``--describe-with``: a model writes the descriptions (and with ``--llm-names`` the names) of a game.

The procedural author names and describes everything from templates; a model, even the small
embedded one running offline, can make the text read better. Each place, area, object and NPC gets
one short call; a reply is taken only if it is one line of printable ASCII of a sensible length (a
name only if it is a fresh ``lower_snake_case`` name), otherwise the procedural text stays and the
reason is counted in the report, so nothing the model got wrong is hidden. New names are applied to
every mention in ``world.json`` and ``quest.json``, and the folder is loaded again; if it no longer
loads, the pass is undone as a whole and the report says why.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from odyssey_agents.llm import LLM, LLMError
from odyssey_gen.llm.parse import ReplyError, extract_json
from odyssey_gen.procedural.names import STOPWORDS
from odyssey_gen.report import Report
from odyssey_gen.spec import GameSpec

__all__ = ["Describer"]

SYSTEM = (
    "You write for a text adventure game. Reply with plain ASCII text only: no quotes around it, no markdown, no lists."
)
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def _format_keys() -> frozenset[str]:
    """Every key the game format uses: a handle spelled like one could not be renamed safely in the JSON."""
    import dataclasses

    from odyssey_env import content
    from odyssey_env.quests import spec as quest_spec
    from odyssey_env.rulelang import spec as rule_spec

    keys: set[str] = set()
    for module in (content, quest_spec, rule_spec):
        for value in vars(module).values():
            if dataclasses.is_dataclass(value):
                keys.update(f.name for f in dataclasses.fields(value))
    return frozenset(keys)


RESERVED = _format_keys()


def _handle_pattern(name: str) -> re.Pattern[str]:
    """A handle wherever it stands alone, or as the stem of an instance name (``pouch_<number>``)."""
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?=$|[^A-Za-z0-9_]|_<|_\d)")


def _clean(text: str) -> str:
    text = text.strip().splitlines()[0].strip() if text.strip() else ""
    return text.strip("\"'` ")


class Describer:
    """The describing pass (see the module docstring); called by the pipeline before validation."""

    def __init__(
        self,
        llm: LLM,
        spec: GameSpec,
        *,
        names: bool = False,
        record: str | Path | None = None,
        max_words: int = 30,
        max_items: int | None = None,
    ):
        """``max_items`` bounds the model calls of each kind (descriptions, names): the rest keep their text."""
        self.llm = llm
        self.max_items = max_items
        self.spec = spec
        self.names = names
        self.record = Path(record) if record else None
        self.max_words = max_words
        self.replies: list[str] = []
        self.tokens = {"input": 0, "output": 0, "calls": 0}

    # ------------------------------------------------------------------ the model
    def _ask(self, prompt: str, key: str, max_tokens: int) -> str:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        completion = self.llm.complete(messages, purpose="describe", max_tokens=max_tokens, json_keys=(key,))
        self.tokens["input"] += completion.input_tokens
        self.tokens["output"] += completion.output_tokens
        self.tokens["calls"] += 1
        self.replies.append(completion.text)
        if self.record is not None:
            self.record.write_text(json.dumps(self.replies, indent=1) + "\n", encoding="utf-8")
        try:
            value = extract_json(completion.text).get(key, "")
            return _clean(value if isinstance(value, str) else "")
        except ReplyError:
            return _clean(completion.text)

    def _description(self, kind: str, name: str, facts: str, old: str) -> tuple[str | None, str]:
        prompt = (
            f"The world: {self.spec.theme.strip()}.\nDescribe the {kind} called {name.replace('_', ' ')} "
            f"({facts}) in one vivid sentence of at most {self.max_words} words. The current text is: {old}"
        )
        try:
            text = self._ask(prompt, "description", 80)
        except LLMError as exc:
            return None, f"model call failed: {exc}"
        if not text:
            return None, "empty"
        if set(text) - set(map(chr, range(32, 127))):
            return None, "not printable ASCII"
        if any(c in text for c in "{}[]<>`|"):
            return None, "markup"
        words = len(text.split())
        if words < 4 or words > 2 * self.max_words:
            return None, "too short" if words < 4 else "too long"
        return (text if text.endswith((".", "!", "?")) else text + "."), ""

    def _name(self, kind: str, name: str, taken: set[str]) -> tuple[str | None, str]:
        prompt = (
            f"The world: {self.spec.theme.strip()}.\nGive the {kind} now called {name.replace('_', ' ')} a new "
            "name of one to three words that fits this world. Reply with the name only."
        )
        try:
            text = self._ask(prompt, "name", 12)
        except LLMError as exc:
            return None, f"model call failed: {exc}"
        words = re.findall(r"[a-z]+", text.lower())[:3]
        words = [w for w in words if len(w) >= 2]
        if not words or all(w in STOPWORDS for w in words):
            return None, "no usable words"
        new = "_".join(words)[:30].strip("_")
        if not NAME_RE.match(new) or re.search(r"_\d+$", new):
            return None, "not a valid name"
        if new in taken or new in RESERVED:
            return None, "already used"
        return new, ""

    # ------------------------------------------------------------------ the pass
    def __call__(self, folder: Path, report: Report) -> str:
        world_path, quest_path, rules_path = folder / "world.json", folder / "quest.json", folder / "rules.json"
        originals = {p: p.read_text(encoding="utf-8") for p in (world_path, quest_path, rules_path) if p.is_file()}
        world = json.loads(originals[world_path])
        described: Counter[str] = Counter()
        rejected: Counter[str] = Counter()

        def describe(item: dict[str, Any], kind: str, facts: str, key: str = "name") -> None:
            if self.max_items is not None and described["asked"] >= self.max_items:
                return
            text, why = self._description(kind, str(item[key]), facts, str(item.get("description", "")))
            if text is None:
                rejected[why] += 1
            else:
                item["description"] = text
                described["accepted"] += 1
            described["asked"] += 1

        for place in world.get("places", []):
            describe(place, "region", f"{len(place.get('areas', []))} areas")
            for area in place.get("areas", []):
                describe(area, "place", f"level {area.get('level', 1)}, in {place.get('name')}")
        for o in world.get("objects", []):
            describe(o, str(o.get("category", "object")), f"level {o.get('level', 1)}")
        for n in world.get("npcs", []):
            describe(
                n,
                "friendly person" if n.get("kind") == "friendly" else "hostile creature",
                f"{n.get('role', 'fighter')}, level {n.get('level', 1)}",
            )

        renames: dict[str, str] = {}
        name_rejects: Counter[str] = Counter()
        if self.names and not (folder / "rules.py").is_file():
            taken = {str(x.get("name")) for x in world.get("objects", []) + world.get("npcs", [])}
            taken |= {str(a.get("name")) for p in world.get("places", []) for a in p.get("areas", [])}
            targets = [("place", a["name"]) for p in world.get("places", []) for a in p.get("areas", [])]
            targets += [(str(o.get("category")), o["name"]) for o in world.get("objects", [])]
            targets += [
                ("creature" if n.get("kind") == "enemy" else "person", n["name"]) for n in world.get("npcs", [])
            ]
            for kind, old in targets[: self.max_items]:
                if old in RESERVED:
                    continue
                new, why = self._name(kind, old, taken)
                if new is None:
                    name_rejects[why] += 1
                else:
                    renames[old] = new
                    taken.add(new)
        texts = {world_path: json.dumps(world, indent=2) + "\n"}
        for path in (quest_path, rules_path):  # rules.json names the world's things too
            if path in originals:
                texts[path] = originals[path]
        # rules.json's own names (step rules, variables) are built from handles: leave them be there
        texts = {p: self._rename(t, renames, within_names=p != rules_path) for p, t in texts.items()}
        for p, t in texts.items():
            p.write_text(t, encoding="utf-8")
        undone = self._loads(folder)
        if undone:
            for p, t in originals.items():
                p.write_text(t, encoding="utf-8")
        report.describe = {
            "model": self.llm.describe(),
            "descriptions": {
                "asked": described["asked"],
                "accepted": described["accepted"],
                "rejected": dict(rejected),
            },
            "names": {
                "asked": len(renames) + sum(name_rejects.values()) if self.names else 0,
                "accepted": len(renames),
                "rejected": dict(name_rejects),
                "renamed": renames,
            },
            "undone": undone,
            "tokens": dict(self.tokens),
        }
        line = f"{described['accepted']}/{described['asked']} descriptions"
        if self.names:
            line += f" and {len(renames)} new names"
        line += f" from {self.llm.describe().get('model', self.llm.backend)}"
        if rejected:
            line += f" ({sum(rejected.values())} replies unusable, kept the generated text)"
        if undone:
            line += f"; UNDONE, the game no longer loaded: {undone}"
        return line

    @staticmethod
    def _rename(text: str, renames: dict[str, str], *, within_names: bool = True) -> str:
        # Two passes through placeholders, so a new name is never renamed again by an old one it contains
        # ("garnet" -> "brine_garnet" must not touch an area just renamed to "brine_garnet").
        # ``within_names=False``: words inside a longer name (``peat`` in ``peat_regrows``) stay as they are.
        final: list[str] = []
        edge = "A-Za-z" if within_names else "A-Za-z0-9_"
        for old in sorted(renames, key=len, reverse=True):
            new = renames[old]
            spaced_old, spaced_new = old.replace("_", " "), new.replace("_", " ")
            for pattern, replacement in (
                (_handle_pattern(old), new),
                (re.compile(rf"(?<![{edge}]){re.escape(spaced_old)}(?![{edge}])"), spaced_new),
                (re.compile(rf"(?<![{edge}]){re.escape(spaced_old.title())}(?![{edge}])"), spaced_new.title()),
            ):
                final.append(replacement)
                text = pattern.sub(f"\x00{len(final) - 1}\x00", text)
        return re.sub("\x00(\\d+)\x00", lambda m: final[int(m.group(1))], text)

    @staticmethod
    def _loads(folder: Path) -> str:
        """'' if the data still loads (checked here: a folder without code runs nothing), else why not."""
        from odyssey_env.game import GameError, load_game

        if (folder / "rules.py").is_file():
            return ""  # descriptions only (names stay): the full validation loads it in the sandbox
        try:
            load_game(folder, cache=False)
        except GameError as exc:
            return str(exc.problems[0])
        return ""


DescribeHook = Callable[[Path, Report], str]
