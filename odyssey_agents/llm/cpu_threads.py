"""How many CPU threads a local model should use: the cores this process may use, minus the ones
other processes are busy on.

torch's default is every core, which is right on an idle machine and ruinous on a busy one: each
operation of a forward pass ends at a barrier that waits for its slowest thread, and a thread that the
scheduler has parked behind another process stalls all of them. Measured on 2 cores at a load of 8,
SmolLM2-135M decoded at 120-190 ms a token on one thread and at 700-3,000 ms on two. So
``threads="auto"`` picks, before each call, the usable cores (CPU affinity and a cgroup CPU quota,
at most :data:`AUTO_CAP`) minus the load the rest of the machine puts on them (the 1-minute load
average less this process's own recent CPU use), and at least one.

The thread count changes how fast a forward pass runs, not what it computes: with torch's CPU
kernels one and two threads give the same logits bit for bit (checked on the real model, prompt and
decode step, by ``benchmarks/embedded_speed.py``, which prints it, and by a test on a tiny one).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

__all__ = ["AUTO_CAP", "ThreadPolicy", "usable_cores"]

#: The most threads ``auto`` takes: a small model gains nothing from more and pays for their barriers.
AUTO_CAP = 8


def _cgroup_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """Cores allowed by a cgroup CPU quota (v2 ``cpu.max`` or v1 ``cfs_quota_us``), None if unlimited."""
    try:
        quota, _, period = (root / "cpu.max").read_text().partition(" ")
        if quota.strip() != "max":
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return quota_us / period_us if quota_us > 0 and period_us > 0 else None
    except (OSError, ValueError):
        return None


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity, bounded by a cgroup quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        cores = min(cores, max(1, math.floor(quota + 0.5)))
    return max(1, cores)


class ThreadPolicy:
    """``setting``: None (leave torch's choice), a positive number (that many threads), or ``"auto"``.

    :meth:`choose` returns the count to use for the next call (None: do not touch torch's setting).
    """

    def __init__(self, setting: int | str | None, *, cores: int | None = None, cap: int = AUTO_CAP):
        if isinstance(setting, str) and setting.strip().lower() != "auto":
            try:
                setting = int(setting)
            except ValueError:
                raise ValueError(f"threads must be a positive number or 'auto', got {setting!r}") from None
        if isinstance(setting, bool) or (isinstance(setting, int) and setting < 1):
            raise ValueError(f"threads must be a positive number or 'auto', got {setting!r}")
        self.auto = isinstance(setting, str)
        self.fixed: int | None = None if isinstance(setting, str) else setting  # a str here is "auto"
        self.cores = min(cores or usable_cores(), cap)
        self._own = 0.0  # this process's recent CPU use in cores, smoothed like the load average
        self._cpu, self._wall = time.process_time(), time.monotonic()

    def _own_load(self) -> float:
        cpu, wall = time.process_time(), time.monotonic()
        elapsed = wall - self._wall
        if elapsed > 0:
            keep = math.exp(-elapsed / 60.0)  # the kernel's 1-minute load average decays like this
            self._own = keep * self._own + (1 - keep) * (cpu - self._cpu) / elapsed
            self._cpu, self._wall = cpu, wall
        return self._own

    def choose(self) -> int | None:
        if not self.auto:
            return self.fixed
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # no load average on this platform: every usable core
            return self.cores
        others = max(0.0, load - self._own_load())
        return max(1, min(self.cores, math.floor(self.cores - others + 0.5)))
