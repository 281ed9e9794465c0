"""The built site as a reader sees it: every page of _build/html in headless Chromium.

Run after the build (``make book``; ``.ci/run browser``). For every page of the table of contents:
no console errors from our own assets, every image loaded, every glued value rendered, no raw
tracebacks / stderr blocks / progress-bar residue in outputs, every internal link (and its
anchor) resolves; chapter pages have the launch buttons, the downloads, the re-run box and an
anchor per claim; the dashboard filters and links to claims. A full-page screenshot of each page
goes to ``_build/screenshots/``.

Needs Chromium (or Chrome) and chromedriver (Debian: ``apt-get install chromium chromium-driver``)
and selenium; nothing is downloaded (the driver is given explicitly, so Selenium Manager stays
idle). Without a browser or a built site the tests skip with the reason, unless
``NLCL_REQUIRE_BROWSER=1`` (set by .ci/run and the workflow), where they fail.
"""

from __future__ import annotations

import base64
import functools
import html.parser
import json
import os
import re
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from nlcl.harness.notebook import chapters, toc_files
from nlcl.harness.outputs import LONG_OUTPUT

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("NLCL_BUILD_DIR", ROOT / "_build"))
SITE = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"
WIDTH = 1440  # a laptop's window: the dashboard uses the right margin from 1200 px on
REQUIRED = os.environ.get("NLCL_REQUIRE_BROWSER", "") not in ("", "0")
PAGES = toc_files(ROOT)
CHAPTERS = set(chapters(ROOT))
#: A plain-text result (not a print) longer than this is a table that should be an HTML table.
MAX_PLAIN_RESULT = 10
#: Output residue that must not reach a page: tracebacks, tqdm bars, ANSI escapes, warnings.
RESIDUE = [
    ("a traceback", re.compile(r"Traceback \(most recent call last\)")),
    ("a progress bar", re.compile(r"\d+%\|[^|\n]{0,80}\|")),
    ("a progress bar", re.compile(r"\d+(\.\d+)?\s?(it|s)/(s|it)\]")),
    ("an ANSI escape", re.compile(r"\x1b\[|\[0;3\dm")),
    ("a Python warning", re.compile(r"\.py:\d+: \w*Warning:")),
]


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


def find_browser() -> tuple[str, str] | None:
    """(browser binary, chromedriver) from NLCL_CHROME / NLCL_CHROMEDRIVER, Debian's chromium,
    or Chrome with the runner's chromedriver ($CHROMEWEBDRIVER on GitHub's images)."""
    binary = os.environ.get("NLCL_CHROME") or next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
            if shutil.which(n)
        ),
        None,
    )
    driver = os.environ.get("NLCL_CHROMEDRIVER") or shutil.which("chromedriver")
    web = os.environ.get("CHROMEWEBDRIVER")
    if not driver and web and Path(web, "chromedriver").is_file():
        driver = str(Path(web, "chromedriver"))
    return (binary, driver) if binary and driver else None


@pytest.fixture(scope="module")
def server():
    if not (SITE / "index.html").is_file():
        _unavailable(f"no built site at {SITE}: run `make book` first")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the test output readable
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(SITE)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed (it is in the [test] extra)")
    found = find_browser()
    if not found:
        _unavailable(
            "no Chromium/Chrome with chromedriver: apt-get install chromium chromium-driver (see README)"
        )
    binary, chromedriver = found
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={WIDTH},900",
        "--hide-scrollbars",
        "--lang=en-US",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    browser.set_page_load_timeout(60)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield browser
    browser.quit()


class _Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)


@functools.cache
def _fetch(url: str) -> tuple[int, frozenset[str]]:
    """HTTP status of an internal URL and, for HTML, the element ids it defines."""
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            body = resp.read()
            status = resp.status
            kind = resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, frozenset()
    if "html" not in kind:
        return status, frozenset()
    parser = _Ids()
    parser.feed(body.decode("utf-8", "replace"))
    return status, frozenset(parser.ids)


def _load(driver, url: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop the previous page's messages
    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    # Load every image now (lazy ones too) and wait for them.
    driver.execute_script("document.querySelectorAll('img').forEach(function(i){ i.loading = 'eager'; });")
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script(
            "return Array.from(document.images).every(function(i){ return i.complete; })"
        )
    )


def _screenshot(driver, name: str) -> Path:
    """A full-page screenshot (at most 30,000 px tall): the viewport is made as tall as the page,
    which keeps the layout of a normal window (Chrome's captureBeyondViewport shifts it)."""
    height = int(driver.execute_script("return Math.min(document.documentElement.scrollHeight, 30000)"))
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": max(height, 900), "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    path = SCREENSHOTS / f"{name.replace('/', '__')}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def _page_url(server: str, page: str) -> str:
    return f"{server}/{page}.html"


