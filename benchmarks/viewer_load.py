"""How fast ``odyssey view``'s page is on long runs, in a real headless Chromium.

    python benchmarks/viewer_load.py [--steps 5000] [--repeats 5] [--game mossfall]

Plays a random-agent run of ``--steps`` play steps, and a copy of it where every step also carries what
a language-model agent writes (reasoning, the raw reply, tokens: about 0.8 KB more a step), builds
each page, and opens each in headless Chromium (Debian's ``chromium`` with its ``chromium-driver``)
``--repeats`` times from a fresh load. It prints, per page: the file size, the Python build time, and in
the browser the time from navigation start to the viewer being ready (data parsed, first step, map,
timeline and step list drawn), the load event, then the mean time to show another step (slider move:
detail, status, map, list, and the layout it forces) and to apply a filter. The same figures for a
300-step page, measured in the same run, are the baseline the ratios are taken against.

Target (issue 12): a 5,000-step run's page loads in under 2 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from odyssey_eval.runner import run_cell
from odyssey_eval.viewer import build_page

REASONING = (
    "I am in {area}. The last command did not get me closer to the iron bar the quest asks for, so I "
    "should look for ore in the marsh first, then come back to the furnace; the rat is weaker than me "
    "now that I hold the club. "
)


def play(out: Path, game: str, steps: int) -> Path:
    cfg = {
        "game": {"name": game},
        "agent": {"name": "random"},
        "llm": {"name": "none"},
        "seed": 0,
        "max_steps": steps,
        "tutorial": True,
        "eval": {
            "output_dir": str(out),
            "progress": False,
            "checkpoint_every": 10**9,
            "qa": {"enabled": True, "every": 1000, "world_knowledge": 5, "episodic": 3, "choices": 4},
        },
    }
    return run_cell(cfg, log=lambda _m: None).path


def with_model_text(run: Path, dest: Path) -> Path:
    """The run as a language-model agent would have written it: reasoning, raw reply and tokens per step."""
    shutil.copytree(run, dest)
    lines = (dest / "trajectory.jsonl").read_text().splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        r = json.loads(line)
        r["reasoning"] = REASONING.format(area=r["area"]) * 2
        r["raw"] = json.dumps({"reasoning": r["reasoning"], "action": r["action"]})
        r["tokens"] = [1800 + len(out), 60]
        out.append(json.dumps(r, separators=(",", ":")))
    (dest / "trajectory.jsonl").write_text("\n".join(out) + "\n")
    return dest


def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not binary or not driver:
        sys.exit("needs Debian's chromium and chromium-driver: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
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
        "--window-size=1500,1100",
        f"--user-data-dir={tempfile.mkdtemp()}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(driver))


MEASURE = """
const done = arguments[arguments.length - 1];
const nav = performance.getEntriesByType('navigation')[0];
const n = +document.getElementById('slider').max;
let t = performance.now();
for (let k = 0; k < 100; k++) {
  window.odysseyView.setStep((k * 7919) % (n + 1)); document.body.offsetHeight;
}
const step = (performance.now() - t) / 100;
t = performance.now();
for (let k = 0; k < 10; k++) {
  document.querySelector('#filters [data-filter=moved]').click(); document.body.offsetHeight;
}
const filter = (performance.now() - t) / 10;
done({ready: window.odysseyReadyAt, load: nav.loadEventEnd, init: window.odysseyView.ready, step, filter});
"""


def measure(browser, page: Path, repeats: int) -> dict[str, float]:
    from selenium.webdriver.support.ui import WebDriverWait

    rows = []
    for _ in range(repeats):
        browser.get("about:blank")
        browser.get(page.as_uri())
        WebDriverWait(browser, 60).until(
            lambda d: (
                d.execute_script("return document.readyState") == "complete"
                and d.execute_script("return document.documentElement.dataset.ready")
            )
        )
        browser.execute_script(
            "window.odysseyReadyAt = performance.getEntriesByType('mark')"
            ".find(m => m.name === 'odyssey-ready').startTime"
        )
        rows.append(browser.execute_async_script(MEASURE))
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--game", default="mossfall")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="viewer-bench-"))
    pages = {}
    for label, steps in (("baseline", 300), ("long", args.steps)):
        run = play(work / label, args.game, steps)
        for kind, path in (("random", run), ("model", with_model_text(run, work / f"{label}-model"))):
            t = time.perf_counter()
            html = build_page(path)
            built = time.perf_counter() - t
            page = work / f"{label}-{kind}.html"
            page.write_text(html, encoding="utf-8")
            pages[label, kind] = (page, built, len(html.encode()))
    browser = chromium()
    try:
        results = {key: measure(browser, page, args.repeats) for key, (page, _, _) in pages.items()}
    finally:
        browser.quit()
    print(f"viewer pages of {args.game}, random agent, seed 0; Chromium headless, median of {args.repeats} loads")
    print(
        f"{'page':<22}{'size MB':>9}{'build s':>9}{'ready ms':>10}{'load ms':>9}{'init ms':>9}"
        f"{'step ms':>9}{'filter ms':>10}"
    )
    for (label, kind), (_, built, size) in pages.items():
        r = results[label, kind]
        steps = 300 if label == "baseline" else args.steps
        print(
            f"{f'{steps} steps, {kind}':<22}{size / 1e6:>9.2f}{built:>9.2f}{r['ready']:>10.0f}{r['load']:>9.0f}"
            f"{r['init']:>9.0f}{r['step']:>9.2f}{r['filter']:>10.2f}"
        )
    for kind in ("random", "model"):
        a, b = results["long", kind], results["baseline", kind]
        print(
            f"{kind}: {args.steps} steps / 300 steps: ready x{a['ready'] / b['ready']:.2f}, "
            f"step x{a['step'] / b['step']:.2f}; target: ready < 2000 ms -> "
            f"{'met' if a['ready'] < 2000 else 'NOT met'} ({a['ready']:.0f} ms)"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
