"""``odyssey generate``: a new, validated game folder from a one-line theme.

    odyssey generate "a drowned cathedral city where the tide keeps the only records" --name tide
    odyssey generate "..." --name tide --author llm llm=openai llm.model=gpt-5-mini
    odyssey generate "..." --name tide --describe-with llm=embedded     # offline names and descriptions

Exit status: 0 when the game was accepted and installed, 1 when the candidate was rejected (it is
left in ``.rejected/`` beside the target with its report), 2 for a request that cannot start (a
bad setting, an existing target, a missing extra). Errors are one line, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey_agents.llm.protocol import MissingExtra
from odyssey_env.rules import OPTIONAL_VERBS
from odyssey_env.safeio import printable
from odyssey_gen.pipeline import GenerationError, generate
from odyssey_gen.procedural.plots import PLOTS
from odyssey_gen.spec import DEFAULTS, DYNAMICS, GameSpec, SpecError, ValidationSettings

__all__ = ["main"]

LLM_ARG = re.compile(r"^llm(\.[A-Za-z_][A-Za-z0-9_]*)?=")
SIZE_FLAGS = (
    "places",
    "areas_per_place",
    "area_count",
    "objects",
    "npcs",
    "max_level",
    "chapters",
    "stages",
    "branching",
    "locks",
    "craft_depth",
    "action_rules",
    "step_rules",
    "seed",
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="odyssey generate",
        description="Generate a new game folder from a theme, validate it (static checks, sandboxed execution, "
        "reachability of new rules, solvability by the oracle) and install it. Model settings go "
        "after the options as llm=NAME llm.KEY=VALUE (as in 'odyssey run').",
    )
    p.add_argument("theme", nargs="?", help="one line saying what the world is about (see docs/generation.md)")
    p.add_argument("--name", help="the game's name: lower_snake_case; also the folder name")
    p.add_argument(
        "--out",
        help="the game folder to write (default: NAME in the user games directory, $ODYSSEY_GAMES_DIR or "
        "~/.local/share/odyssey/games, where odyssey play/run/games and gym.make find it by name)",
    )
    p.add_argument("--spec", metavar="FILE", help="a JSON file with any of the spec fields; options override it")
    p.add_argument("--title", help="display title (default from the name)")
    sizes = p.add_argument_group("sizes (what 'odyssey games' counts)")
    for flag in SIZE_FLAGS:
        default = DEFAULTS.get(flag)
        flags = ["--areas"] if flag == "area_count" else [f"--{flag.replace('_', '-')}"]
        fallback = {
            "locks": "one per extra place, at most 2",
            "area_count": "places x areas-per-place; the total "
            "number of areas, spread over the places as evenly as possible",
        }
        sizes.add_argument(
            *flags,
            dest=flag,
            type=int,
            default=None,
            help=f"default {default if default is not None else fallback[flag]}",
        )
    mech = p.add_argument_group("mechanics")
    mech.add_argument(
        "--verbs",
        help=f"optional verbs to switch on, comma-separated, 'all' or 'none' "
        f"({', '.join(OPTIONAL_VERBS)}); default: --action-rules of them by seed",
    )
    mech.add_argument(
        "--dynamics",
        help=f"optional step rules (or respawn styles) to switch on, comma-separated, 'all' or 'none' "
        f"({', '.join(DYNAMICS)}); default: --step-rules of them by seed",
    )
    mech.add_argument(
        "--params", metavar="JSON", help='per-rule parameter overrides, e.g. \'{"noise": {"threshold": 4}}\''
    )
    mech.add_argument(
        "--plot",
        choices=tuple(PLOTS),
        default=None,
        help="the main quest's plot shape (procedural author); default: chosen by the seed",
    )
    mech.add_argument("--no-tutorial", action="store_true", help="no tutorial rooms")
    mech.add_argument("--no-side-quests", action="store_true", help="no side quests")
    mech.add_argument("--no-expansion", action="store_true", help="no online expansion")
    gen = p.add_argument_group("generation")
    gen.add_argument(
        "--author",
        "--backend",  # its former name, kept so that scripts written for it keep working
        dest="author",
        choices=("procedural", "llm"),
        default=None,
        help="procedural: offline, seeded, no model (default); llm: the paper's pipeline (--backend: former name)",
    )
    gen.add_argument(
        "--code",
        action="store_true",
        help="with --author llm: ask the model for new rules as Python (rules.py, for review; it runs only "
        "after 'odyssey trust') instead of rules.json in the rule language",
    )
    gen.add_argument(
        "--describe-with",
        metavar="LLM",
        help="let a model write the descriptions (and with "
        "--llm-names the names) of a procedural game, e.g. llm=embedded",
    )
    gen.add_argument(
        "--llm-names",
        action="store_true",
        help="with --describe-with: also let the model rename areas, objects and NPCs",
    )
    gen.add_argument(
        "--describe-max",
        type=int,
        default=None,
        metavar="N",
        help="with --describe-with: at most N descriptions and N names (default: everything)",
    )
    gen.add_argument(
        "--replay",
        metavar="FILE",
        help="use recorded model replies (a JSON list of strings) instead of a live model: the scripted backend",
    )
    gen.add_argument("--record", metavar="FILE", help="write every model reply of this run to FILE (for --replay)")
    gen.add_argument(
        "--attempts", type=int, default=3, help="tries per stage before the candidate is rejected (default %(default)s)"
    )
    gen.add_argument("--overwrite", action="store_true", help="replace an existing game folder at the target")
    gen.add_argument(
        "--trust-output",
        action="store_true",
        help="no longer trusts anything: model-written rules.py is never trusted automatically; read it, then "
        "run the 'odyssey trust' line printed at the end",
    )
    gen.add_argument("--quiet", action="store_true", help="print only the last line")
    val = p.add_argument_group("validation (defaults: docs/generation.md)")
    v = ValidationSettings()
    val.add_argument(
        "--validation-seeds",
        type=int,
        default=v.seeds,
        help="seeds of the execution and solvability tests (default %(default)s)",
    )
    val.add_argument(
        "--random-steps", type=int, default=v.random_steps, help="random-agent steps per seed (default %(default)s)"
    )
    val.add_argument(
        "--oracle-budget",
        type=int,
        default=v.oracle_budget,
        help="play steps the oracle may use per seed (default %(default)s)",
    )
    val.add_argument(
        "--timeout",
        type=float,
        default=v.timeout,
        help="wall-clock seconds for the sandboxed checks (default %(default)s)",
    )
    val.add_argument(
        "--cpu-seconds", type=int, default=v.cpu_seconds, help="CPU-time limit of the sandbox (default %(default)s)"
    )
    val.add_argument(
        "--memory-mb", type=int, default=v.memory_mb, help="address-space limit of the sandbox (default %(default)s)"
    )
    return p


def _names(value: str | None, known: tuple[str, ...]) -> tuple[str, ...] | None:
    if value is None:
        return None
    if value.strip() == "all":
        return known
    if value.strip() in ("", "none"):
        return ()
    return tuple(x.strip() for x in value.split(",") if x.strip())


def _llm_config(tokens: list[str]) -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    for token in tokens:
        key, _, value = token.partition("=")
        if key == "llm":
            cfg["name"] = value
        else:
            cfg[key.split(".", 1)[1]] = _value(value)
    return cfg


def _value(text: str) -> Any:
    """``llm.KEY=VALUE`` values: JSON when they parse as JSON (numbers, booleans), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def spec_from_args(args: argparse.Namespace) -> GameSpec:
    values: dict[str, Any] = {}
    for flag in SIZE_FLAGS:
        if getattr(args, flag) is not None:
            values[flag] = getattr(args, flag)
    for key in ("theme", "name", "title", "author", "plot"):
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    verbs = _names(args.verbs, OPTIONAL_VERBS)
    if verbs is not None:
        values["verbs"] = verbs
    dynamics = _names(args.dynamics, DYNAMICS)
    if dynamics is not None:
        values["dynamics"] = dynamics
    if args.params:
        try:
            values["params"] = json.loads(args.params)
        except ValueError as exc:
            raise SpecError(f"--params: not JSON: {exc}") from None
    if args.code:
        values["code"] = True
    for flag, key in (("no_tutorial", "tutorial"), ("no_side_quests", "side_quests"), ("no_expansion", "expansion")):
        if getattr(args, flag):
            values[key] = False
    if args.spec:
        spec = GameSpec.from_file(args.spec, **values)
    else:
        if not values.get("theme") or not values.get("name"):
            raise SpecError("give a theme and --name (or a --spec file)")
        spec = GameSpec.from_dict(values)
    spec.check()
    return spec


