"""The prefix cache reuses prompt prefixes across calls without changing a single reply, and the
CPU thread policy gives way to other processes."""

from __future__ import annotations

import pytest

from odyssey_agents.llm import cpu_threads
from odyssey_agents.llm.cpu_threads import ThreadPolicy
from odyssey_agents.llm.prefix_cache import PrefixCache, boundaries, common_prefix_length

# ---------------------------------------------------------------------- the memo, without torch


class ListCache:
    """Stands in for a key-value cache: holds token ids, crops like transformers 5 (negative count)."""

    def __init__(self, ids):
        self.ids = list(ids)

    def get_seq_length(self):
        return len(self.ids)

    def crop(self, n):
        assert n < 0
        del self.ids[n:]


def test_boundaries_cut_after_the_system_message_then_every_chunk():
    assert boundaries(100, 30, 32) == (30, 62, 94)
    assert boundaries(95, 30, 32) == (30, 62, 94)  # a cut may leave just one token to feed
    assert boundaries(94, 30, 32) == (30, 62)  # never all of them: generation needs one
    assert boundaries(100, 0, 32) == (32, 64, 96)
    assert boundaries(20, 0, 32) == ()  # too short to cut: fed whole, as without the cache
    assert boundaries(31, 31, 8) == (8, 16, 24)  # a "system message" of the whole prompt: chunks only
    with pytest.raises(ValueError):
        boundaries(10, 0, 0)


