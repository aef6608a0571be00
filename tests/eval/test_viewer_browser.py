"""The viewer page in a real headless Chromium (Debian's ``chromium`` driven by Selenium with Debian's
``chromium-driver``): load it, move the slider, filter, read the DOM, take a screenshot.

Skipped, with the reason, where no browser is installed (``apt-get install chromium chromium-driver``
and ``pip install "odyssey-gym[viewer]"``; ``.ci/run`` installs them when it can). Set
``ODYSSEY_VIEW_SCREENSHOTS=DIR`` to keep the screenshots.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from odyssey_eval.viewer import write_view
from odyssey_eval.viewer.data import FLAGS

from .viewer_runs import EVIL, lines, play, poison

pytestmark = pytest.mark.browser

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def _browser_or_skip():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ModuleNotFoundError:
        pytest.skip('the browser tests need selenium: pip install "odyssey-gym[viewer]"')
    binary = os.environ.get("ODYSSEY_CHROMIUM") or next(filter(None, map(shutil.which, CHROMIUM)), None)
    driver = os.environ.get("ODYSSEY_CHROMEDRIVER") or shutil.which("chromedriver")
    if not binary or not driver:
        pytest.skip(
            "no headless Chromium here: apt-get install chromium chromium-driver (or set "
            "ODYSSEY_CHROMIUM and ODYSSEY_CHROMEDRIVER)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    profile = tempfile.mkdtemp(prefix="odyssey-chromium-")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1500,1200",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(options=options, service=Service(driver)), profile
    except Exception as exc:  # a browser that is there but cannot start here
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"headless Chromium did not start: {str(exc).splitlines()[0]}")


@pytest.fixture(scope="module")
def browser():
    driver, profile = _browser_or_skip()
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return play(tmp_path_factory.mktemp("viewer-browser"))


def open_page(browser, page: Path, fragment: str = "") -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get_log("browser")  # forget earlier pages' messages
    browser.get(page.resolve().as_uri() + fragment)
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return document.documentElement.dataset.ready"))


def shown_step(browser) -> int:
    return int(browser.find_element("id", "step-input").get_attribute("value"))


def detail(browser) -> dict:
    return browser.execute_script("""
        const d = document.getElementById('detail');
        const act = d.querySelector('.action');
        return {head: d.querySelector('h2').textContent, action: act ? act.textContent : null,
                pills: [...d.querySelectorAll('.pill')].map(p => p.textContent),
                area: document.querySelector('#map .node.current text').textContent};""")


def problems(browser) -> list[str]:
    """Console errors and Content-Security-Policy reports of the page."""
    return [
        e["message"]
        for e in browser.get_log("browser")
        if e["level"] == "SEVERE" or "Content Security Policy" in e["message"]
    ]


def screenshot(browser, tmp_path: Path, name: str) -> Path:
    browser.set_window_size(1500, min(4000, browser.execute_script("return document.body.scrollHeight") + 40))
    out = tmp_path / f"{name}.png"
    assert browser.save_screenshot(str(out))
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a page, not a blank
    keep = os.environ.get("ODYSSEY_VIEW_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(out, Path(keep) / out.name)
    browser.set_window_size(1500, 1200)
    return out


def test_slider_timeline_keys_and_filters_show_the_right_steps(browser, run, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    traj = lines(run / "trajectory.jsonl")
    page = write_view(run, tmp_path / "view.html")
    open_page(browser, page)
    assert problems(browser) == []
    assert shown_step(browser) == 0 and detail(browser)["head"] == "Start"

    slider = browser.find_element("id", "slider")  # a click on the slider's track, then the arrow keys
    ActionChains(browser).move_to_element_with_offset(slider, slider.size["width"] // 4, 0).click().perform()
    k = shown_step(browser)
    assert 0 < k < len(traj) - 1
    slider.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    assert shown_step(browser) == k + 2
    d = detail(browser)
    assert d["head"] == f"Step {k + 2}" and d["action"] == traj[k + 2]["action"] and d["area"] == traj[k + 2]["area"]

    timeline = browser.find_element("id", "tl-wrap")  # the timeline: a click moves there
    ActionChains(browser).move_to_element_with_offset(timeline, timeline.size["width"] // 4, 0).click().perform()
    t = shown_step(browser)
    assert abs(t - len(traj) * 3 // 4) <= len(traj) // 50
    browser.find_element("tag name", "body").send_keys(Keys.ARROW_LEFT)
    assert shown_step(browser) == t - 1 and detail(browser)["action"] == traj[t - 1]["action"]

    deaths = [i for i, r in enumerate(traj) if any(e.get("kind") == "agent_died" for e in r.get("events", ()))]
    assert deaths, "the fixture run should contain a death"
    browser.find_element("id", "first").click()
    browser.find_element("css selector", "#filters [data-filter=died]").click()
    rows = browser.execute_script("return [...document.querySelectorAll('#list-rows .vrow')].map(r => +r.dataset.i)")
    assert rows == deaths
    browser.find_element("id", "next").click()  # with a filter on, next goes to the next match
    assert shown_step(browser) == deaths[0] and "died" in detail(browser)["pills"]
    screenshot(browser, tmp_path, "viewer-deaths")

    browser.find_element("id", "clear").click()
    search = browser.find_element("id", "search")
    search.send_keys("craft")
    crafts = [i for i, r in enumerate(traj) if "craft" in r.get("action", "").lower()]
    browser.implicitly_wait(0)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10).until(lambda b: b.find_element("id", "list-count").text.startswith(f"{len(crafts)} of"))
    rows = browser.execute_script("return [...document.querySelectorAll('#list-rows .vrow')].map(r => +r.dataset.i)")
    assert rows == crafts[: len(rows)] and rows
    assert problems(browser) == []


def test_the_state_panels_follow_the_step(browser, run, tmp_path):
    traj = lines(run / "trajectory.jsonl")
    page = write_view(run, tmp_path / "view.html")
    quest = next(i for i, r in enumerate(traj) if i and r.get("quest"))
    open_page(browser, page, f"#step={quest}")
    assert shown_step(browser) == quest
    status = browser.find_element("id", "status").text
    q = traj[quest]["quest"]
    assert f"{q['completed']} of {q['total']} stages" in status
    assert all(c["title"] in status for c in q["current"])
    health = int(traj[quest]["observation"].split("My health is at ")[1].split(".")[0])
    assert f"HEALTH {health} /" in status.upper()
    assert browser.execute_script("return document.querySelectorAll('#map .node').length") >= 8


def test_markup_written_by_a_model_stays_text_in_the_browser(browser, run, tmp_path):
    evil, step = poison(run, tmp_path / "evil")
    page = write_view(evil, tmp_path / "evil.html")
    open_page(browser, page, f"#step={step}")
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    d = detail(browser)
    assert d["action"] == EVIL
    text = browser.execute_script("return document.getElementById('detail').textContent")
    assert text.count(EVIL) >= 3  # reasoning, action, feedback (and the events)
    assert EVIL in browser.find_element("id", "status").get_attribute("textContent")  # nearby, quest
    browser.find_element("css selector", "#qa-body tr.clickable").click()
    assert EVIL in browser.find_element("id", "qa-body").get_attribute("textContent")
    assert EVIL in browser.title
    assert browser.execute_script("return window.__pwned === undefined")
    assert problems(browser) == []
    screenshot(browser, tmp_path, "viewer-markup")


def test_the_dependency_graph_opens_and_its_legend_filters_arcs(browser, run, tmp_path):
    page = write_view(run, tmp_path / "view.html")
    open_page(browser, page)
    assert browser.execute_script("return document.querySelectorAll('#deps-body path').length") == 0  # lazy
    from selenium.webdriver.support.ui import WebDriverWait

    browser.find_element("css selector", "#deps > summary").click()
    # the diagram is built when first opened: on a loaded machine that takes a moment
    box = WebDriverWait(browser, 30).until(
        lambda b: b.find_elements("css selector", "#deps-body input[type=checkbox]")
    )[0]
    pair = box.get_attribute("data-pair")
    count = (
        f"return [...document.querySelectorAll('#deps-body path[data-pair]')].filter(p => "
        f"p.getAttribute('data-pair') === {pair!r} && getComputedStyle(p).display !== 'none').length"
    )
    assert browser.execute_script(count) > 0
    box.click()
    assert browser.execute_script(count) == 0  # the legend's handler ran (the page's policy allows it)
    tip = browser.execute_script("""const p = document.querySelector('#deps-body path[data-pair]');
        p.dispatchEvent(new MouseEvent('click', {bubbles: true})); return p.querySelector('title').textContent;""")
    used = int(tip.split(" -> ")[1].split(":")[0].split("@")[-1].split()[0])
    assert shown_step(browser) == used  # a click on an arc shows the step that used the object
    assert problems(browser) == []


def test_a_multi_agent_cell_has_an_agent_selector(browser, tmp_path):
    pytest.importorskip("pettingzoo", reason='multi-agent cells need the "multiagent" extra')
    from odyssey_eval.runner import run_multi_cell

    from .conftest import cell, quiet

    cfg = cell(tmp_path, max_steps=40, tutorial=False, qa={"enabled": False})
    del cfg["agent"]
    cfg["agents"] = ["oracle", "random"]
    path = run_multi_cell(cfg, log=quiet).path
    page = write_view(path, tmp_path / "cell.html")
    open_page(browser, page, "#step=5")
    buttons = browser.find_elements("css selector", "#agents button")
    assert [b.get_attribute("data-agent") for b in buttons] == ["player_0", "player_1"]
    traj = lines(path / "agents" / "player_1" / "trajectory.jsonl")
    buttons[1].click()
    assert buttons[1].get_attribute("aria-pressed") == "true"
    assert shown_step(browser) == 5
    d = detail(browser)
    assert d["action"] == traj[5]["action"] and d["area"] == traj[5]["area"]
    assert browser.execute_script("return document.querySelectorAll('#map circle.other').length") == 1
    hash_ = browser.execute_script("return new Promise(r => setTimeout(() => r(location.hash), 300))")
    assert "agent=player_1" in hash_
    invalid = [i for i, r in enumerate(traj) if r.get("invalid")]
    assert browser.execute_script(
        "return [...document.querySelectorAll('#filters [data-filter=invalid] .count')].map(e => +e.textContent)"
    ) == [len(invalid)]
    assert problems(browser) == []
    screenshot(browser, tmp_path, "viewer-multi")


def test_flags_name_the_filters_the_page_offers():
    """The page reads the flag bits from the data; each filter it offers must have one."""
    js = (Path(__file__).resolve().parents[2] / "odyssey_eval" / "viewer" / "static" / "viewer.js").read_text()
    for key in ("invalid", "failed", "died", "quest", "reward", "moved", "level_up", "malformed", "qa", "tutorial"):
        assert key in FLAGS and f"F.{key}" in js
