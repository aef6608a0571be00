"""Running a candidate game's checks in a separate, limited process.

Generated rule code has passed the static allow-list by the time it gets here, but it is still
untrusted, so it never runs in the generator's own process. :func:`run_checks` copies the candidate's
content files into a fresh temporary directory and starts ``python -m odyssey_gen.validate.worker``
there with:

* a clean environment (only ``PATH``, ``PYTHONPATH`` to this installation, ``PYTHONHASHSEED=0``, a
  ``HOME`` inside the temporary directory and a trust store that does not exist);
* resource limits set before the interpreter starts: CPU seconds (``RLIMIT_CPU``), address space
  (``RLIMIT_AS``), the largest file it may write (``RLIMIT_FSIZE``) and no core dumps;
* a wall-clock timeout, after which its whole process group is killed;
* its own session and the temporary directory as working directory.

The worker loads the game with ``trust=True`` (it is the sandbox the trust was meant for) and reports
its findings as one JSON line on stdout. An infinite loop ends at the CPU or wall-clock limit, a
memory bomb at the address-space limit; either is reported as a problem of the check that was
running, never as a crash of the generator.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from odyssey_gen.spec import ValidationSettings

__all__ = ["MARKER", "SandboxResult", "run_checks"]

MARKER = "ODYSSEY-GEN-RESULT "
CHECK_MARKER = "ODYSSEY-GEN-CHECK "  # the worker writes it to stderr as each check starts
CONTENT = ("world.json", "quest.json", "rules.py")
#: The package root that holds odyssey_env, odyssey_agents and odyssey_gen (for PYTHONPATH).
ROOT = Path(__file__).resolve().parents[2]


class SandboxResult(dict):
    """``{check: [problem dicts]}`` plus ``_error`` (a failure of the process itself) and ``_stats``."""


def _limits(settings: ValidationSettings):
    def apply() -> None:  # runs in the child between fork and exec
        import resource

        cpu = int(settings.cpu_seconds)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
        mem = int(settings.memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024 * 1024, 16 * 1024 * 1024))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def run_checks(
    folder: str | Path, checks: list[str], settings: ValidationSettings, extra: dict[str, Any] | None = None
) -> SandboxResult:
    """Run the named worker checks on a copy of ``folder`` in a limited child process."""
    folder = Path(folder)
    with tempfile.TemporaryDirectory(prefix="odyssey-sandbox-") as tmp:
        work = Path(tmp)
        game = work / folder.name
        game.mkdir()
        for name in CONTENT:
            if (folder / name).is_file():
                shutil.copyfile(folder / name, game / name)
        home = work / "home"
        home.mkdir()
        env = {
            "PATH": os.defpath,
            "PYTHONPATH": str(ROOT),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(home),
            "ODYSSEY_TRUST_FILE": str(work / "no-trust-store.json"),
            "LANG": "C.UTF-8",
        }
        request = json.dumps(
            {"folder": str(game), "checks": checks, "settings": asdict(settings), "extra": extra or {}}
        )
        proc = subprocess.Popen(
            [sys.executable, "-s", "-B", "-m", "odyssey_gen.validate.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=work,
            env=env,
            preexec_fn=_limits(settings),
            start_new_session=True,
            text=True,
        )
        try:
            out, err = proc.communicate(request, timeout=settings.timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            out, err = proc.communicate()
            return _failure(
                checks,
                f"the validation process ran past its wall-clock limit of {settings.timeout:g} s "
                "(an endless loop in the game's rules?) and was killed",
                err,
            )
    line = next((x for x in reversed(out.splitlines()) if x.startswith(MARKER)), None)
    if line is not None:
        return SandboxResult(json.loads(line[len(MARKER) :]))
    code = proc.returncode
    if code < 0 and -code == signal.SIGXCPU:
        why = f"the validation process used up its CPU-time limit of {settings.cpu_seconds} s and was stopped"
    elif code < 0 and -code == signal.SIGKILL:
        why = "the validation process was killed (out of memory?)"
    elif "MemoryError" in err:
        why = f"the validation process ran out of its {settings.memory_mb} MB memory limit"
    else:
        why = f"the validation process died (exit status {code}) without a result"
    return _failure(checks, why, err)


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _failure(checks: list[str], message: str, stderr: str) -> SandboxResult:
    """A result for a worker that gave none: blamed on the check it had started last."""
    lines = stderr.strip().splitlines()
    started = [x[len(CHECK_MARKER) :].strip() for x in lines if x.startswith(CHECK_MARKER)]
    check = started[-1] if started else (checks[0] if checks else "sandbox")
    tail = "\n".join(x for x in lines[-15:] if not x.startswith(CHECK_MARKER))
    return SandboxResult({"_error": {"check": check, "message": message, "detail": tail}})
