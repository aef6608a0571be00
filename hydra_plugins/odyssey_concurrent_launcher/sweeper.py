"""Hydra's basic sweeper, checking a sweep's jobs as the concurrent launcher composes them.

Before it launches a batch, Hydra's basic sweeper composes every job's config once to find mistakes
early, and the launcher composes each again: for a sweep of 64 seeds, two compositions a job, a tenth
of a second each, are most of a short sweep's time. ``launcher=concurrent`` selects this sweeper, which
checks each job by composing it the launcher's way (once per choice of config groups, the plain values
applied to a copy: :class:`._core.Composer`): every job is still composed before any runs, so a mistake
still stops the sweep before it starts.
"""

from __future__ import annotations

from collections.abc import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper


class ConcurrentSweeper(BasicSweeper):
    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        from ._core import Composer

        composer = Composer(self)
        for overrides in batch:
            composer.compose(list(overrides))
        composer.restore()
