"""Per-server limits and retries of the OpenAI-compatible backend, over real HTTP on 127.0.0.1.

Every server a test starts listens on a port of its own, so its gate (keyed by base URL and model) is
its own too: the tests do not share limits through the process-wide registry.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("openai")

from odyssey_agents.llm import LLMConfigError, LLMError, build_llm
from odyssey_agents.llm.limits import Backoff, _Bucket, parse_retry_after
from odyssey_agents.llm.openai_compat import OpenAIChat

from .openai_server import FakeOpenAIServer

MESSAGES = [{"role": "system", "content": "You play."}, {"role": "user", "content": "What now?"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def client(server, **kw):
    kw.setdefault("timeout", 5)
    llm = OpenAIChat("tiny", base_url=server.url, probe_context=False, **kw)
    llm._backoff.base = 0.01  # keep the tests fast: the policy is the same, the scale smaller
    return llm


def call_together(llms, n_each=1):
    errors = []

    def work(llm):
        try:
            for _ in range(n_each):
                llm.complete(MESSAGES, purpose="act")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(llm,)) for llm in llms]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors


# ---------------------------------------------------------------------------- limits
def test_calls_in_flight_are_bounded_across_every_backend_of_the_process(server):
    server.default = {"delay": 0.2}
    llms = [client(server, max_in_flight=3) for _ in range(8)]
    assert len({id(llm.gate) for llm in llms}) == 1  # one gate for the server
    call_together(llms)
    assert server.peak == 3  # reached, never exceeded
    assert llms[0].gate.stats.peak_in_flight == 3 and llms[0].gate.stats.calls == 8


def test_without_limits_every_cell_calls_at_once(server):
    server.default = {"delay": 0.2}
    call_together([client(server) for _ in range(8)])
    assert server.peak == 8


def test_requests_per_minute_spread_calls_once_the_burst_is_spent(server):
    llms = [client(server, requests_per_minute=120) for _ in range(6)]  # 2 a second, a burst of 20
    gate = llms[0].gate
    gate._requests.level, gate._requests.at = 1.0, time.monotonic()  # the burst is spent but one request
    start = time.monotonic()
    call_together(llms[:3])
    took = time.monotonic() - start
    assert 0.8 <= took < 5  # the 2nd and 3rd waited half a second each


def test_a_token_bucket_waits_refills_and_lets_an_oversized_charge_through_when_full():
    bucket = _Bucket(600, now=0.0)  # 10 a second, 100 held
    assert bucket.capacity == 100 and bucket.wait(100, 0.0) == 0.0
    bucket.take(100)
    assert bucket.wait(10, 0.0) == pytest.approx(1.0)
    assert bucket.wait(10, 1.0) == 0.0
    assert bucket.wait(5000, 1.0) == pytest.approx(9.0)  # bigger than the bucket: once it is full
    bucket.take(5000)
    bucket.give(10_000)
    assert bucket.level == 100


def test_tokens_per_minute_are_settled_to_the_servers_count(server):
    server.default = {"usage": {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40}}
    llm = client(server, tokens_per_minute=6000, max_tokens=500)
    bucket = llm.gate._tokens
    level = bucket.level
    llm.complete(MESSAGES, purpose="act")
    # charged prompt estimate + the reply budget, refunded down to the 40 tokens the server counted
    assert level - bucket.level == pytest.approx(40, abs=2)


def test_backends_that_disagree_on_one_servers_limits_are_refused(server):
    client(server, max_in_flight=4)
    with pytest.raises(LLMConfigError, match="already given limits max_in_flight=4"):
        build_llm({"name": "openai", "model": "tiny", "base_url": server.url, "max_in_flight": 8})


@pytest.mark.parametrize(
    "settings",
    [{"max_in_flight": 0}, {"requests_per_minute": -1}, {"tokens_per_minute": "many"}, {"max_retries": -1}],
)
def test_bad_limits_are_one_line_config_errors(server, settings):
    with pytest.raises(LLMConfigError, match=next(iter(settings))):
        build_llm({"name": "vllm", "model": "tiny", "base_url": server.url, **settings})


# ---------------------------------------------------------------------------- retries
def test_a_429_with_retry_after_holds_every_cell_of_the_process(server):
    server.script = [{"status": 429, "headers": {"retry-after-ms": "400"}}]
    first, second = client(server), client(server)
    done = []

    def later():
        time.sleep(0.1)  # while the first cell waits out the 429
        start = time.monotonic()
        second.complete(MESSAGES, purpose="act")
        done.append(time.monotonic() - start)

    t = threading.Thread(target=later)
    t.start()
    first.complete(MESSAGES, purpose="act")
    t.join(10)
    assert first.retries == 1 and second.retries == 0
    assert done and done[0] >= 0.25  # it waited for the hold, though it never saw a 429 itself
    gaps = [b - a for a, b in zip(server.times, server.times[1:], strict=False)]
    assert gaps[0] >= 0.39
    assert first.gate.stats.rate_limited == 1


def test_5xx_are_retried_with_backoff_then_succeed(server):
    server.script = [{"status": 503}, {"status": 500}, {"content": '{"reasoning": "r", "action": "look"}'}]
    llm = client(server, max_retries=2)
    assert llm.complete(MESSAGES, purpose="act").text == '{"reasoning": "r", "action": "look"}'
    assert llm.retries == 2 and len(server.requests) == 3 and llm.gate.stats.server_errors == 2


def test_a_call_that_keeps_failing_ends_in_one_line_naming_attempts_and_cause(server):
    server.default = {"status": 503, "message": "overloaded\nplease retry"}
    llm = client(server, max_retries=2)
    with pytest.raises(LLMError) as err:
        llm.complete(MESSAGES, purpose="act")
    line = str(err.value)
    assert "\n" not in line
    assert "failed 3 times" in line and "llm.max_retries=2" in line and "HTTP 503" in line and "overloaded" in line
    assert len(server.requests) == 3


def test_rate_limits_do_not_use_up_the_error_retries(server):
    server.script = [{"status": 429}] * 4 + [{"content": '{"reasoning": "r", "action": "wait"}'}]
    llm = client(server, max_retries=0)
    llm.complete(MESSAGES, purpose="act")
    assert llm.retries == 4


def test_rate_limit_patience_bounds_the_waiting(server):
    server.default = {"status": 429, "headers": {"retry-after": "0.2"}}
    llm = client(server, rate_limit_patience=0.5)
    with pytest.raises(LLMError, match="still rate-limited after"):
        llm.complete(MESSAGES, purpose="act")
    assert 2 <= len(server.requests) <= 4


def test_an_exhausted_quota_and_a_retry_after_too_long_are_not_waited_for(server):
    server.script = [{"status": 429, "code": "insufficient_quota", "message": "You exceeded your current quota"}]
    llm = client(server)
    with pytest.raises(LLMError, match="refused the request: RateLimitError"):
        llm.complete(MESSAGES, purpose="act")
    server.script = [{"status": 429, "headers": {"retry-after": "3600"}}]
    with pytest.raises(LLMError, match="asks to wait 3600 s"):
        llm.complete(MESSAGES, purpose="act")
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [401, 404, 422])
def test_client_errors_are_not_retried(server, status):
    server.script = [{"status": status}]
    with pytest.raises(LLMError, match=f"HTTP {status}"):
        client(server).complete(MESSAGES, purpose="act")
    assert len(server.requests) == 1


def test_a_stalled_attempt_times_out_and_is_retried(server):
    server.script = [{"delay": 1.5}]
    llm = client(server, timeout=0.3, max_retries=1)
    start = time.monotonic()
    llm.complete(MESSAGES, purpose="act")
    assert llm.retries == 1 and time.monotonic() - start < 1.4


def test_retry_after_headers_are_read_in_all_their_forms():
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=lambda: 1445412470.0) == 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None and parse_retry_after({}) is None


def test_backoff_grows_is_capped_and_jitter_only_shortens_it():
    backoff = Backoff(base=0.5, cap=4.0, rng=random.Random(1))
    delays = [backoff.delay(n) for n in range(6)]
    assert all(0.75 * min(4.0, 0.5 * 2**n) <= d <= min(4.0, 0.5 * 2**n) for n, d in enumerate(delays))
    assert backoff.delay(0, retry_after=2.0) >= 2.0


def test_retrying_draws_nothing_from_the_generators_a_trajectory_uses(server):
    server.script = [{"status": 503}, {"status": 429}]
    state = random.getstate()
    client(server).complete(MESSAGES, purpose="act")
    assert random.getstate() == state


def test_transport_settings_are_not_part_of_a_cells_identity():
    from odyssey_eval.rundir import cell_key

    base = {"game": {"name": "mossfall"}, "agent": {"name": "no_memory"}, "seed": 0, "max_steps": 5}
    one = cell_key({**base, "llm": {"name": "vllm", "model": "m", "timeout": 30, "max_in_flight": 8}})
    two = cell_key({**base, "llm": {"name": "vllm", "model": "m", "timeout": 300, "requests_per_minute": 60}})
    assert one == two and one["llm"] == {"name": "vllm", "model": "m"}
    assert cell_key({**base, "llm": {"name": "vllm", "model": "other"}}) != one


def test_the_api_backend_imports_no_torch(server):
    code = (
        "import sys\n"
        "from odyssey_agents.llm import build_llm\n"
        f"llm = build_llm({{'name': 'vllm', 'model': 'tiny', 'base_url': {server.url!r}, 'probe_context': False}})\n"
        "llm.complete([{'role': 'user', 'content': 'hi'}], purpose='act')\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'torch imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_a_429_closes_the_congestion_window_and_replies_open_it_again():
    from odyssey_agents.llm.limits import ServerGate, ServerLimits

    gate = ServerGate(("http://x", "m"), ServerLimits())
    held = [gate.slot(1) for _ in range(6)]
    for slot in held:
        slot.__enter__()
    assert gate.stats.peak_in_flight == 6  # six in flight
    for slot in held:
        slot.__exit__(None, None, None)
    gate.count_failure(rate_limited=True)  # a 429 with nothing else in flight: one at a time
    assert gate.stats.window == 1.0
    gate.stats.window = 8.0
    gate.count_failure(rate_limited=True)  # the 429s of one round trip halve the window once
    assert gate.stats.window == 8.0
    gate.stats.window = 1.0
    first = gate.slot(1)
    first.__enter__()
    entered = threading.Event()

    def second():
        with gate.slot(1):
            entered.set()

    t = threading.Thread(target=second)
    t.start()
    assert not entered.wait(0.3)  # the window holds the second call back
    first.__exit__(None, None, None)
    assert entered.wait(5)
    t.join(5)
    for _ in range(30):
        gate.count_success()
    assert gate.stats.window == float("inf")  # grown past the most ever in flight: open


def _simulate_rate_limited_rounds(rounds: int, cells: int = 64, admitted_per_round: int = 40) -> list[int]:
    """Replies a server that admits ``admitted_per_round`` calls a round trip (1 s, a fake clock) gives
    ``cells`` callers that send as many calls as the congestion window lets through; the rest get a 429
    at once. Returns the replies of each round trip."""
    from odyssey_agents.llm.limits import ServerGate, ServerLimits

    now = [0.0]
    gate = ServerGate(("http://sim", "m"), ServerLimits(), clock=lambda: now[0])
    replies = []
    for r in range(rounds):
        now[0] = float(r)
        window = gate.stats.window
        sent = cells if window == float("inf") else min(cells, int(window))
        slots = [gate.slot(1) for _ in range(sent)]
        for slot in slots:
            slot.__enter__()
        for i, slot in enumerate(slots[admitted_per_round:]):  # refused at once, one after another
            now[0] = r + 0.001 * (i + 1)
            slot.__exit__(None, None, None)
            gate.count_failure(rate_limited=True)
        now[0] = r + 1.0  # the admitted calls reply one round trip later
        for slot in slots[:admitted_per_round]:
            slot.__exit__(None, None, None)
            gate.count_success()
        replies.append(min(sent, admitted_per_round))
    return replies


def test_after_a_burst_of_429s_throughput_recovers_to_the_servers_rate_within_three_round_trips():
    # the 429s say the server's rate was reached, not that fewer calls in flight are needed than it just
    # served: the window must not fall below what the last round trip's replies show the server admits
    replies = _simulate_rate_limited_rounds(20)
    assert replies[0] == 40  # the first burst: 24 of 64 refused
    assert min(replies[3:]) >= 38, replies  # old: one more a round trip from 33, then halved to ~20
    assert all(r == 40 for r in replies[4:]), replies  # overshoots are refused, never below the rate
    assert sum(replies) >= 0.95 * 40 * 20, replies
