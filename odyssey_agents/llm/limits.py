"""What one model server allows, shared by every cell of a process that calls it, and how to back off.

A sweep run by the concurrent launcher holds dozens of cells in one process, each with its own backend,
but the limits belong to the server: a hosted API grants so many requests and tokens per minute, a vLLM
server batches best with many requests in flight but not unboundedly many. So a backend does not keep
limits of its own: it asks :func:`server_gate` for the one :class:`ServerGate` of its server (its base URL
and model) and passes every attempt through it. The gate holds

* a token bucket of requests per minute and one of tokens per minute (a call is charged its estimated
  prompt plus its reply budget, and the charge is settled to the server's count when the reply comes,
  which is how hosted APIs count too);
* a bound on the calls in flight;
* a hold: when the server answers ``429`` with ``Retry-After``, no cell of the process calls it again
  before that time (one cell's ``429`` is every cell's, since the limit is shared);
* a congestion window for servers whose limits nobody stated: after a ``429`` the calls in flight are
  bounded by half of what was in flight, and the bound grows again by one for every window's worth of
  replies, or by an eighth of it when that is more (additive increase, multiplicative decrease, as TCP
  does; the larger step as scalable TCP takes for high rates), so cells that all waited out one
  ``Retry-After`` do not all call at its end and get ``429`` again. The window halves at most once per
  round trip (the measured time of a reply), and never below what the server was just seen to serve:
  the replies of the last round trip (by Little's law, the calls in flight its rate sustains) or, with
  ``requests_per_minute`` stated, that rate times the round trip. A ``429`` says the server's rate was
  reached, not that it serves fewer calls than it just did; halving below that (as an earlier version
  did, once a second whatever the replies) left a 2,400 rpm server running at half its rate.

:class:`Backoff` says how long to wait before the next attempt: the server's ``Retry-After`` when it
gives one, otherwise exponential backoff with jitter. The jitter draws from a generator of its own,
seeded from the backend's identity, and never from a generator a trajectory depends on: when a retry
happens changes timing only. A wait never holds a slot of the gate.

Nothing here knows HTTP or a client library; :mod:`odyssey_agents.llm.openai_compat` uses it.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from email.utils import mktime_tz, parsedate_tz
from typing import Any

__all__ = ["Backoff", "GateStats", "ServerGate", "ServerLimits", "parse_retry_after", "server_gate"]

#: Burst a bucket allows, in seconds of its rate: a sweep's first calls need not trickle out one by one,
#: and a server's own limiter (minute windows) allows as much.
BURST_SECONDS = 10.0
#: The round trip assumed before any reply was timed: the congestion window halves at most once per round
#: trip, and the replies of the last round trip are its floor.
WINDOW_ROUND_SECONDS = 1.0
#: What each reply adds to a congestion window of more than 1 / WINDOW_GROWTH calls (an eighth a round trip).
WINDOW_GROWTH = 0.125
#: Weight of a new reply's time in the running round-trip estimate.
ROUND_TRIP_WEIGHT = 0.125


@dataclass(frozen=True)
class ServerLimits:
    """Limits of one server (None: unlimited). Per minute as the providers state them."""

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_in_flight: int | None = None

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number or null, got {value!r}")
        if self.max_in_flight is not None and (
            isinstance(self.max_in_flight, bool) or not isinstance(self.max_in_flight, int) or self.max_in_flight < 1
        ):
            raise ValueError(f"max_in_flight must be a positive whole number or null, got {self.max_in_flight!r}")

    @property
    def unlimited(self) -> bool:
        return self.requests_per_minute is None and self.tokens_per_minute is None and self.max_in_flight is None


class _Bucket:
    """A token bucket refilled at ``per_minute / 60`` a second, holding at most ``BURST_SECONDS`` of it.

    A charge larger than the whole bucket is let through when the bucket is full (the bucket then runs
    into debt and the next charges wait it off): a prompt bigger than ten seconds of the token rate
    must still be sendable."""

    def __init__(self, per_minute: float, now: float):
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * BURST_SECONDS)
        self.level = self.capacity
        self.at = now

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now

    def wait(self, cost: float, now: float) -> float:
        """Seconds until ``cost`` can be taken (0: now)."""
        self._refill(now)
        need = min(cost, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, cost: float) -> None:
        self.level -= cost

    def give(self, amount: float) -> None:
        """Return part of a charge (a reply shorter than its budget); never above capacity."""
        self.level = min(self.capacity, self.level + amount)


@dataclass
class GateStats:
    """What a gate saw, for progress lines and benchmark reports (timing: not part of any result)."""

    calls: int = 0  # attempts let through
    in_flight: int = 0
    peak_in_flight: int = 0
    rate_limited: int = 0  # 429 answers
    server_errors: int = 0  # 5xx answers, timeouts, connection failures
    waited_seconds: float = 0.0  # time callers spent waiting on limits and holds (not on the server)
    window: float = math.inf  # the congestion window (calls in flight allowed since the last 429s)
    window_floor: float = 0.0  # what the window was last kept from falling below (see the module docstring)
    round_trip: float = WINDOW_ROUND_SECONDS  # running estimate of a reply's time (seconds)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["waited_seconds"] = round(self.waited_seconds, 3)
        out["window"] = None if math.isinf(self.window) else round(self.window, 2)
        out["window_floor"] = round(self.window_floor, 2)
        out["round_trip"] = round(self.round_trip, 3)
        return out


@dataclass
class _Ticket:
    tokens: float
    settled: bool = False
    sent_at: float = 0.0


class ServerGate:
    """The limits of one server, enforced across every thread of the process (see the module docstring)."""

    def __init__(self, key: tuple[str, str], limits: ServerLimits, clock: Callable[[], float] = time.monotonic):
        self.key = key
        self.limits = limits
        self._clock = clock
        self._cond = threading.Condition()
        now = clock()
        self._requests = _Bucket(limits.requests_per_minute, now) if limits.requests_per_minute else None
        self._tokens = _Bucket(limits.tokens_per_minute, now) if limits.tokens_per_minute else None
        self._hold_until = 0.0
        self._closed_at = -math.inf  # when a 429 last halved the window
        self._replied: deque[float] = deque()  # when the replies of about the last round trip came
        self._last = threading.local()  # the seconds of this thread's last attempt (count_success times it)
        self.stats = GateStats()

    @contextmanager
    def slot(self, tokens: float) -> Iterator[_Ticket]:
        """Wait until the server may be called with a request of about ``tokens`` tokens, hold a slot
        in flight for the duration of the block, and release it. :meth:`settle` the ticket with the
        tokens the server counted."""
        ticket = self._acquire(float(tokens))
        try:
            yield ticket
        finally:
            self._last.seconds = self._clock() - ticket.sent_at
            with self._cond:
                self.stats.in_flight -= 1
                self._cond.notify_all()

    def _acquire(self, tokens: float) -> _Ticket:
        started = self._clock()
        with self._cond:
            while True:
                now = self._clock()
                wait = max(0.0, self._hold_until - now)
                if self._requests is not None:
                    wait = max(wait, self._requests.wait(1.0, now))
                if self._tokens is not None:
                    wait = max(wait, self._tokens.wait(tokens, now))
                window = self.stats.window
                bound = min(self.limits.max_in_flight or math.inf, window if math.isinf(window) else math.floor(window))
                full = self.stats.in_flight >= bound
                if wait <= 0.0 and not full:
                    break
                # a slot freed or a hold set by another thread wakes us; a bucket refills on its own
                self._cond.wait(None if wait <= 0.0 else wait)
            if self._requests is not None:
                self._requests.take(1.0)
            if self._tokens is not None:
                self._tokens.take(tokens)
            stats = self.stats
            stats.calls += 1
            stats.in_flight += 1
            stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
            sent_at = self._clock()
            stats.waited_seconds += sent_at - started
        return _Ticket(tokens, sent_at=sent_at)

    def settle(self, ticket: _Ticket, tokens: float) -> None:
        """The server counted ``tokens`` for the call ``ticket`` was charged for: refund the rest (or
        charge the excess)."""
        if ticket.settled:
            return
        ticket.settled = True
        if self._tokens is not None:
            with self._cond:
                difference = ticket.tokens - float(tokens)
                if difference > 0:
                    self._tokens.give(difference)
                else:
                    self._tokens.take(-difference)
                self._cond.notify_all()

    def hold(self, seconds: float) -> None:
        """Call the server from no thread before ``seconds`` from now (its ``Retry-After``)."""
        with self._cond:
            self._hold_until = max(self._hold_until, self._clock() + max(0.0, seconds))
            self._cond.notify_all()

    def count_failure(self, rate_limited: bool) -> None:
        """An attempt the server refused (its slot already released): a ``429`` halves the window."""
        with self._cond:
            stats = self.stats
            if rate_limited:
                stats.rate_limited += 1
                now = self._clock()
                # once per round trip, as TCP does: the 429s of calls that were in flight together are one
                # signal, not one each (halving per 429 would shut the window to 1 after a burst)
                if now - self._closed_at >= stats.round_trip:
                    self._closed_at = now
                    floor = self._served_floor(now)
                    stats.window_floor = floor
                    stats.window = max(1.0, floor, min(stats.window, stats.in_flight + 1.0) / 2.0)
            else:
                stats.server_errors += 1

    def _served_floor(self, now: float) -> float:
        """Calls in flight the server was just seen to sustain: the replies of the last round trip, or the
        stated requests per minute times the round trip (whichever is more). Called holding the lock."""
        horizon = now - self.stats.round_trip
        while self._replied and self._replied[0] < horizon:
            self._replied.popleft()
        floor = float(len(self._replied))
        if self.limits.requests_per_minute:
            floor = max(floor, math.floor(self.limits.requests_per_minute / 60.0 * self.stats.round_trip))
        if self.limits.max_in_flight:
            floor = min(floor, float(self.limits.max_in_flight))
        return floor

    def count_success(self) -> None:
        """A reply: the window (if a ``429`` closed it) opens by one per window's worth of replies."""
        seconds = getattr(self._last, "seconds", None)
        with self._cond:
            stats = self.stats
            now = self._clock()
            if seconds is not None and seconds > 0:
                stats.round_trip += ROUND_TRIP_WEIGHT * (seconds - stats.round_trip)
                self._last.seconds = None
            self._replied.append(now)
            horizon = now - stats.round_trip
            while self._replied and self._replied[0] < horizon:
                self._replied.popleft()
            if not math.isinf(stats.window):
                # one per round trip for a small window, an eighth of it for a larger one: the floor keeps an
                # overshoot from costing more than one round trip of 429s, and a window halved before any
                # reply was seen (a sweep's first burst: 64 cells against a server that serves 40) is back
                # at the server's rate in three round trips, not in forty
                stats.window += max(1.0 / stats.window, WINDOW_GROWTH)
                if stats.window >= max(stats.peak_in_flight, self.limits.max_in_flight or 0) + 1:
                    stats.window = math.inf  # open again: as many as ever were in flight
                self._cond.notify_all()


