"""Issue 23 item 8: a URL that carries credentials is refused wherever it appears, and never repeated."""

from __future__ import annotations

import pytest

from odyssey_agents.llm.factory import LLMConfigError, refuse_secrets, url_has_credentials

from .conftest import odyssey, one_line_refusal

SECRET = "s3cr3t-do-not-print"
URLS = [
    f"http://user:{SECRET}@127.0.0.1:9/v1",
    f"https://{SECRET}@api.example.com/v1",
    f"http://127.0.0.1:9/v1?api_key={SECRET}",
    f"HTTPS://u:{SECRET}@host:99999/v1",  # a malformed port too
]


@pytest.mark.parametrize("url", URLS)
def test_urls_with_credentials_are_refused_without_repeating_them(url):
    assert url_has_credentials(url)
    with pytest.raises(LLMConfigError) as info:
        refuse_secrets({"name": "openai", "base_url": url})
    text = str(info.value)
    assert "llm.base_url" in text and SECRET not in text and "api_key_env" in text and "\n" not in text
    with pytest.raises(LLMConfigError):
        refuse_secrets({"name": "openai", "extra": {"mirrors": [url]}})


def test_plain_urls_pass():
    for url in ("http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "not a url @ all", None, 3):
        assert not url_has_credentials(url)
    refuse_secrets({"name": "vllm", "base_url": "http://127.0.0.1:8000/v1"})


def test_a_base_url_from_the_environment_is_refused_too(monkeypatch):
    pytest.importorskip("openai")
    from odyssey_agents.llm.openai_compat import OpenAIChat
    from odyssey_agents.llm.protocol import LLMError

    monkeypatch.setenv("OPENAI_BASE_URL", URLS[0])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(LLMError) as info:
        OpenAIChat(model="m")
    assert "OPENAI_BASE_URL" in str(info.value) and SECRET not in str(info.value)


def test_odyssey_run_writes_and_prints_no_credentials(tmp_path, store):
    out = tmp_path / "runs"
    done = odyssey(
        "run",
        "agent=no_memory",
        "llm=openai",
        "llm.model=m",
        f"llm.base_url={URLS[0]}",
        "max_steps=2",
        f"eval.output_dir={out}",
        cwd=tmp_path,
        store=store,
    )
    one_line_refusal(done, "llm.base_url")
    assert SECRET not in done.stdout + done.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(SECRET in p.read_text(errors="replace") for p in written), written
