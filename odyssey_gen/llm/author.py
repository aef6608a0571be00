"""The LLM author: the paper's entity, rule and quest generators over any ``odyssey_agents.llm`` model.

Three stages, each one model call per attempt, each with quick checks of its own before the whole
candidate is validated:

* ``entities`` writes ``world.json``: the reply must hold a JSON object that loads (schema and every
  reference, checked here: data runs nothing) and has the size asked for;
* ``rules`` writes ``rules.json`` in the engine's rule language (skipped when no new rules are asked): it
  must load with the world (schema, references, bounds: data, so checked here, nothing runs) and declare
  exactly the number of new verbs and step rules asked for, with names the engine does not have. With the
  spec's ``code`` (``--code``) it writes ``rules.py`` instead, for human review: the allow-list, then a load
  in the sandbox; such a game runs only once a person trusts it;
* ``quest`` writes ``quest.json`` (with ``code`` it may append new predicates to ``rules.py``): it must
  load, have the chapters and stages asked for, and give every predicate condition a plan.

Every call's tokens are recorded on its attempt (input and output, as the backend reports them), and
with ``record`` every reply is written to a JSON file that ``--replay`` (the scripted backend) plays
back exactly.
"""

from __future__ import annotations

import ast
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from odyssey_agents.llm import LLM, LLMError
from odyssey_gen.llm.parse import ReplyError, extract_json, extract_python
from odyssey_gen.llm.prompts import entities_prompt, quest_prompt, rule_file_prompt, rules_prompt
from odyssey_gen.report import Attempt
from odyssey_gen.spec import GameSpec, ValidationSettings
from odyssey_gen.validate import Problem, check_static
from odyssey_gen.validate.sandbox import run_checks

__all__ = ["LLMAuthor"]

#: Reply budgets per stage (clipped to the model's context window by the backend).
MAX_TOKENS = {"entities": 16000, "rules": 8000, "quest": 8000}
PREDICATE_MARK = "# ---- quest predicates (written by the quest stage) ----"
LOAD_ONLY = ValidationSettings(seeds=1, random_steps=0, timeout=60)


def _problem(stage: str, message: str, detail: str = "") -> Problem:
    return Problem(stage, message, detail, stage)


def _predicate_conditions(cond: Any) -> Iterator[dict[str, Any]]:
    if isinstance(cond, dict):
        if cond.get("type") == "predicate":
            yield cond
        for sub in cond.get("conditions", []) or []:
            yield from _predicate_conditions(sub)