def test_common_prefix_length():
    assert common_prefix_length([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix_length([1, 2, 3], [1, 2, 3, 4]) == 3
    assert common_prefix_length([1, 2, 3], [1, 2, 3], limit=1) == 1
    assert common_prefix_length([], [1]) == 0


def test_take_reuses_the_longest_prefix_cut_alike_and_crops_it_in_place():
    memo = PrefixCache(entries=2)
    first = list(range(100))
    cuts = boundaries(len(first), 30, 32)
    memo.put(ListCache(first), first, cuts, valid=cuts[-1])
    second = first[:70] + [999] * 30  # shares 70 tokens: the boundaries 30 and 62 are reusable
    cache, at = memo.take(second, boundaries(len(second), 30, 32))
    assert at == 62 and cache.ids == first[:62] and len(memo) == 0  # handed out, cropped, no copy
    assert memo.hits == 1 and memo.reused_tokens == 62


def test_a_prefix_cut_elsewhere_is_not_reused():
    """Keys and values of the same tokens fed in other pieces differ in the last bits: never mixed."""
    memo = PrefixCache()
    ids = list(range(100))
    memo.put(ListCache(ids), ids, boundaries(100, 30, 32), valid=94)
    assert memo.take(ids, boundaries(100, 0, 32)) == (None, 0)  # no system boundary this time
    assert memo.take(ids, boundaries(100, 40, 32)) == (None, 0)
    assert len(memo) == 1


def test_nothing_beyond_the_valid_length_is_reused():
    memo = PrefixCache()
    ids = list(range(200))
    cuts = boundaries(200, 0, 50)  # 50, 100, 150
    memo.put(ListCache(ids), ids, cuts, valid=100)  # the rest was fed in one pass by generation
    cache, at = memo.take(ids, cuts)
    assert at == 100 and cache.get_seq_length() == 100


def test_the_least_recently_used_entry_goes_first():
    memo = PrefixCache(entries=2)
    prompts = [[k] * 40 for k in (1, 2, 3)]
    for ids in prompts:
        memo.put(ListCache(ids), ids, boundaries(40, 0, 16), valid=32)
    assert len(memo) == 2
    assert memo.take(prompts[0], boundaries(40, 0, 16)) == (None, 0)
    assert memo.take(prompts[2], boundaries(40, 0, 16))[1] == 32


def test_nothing_reusable_is_not_kept():
    memo = PrefixCache()
    memo.put(ListCache([1, 2]), [1, 2], (), valid=0)
    memo.put(None, [1] * 40, boundaries(40, 0, 16), valid=32)
    assert len(memo) == 0


# ---------------------------------------------------------------------- threads


def test_thread_settings(monkeypatch):
    assert ThreadPolicy(None).choose() is None  # torch's own choice is left alone
    assert ThreadPolicy(3).choose() == 3
    assert ThreadPolicy("2").choose() == 2
    for bad in (0, -1, "many", True):
        with pytest.raises(ValueError, match="threads"):
            ThreadPolicy(bad)


def test_auto_threads_leave_the_cores_other_processes_use(monkeypatch):
    policy = ThreadPolicy("auto", cores=4)
    monkeypatch.setattr(policy, "_own_load", lambda: 0.0)
    for load, expected in ((0.2, 4), (1.0, 3), (2.6, 1), (12.0, 1)):
        monkeypatch.setattr(cpu_threads.os, "getloadavg", lambda load=load: (load, load, load))
        assert policy.choose() == expected, load
    monkeypatch.setattr(policy, "_own_load", lambda: 2.0)  # this process's own threads are not "others"
    monkeypatch.setattr(cpu_threads.os, "getloadavg", lambda: (2.1, 2.0, 2.0))
    assert policy.choose() == 4


def test_usable_cores_honour_a_cgroup_quota(tmp_path, monkeypatch):
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cpu_threads._cgroup_quota(tmp_path) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cpu_threads._cgroup_quota(tmp_path) is None
    monkeypatch.setattr(cpu_threads, "_cgroup_quota", lambda: 1.0)
    assert cpu_threads.usable_cores() == 1
    assert ThreadPolicy("auto").cores == 1


# ---------------------------------------------------------------------- on tiny real models

transformers = pytest.importorskip("transformers")

from odyssey_agents.llm.protocol import LLM, Completion  # noqa: E402
from odyssey_agents.llm.transformers_local import TransformersLLM  # noqa: E402
from odyssey_agents.paradigms import LongContextAgent, ShortTermMemoryAgent  # noqa: E402

from .helpers import play  # noqa: E402


class Replayable(LLM):
    """Keeps each call's messages, options, call number and reply, to replay it in a cold backend."""

    def __init__(self, inner: TransformersLLM):
        self.inner = inner
        self.max_tokens, self.context_window = inner.max_tokens, inner.context_window
        self.calls: list[tuple[list, dict, int, str]] = []

    def complete(self, messages, **kwargs) -> Completion:
        number = self.inner.calls
        done = self.inner.complete(messages, **kwargs)
        self.calls.append((list(messages), kwargs, number, done.text))
        return done

    def count_tokens(self, messages):
        return self.inner.count_tokens(messages)

    def count_text(self, text):
        return self.inner.count_text(text)


def _backend(path, max_tokens=16, **options):
    return TransformersLLM(path, max_tokens=max_tokens, seed=7, device="cpu", **options)


@pytest.mark.parametrize("guided", [True, False])
def test_a_warm_prefix_cache_gives_exactly_what_a_cold_backend_gives(tiny_models, guided):
    """Sampling on: every call of a Long Context run, whose prompts repeat all earlier steps, is
    replayed in a fresh backend with nothing cached (as after a resume) and must reply the same."""
    llm = _backend(
        tiny_models["llama"], prefix_chunk=16, guided_json=guided, constrain_starts=guided, prefill_json=True
    )
    rec = Replayable(llm)
    agent = LongContextAgent(rec)
    play(agent, 4)
    agent.answer("Where am I?", ["hall", "marsh", "well"])
    agent.answer("What did I do first?", ["wait", "look", "enter reed_marsh"])
    assert llm._memo.hits >= 4 and llm._memo.reused_tokens > 500  # the cache was really used
    cold = _backend(
        tiny_models["llama"], prefix_chunk=16, guided_json=guided, constrain_starts=guided, prefill_json=True
    )
    for messages, kwargs, number, text in rec.calls:
        cold._memo.clear()  # nothing cached: what a resumed run or a fresh process starts with
        cold.set_state({"calls": number})
        assert cold.complete(messages, **kwargs).text == text
    assert cold._memo.hits == 0


def _tensors(cache):
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


def test_a_reused_prefix_holds_the_very_bits_a_cold_prefill_computes(tiny_models):
    """Sampled text would hide a difference in the last bits; the keys and values themselves cannot."""
    import torch

    llm = _backend(tiny_models["qwen3"], prefix_chunk=16)
    llm.load()
    system = {"role": "system", "content": "You play a text adventure. Actions: look, wait, enter X. " * 6}
    first = [system, {"role": "user", "content": "Current Location: hall. " * 8}]
    second = [system, {"role": "user", "content": "Current Location: hall. " * 7 + "You see a well. " * 9}]
    prompts = {}
    for name, messages in (("first", first), ("second", second)):
        text = llm._prompt_text(messages)
        prompts[name] = (llm._encode(text), llm._system_text(messages, text))
    ids, system_text = prompts["second"]
    assert llm._system_length(system_text, ids) > 0  # the system message is a boundary of its own
    warm_first, cuts = llm._prefilled(*prompts["first"])
    llm._keep(warm_first, prompts["first"][0], cuts, cuts[-1])
    warm, _ = llm._prefilled(ids, system_text)
    assert llm._memo.reused_tokens > llm._system_length(system_text, ids)  # system and then some
    llm._memo.clear()
    cold, cuts = llm._prefilled(ids, system_text)
    assert warm.get_seq_length() == cold.get_seq_length() == cuts[-1]
    assert all(torch.equal(a, b) for a, b in zip(_tensors(warm), _tensors(cold), strict=True))


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_greedy_replies_are_the_same_with_and_without_the_prefix_cache(tiny_models, arch):
    replies = {}
    for cached in (True, False):
        llm = _backend(
            tiny_models[arch],
            prefix_cache=cached,
            prefix_chunk=32,
            do_sample=False,
            guided_json=True,
            constrain_starts=True,
        )
        rec = Replayable(llm)
        agent = ShortTermMemoryAgent(rec, memory_size=3)
        play(agent, 5)
        agent.answer("Where am I?", ["hall", "marsh"])
        replies[cached] = [text for *_, text in rec.calls]
        assert (llm._memo.hits > 0) == cached
    assert replies[True] == replies[False]


def test_an_interrupted_call_leaves_no_half_grown_cache_behind(tiny_models, monkeypatch):
    llm = _backend(tiny_models["llama"], prefix_chunk=16, guided_json=True)
    messages = [{"role": "system", "content": "You play. " * 30}, {"role": "user", "content": "Where? " * 10}]
    first = llm.complete(messages, purpose="act", json_keys=("reasoning", "action")).text
    assert len(llm._memo) == 1
    real = llm._generate

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)  # the cache has grown by a reply nobody will see
        raise KeyboardInterrupt

    monkeypatch.setattr(llm, "_generate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        llm.complete(messages, purpose="act", json_keys=("reasoning", "action"))
    assert len(llm._memo) == 0  # the cache that was handed out is not given back
    monkeypatch.undo()
    llm.set_state({"calls": 0})
    assert llm.complete(messages, purpose="act", json_keys=("reasoning", "action")).text == first


def test_thread_count_changes_no_reply(tiny_models):
    import torch

    before = torch.get_num_threads()
    try:
        texts = []
        for threads in (1, 2):
            llm = _backend(tiny_models["qwen3"], threads=threads, guided_json=True)
            agent = ShortTermMemoryAgent(Replayable(llm))
            play(agent, 2)
            assert torch.get_num_threads() == threads
            texts.append([text for *_, text in agent.llm.calls])
        assert texts[0] == texts[1]
    finally:
        torch.set_num_threads(before)


def test_the_settings_are_checked_and_recorded(tiny_models):
    for bad in (0, -5, "64", True):
        with pytest.raises(ValueError, match="prefix_chunk"):
            _backend(tiny_models["llama"], prefix_chunk=bad)
    with pytest.raises(ValueError, match="prefix_cache must be true or false"):
        _backend(tiny_models["llama"], prefix_cache="maybe")
    with pytest.raises(ValueError, match="threads"):
        _backend(tiny_models["llama"], threads="lots")
    llm = _backend(tiny_models["llama"])
    llm.load()
    described = llm.describe()
    assert described["prefix_cache"] is True and described["prefix_chunk"] == 128
    assert _backend(tiny_models["llama"], prefix_cache=False).describe()["prefix_cache"] is False
