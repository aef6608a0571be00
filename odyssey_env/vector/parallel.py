"""The async vector env: sub-envs stepped in parallel by worker processes and by the calling process.

Gymnasium's ``AsyncVectorEnv`` starts one process per sub-env; here there is one process per core (the
calling process steps a share too, so no process waits for a core), and each worker steps its share as an
:class:`~odyssey_env.vector.sync.OdysseySyncVectorEnv`, its infos left for the calling process to merge
once. Messages go through ``multiprocessing`` pipes, as Gymnasium's do: the kernel orders and delivers
them on every CPU, and a dead worker shows as its process sentinel.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import os
import pickle
import signal
import time
import traceback
from collections.abc import Callable
from contextlib import suppress
from copy import deepcopy
from multiprocessing.connection import Connection, wait
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from odyssey_env.vector.infos import _BatchedInfos, _Collected
from odyssey_env.vector.sync import OdysseySyncVectorEnv

__all__ = ["OdysseyAsyncVectorEnv"]


class _RemoteTraceback(Exception):
    """The traceback of an error raised in a worker process (the cause of the error raised here)."""

    def __init__(self, text: str):
        super().__init__(text)

    def __str__(self) -> str:
        return "\n" + str(self.args[0])


def _pack_error(exc: BaseException) -> tuple[bytes | None, str, str]:
    text = "".join(traceback.format_exception(exc))
    try:
        return pickle.dumps(exc), f"{type(exc).__name__}: {exc}", text
    except Exception:  # an exception that does not pickle comes back as a RuntimeError with its text
        return None, f"{type(exc).__name__}: {exc}", text


def _unpack_error(packed: tuple[bytes | None, str, str], where: str) -> BaseException:
    data, summary, text = packed
    exc: BaseException = RuntimeError(f"{where}: {summary}")
    if data is not None:
        with suppress(Exception):  # an exception class the main process cannot rebuild: the RuntimeError
            exc = pickle.loads(data)
    exc.__cause__ = _RemoteTraceback(text)
    return exc


def _serve(
    pipe: Connection,
    other_end: Connection,
    env_fns: list[Callable[[], gym.Env]],
    autoreset_mode: AutoresetMode,
) -> None:
    """A worker process: steps its sub-envs as an ``OdysseySyncVectorEnv``, infos left unmerged."""
    other_end.close()  # the parent's end, inherited: closed here, so that the parent's exit reads as EOF
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle (it closes us)
    try:
        envs = OdysseySyncVectorEnv(env_fns, copy=False, autoreset_mode=autoreset_mode)
    except BaseException as exc:
        pipe.send(("error", _pack_error(exc)))
        return
    pipe.send(("ok", (envs.single_observation_space, envs.single_action_space)))
    while True:
        try:
            command, payload = pipe.recv()
        except (EOFError, OSError):  # the main process is gone
            break
        try:
            if command == "step":
                _, rewards, terminations, truncations, collected = envs._step_collected(_Batch.unpack(payload))
                # plain lists: a small numpy array costs microseconds to pickle, a list next to nothing
                result: Any = (envs._env_obs, rewards.tolist(), terminations.tolist(), truncations.tolist(), collected)
            elif command == "reset":
                collected = envs._reset_collected(*payload)
                result = (envs._env_obs, collected)
            elif command == "call":
                name, args, kwargs = payload
                result = envs.call(name, *args, **kwargs)
            elif command == "set_attr":
                envs.set_attr(*payload)
                result = None
            elif command == "close":
                envs.close()
                pipe.send(("ok", None))
                break
            else:
                raise ValueError(f"unknown command {command!r}")
        except Exception as exc:
            pipe.send(("error", _pack_error(exc)))
        else:
            pipe.send(("ok", result))
    pipe.close()


class _Batch:
    """A numpy array of actions as a plain list for the pipe (pickling a small array costs ~5 µs, a list
    well under one), rebuilt with its dtype on the other side so each sub-env gets the same scalars.

    Packed as ``(dtype, shape, values)``, anything else as ``(None, None, actions)``: plain strings and
    tuples, which pickle needs no class lookup to write or to read back.
    """

    @staticmethod
    def pack(part: Any) -> tuple[str | None, tuple[int, ...] | None, Any]:
        if type(part) is np.ndarray and part.dtype != object and part.dtype.fields is None:
            return part.dtype.str, part.shape, part.ravel().tolist()
        return None, None, part

    @staticmethod
    def unpack(payload: tuple[str | None, tuple[int, ...] | None, Any]) -> Any:
        dtype, shape, values = payload
        if dtype is None:
            return values
        return np.array(values, dtype=dtype).reshape(shape)


class _WorkerDied(RuntimeError):
    """A worker process exited while the main process waited for its answer."""


class _Worker:
    """The main process's handle on one worker: its process, its end of the pipe, its sub-envs."""

    def __init__(
        self, ctx: Any, env_fns: list[Callable[[], gym.Env]], first: int, autoreset_mode: AutoresetMode
    ) -> None:
        self.first, self.count = first, len(env_fns)
        self.due = 1  # answers owed: the first says the sub-envs are built
        self.last_obs: list[Any] = []
        self.pipe, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(
            target=_serve,
            args=(child, self.pipe, env_fns, autoreset_mode),
            daemon=True,
            name=f"odyssey-vector-worker-envs-{first}-{first + len(env_fns) - 1}",
        )
        self.process.start()
        child.close()

    def __str__(self) -> str:
        return f"the worker of sub-envs {self.first}..{self.first + self.count - 1} (pid {self.process.pid})"

    def ask(self, command: str, payload: Any) -> None:
        try:
            self.pipe.send((command, payload))
        except OSError as exc:  # its end of the pipe closed with it: a dead worker, not a broken pipe
            raise self._died() from exc
        self.due += 1

    def answer(self, timeout: float | None = None) -> Any:
        """The worker's next answer; ``timeout`` raises ``multiprocessing.TimeoutError`` (the answer stays due)."""
        ready = wait([self.pipe, self.process.sentinel], timeout)
        if not ready:
            raise mp.TimeoutError(f"no answer from {self} within {timeout} s")
        if self.pipe not in ready:  # only its sentinel: it exited without answering
            raise self._died()
        try:
            status, result = self.pipe.recv()
        except (EOFError, OSError) as exc:
            raise self._died() from exc
        self.due -= 1
        if status == "error":
            raise _unpack_error(result, str(self))
        return result

    def _died(self) -> _WorkerDied:
        self.process.join(0.1)
        return _WorkerDied(f"{self} died (exit code {self.process.exitcode})")


