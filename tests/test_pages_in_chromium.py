"""The HTML reports open in a real browser: every page torpor writes (each `reproduce` area's,
the one report of `reproduce all`, `run --report` for an NVMe drive, CPUs, a UFS device and a
two-device machine, a sweep's) renders every plot in headless Chromium with its console free
of errors, and fits a 1280 px screen and a phone's 412 px one without scrolling sideways; run
pages list the run's notes, the sweep page its constraints and recommendation.

Chromium and ChromeDriver come from Debian's `chromium` and `chromium-driver` packages, which
`.ci/run` installs; elsewhere, without them, the test skips and says so.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from torpor.report.notes import run_notes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver; .ci/run installs them)",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    # A closed network: no background connections, updates or sync; a fresh profile.
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_window_size(1280, 1000)
    yield driver
    driver.quit()


def check_page(browser: object, page: Path, at_least: int) -> None:
    """Opens `page`: every <figure> holds a rendered SVG plot, scaled to the screen's width
    with its own proportions, and no console errors."""
    from selenium.webdriver.common.by import By

    source = page.read_text()
    # Self-contained: nothing is fetched.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", source), page
    expected = source.count("<figure>")
    assert expected >= at_least, page

    browser.get(page.as_uri())  # type: ignore[attr-defined]
    assert browser.title  # type: ignore[attr-defined]
    plots = browser.find_elements(By.CSS_SELECTOR, "figure > svg")  # type: ignore[attr-defined]
    assert len(plots) == expected, page
    for plot in plots:
        size = plot.size
        assert size["width"] > 100 and size["height"] > 40, (page, size)
        _, _, width, height = map(float, plot.get_dom_attribute("viewBox").split())
        assert size["height"] / size["width"] == pytest.approx(height / width, rel=0.02)
        # Drawn, not an empty frame: matplotlib paths for the axes, lines and bars.
        assert len(plot.find_elements(By.CSS_SELECTOR, "path")) > 3, page
    errors = [
        entry
        for entry in browser.get_log("browser")  # type: ignore[attr-defined]
        if entry["level"] == "SEVERE"
    ]
    assert errors == [], errors


#: Desktop and a phone (412 CSS px: a Pixel's width), as (width, height, mobile).
SCREENS = {"1280px": (1280, 900, False), "412px": (412, 915, True)}

#: Every page torpor writes (conftest.py's ``written_pages``) and the figures it has at least.
PAGES = {
    "run-nvme": 2,
    "run-cpu": 2,
    "run-ufs": 2,
    "run-two-devices": 5,
    "sweep": 1,
    "reproduce-apst": 5,
    "reproduce-teo": 5,
    "reproduce-devfreq": 1,
    "reproduce-hpb": 3,
    "reproduce-qos": 1,
    # The one report: each seed's key plot, and per system its IO decomposed and its lanes.
    "index": 5 + 2 * 2,
}


def screen(browser: Any, width: int, height: int, mobile: bool) -> None:
    """The pages open next on a screen ``width`` CSS px wide."""
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )


def fits(browser: Any, width: int) -> None:
    """The open page on a screen ``width`` CSS px wide: nothing wider than the screen (the
    page never scrolls sideways; a wide table scrolls in its own box), every figure inside
    it."""
    inner = browser.execute_script("return window.innerWidth")
    assert inner == width
    scroll = browser.execute_script("return document.scrollingElement.scrollWidth")
    assert scroll <= inner, f"the page is {scroll} px wide on a {inner} px screen"
    widest = browser.execute_script(
        "return Math.max(0, ...Array.from(document.querySelectorAll('figure > svg'),"
        " e => e.getBoundingClientRect().right))"
    )
    assert widest <= inner, f"a figure ends at {widest} px on a {inner} px screen"


@pytest.mark.parametrize("size", list(SCREENS))
@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_fits_the_screen(
    browser: Any, written_pages: dict[str, Any], name: str, size: str
) -> None:
    page, _ = written_pages[name]
    screen(browser, *SCREENS[size])
    check_page(browser, page, at_least=PAGES[name])
    fits(browser, SCREENS[size][0])


@pytest.mark.parametrize("name", [n for n in PAGES if n.startswith("run-")])
def test_a_run_page_lists_the_notes_the_cli_prints(
    browser: Any, written_pages: dict[str, Any], name: str
) -> None:
    from selenium.webdriver.common.by import By

    page, _ = written_pages[name]
    screen(browser, *SCREENS["1280px"])
    report = json.loads((page.parent / "results.json").read_text())
    notes = run_notes(report)
    assert notes, f"{name}: the scenario should make the run note something"
    browser.get(page.as_uri())
    shown = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "h2#notes + ul > li")]
    assert shown == notes


def test_the_sweep_page_shows_its_constraint_and_recommendation(
    browser: Any, written_pages: dict[str, Any]
) -> None:
    from selenium.webdriver.common.by import By

    page, _ = written_pages["sweep"]
    screen(browser, *SCREENS["1280px"])
    browser.get(page.as_uri())
    text = browser.find_element(By.TAG_NAME, "body").text
    # The sweep file's one constraint, p99.9 within 15 ms, and the CLI's recommendation.
    assert "Constraints: lat_p999_us <= 15,000.0." in text
    assert "Recommended (point " in text