@pytest.mark.parametrize("page", PAGES)
def test_page_as_a_reader_sees_it(page, server, driver):
    if not (SITE / f"{page}.html").is_file():
        if REQUIRED:
            pytest.fail(f"{page}.html was not built")
        pytest.skip(f"{page}.html was not built (a partial `nlcl book --only` build?)")
    url = _page_url(server, page)
    _load(driver, url)
    problems: list[str] = []

    # Console errors caused by our own assets (external resources, e.g. MathJax from its CDN when
    # offline, are not ours).
    for entry in driver.get_log("browser"):
        if (
            entry["level"] == "SEVERE"
            and server in entry["message"]
            and "favicon.ico" not in entry["message"]
        ):
            problems.append(f"console error: {entry['message']}")

    # Every image loads.
    for src, width in driver.execute_script(
        "return Array.from(document.images).map(function(i){ return [i.currentSrc || i.src, i.naturalWidth]; })"
    ):
        if src.startswith(server) and width == 0:
            problems.append(f"image did not load: {src}")

    # Every glued value is rendered; no unresolved roles.
    empty_glue = driver.execute_script(
        "return Array.from(document.querySelectorAll('.pasted-text, .pasted-inline'))"
        ".filter(function(e){ return !e.textContent.trim(); }).length"
    )
    if empty_glue:
        problems.append(f"{empty_glue} empty glue placeholder(s)")
    article = driver.execute_script(
        "var a = document.querySelector('article') || document.body; return a.innerText"
    )
    for marker in ("{glue:", "{glue}", "{doc}`", "{ref}`"):
        if marker in article:
            problems.append(f"unrendered role {marker!r} in the page text")
    problematic = driver.execute_script(
        "return document.querySelectorAll('.problematic, .system-message').length"
    )
    if problematic:
        problems.append(f"{problematic} Sphinx problem marker(s) (.problematic / .system-message)")

    # Outputs: no stderr blocks, tracebacks, progress bars or warnings.
    blocks = driver.execute_script(
        "return Array.from(document.querySelectorAll('.cell_output .output.stderr, .cell_output .output.traceback, "
        ".cell_output .output.error')).map(function(e){ return e.textContent.slice(0, 200); })"
    )
    problems += [f"stderr/traceback output block: {text!r}" for text in blocks]
    # Long printed outputs: tables belong in HTML tables, long prints in a collapsed note.
    long_outputs = driver.execute_script(
        "return Array.from(document.querySelectorAll('.cell_output .output.text_plain pre, .cell_output .output.stream pre'))"
        ".filter(function(p){ return !p.closest('details'); })"
        ".map(function(p){ return [p.closest('.output').classList.contains('stream'), p.textContent]; })"
    )
    for is_stream, text in long_outputs:
        n = len(text.strip().splitlines())
        if n > (LONG_OUTPUT if is_stream else MAX_PLAIN_RESULT):
            problems.append(
                f"a long plain-text {'print' if is_stream else 'result'} ({n} lines): {text[:120]!r}"
            )
    outputs = driver.execute_script(
        "return Array.from(document.querySelectorAll('.cell_output')).map(function(e){ return e.textContent; }).join('\\n')"
    )
    for what, pattern in RESIDUE:
        match = pattern.search(outputs)
        if match:
            problems.append(
                f"{what} in an output: {outputs[max(0, match.start() - 60) : match.end() + 60]!r}"
            )

    # Internal links resolve, anchors included.
    hrefs = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(function(a){ return a.href; })"
    )
    own_ids = set(
        driver.execute_script(
            "return Array.from(document.querySelectorAll('[id]')).map(function(e){ return e.id; })"
        )
    )
    for href in sorted(set(hrefs)):
        if not href.startswith(server):
            continue
        target, _, fragment = href.partition("#")
        fragment = urllib.parse.unquote(fragment)
        if target == url.partition("#")[0]:
            if fragment and fragment not in own_ids:
                problems.append(f"link to a missing anchor on this page: #{fragment}")
            continue
        status, ids = _fetch(target)
        if status != 200:
            problems.append(f"broken internal link ({status}): {href}")
        elif fragment and target.endswith(".html") and fragment not in ids:
            problems.append(f"link to a missing anchor: {href}")

    if Path(page).name in CHAPTERS:
        problems += _chapter_checks(driver, Path(page).name)

    shot = _screenshot(driver, page)
    assert shot.stat().st_size > 0
    assert not problems, f"{page}: " + "\n  ".join(problems)