_GATES: dict[tuple[str, str], ServerGate] = {}
_GATES_LOCK = threading.Lock()


def server_gate(base_url: str | None, model: str, limits: ServerLimits) -> ServerGate:
    """The process's gate for the server at ``base_url`` (None: the OpenAI API) serving ``model``.

    Every backend of the process that names the same server gets the same gate. Two backends that
    state different limits for one server are a mistake in the configs (which limit holds?): refused.
    Limits are per model as well as per server because that is how hosted APIs grant them; a vLLM
    server serves one model, so for it the two are the same."""
    key = ((base_url or "https://api.openai.com/v1").rstrip("/"), model)
    with _GATES_LOCK:
        gate = _GATES.get(key)
        if gate is None:
            gate = _GATES[key] = ServerGate(key, limits)
        elif gate.limits != limits:
            raise ValueError(
                f"model {model!r} at {key[0]} was already given limits {_plain(gate.limits)} in this process; "
                f"a backend now asks for {_plain(limits)}: give every cell that calls one server the same limits"
            )
        return gate


def gates() -> list[ServerGate]:
    """The gates of this process (progress lines, benchmarks)."""
    with _GATES_LOCK:
        return list(_GATES.values())


def _plain(limits: ServerLimits) -> str:
    return ", ".join(f"{k}={v}" for k, v in asdict(limits).items() if v is not None) or "(none)"


@dataclass
class Backoff:
    """How long to wait before attempt ``n + 1`` of a call (see the module docstring).

    ``base * 2**n`` seconds capped at ``cap``, of which a random share up to ``jitter`` is taken off,
    so that cells that failed together do not retry together. A server's ``Retry-After`` replaces the
    computed delay (plus the same small jitter on top), up to ``max_retry_after``: a server that asks
    for longer is not waited for, the call fails (a quota that resets tomorrow is not a reason to hang).
    """

    base: float = 0.5
    cap: float = 30.0
    jitter: float = 0.25
    max_retry_after: float = 120.0
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        share = 1.0 - self.jitter * self.rng.random()
        if retry_after is not None:
            return retry_after + (1.0 - share) * min(self.base, retry_after)
        return min(self.cap, self.base * 2.0 ** min(attempt, 60)) * share


def parse_retry_after(headers: Any, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a response's headers ask the client to wait: ``retry-after-ms`` (OpenAI's), then
    ``retry-after`` as seconds or as an HTTP date; None when absent or unreadable."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            if name == "retry-after":
                parsed = parsedate_tz(str(value))
                if parsed is not None:
                    return max(0.0, float(mktime_tz(parsed)) - now())
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None