def _share_sizes(num_envs: int, workers: int) -> list[int]:
    """How many sub-envs the calling process (first) and each worker step: as even as can be, the
    calling process (which also merges the infos) taking the smallest share."""
    base, extra = divmod(num_envs, workers + 1)
    return [base] + [base + (1 if w < extra else 0) for w in range(workers)]


class OdysseyAsyncVectorEnv(_BatchedInfos, VectorEnv):
    """Sub-envs stepped in parallel by worker processes and by the calling process itself.

    Gymnasium's ``AsyncVectorEnv`` starts a process per sub-env, which means more processes than cores
    as soon as there are more sub-envs than cores. Here ``workers`` processes (default: one fewer than
    the CPUs this process may use, at most ``num_envs - 1``) each step a contiguous share of the
    sub-envs, the calling process steps the first share itself while they work, and messages go
    through pipes. Every sub-env's trajectory is the one a sync vector env gives for the same seeds;
    infos are merged once per step, as in :class:`OdysseySyncVectorEnv`.

    An error in a sub-env is raised here with the worker's traceback as its cause; the sub-envs
    that stepped stay stepped (as in a sync vector env), so reset after one. A worker that dies
    makes every later call raise; :meth:`close` ends the workers.
    """

    def __init__(
        self,
        env_fns: list[Callable[[], gym.Env]],
        *,
        workers: int | None = None,
        copy: bool = True,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        context: str | None = None,
        lazy_infos: bool = False,
    ) -> None:
        env_fns = list(env_fns)
        self.lazy_infos = bool(lazy_infos)  # as in OdysseySyncVectorEnv: only for sub-envs known to allow it
        self.num_envs = len(env_fns)
        if self.num_envs < 1:
            raise ValueError("an async vector env needs at least one sub-env")
        if workers is None:
            workers = min(self.num_envs, _usable_cpus()) - 1
        if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= self.num_envs:
            raise ValueError(f"workers must be an integer in 0..num_envs={self.num_envs}, got {workers!r}")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.copy = copy
        self.closed = False
        self._state: str | None = None  # the command sent and not yet answered
        self._pending: dict[str, Any] = {}
        sizes = _share_sizes(self.num_envs, workers)
        #: (first sub-env, count) of the calling process's share, then of each worker's
        self._bounds: list[tuple[int, int]] = [(sum(sizes[:k]), size) for k, size in enumerate(sizes)]
        self._local = (
            OdysseySyncVectorEnv(env_fns[: sizes[0]], copy=False, autoreset_mode=self.autoreset_mode)
            if sizes[0]
            else None
        )
        ctx = mp.get_context(context)
        self._workers: list[_Worker] = []
        try:
            first = sizes[0]
            for size in sizes[1:]:
                self._workers.append(_Worker(ctx, env_fns[first : first + size], first, self.autoreset_mode))
                first += size
            spaces = [worker.answer() for worker in self._workers]
        except BaseException:
            self.close(terminate=True)
            raise
        if self._local is not None:
            spaces.insert(0, (self._local.single_observation_space, self._local.single_action_space))
            self.metadata = dict(self._local.metadata)
            self.render_mode = self._local.render_mode
        else:
            first_env = env_fns[0]()  # only to read the metadata Gymnasium exposes on a vector env
            self.metadata, self.render_mode = dict(first_env.metadata), first_env.render_mode
            first_env.close()
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.single_observation_space, self.single_action_space = spaces[0]
        if any(s != spaces[0] for s in spaces[1:]):
            self.close(terminate=True)
            raise RuntimeError("the sub-envs do not all have the same observation and action spaces")
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._observations = create_empty_array(self.single_observation_space, self.num_envs, fn=np.zeros)

    # ------------------------------------------------------------------ stepping
    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """Hand each worker its sub-envs' actions; the calling process's share steps in :meth:`step_wait`."""
        self._start("step")
        parts = self._split(actions)
        for worker, part in zip(self._workers, parts[1:], strict=True):
            self._ask(worker, "step", _Batch.pack(part))
        self._pending = {"local": parts[0], "answers": []}

    def step_wait(self, timeout: float | None = None) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The step's results; a ``timeout`` that passes raises and leaves the step due (call again)."""
        self._expect("step")
        pending = self._pending
        if "local_result" not in pending:
            pending["local_result"] = self._on_local(lambda local: local._step_collected(pending["local"]))
        answers = self._answers(timeout)
        observations: list[Any] = []
        rewards, terminations, truncations, collected = [], [], [], []
        local = pending["local_result"]
        if local is not None:
            _, r, te, tr, infos = local
            assert self._local is not None, "only the calling process's share has a local result"
            observations += self._local._env_obs
            rewards += r.tolist()
            terminations += te.tolist()
            truncations += tr.tolist()
            collected += infos
        for worker, (obs, r, te, tr, infos) in zip(self._workers, answers, strict=True):
            worker.last_obs = obs
            observations += obs
            rewards += r
            terminations += te
            truncations += tr
            collected += [(worker.first + i, info) for i, info in infos]
        self._state = None
        return (
            self._batch_observations(observations),
            np.array(rewards, dtype=np.float64),
            np.array(terminations, dtype=np.bool_),
            np.array(truncations, dtype=np.bool_),
            self._merged(collected),
        )

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def reset_async(self, seed: Any = None, options: dict[str, Any] | None = None) -> None:
        """Hand each worker its sub-envs' seeds (Gymnasium's rules: ``int`` means ``seed + i`` for sub-env i)."""
        self._start("reset")
        if seed is None:
            seeds: list[Any] = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                self._state = None
                raise ValueError(
                    f"If seeds are passed as a list the length must match num_envs={self.num_envs} "
                    f"but got length={len(seeds)}."
                )
        mask = None
        if options is not None and "reset_mask" in options:
            options = dict(options)
            mask = options.pop("reset_mask")
            try:
                _check_reset_mask(mask, self.num_envs)
            except (TypeError, ValueError):
                self._state = None
                raise
        shares = self._bounds

        def share_request(first: int, count: int) -> tuple[list[Any], dict[str, Any] | None] | None:
            if mask is None:
                return seeds[first : first + count], options
            part = mask[first : first + count]
            if not part.any():
                return None  # nothing to reset in this share
            return seeds[first : first + count], {**(options or {}), "reset_mask": part}

        requests = [share_request(first, count) for first, count in shares]
        for worker, request in zip(self._workers, requests[1:], strict=True):
            if request is not None:
                self._ask(worker, "reset", request)
        self._pending = {"local": requests[0], "requests": requests[1:], "answers": []}

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        self._expect("reset")
        pending = self._pending
        if "local_result" not in pending:
            request = pending["local"]
            pending["local_result"] = (
                None if request is None else self._on_local(lambda local: local._reset_collected(*request))
            )
        answers = self._answers(timeout, skip=[r is None for r in pending["requests"]])
        observations: list[Any] = []
        collected: _Collected = []
        if self._local is not None:
            observations += self._local._env_obs
            collected += pending["local_result"] or []
        for worker, answer in zip(self._workers, answers, strict=True):
            if answer is None:  # this share was not reset: its last observations stand
                answer = (worker.last_obs, [])
            obs, infos = answer
            worker.last_obs = obs
            observations += obs
            collected += [(worker.first + i, info) for i, info in infos]
        self._state = None
        return self._batch_observations(observations), self._merged(collected)

    # ------------------------------------------------------------------ attributes and methods
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``name(*args, **kwargs)`` on every sub-env (or its value, if it is not callable), in order."""
        self._start("call")
        for worker in self._workers:
            self._ask(worker, "call", (name, args, kwargs))
        self._pending = {"answers": []}
        local = self._on_local(lambda envs: envs.call(name, *args, **kwargs))
        results = list(local or ())
        for answer in self._answers(None):
            results += answer
        self._state = None
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"values must have one value per sub-env ({self.num_envs}), got {len(values)}")
        self._start("set_attr")
        shares = self._bounds
        for worker, (first, count) in zip(self._workers, shares[1:], strict=True):
            self._ask(worker, "set_attr", (name, list(values[first : first + count])))
        self._pending = {"answers": []}
        self._on_local(lambda envs: envs.set_attr(name, list(values[: shares[0][1]])))
        self._answers(None)
        self._state = None

    def render(self) -> tuple[Any, ...] | None:
        return self.call("render")

    def close_extras(self, timeout: float | None = None, terminate: bool = False, **kwargs: Any) -> None:
        """End the workers: politely (each closes its sub-envs) unless ``terminate`` or one is stuck."""
        workers, self._workers = getattr(self, "_workers", []), []
        for worker in workers:
            if not terminate and worker.process.is_alive():
                try:
                    while worker.due:  # answers still owed (a call interrupted by a timeout or Ctrl-C)
                        try:
                            worker.answer(timeout)
                        except (mp.TimeoutError, _WorkerDied):
                            raise
                        except Exception:  # that command's own error: nobody asks for it any more
                            pass
                    worker.ask("close", None)
                    worker.answer(timeout)
                except Exception:  # a dead or stuck worker is terminated below
                    pass
        for worker in workers:
            worker.process.join(0 if terminate else timeout)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join()
            worker.pipe.close()
        local = getattr(self, "_local", None)
        if local is not None:
            local.close()
        self._state = None

    # ------------------------------------------------------------------ internals
    def _split(self, actions: Any) -> list[Any]:
        if len(actions) != self.num_envs:
            self._state = None
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        return [actions[first : first + count] for first, count in self._bounds]

    def _start(self, command: str) -> None:
        if self.closed:
            raise RuntimeError("this vector env is closed")
        if self._state is not None:
            raise gym.error.AlreadyPendingCallError(
                f"calling {command!r} while waiting for a pending call to {self._state!r} to complete", self._state
            )
        self._state = command

    def _expect(self, command: str) -> None:
        if self._state != command:
            raise gym.error.NoAsyncCallError(
                f"calling `{command}_wait` without any prior call to `{command}_async`", command
            )

    def _on_local(self, work: Callable[[OdysseySyncVectorEnv], Any]) -> Any:
        """The calling process's share of a command; an error there waits for the workers' answers first."""
        if self._local is None:
            return None
        try:
            return work(self._local)
        except BaseException:
            try:
                self._answers(None)
            finally:
                self._state = None
            raise

    def _ask(self, worker: _Worker, command: str, payload: Any) -> None:
        """Send a worker a command; one found dead ends this env, as one that dies while answering does."""
        try:
            worker.ask(command, payload)
        except _WorkerDied:
            self._state = None
            self.close(terminate=True)
            raise

    def _answers(self, timeout: float | None, skip: list[bool] | None = None) -> list[Any]:
        """Every worker's answer to the pending command (kept when a timeout interrupts)."""
        answers: list[Any] = self._pending["answers"]
        give_up = None if timeout is None else time.perf_counter() + timeout
        error: BaseException | None = None
        while len(answers) < len(self._workers):
            worker = self._workers[len(answers)]
            if skip is not None and skip[len(answers)]:
                answers.append(None)
                continue
            left = None if give_up is None else max(0.0, give_up - time.perf_counter())
            try:
                answers.append(worker.answer(left))
            except mp.TimeoutError:
                raise
            except _WorkerDied:
                self._state = None
                self.close(terminate=True)
                raise
            except Exception as exc:  # a sub-env's own error: the other workers still answer
                error = error or exc
                answers.append(exc)
        if error is not None:
            self._state = None
            raise error
        return answers

    def _batch_observations(self, observations: list[Any]) -> Any:
        batched = self._concatenate(self.single_observation_space, observations, self._observations)
        return deepcopy(batched) if self.copy else batched

    @functools.cached_property
    def _concatenate(self) -> Callable[..., Any]:
        """``concatenate``'s dispatch on the space, looked up once (as :class:`OdysseySyncVectorEnv` does)."""
        return concatenate.dispatch(type(self.single_observation_space))


def _check_reset_mask(mask: Any, num_envs: int) -> None:
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not mask.any():
        raise ValueError(
            f"`options['reset_mask']` must contain a boolean array with at least one True value, got reset_mask={mask}"
        )


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