def _build_llm(cfg: dict[str, Any], args: argparse.Namespace, seed: int, what: str):
    from odyssey_agents.llm import LLMConfigError, MissingExtra, build_llm

    if args.replay:
        from odyssey_agents.llm.scripted import ScriptedLLM

        try:
            replies = json.loads(Path(args.replay).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SpecError(f"--replay {args.replay}: {exc}") from None
        if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
            raise SpecError(f"--replay {args.replay}: expected a JSON list of reply strings")
        return ScriptedLLM(replies, model=f"replay:{Path(args.replay).name}")
    if not cfg.get("name"):
        raise SpecError(f"{what} needs a model: add llm=NAME (openai, vllm, hf, embedded, scripted) or --replay FILE")
    try:
        return build_llm(cfg, seed=seed)
    except (LLMConfigError, MissingExtra) as exc:
        raise SpecError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # llm=... and llm.KEY=... tokens configure the model, except the value of --describe-with itself
    model_args = [i for i, a in enumerate(argv) if LLM_ARG.match(a) and (i == 0 or argv[i - 1] != "--describe-with")]
    llm_tokens = [argv[i] for i in model_args]
    parser = _parser()
    args = parser.parse_args([a for i, a in enumerate(argv) if i not in model_args])
    # progress lines quote model replies and their problems: control characters escaped (odyssey_env.safeio)
    say = (lambda _text: None) if args.quiet else (lambda text: print(printable(text), flush=True))
    try:
        spec = spec_from_args(args)
        settings = ValidationSettings(
            seeds=args.validation_seeds,
            random_steps=args.random_steps,
            oracle_budget=args.oracle_budget,
            timeout=args.timeout,
            cpu_seconds=args.cpu_seconds,
            memory_mb=args.memory_mb,
        )
        cfg = _llm_config(llm_tokens)
        describe = None
        if args.describe_with:
            if spec.author != "procedural":
                raise SpecError("--describe-with is for the procedural author (the llm author writes its own text)")
            dcfg = {
                **cfg,
                **_llm_config(
                    [args.describe_with if LLM_ARG.match(args.describe_with) else f"llm={args.describe_with}"]
                ),
            }
            from odyssey_gen.llm.describe import Describer

            describe = Describer(
                _build_llm(dcfg, args, spec.seed, "--describe-with"),
                spec,
                names=args.llm_names,
                record=args.record,
                max_items=args.describe_max,
            )
        elif args.llm_names:
            raise SpecError("--llm-names needs --describe-with")
        author = None
        if spec.author == "llm":
            from odyssey_gen.llm import LLMAuthor

            author = LLMAuthor(spec, _build_llm(cfg, args, spec.seed, "--author llm"), record=args.record)
        elif llm_tokens and not args.describe_with:
            raise SpecError(
                "llm=... settings are used by --author llm or --describe-with; the procedural author needs no model"
            )
        from odyssey_env.userdir import games_dir

        result = generate(
            spec,
            args.out or str(games_dir() / spec.name),
            author=author,
            settings=settings,
            max_attempts=args.attempts,
            overwrite=args.overwrite,
            trust_output=args.trust_output,
            say=say,
            describe=describe,
        )
    except (SpecError, GenerationError) as exc:
        print(printable(f"odyssey generate: {exc}"), file=sys.stderr)
        return 2
    except MissingExtra as exc:  # a model backend whose extra is missing: the message names what to install
        print(printable(f"odyssey generate: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("odyssey generate: interrupted; nothing was written at the target", file=sys.stderr)
        return 130
    if not result.ok:
        print(
            printable(f"odyssey generate: rejected: {result.reason} (candidate and report in {result.path})"),
            file=sys.stderr,
        )
        return 1
    print(
        f"generated {result.path} ({result.report['statistics'].get('object_types')} object types, "
        f"{result.report['statistics'].get('stages')} stages); play it: odyssey play "
        f"{spec.name if args.out is None else result.path}"
    )
    if result.needs_trust:
        if args.trust_output:
            print("--trust-output does not apply to model-written code: nothing was trusted")
        print(
            f"its rules.py is model-written code: checks are not a proof that it is harmless; read it, then "
            f"to let it run: odyssey trust {result.path}"
        )
    return 0
