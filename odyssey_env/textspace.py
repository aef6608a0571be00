"""The ``Text`` space of observations, and its fast, correct shared memory in Gymnasium's async vector envs.

Both faces (the Gymnasium env and the PettingZoo env) give their observations this space; the codec
registered here is what ``gym.make_vec(..., vectorization_mode="async")`` uses to move them between
processes.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory, write_to_shared_memory

from odyssey_env.limits import TEXT_CHARS

__all__ = ["CHARSET", "ObservationText"]

#: Every character an observation may contain or a command may use: the engine's TEXT_CHARS, in a fixed order.
CHARSET: str = "".join(c for c in string.printable if c in TEXT_CHARS)


class ObservationText(spaces.Text):
    """``Text`` whose batches go through ``AsyncVectorEnv``'s shared memory correctly and fast.

    Gymnasium 1.x reads a ``Text`` space's shared memory once, when the vector env is built, into a
    tuple of strings, and returns that same stale tuple after every reset and step (observations come
    back as ``"000..."``); reading through :class:`_SharedTexts` instead keeps the default
    ``gym.make_vec(..., vectorization_mode="async")`` correct. Gymnasium's own reading and writing
    are per-character Python loops over the whole ``max_length`` buffer (16,384 slots a sub-env, every
    step), which made async vector envs ~30x slower than one env; here both are numpy table lookups
    over the characters actually written, ended by one padding index (``benchmarks/vector_envs.py``).
    """


_CHAR_BYTES = np.frombuffer(CHARSET.encode("ascii"), dtype=np.uint8)  # index -> character
_PAD = len(CHARSET)  # gymnasium's padding index: one past the character set
_CODES = np.full(256, -1, dtype=np.int32)  # byte -> index in CHARSET, -1 for bytes outside it
_CODES[_CHAR_BYTES] = np.arange(len(CHARSET), dtype=np.int32)


def _decode(row: npt.NDArray[np.int32]) -> str:
    """One sub-env's slots: the characters up to the first padding index."""
    end = row >= _PAD
    length = int(end.argmax()) if end.any() else len(row)
    return _CHAR_BYTES[row[:length]].tobytes().decode("ascii")


class _SharedTexts(Sequence[str]):
    """A live view of the observations in a vector env's shared memory; copies are plain tuples."""

    def __init__(self, space: spaces.Text, memory: Any, n: int):
        self._rows = np.frombuffer(memory.get_obj(), dtype=np.int32).reshape(n, space.max_length)
        self._n = n

    def _now(self) -> tuple[str, ...]:
        return tuple(_decode(row) for row in self._rows)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return self._now()[index]
        return _decode(self._rows[range(self._n)[index]])

    def __len__(self) -> int:
        return self._n

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return self._now()

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return repr(self._now())


_write_text = write_to_shared_memory.dispatch(spaces.Text)


@read_from_shared_memory.register(ObservationText)
def _read_observations(space: ObservationText, shared_memory: Any, n: int = 1) -> _SharedTexts:
    return _SharedTexts(space, shared_memory, n)


@write_to_shared_memory.register(ObservationText)
def _write_observation(space: ObservationText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length
    try:
        codes = _CODES[np.frombuffer(value.encode("ascii"), dtype=np.uint8)]
    except (AttributeError, UnicodeEncodeError):
        codes = None
    if codes is None or len(codes) > size or (codes < 0).any():
        return _write_text(space, index, value, shared_memory)  # not an observation: gymnasium's checks say why
    slots = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * size : (index + 1) * size]
    slots[: len(codes)] = codes
    if len(codes) < size:
        slots[len(codes)] = _PAD  # the reader stops here; what lies beyond is an older observation's
