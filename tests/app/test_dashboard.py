"""The failure dashboard: off without its token, 401 without the right one, and a page
that a real headless Chromium renders with its plot and its rows."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.app.dashboard import token_matches
from bot.app.dashboard_page import render_dashboard
from bot.app.evidence_hooks import failure_index
from bot.evidence.records import JobRecord
from bot.evidence.trends import trends
from bot.store.base import WaiverRow
from tests.app.e2e_kit import LiveApp, live_app
from tests.evidence.factories import NOW, ci_log, job, pcp_oom_log

TOKEN = "dashboard-token-123"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def _jobs(oom: bytes) -> list[JobRecord]:
    return [
        job("t1", log=oom, hours_ago=30, commit="a" * 40),
        job("t2", log=oom, hours_ago=6, commit="b" * 40),
        job("f1", name="linters", log=ci_log("pytorch-gha-cxx-compile-error.log"),
            branch="fix", pr=7, hours_ago=200, commit="d" * 40),
        job("f2", name="linters", conclusion="success", branch="fix", pr=7, hours_ago=199,
            commit="d" * 40, attempt=2),
        job("n1", name="docs <script>", log=b"ModuleNotFoundError: No module named 'x'\n",
            branch="docs", pr=9, hours_ago=400, commit="e" * 40, url="javascript:alert(1)"),
    ]


def test_trends_name_broken_trunk_flaky_and_new() -> None:
    found = trends(_jobs(pcp_oom_log()), now=NOW)
    kinds = {f.job.job_id: f.kind for f in found.failures}
    assert kinds == {"t1": "broken trunk", "t2": "broken trunk", "f1": "flaky", "n1": "new"}
    assert [f.job.job_id for f in found.failures] == ["t2", "t1", "f1", "n1"]
    assert sum(sum(w.counts.values()) for w in found.weeks) == 4
    top = found.signatures[0]
    assert top.total == 2 and sum(top.per_day) == 2 and len(top.per_day) == 28


def test_the_page_escapes_what_the_index_holds() -> None:
    page = render_dashboard(trends(_jobs(pcp_oom_log()), now=NOW), [
        WaiverRow(1, "o/r", 7, "timeout-bump", None, "<img src=x onerror=alert(1)>", "amy",
                  NOW.timestamp())], now=NOW)
    assert "<script>" not in page and "docs &lt;script&gt;" in page
    assert "javascript:" not in page and "onerror=alert(1)>" not in page
    assert page.count('<circle class="mark"') >= 3 and 'id="signature-plot"' in page


def test_token_in_a_bearer_or_basic_header() -> None:
    basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    assert token_matches(f"Bearer {TOKEN}", TOKEN)
    assert token_matches(f"Basic {basic}", TOKEN)
    assert not token_matches("Bearer nope", TOKEN)
    assert not token_matches(f"Basic {base64.b64encode(b'x:nope').decode()}", TOKEN)
    assert not token_matches("Basic !!!", TOKEN) and not token_matches(None, TOKEN)
    assert not token_matches(f"Token {TOKEN}", TOKEN)


def _seed(app: LiveApp) -> None:
    ctx = app.handler.context
    ctx.clock = lambda: (NOW + timedelta(hours=1)).timestamp()
    index = failure_index(ctx)
    for record in _jobs(pcp_oom_log()):
        index.upsert_job(record, now=NOW)
    app.store.add_waiver("vllm-project/vllm", 7, "timeout-bump", "tests/*.py",
                         "known slow runner", "amy", NOW.timestamp())


def test_without_a_token_there_is_no_dashboard(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app, app.session.get(f"{app.url}/") as resp:
            assert resp.status == 404

    asyncio.run(scenario())


def test_the_token_is_required(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path, dashboard_token=TOKEN) as app:
            _seed(app)
            for headers in ({}, {"Authorization": "Bearer wrong"},
                            {"Authorization": "Basic " + base64.b64encode(b"u:wrong").decode()}):
                async with app.session.get(f"{app.url}/", headers=headers) as resp:
                    assert resp.status == 401
                    assert "Basic" in resp.headers["WWW-Authenticate"]
                    assert "timeout-bump" not in await resp.text()
            async with app.session.get(f"{app.url}/",
                                       headers={"Authorization": f"Bearer {TOKEN}"}) as resp:
                assert resp.status == 200
                assert "script-src" not in resp.headers["Content-Security-Policy"]
                page = await resp.text()
            assert "known slow runner" in page and "cuda-oom" in page

    asyncio.run(scenario())


@pytest.fixture
def chromium() -> Iterator[Any]:
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        if os.environ.get("CI"):
            pytest.fail("chromium and chromium-driver must be installed under CI (.ci/run)")
        pytest.skip("Debian chromium / chromium-driver not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="ci-stability-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", "--window-size=1200,1400", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_chromium_renders_the_plot_and_the_rows(tmp_path: Path, chromium: Any) -> None:
    from selenium.webdriver.common.by import By

    shot = tmp_path / "dashboard.png"

    def browse(url: str) -> dict[str, Any]:
        # The page wants the token; the browser sends it on every request it makes.
        chromium.execute_cdp_cmd("Network.enable", {})
        chromium.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                                 {"headers": {"Authorization": f"Bearer {TOKEN}"}})
        chromium.get(url)
        find = chromium.find_elements
        chromium.save_screenshot(str(shot))
        return {
            "title": chromium.title,
            "marks": len(find(By.CSS_SELECTOR, "svg#signature-plot circle.mark")),
            "lines": len(find(By.CSS_SELECTOR, "svg#signature-plot polyline.series")),
            "failures": [r.text for r in find(By.CSS_SELECTOR, "#failures tr.failure")],
            "weeks": len(find(By.CSS_SELECTOR, "#weeks tr.week")),
            "waivers": [r.text for r in find(By.CSS_SELECTOR, "#waivers tr.waiver")],
            "plot_width": find(By.CSS_SELECTOR, "svg#signature-plot")[0].size["width"],
        }

    async def scenario() -> dict[str, Any]:
        async with live_app(tmp_path, dashboard_token=TOKEN) as app:
            _seed(app)
            return await asyncio.to_thread(browse, f"{app.url}/")

    seen = asyncio.run(scenario())
    assert seen["title"] == "CI failures — ci-stability"
    assert seen["marks"] >= 3
    assert seen["lines"] == 3  # the OOM, the compile error, the import error
    failures = seen["failures"]
    assert len(failures) == 4
    assert "broken trunk" in failures[0] and "cuda-oom" in failures[0]
    assert any("flaky" in row for row in failures) and any("new" in row for row in failures)
    assert seen["weeks"] == 5 and seen["plot_width"] == 760
    assert "known slow runner" in seen["waivers"][0]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
