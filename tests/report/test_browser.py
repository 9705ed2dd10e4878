"""The HTML report in a real browser: headless Chromium renders it, opens an episode, and logs no error.

Chromium comes from the system packages (``.ci/run`` installs Debian's ``chromium`` in CI) and is
driven with Playwright's Python package against that system browser (no browser download). Where
either is missing the test is skipped with the reason, except in CI (``CI`` set), where it fails.
The screenshots are written to ``$PIBENCH_ARTIFACTS`` when set (CI keeps them), else to the test's
temporary folder: a test run never writes into the checkout.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from pytest_pibench import bundled_scenarios_dir, discover_scenarios, run_one
from pytest_pibench.report.html import write_html
from pytest_pibench.results.document import results_document

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
_MISSING = ([] if CHROMIUM else ["a Chromium binary (apt-get install chromium)"]) + (
    [] if importlib.util.find_spec("playwright") else ["the playwright package (pip install -e '.[dev]')"]
)
if _MISSING and not os.environ.get("CI"):
    pytest.skip(f"no browser test here: missing {' and '.join(_MISSING)}", allow_module_level=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert not _MISSING, f"CI must run the browser test: missing {_MISSING}"
    files = [f for f in discover_scenarios(bundled_scenarios_dir()) if "helpdesk" in f.parts or "retail" in f.parts]
    rows = [run_one(f, agent) for agent in ("oracle", "baseline:deny") for f in files[:30]]
    rows[0]["transcript"]["messages"].append({"role": "user", "content": "unbroken" * 300})  # one long token
    document = results_document(rows, {"agents": ["oracle", "baseline:deny"], "seed": 42}, 2.0)
    return write_html([("pibench-results.json", document)], tmp_path_factory.mktemp("report") / "report.html")


@pytest.mark.slow
def test_the_report_renders_opens_an_episode_and_logs_no_error(report: Path, tmp_path: Path):
    from playwright.sync_api import sync_playwright

    artifacts = Path(os.environ.get("PIBENCH_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(report.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=15_000)
        assert page.locator("svg.chart").count() == 6  # and by pressure style: the set holds helpdesk variants
        assert page.locator("#headline .card").count() == 2
        assert page.locator("table.confusion").count() == 2
        assert page.locator("tr.episode").count() == 60
        page.screenshot(path=str(artifacts / "report.png"))
        import json as _json

        data = _json.loads(page.locator("#pibench-data").text_content())
        overall = data["contenders"][1]["metrics"]["overall_score"]
        assert page.locator("#headline .card .big").nth(1).inner_text() == f"{overall * 100:.1f}%"

        page.locator("tr.episode").first.click()  # the episode with a 2,400-character token
        page.locator(".episode-detail").wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400  # long text wraps, the page stays put
        page.locator("tr.episode").first.click()  # closes it

        page.select_option("#f-outcome", "fail")  # the filters narrow the table
        assert page.locator("tr.episode").count() == 30
        assert "30 of 60 episodes" in page.locator("#episodes-count").inner_text()

        page.locator("tr.episode").first.click()  # one episode opens, rendered on demand
        detail = page.locator(".episode-detail")
        detail.wait_for()
        assert detail.locator(".msg").count() >= 2
        assert "Failed checks" in detail.inner_text() and detail.locator(".hidden-facts").count() == 1
        order = page.evaluate(
            """() => { const d = document.querySelector('.episode-detail');
                       const last = [...d.querySelectorAll('.msg')].pop();
                       return last.compareDocumentPosition(d.querySelector('.hidden-facts')) & 4; }"""
        )
        assert order == 4  # the hidden facts come after the transcript
        detail.screenshot(path=str(artifacts / "report-episode.png"))

        page.locator("th.sortable[data-key='sid']").click()  # sorting keeps every row, in order
        assert page.locator("tr.episode").count() == 30
        ids = page.locator("tr.episode td:nth-child(2)").all_inner_texts()
        assert ids == sorted(ids) and page.locator("th[aria-sort='ascending']").count() == 1
        browser.close()
    assert errors == []
    assert (artifacts / "report.png").stat().st_size > 10_000
