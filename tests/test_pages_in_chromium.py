"""The HTML reports open in a real browser: headless Chromium renders every plot and its
console stays free of errors.

Chromium and ChromeDriver come from Debian's `chromium` and `chromium-driver` packages, which
`.ci/run` installs; elsewhere, without them, the test skips and says so.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver; .ci/run installs them)",
)

SCENARIO = Path(__file__).parent.parent / "scenarios" / "apst-sn530-workflow7.toml"
SWEEP = Path(__file__).parent.parent / "scenarios" / "apst-sn530-sweep.toml"


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
    """Opens `page`: every <figure> holds a rendered SVG plot, and no console errors."""
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
        assert size["width"] > 100 and size["height"] > 100, (page, size)
        # Drawn, not an empty frame: matplotlib paths for the axes, lines and bars.
        assert len(plot.find_elements(By.CSS_SELECTOR, "path")) > 3, page
    errors = [
        entry
        for entry in browser.get_log("browser")  # type: ignore[attr-defined]
        if entry["level"] == "SEVERE"
    ]
    assert errors == [], errors


def test_the_reproduction_page(browser: object, cli, tmp_path: Path) -> None:
    assert cli("reproduce", "apst", "--out", str(tmp_path)).exit_code == 0
    # Power, mean and p99.9 latency per workflow, the power-state timeline, the latency CDF.
    check_page(browser, tmp_path / "report.html", at_least=5)


def test_the_run_page(browser: object, cli, tmp_path: Path) -> None:
    assert cli("run", str(SCENARIO), "--report", str(tmp_path)).exit_code == 0
    check_page(browser, tmp_path / "report.html", at_least=2)


def test_the_sweep_page(browser: object, cli, tmp_path: Path) -> None:
    page = tmp_path / "sweep.html"
    assert cli("sweep", str(SWEEP), "--report", str(page)).exit_code == 0
    check_page(browser, page, at_least=1)


def test_the_cpu_run_page(browser: object, cli, tmp_path: Path) -> None:
    scenario = SCENARIO.parent / "cpu-gs101-governors.toml"
    assert cli("run", str(scenario), "--report", str(tmp_path)).exit_code == 0
    # Idle misses per governor, residency per state.
    check_page(browser, tmp_path / "report.html", at_least=2)


def test_the_teo_reproduction_page(browser: object, cli, tmp_path: Path) -> None:
    assert cli("reproduce", "teo", "--out", str(tmp_path)).exit_code == 0
    # Too deep, too shallow, power, wake-up latency, residency per state.
    check_page(browser, tmp_path / "report.html", at_least=5)


def test_the_devfreq_reproduction_page(browser: object, cli, tmp_path: Path) -> None:
    assert cli("reproduce", "devfreq", "--out", str(tmp_path)).exit_code == 0
    # The clock timeline of the fio cases (the Pixel traces' only with --traces).
    check_page(browser, tmp_path / "report.html", at_least=1)


def test_the_ufs_run_page(browser: object, cli, tmp_path: Path) -> None:
    scenario = tmp_path / "ufs.toml"
    scenario.write_text(
        '[platform.ufs]\npreset = "samsung-eufs31-512gb"\n[workload]\n[[workload.job]]\n'
        'name = "r"\nrw = "randread"\nbs = "4k"\nrate_iops = 50\n[run]\nduration = "2s"\n'
    )
    assert cli("run", str(scenario), "--report", str(tmp_path / "r")).exit_code == 0
    # The latency CDF and the host's clock over time.
    check_page(browser, tmp_path / "r" / "report.html", at_least=2)
