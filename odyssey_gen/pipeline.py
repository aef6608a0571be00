"""``generate``: from a spec to a validated game folder, never leaving a half-written game behind.

The candidate is built in a temporary folder beside the target (``.<name>.XXXX.tmp``), so the final
step is one rename on the same file system. An accepted game is renamed into place (replacing an old
one only with ``overwrite``); a rejected candidate goes to ``.rejected/<name>-seed<seed>[-k]/`` beside
the target with its report; an interrupted run removes its temporary folder. The progress is printed
stage by stage::

    [1/5] scaffold  [2/5] entities  [3/5] rules  [4/5] quest  [5/5] validation
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odyssey_gen.report import Report
from odyssey_gen.spec import GameSpec, ValidationSettings
from odyssey_gen.stages import Author, Rejected, run_stages
from odyssey_gen.validate import Validation
from odyssey_gen.validate.sandbox import SandboxUnavailable, require_sandbox

__all__ = ["GenerationError", "Result", "generate"]

REJECTED_DIR = ".rejected"


class GenerationError(Exception):
    """A generation that could not start or finish; the message is one line for the user."""


@dataclass
class Result:
    """What :func:`generate` produced."""

    ok: bool
    path: Path  # the game folder (accepted) or the rejected candidate's folder
    reason: str
    report: dict[str, Any]
    #: Always False: model-written code is never trusted automatically (kept for callers that read it).
    trusted: bool = False

    @property
    def needs_trust(self) -> bool:
        """The game has model-written code: a person must read it and ``odyssey trust`` it to play it."""
        return self.ok and (self.path / "rules.py").is_file() and not self.trusted


def _summarise(validation: Validation) -> str:
    stats = validation.stats
    parts = []
    ex = stats.get("execution")
    if ex:
        parts.append(f"execution {ex['steps']} random steps on {ex['seeds']} seed(s)")
    new = stats.get("new_rules") or {}
    if any(new.values()):
        parts.append(
            f"new rules reached ({len(new.get('verbs', []))} verb(s), {len(new.get('step_rules', []))} step rule(s))"
        )
    solve = stats.get("solvability")
    if solve and solve.get("runs"):
        steps = [r["steps"] for r in solve["runs"]]
        parts.append(
            f"solved by the oracle on {len(steps)} seed(s) in {min(steps)}-{max(steps)} steps "
            f"(budget {solve['budget']})"
        )
    return "; ".join(parts) + f" ({validation.seconds:.1f} s)"


def _rejected_path(target: Path, seed: int) -> Path:
    base = target.parent / REJECTED_DIR / f"{target.name}-seed{seed}"
    path, k = base, 1
    while path.exists():
        k += 1
        path = base.with_name(f"{base.name}-{k}")
    return path


def _install(candidate: Path, target: Path, overwrite: bool) -> None:
    """Rename the finished candidate to the target (replacing an old game only when allowed)."""
    if target.exists():
        if not overwrite:
            raise GenerationError(f"{target} appeared while generating; the new game is left in {candidate}")
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        os.replace(target, old / target.name)
        os.replace(candidate, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(candidate, target)


def generate(
    spec: GameSpec,
    out: str | Path | None = None,
    *,
    author: Author | None = None,
    settings: ValidationSettings | None = None,
    max_attempts: int = 3,
    overwrite: bool = False,
    trust_output: bool = False,
    say: Callable[[str], None] = print,
    describe: Callable[[Path, Report], str] | None = None,
) -> Result:
    """Generate, validate and install the game ``spec`` asks for at ``out`` (default ``./<name>``).

    ``author`` defaults to the procedural one. ``describe``, when given, rewrites names and
    descriptions of the candidate before validation (``--describe-with``) and returns a summary line.
    Raises :class:`GenerationError` for requests that cannot start; a candidate that fails validation
    is not an exception: the result says ``ok=False`` and where the rejected candidate lies.

    ``trust_output`` trusts nothing: the only code a generated game can hold is model-written, and
    model-written code is never trusted automatically (the report says so, and how to trust it after
    reading it). It is accepted so that scripts written for older versions keep working.
    """
    spec.check()
    settings = settings or ValidationSettings()
    problems = settings.problems()
    if problems:
        raise GenerationError("; ".join(problems))
    if max_attempts < 1:
        raise GenerationError("attempts must be at least 1")
    target = Path(out if out is not None else spec.name).expanduser().absolute()
    if target.exists() and not overwrite:
        raise GenerationError(f"{target} already exists; choose another --out or pass --overwrite")
    if author is None:
        from odyssey_gen.procedural import ProceduralAuthor

        author = ProceduralAuthor(spec)
    if author.name != "procedural" and spec.code and (spec.action_rules or spec.step_rules):
        try:  # before any model call: model-written code is validated only under OS isolation
            require_sandbox()
        except SandboxUnavailable as exc:
            raise GenerationError(str(exc)) from None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        candidate = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        os.chmod(candidate, 0o755)  # mkdtemp makes it private; the game is an ordinary folder
    except OSError as exc:
        raise GenerationError(f"cannot write next to {target}: {exc}") from None
    model = getattr(author, "model_info", None)
    report = Report(spec, settings, author.name, model() if callable(model) else None)
    say(
        f"[1/5] scaffold: {spec.display_title!r} ({spec.theme.strip()}) with the {author.name} author, "
        f"seed {spec.seed}, building in {candidate.name}"
    )
    try:
        try:
            hook = None
            if describe is not None:

                def hook(folder: Path) -> None:
                    say(f"      describe: {describe(folder, report)}")

            validation = run_stages(
                author, candidate, report, settings, max_attempts=max_attempts, say=say, after_stages=hook
            )
        except Rejected as exc:
            report.status, report.reason = "rejected", str(exc)
            place = _rejected_path(target, spec.seed)
            place.parent.mkdir(parents=True, exist_ok=True)
            report.write(candidate)
            os.replace(candidate, place)
            say(f"[5/5] validation: REJECTED: {exc}")
            say(f"      the rejected candidate and its report are in {place}")
            return Result(False, place, str(exc), report.to_dict(place))
        say(f"[5/5] validation: passed: {_summarise(validation)}")
        report.status = "accepted"
        has_code = (candidate / "rules.py").is_file()
        if has_code:
            # Model-written code is never trusted automatically, whatever was asked: checks that pass
            # are a filter for the repair loop, not a proof that the code is harmless (docs/security.md).
            report.trust = {
                "recorded": False,
                "reason": "model-written code is never trusted automatically: read rules.py, then run the command",
                "command": f"odyssey trust {target}",
            }
            if trust_output:
                report.notes.append("--trust-output does not apply to model-written code; nothing was trusted")
        report.write(candidate)
        _install(candidate, target, overwrite)
    except SandboxUnavailable as exc:
        shutil.rmtree(candidate, ignore_errors=True)
        raise GenerationError(str(exc)) from None
    except BaseException:
        shutil.rmtree(candidate, ignore_errors=True)
        raise
    return Result(True, target, "", report.to_dict(target), False)