def _chapter_checks(driver, chapter: str) -> list[str]:
    problems = []
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = config["repository"]["url"].rstrip("/").split("github.com/")[1]
    links = driver.execute_script(
        "return Array.from(document.querySelectorAll('.dropdown-launch-buttons a, .dropdown-download-buttons a'))"
        ".map(function(a){ return a.href || ''; })"
    )
    binder = [h for h in links if "mybinder.org" in h]
    colab = [h for h in links if "colab.research.google.com" in h]
    if not (
        binder
        and f"/v2/gh/{repo}/notebooks?urlpath=" in binder[0]
        and binder[0].endswith(f"book/{chapter}.ipynb")
    ):
        problems.append(f"no Binder launch button for book/{chapter}.ipynb on the notebooks branch: {binder}")
    if not (colab and colab[0].endswith(f"/github/{repo}/blob/notebooks/book/{chapter}.ipynb")):
        problems.append(f"no Colab launch button for book/{chapter}.ipynb: {colab}")
    if not any(h.endswith(f"_sources/book/{chapter}.ipynb") for h in links):
        problems.append("no download button for the executed .ipynb")
    if not any(h.endswith(f"/{chapter}.py") for h in links):
        problems.append("no download entry for the .py source in the download menu")
    if not driver.execute_script("return !!document.querySelector('.nlcl-rerun')"):
        problems.append("no 'Re-run this chapter' box")
    claims_file = BUILD / "claims" / f"{chapter}.json"
    ids = [r["id"] for r in json.loads(claims_file.read_text())] if claims_file.is_file() else []
    missing = [
        i
        for i in ids
        if not driver.execute_script("return !!document.getElementById(arguments[0])", f"claim-{i}")
    ]
    if missing:
        problems.append(f"claims without an anchor (#claim-<id>): {missing}")
    return problems


def test_dashboard_filters_sorts_and_links_to_claims(server, driver):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    page = next((p for p in PAGES if Path(p).name == "reproducibility"), None)
    if page is None or not (SITE / f"{page}.html").is_file():
        _unavailable("the reproducibility page was not built")
    records = [r for p in sorted((BUILD / "claims").glob("*.json")) for r in json.loads(p.read_text())]
    _load(driver, _page_url(server, page))
    rows = driver.find_elements(By.CSS_SELECTOR, "table.nlcl-claims tbody tr")
    assert len(rows) == len(records) > 0

    def visible():
        return [
            r for r in driver.find_elements(By.CSS_SELECTOR, "table.nlcl-claims tbody tr") if r.is_displayed()
        ]

    # Filter by status: the rows shown are exactly the claims with that verdict.
    statuses = sorted({r["status"] for r in records})
    for status in statuses:
        Select(driver.find_element(By.CSS_SELECTOR, '[data-nlcl-filter="status"]')).select_by_value(status)
        expected = sum(
            r["status"] == status or (r.get("full") or {}).get("status") == status for r in records
        )
        shown = visible()
        assert len(shown) == expected, status
        assert driver.find_element(By.CSS_SELECTOR, ".nlcl-shown").text.startswith(
            f"{expected} of {len(records)}"
        )
    # The verdict buttons do the same; "all" resets.
    driver.find_element(By.CSS_SELECTOR, '[data-nlcl-status=""]').click()
    assert len(visible()) == len(records)
    # Filter by chapter.
    chapter = records[0]["chapter"]
    Select(driver.find_element(By.CSS_SELECTOR, '[data-nlcl-filter="chapter"]')).select_by_value(chapter)
    assert len(visible()) == sum(r["chapter"] == chapter for r in records)
    Select(driver.find_element(By.CSS_SELECTOR, '[data-nlcl-filter="chapter"]')).select_by_value("")
    # Sort by claim id (second click: descending).
    heading = driver.find_element(By.CSS_SELECTOR, 'th[data-nlcl-sort="0"]')
    heading.click()
    ids = [r.find_element(By.CSS_SELECTOR, "td code").text for r in visible()]
    assert ids == sorted(ids, key=str.lower)
    heading.click()
    ids = [r.find_element(By.CSS_SELECTOR, "td code").text for r in visible()]
    assert ids == sorted(ids, key=str.lower, reverse=True)
    # The summary figure loaded.
    assert driver.execute_script(
        "var i = document.querySelector('img[src$=\"claims-summary.svg\"]'); return i && i.naturalWidth > 0"
    )
    # A claim's link opens its chapter at the claim's check.
    target = next(r for r in records if r["status"] != "pass") if statuses != ["pass"] else records[0]
    link = driver.find_element(By.CSS_SELECTOR, f'a[href$="#claim-{target["id"]}"]')
    driver.execute_script(
        "arguments[0].scrollIntoView({block: 'center'});", link
    )  # not under the sticky header
    link.click()
    WebDriverWait(driver, 30).until(
        lambda d: d.current_url.endswith(f"{target['chapter']}.html#claim-{target['id']}")
    )
    assert driver.execute_script("return !!document.getElementById(arguments[0])", f"claim-{target['id']}")
    _screenshot(driver, "reproducibility-link-target")


def test_find_browser_prefers_explicit_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("NLCL_CHROME", "/opt/chrome")
    monkeypatch.setenv("NLCL_CHROMEDRIVER", "/opt/chromedriver")
    assert find_browser() == ("/opt/chrome", "/opt/chromedriver")