def declared_predicates(source: str) -> list[tuple[str, str]]:
    """``(name, docstring)`` of the ``@predicate("name")`` functions in ``source``, read without running it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Name)
                    and deco.func.id == "predicate"
                    and deco.args
                    and isinstance(deco.args[0], ast.Constant)
                ):
                    out.append((str(deco.args[0].value), (ast.get_docstring(node) or "").split("\n")[0]))
    return out


class LLMAuthor:
    """The repair loop's view of the LLM stages (see the module docstring)."""

    name: str = "llm"
    stages: tuple[str, ...] = ("entities", "rules", "quest")

    def __init__(self, spec: GameSpec, llm: LLM, *, record: str | Path | None = None):
        self.spec = spec
        self.llm = llm
        self.record = Path(record) if record else None
        self.replies: list[str] = []
        self.rules_source = ""  # the rules stage's part of rules.py
        self.predicate_source = ""  # the quest stage's part
        self.rule_file: dict[str, Any] | None = None  # the rules stage's rules.json (without code)

    def model_info(self) -> dict[str, Any]:
        return self.llm.describe()

    # ------------------------------------------------------------------ the model
    def _ask(self, stage: str, messages: list[dict[str, str]], attempt: Attempt) -> str:
        completion = self.llm.complete(messages, purpose=f"generate_{stage}", max_tokens=MAX_TOKENS[stage])
        attempt.calls += 1
        attempt.input_tokens += completion.input_tokens
        attempt.output_tokens += completion.output_tokens
        attempt.seconds += completion.seconds
        self.replies.append(completion.text)
        if self.record is not None:
            self.record.write_text(json.dumps(self.replies, indent=1) + "\n", encoding="utf-8")
        return completion.text

    # ------------------------------------------------------------------ stages
    def run_stage(self, stage: str, folder: Path, feedback: list[Problem], attempt: Attempt) -> list[Problem]:
        try:
            return getattr(self, f"_{stage}")(folder, feedback, attempt)
        except LLMError as exc:
            return [_problem(stage, f"the model call failed: {exc}")]
        except ReplyError as exc:
            return [_problem(stage, str(exc))]

    def _entities(self, folder: Path, feedback: list[Problem], attempt: Attempt) -> list[Problem]:
        reply = self._ask("entities", entities_prompt(self.spec, feedback), attempt)
        world = extract_json(reply, "world.json")
        if isinstance(world.get("game"), dict):
            world["game"]["name"] = self.spec.name  # the folder's name, whatever the model wrote
        (folder / "world.json").write_text(json.dumps(world, indent=2) + "\n", encoding="utf-8")
        for later in ("quest.json", "rules.py", "rules.json"):  # they were written for the previous world
            (folder / later).unlink(missing_ok=True)
        problems = self._load_alone(folder, ("world.json",), "entities")
        return problems or self._sizes(world)

    def _sizes(self, world: dict[str, Any]) -> list[Problem]:
        spec = self.spec
        out = []
        places = world.get("places", [])
        areas = [a for p in places for a in p.get("areas", [])]
        levels = {a.get("level", 1) for a in areas}
        if len(places) != spec.places:
            out.append(_problem("entities", f"asked for exactly {spec.places} place(s), got {len(places)}"))
        if len(areas) != spec.areas:
            out.append(
                _problem(
                    "entities",
                    f"asked for {spec.areas} areas ({', '.join(map(str, spec.place_sizes))} "
                    f"by place), got {len(areas)}",
                )
            )
        if max(levels, default=1) != spec.max_level:
            out.append(_problem("entities", f"area levels must reach {spec.max_level}, got {sorted(levels)}"))
        n_obj, n_npc = len(world.get("objects", [])), len(world.get("npcs", []))
        if not 0.8 * spec.objects <= n_obj <= 1.25 * spec.objects:
            out.append(_problem("entities", f"asked for about {spec.objects} object types, got {n_obj}"))
        if abs(n_npc - spec.npcs) > max(2, spec.npcs // 4):
            out.append(_problem("entities", f"asked for about {spec.npcs} NPC types, got {n_npc}"))
        roles = {(n.get("kind"), n.get("role", "fighter")) for n in world.get("npcs", [])}
        for role, kind in (("boss", "enemy"), ("merchant", "friendly")):
            if (kind, role) not in roles:
                out.append(_problem("entities", f"the game needs an NPC with kind {kind!r} and role {role!r}"))
        if not any(k == "friendly" for k, _ in roles):
            out.append(_problem("entities", "the game needs a friendly NPC to be the guide"))
        return out

    def _rules(self, folder: Path, feedback: list[Problem], attempt: Attempt) -> list[Problem]:
        if not (self.spec.action_rules or self.spec.step_rules):
            self.rules_source = ""
            self.rule_file = None
            self._write_rules(folder)
            (folder / "rules.json").unlink(missing_ok=True)
            return []
        if not self.spec.code:
            return self._rule_file(folder, feedback, attempt)
        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
        reply = self._ask("rules", rules_prompt(self.spec, world, feedback), attempt)
        self.rules_source = extract_python(reply) or ""
        self.predicate_source = ""  # the quest is asked again after new rules
        (folder / "quest.json").unlink(missing_ok=True)
        self._write_rules(folder)
        problems = check_static(folder)
        if problems:
            return [Problem("static", p.message, p.detail, "rules") for p in problems]
        found = self._sandbox_load(folder, ("world.json", "rules.py"))
        problems = [p for p in found["problems"] if p.owner == "rules"] or found["problems"]
        if problems:
            return problems
        new = found["stats"].get("new_rules", {})
        out = []
        for key, asked, what in (
            ("verbs", self.spec.action_rules, "action rule(s) (new verbs)"),
            ("step_rules", self.spec.step_rules, "step rule(s)"),
        ):
            got = new.get(key, [])
            if len(got) != asked:
                out.append(
                    _problem(
                        "rules",
                        f"asked for exactly {asked} new {what}, rules.py defines {len(got)}"
                        + (f": {', '.join(got)}" if got else ""),
                    )
                )
        return out

    def _rule_file(self, folder: Path, feedback: list[Problem], attempt: Attempt) -> list[Problem]:
        """The rules stage in the rule language: ``rules.json``, checked here (loading data runs nothing)."""
        from odyssey_env.rules import BASE_VERBS, OPTIONAL_VERBS
        from odyssey_env.steprules.order import ENGINE_STEP_ORDER

        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
        reply = self._ask("rules", rule_file_prompt(self.spec, world, feedback), attempt)
        rules = extract_json(reply, "rules.json")
        self.rule_file = rules
        self.rules_source = self.predicate_source = ""
        self._write_rules(folder)  # no rules.py
        (folder / "quest.json").unlink(missing_ok=True)  # the quest is asked again after new rules
        (folder / "rules.json").write_text(json.dumps(rules, indent=2) + "\n", encoding="utf-8")
        problems = self._load_alone(folder, ("world.json", "rules.json"), "rules")
        if problems:
            return problems
        taken = {v.split()[0] for v in (*BASE_VERBS, *OPTIONAL_VERBS)}
        verbs = [str(v.get("verb", "")) for v in rules.get("verbs", []) or []]
        steps = [str(r.get("name", "")) for r in rules.get("step_rules", []) or []]
        out = [
            _problem("rules", f"the verb {v!r} is the engine's own (or starts like one): name a new verb otherwise")
            for v in verbs
            if v.split()[:1] and v.split()[0] in taken
        ]
        out += [
            _problem("rules", f"the step rule {n!r} is the engine's own: name a new step rule otherwise")
            for n in steps
            if n in ENGINE_STEP_ORDER
        ]
        for got, asked, what in (
            (verbs, self.spec.action_rules, "verb(s)"),
            (steps, self.spec.step_rules, "step rule(s)"),
        ):
            if len(got) != asked:
                out.append(
                    _problem(
                        "rules",
                        f"asked for exactly {asked} new {what}, rules.json declares {len(got)}"
                        + (f": {', '.join(got)}" if got else ""),
                    )
                )
        return out

    def _known_predicates(self) -> list[tuple[str, str]]:
        declared = [
            (str(p.get("name")), "declared in rules.json")
            for p in (self.rule_file or {}).get("predicates", []) or []
            if isinstance(p, dict)
        ]
        return [*declared, *declared_predicates(self.rules_source)]

    def _quest(self, folder: Path, feedback: list[Problem], attempt: Attempt) -> list[Problem]:
        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
        known = [*self._known_predicates(), ("did", "the agent caused an event of a kind this step")]
        reply = self._ask("quest", quest_prompt(self.spec, world, known, feedback, code=self.spec.code), attempt)
        quest = extract_json(reply, "quest.json")
        # without --code nothing the model writes is Python: a stray python block is not kept
        self.predicate_source = (extract_python(reply, required=False) or "") if self.spec.code else ""
        (folder / "quest.json").write_text(json.dumps(quest, indent=2) + "\n", encoding="utf-8")
        self._write_rules(folder)
        problems = [Problem("static", p.message, p.detail, "quest") for p in check_static(folder)]
        if problems:
            return problems
        problems = self._plans(quest) + self._shape(quest)
        if problems:
            return problems
        if (folder / "rules.py").is_file():
            found = self._sandbox_load(folder, ("world.json", "quest.json", "rules.py"))
            return [Problem(p.check, p.message, p.detail, "quest") for p in found["problems"]]
        return self._load_alone(folder, ("world.json", "quest.json", "rules.json"), "quest")

    def _plans(self, quest: dict[str, Any]) -> list[Problem]:
        out = []
        main = quest.get("main")
        if not isinstance(main, dict):
            main = {}
        for chapter in main.get("chapters", []) or []:
            for stage in chapter.get("stages", []) or []:
                for cond in _predicate_conditions(stage.get("done")):
                    if cond.get("name") != "did" and not cond.get("plan"):
                        out.append(
                            _problem(
                                "quest",
                                f"stage {stage.get('id')!r}: the predicate {cond.get('name')!r} "
                                'needs a "plan": the vocabulary conditions that make it hold',
                            )
                        )
        return out

    def _shape(self, quest: dict[str, Any]) -> list[Problem]:
        spec = self.spec
        main = quest.get("main")
        if not isinstance(main, dict):
            return [_problem("quest", 'quest.json needs a "main" quest')]
        chapters = main.get("chapters") or []
        stages = [s for ch in chapters if isinstance(ch, dict) for s in ch.get("stages", []) or []]
        out = []
        if len(chapters) != spec.chapters:
            out.append(_problem("quest", f"asked for exactly {spec.chapters} chapter(s), got {len(chapters)}"))
        if len(stages) != spec.chapters * spec.stages:
            out.append(
                _problem(
                    "quest",
                    f"asked for {spec.stages} stages per chapter ({spec.chapters * spec.stages} "
                    f"in all), got {len(stages)}",
                )
            )
        if spec.branching > 1 and not any(isinstance(s, dict) and len(s.get("requires") or []) > 1 for s in stages):
            out.append(_problem("quest", 'asked for a DAG: some stage must join parallel chains with "requires"'))
        return out

    # ------------------------------------------------------------------ helpers
    def _write_rules(self, folder: Path) -> None:
        parts = [
            p
            for p in (
                self.rules_source.strip("\n"),
                f"{PREDICATE_MARK}\n{self.predicate_source.strip()}" if self.predicate_source else "",
            )
            if p
        ]
        path = folder / "rules.py"
        if parts:
            path.write_text("\n\n\n".join(parts) + "\n", encoding="utf-8")
        else:
            path.unlink(missing_ok=True)

    def _scratch(self, folder: Path, files: tuple[str, ...]) -> Path:
        scratch = Path(tempfile.mkdtemp(prefix="odyssey-stage-")) / folder.name
        scratch.mkdir()
        for name in files:
            if (folder / name).is_file():
                shutil.copyfile(folder / name, scratch / name)
        return scratch

    def _load_alone(self, folder: Path, files: tuple[str, ...], owner: str) -> list[Problem]:
        """Load the given data files by themselves, here (no code: nothing runs)."""
        from odyssey_env.game import GameError, load_game

        scratch = self._scratch(folder, files)
        try:
            load_game(scratch, cache=False)
        except GameError as exc:
            return [Problem("load", str(p), owner=owner) for p in exc.problems]
        finally:
            shutil.rmtree(scratch.parent, ignore_errors=True)
        return []

    def _sandbox_load(self, folder: Path, files: tuple[str, ...]) -> dict[str, Any]:
        scratch = self._scratch(folder, files)
        try:
            found = run_checks(scratch, ["load"], LOAD_ONLY)
        finally:
            shutil.rmtree(scratch.parent, ignore_errors=True)
        problems = [Problem(**p) for p in found.get("load", [])]
        if "_error" in found:
            e = found["_error"]
            problems.append(Problem(e["check"], e["message"], e["detail"], "rules"))
        return {"problems": problems, "stats": found.get("_stats", {})}

    def summary(self, stage: str, folder: Path) -> str:
        if stage == "entities":
            world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
            areas = sum(len(p.get("areas", [])) for p in world.get("places", []))
            return (
                f"{len(world.get('places', []))} place(s), {areas} areas, {len(world.get('objects', []))} object "
                f"types, {len(world.get('npcs', []))} NPC types"
            )
        if stage == "rules":
            if self.rule_file is not None:
                verbs = [str(v.get("verb")) for v in self.rule_file.get("verbs", []) or []]
                steps = [str(r.get("name")) for r in self.rule_file.get("step_rules", []) or []]
                return f"rules.json (no code) with verb(s) {', '.join(verbs) or 'none'}; step rule(s) " + (
                    ", ".join(steps) or "none"
                )
            if not self.rules_source:
                return "no new rules asked"
            names = [n for n, _ in declared_predicates(self.rules_source)]
            tree = ast.parse(self.rules_source)
            classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
            return f"rules.py with {', '.join(classes) or 'no classes'}" + (
                f"; predicates {', '.join(names)}" if names else ""
            )
        quest = json.loads((folder / "quest.json").read_text(encoding="utf-8"))
        main = quest.get("main", {})
        n = sum(len(ch.get("stages", [])) for ch in main.get("chapters", []))
        extra = (
            f"; new predicates {', '.join(n for n, _ in declared_predicates(self.predicate_source))}"
            if self.predicate_source
            else ""
        )
        return f"'{main.get('title')}': {len(main.get('chapters', []))} chapter(s), {n} stages{extra}"

    def owner(self, problem: Problem) -> str:
        return problem.owner if problem.owner in self.stages else "entities"
