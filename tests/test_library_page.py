"""The library page (core.batch.index) in a real browser: headless Chromium driven by Selenium opens a page of
2,500 takes at once, plays the takes in view as animations (loading only theirs), filters by status,
duration and joints, sorts, and keeps warnings behind a badge.  Skips where Chromium or Selenium is absent
(``.ci/run`` installs both)."""

from __future__ import annotations

import shutil
import time

import pytest

from mocap_addon.core import load
from mocap_addon.core.batch.index import write_index
from mocap_addon.core.batch.plan import Job
from mocap_addon.core.batch.preview import motion_sidecar
from tests.conftest import SAMPLES

webdriver = pytest.importorskip("selenium.webdriver")
CHROMIUM, DRIVER = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="headless Chromium (chromium-driver) is absent")

TAKES = 2500
FAILED = 100  # every 25th take
WARNED = 250  # every 10th take


def library_page(folder) -> tuple[str, list[dict]]:
    """An output folder of ``TAKES`` takes (the two samples' animations and contact sheets, copied) and its
    page; the report lines."""
    sources = [load(SAMPLES / "walk_turn.bvh"), load(SAMPLES / "jog_wave.bvh")]
    drawn = []
    for number, clip in enumerate(sources):
        path = folder / f"sample{number}.motion.js"
        motion_sidecar(clip, path)
        drawn.append(path.read_bytes())
    takes, lines = [], []
    for number in range(TAKES):
        subject = f"{number // 25:03d}"
        name = f"{subject}/{subject}_{number % 25:02d}.bvh"
        job = Job(source=f"/library/{name}", name=name, relative=name, output=str(folder / name))
        status = "error" if number % 25 == 7 else "ok"
        frames, joints = 60 + 37 * (number % 50), 20 + number % 40
        line = {"status": status, "frames": frames, "fps": 30.0, "joints": joints, "error": None,
                "warnings": [f"warning {k} of take {number}" for k in range(1 + number % 3)] if number % 10 == 3
                else []}
        if status == "error":
            line.update(error=f"{name}: line 3: not a BVH file", frames=None, fps=None, joints=None)
        else:
            preview = folder / "previews" / name.replace(".bvh", ".png")
            preview.parent.mkdir(parents=True, exist_ok=True)
            preview.write_bytes(b"\x89PNG\r\n\x1a\n")  # the still, only linked
            preview.with_suffix("").with_suffix(".motion.js").write_bytes(drawn[number % 2])
        takes.append((job, line))
        lines.append(line)
    page = write_index(str(folder), takes, lambda job: "previews/" + job.relative.replace(".bvh", ".png"))
    return page, lines


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,900",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    yield driver
    driver.quit()


def wait_for(browser, script: str, seconds: float = 20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = browser.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"never true: {script}")


def shown(browser) -> list[dict]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.take')).filter(c => !c.hidden).map(c => "
        "({name: c.dataset.name, status: c.dataset.status, seconds: +c.dataset.seconds, joints: +c.dataset.joints,"
        " warnings: +c.dataset.warnings}))")


def set_value(browser, element_id: str, value: str, event: str = "input") -> None:
    browser.execute_script(f"var e = document.getElementById('{element_id}'); e.value = arguments[0];"
                           f"e.dispatchEvent(new Event('{event}'));", value)


@pytest.mark.slow
def test_the_page_of_2500_takes_loads_plays_and_filters(browser, tmp_path):
    page, lines = library_page(tmp_path)
    started = time.perf_counter()
    browser.get(f"file://{page}")
    wait_for(browser, "return document.readyState === 'complete'")
    assert time.perf_counter() - started < 15
    assert browser.execute_script("return document.querySelectorAll('.take').length") == TAKES
    # the first cards play: their frames move on, drawn in colour
    wait_for(browser, "return document.getElementById('take-0').motion !== undefined")
    first = wait_for(browser, "return document.getElementById('take-0').dataset.frame")
    wait_for(browser, f"return document.getElementById('take-0').dataset.frame !== '{first}'")
    inked = browser.execute_script(
        "var c = document.querySelector('#take-0 canvas'), d = c.getContext('2d').getImageData(0, 0, c.width,"
        " c.height).data, n = 0; for (var i = 3; i < d.length; i += 4) n += d[i] > 0; return n")
    assert inked > 200
    # lazily: only the cards near the view asked for their animation
    requested = browser.execute_script("return document.querySelectorAll('.take[data-requested]').length")
    assert 0 < requested < 100
    # filters
    set_value(browser, "status", "error", "input")
    assert len(shown(browser)) == FAILED and {c["status"] for c in shown(browser)} == {"error"}
    set_value(browser, "status", "warnings", "input")
    assert len(shown(browser)) == WARNED and all(c["warnings"] > 0 for c in shown(browser))
    set_value(browser, "status", "", "input")
    set_value(browser, "min-seconds", "30")
    set_value(browser, "max-joints", "30")
    expected = [line for line in lines if line["status"] == "ok" and line["frames"] / 30 >= 30 and line["joints"] <= 30]
    cards = shown(browser)
    assert len(cards) == len(expected) > 0 and all(c["seconds"] >= 30 and c["joints"] <= 30 for c in cards)
    assert browser.find_element("id", "shown").text == f"{len(expected)} shown"
    set_value(browser, "min-seconds", "")
    set_value(browser, "max-joints", "")
    # sorting
    set_value(browser, "sort", "-seconds", "change")
    seconds = [c["seconds"] for c in shown(browser)]
    assert seconds == sorted(seconds, reverse=True) and len(seconds) == TAKES
    # the cards now in view load and play in their turn
    top = browser.execute_script("return document.querySelector('.take').id")
    wait_for(browser, f"return document.getElementById('{top}').dataset.frame !== undefined")
    # warnings folded behind a badge that opens
    badge = browser.find_element("css selector", "#take-13 .warnings summary")
    assert badge.text == "2 warnings"
    assert not browser.find_element("css selector", "#take-13 .warnings div").is_displayed()
    browser.execute_script("arguments[0].scrollIntoView(); arguments[0].click()", badge)
    assert browser.find_element("css selector", "#take-13 .warnings div").is_displayed()
    browser.save_screenshot(str(tmp_path / "page.png"))
