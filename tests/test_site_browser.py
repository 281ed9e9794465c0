"""The built site as a reader sees it: every page of _build/html in headless Chromium.

Run after the build (``make book``; ``.ci/run browser``). For every page of the table of contents:
no console errors from our own assets, every image loaded, every glued value rendered, no raw
tracebacks / stderr blocks / progress-bar residue in outputs, every internal link (and its
anchor) resolves; math is typeset by MathJax served from the site itself (no raw ``\\(`` left,
nothing loaded from a CDN); every glyph of the text renders in the browser's fonts (no empty
boxes); chapter pages have the launch buttons, the downloads, the re-run box and an anchor per
claim; the dashboard filters and links to claims, and at a 1280 × 800 window its table shows the
claim, chapter and both verdicts without horizontal scrolling. A full-page screenshot of each page
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

from nlcl.harness.run.notebook import chapters, toc_files
from nlcl.harness.site.outputs import LONG_OUTPUT

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
            "no Chromium/Chrome with chromedriver: apt-get install chromium chromium-driver (see book/using.md, CI)"
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

    problems += _math_problems(driver, server)
    problems += [f"a glyph the fonts lack (an empty box): {g}" for g in _missing_glyphs(driver)]

    if Path(page).name in CHAPTERS:
        problems += _chapter_checks(driver, Path(page).name)

    shot = _screenshot(driver, page)
    assert shot.stat().st_size > 0
    assert not problems, f"{page}: " + "\n  ".join(problems)


#: Waits for MathJax (when the page loads it) to finish typesetting; answers what happened.
_WAIT_FOR_MATHJAX = """
var done = arguments[arguments.length - 1];
var mj = window.MathJax;
if (!mj || !mj.startup || !mj.startup.promise) { done("no MathJax"); return; }
mj.startup.promise.then(function () { done("typeset"); }, function (e) { done("error: " + e); });
"""

#: Text on the page (code and MathJax's own output aside) that still reads as TeX: \( or \[, or a
#: TeX command such as \frac or \mathbb.
_RAW_TEX = r"""
var root = document.querySelector('article') || document.body;
var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
var found = [];
while (walker.nextNode()) {
  var node = walker.currentNode, el = node.parentElement;
  if (!el || el.closest('pre, code, script, style, textarea, mjx-container, .highlight')) continue;
  var i = node.data.search(/\\(?:[(\[]|[A-Za-z]{2,})/);
  if (i >= 0) found.push(node.data.slice(Math.max(0, i - 40), i + 40));
}
return found;
"""


def _math_problems(driver, server: str) -> list[str]:
    """MathJax comes from this site, and where the page has math it is typeset: every math
    element holds MathJax's output (``mjx-container``) and no raw ``\\(`` / ``\\[`` or TeX command
    (``\\frac``, ``\\mathbb`` …) is left as text outside code."""
    problems = []
    sources = driver.execute_script(
        "return Array.from(document.scripts).map(function(s){ return s.src; })"
        ".filter(function(s){ return /mathjax/i.test(s); })"
    )
    problems += [f"MathJax loaded from another site: {src}" for src in sources if not src.startswith(server)]
    state = driver.execute_async_script(_WAIT_FOR_MATHJAX)
    n_math = driver.execute_script("return document.querySelectorAll('.math').length")
    untypeset = driver.execute_script(
        "return Array.from(document.querySelectorAll('.math'))"
        ".filter(function(e){ return !e.querySelector('mjx-container'); })"
        ".map(function(e){ return e.textContent.slice(0, 80); })"
    )
    raw = driver.execute_script(_RAW_TEX)
    if (n_math or raw) and state != "typeset":
        problems.append(f"the page has math but MathJax did not typeset it ({state})")
    if n_math and not driver.execute_script("return document.querySelectorAll('mjx-container').length"):
        problems.append("no MathJax output (mjx-container) on a page with math")
    problems += [f"math not typeset: {text!r}" for text in untypeset[:5]]
    problems += [f"raw TeX in the page text: {text!r}" for text in raw[:5]]
    return problems


#: The characters of the page's text and generated content above U+2000 (symbols, arrows,
#: dingbats, emoji) that the page's font draws exactly as it draws a code point no font has
#: (U+0378): those show as empty boxes.
_MISSING_GLYPHS = r"""
var root = document.querySelector('article') || document.body;
var seen = {};
function add(text, el, pseudo) {
  var style = getComputedStyle(el, pseudo || null);  // weight matters: icon fonts draw at 900
  var font = style.fontStyle + ' ' + style.fontWeight + ' 40px ' + style.fontFamily;
  for (var ch of text) {
    if (ch.codePointAt(0) > 0x2000 && !(ch in seen)) seen[ch] = font;
  }
}
var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  var el = walker.currentNode.parentElement;
  if (el && !el.closest('mjx-container, script, style')) add(walker.currentNode.data, el);
}
root.querySelectorAll('*').forEach(function (el) {
  ['::before', '::after'].forEach(function (pseudo) {
    var content = getComputedStyle(el, pseudo).content;
    if (content && content[0] === '"') add(content.slice(1, -1), el, pseudo);
  });
});
var canvas = document.createElement('canvas');
canvas.width = 64; canvas.height = 64;
var ctx = canvas.getContext('2d', {willReadFrequently: true});
function draw(ch, font) {
  ctx.clearRect(0, 0, 64, 64);
  ctx.font = font;
  ctx.textBaseline = 'top';
  ctx.fillStyle = '#000';
  ctx.fillText(ch, 8, 8);
  return ctx.getImageData(0, 0, 64, 64).data;
}
function same(a, b) {
  for (var i = 3; i < a.length; i += 4) if (a[i] !== b[i]) return false;
  return true;
}
var missing = [], tofu = {};
Object.keys(seen).forEach(function (ch) {
  var font = seen[ch];
  if (!(font in tofu)) {
    var box = draw('\u0378', font), other = draw('\u0379', font);
    tofu[font] = same(box, other) ? box : null;  // null: no recognisable box in this font
  }
  if (tofu[font] && same(draw(ch, font), tofu[font])) {
    missing.push(ch + ' (U+' + ch.codePointAt(0).toString(16).toUpperCase() + ')');
  }
});
return missing;
"""


def _missing_glyphs(driver) -> list[str]:
    """The characters on the page that render as empty boxes (see :data:`_MISSING_GLYPHS`)."""
    return driver.execute_script(_MISSING_GLYPHS)


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
    problems += _references_problems(driver, chapter)
    problems += _source_block_problems(driver, chapter)
    problems += _ledger_fit_problems(driver)
    return problems


#: The arXiv id of each paper a chapter reproduces (its prefix names the paper).
PAPER_ARXIV = {"tian": "2206.01342", "esser": "2309.02011", "renli": "2304.03717"}


def _references_problems(driver, chapter: str) -> list[str]:
    """The chapter's References section renders: its citations link into the bibliography page
    (where the anchor exists, checked with every internal link) and it links the paper itself."""
    refs = driver.execute_script(
        "var s = document.querySelector('section#references');"
        "return s ? Array.from(s.querySelectorAll('a[href]')).map(function(a){ return a.href; }) : null;"
    )
    if refs is None:
        return ["no References section (section#references)"]
    problems = []
    if not any("/references.html#" in h for h in refs):
        problems.append("the References section has no citation linked to the bibliography page")
    arxiv = PAPER_ARXIV[chapter.split("-")[0]]
    if not any(f"arxiv.org/abs/{arxiv}" in h for h in refs):
        problems.append(f"the References section does not link the paper (arxiv.org/abs/{arxiv})")
    return problems


def _source_block_problems(driver, chapter: str) -> list[str]:
    """Every nlcl-source name of the chapter's source is on the page as a block holding its code."""
    from nlcl.harness.site import page as chapter_page

    names = [
        n
        for s in chapter_page.sections(ROOT / "book" / f"{chapter}.py")
        for md in s.markdown
        for n in chapter_page.shown_names(md)
    ]
    blocks = driver.execute_script(
        "return Array.from(document.querySelectorAll('details.nlcl-source')).map(function(d){"
        " var pre = d.querySelector('pre'); return [d.dataset.object, pre ? pre.textContent.length : 0]; })"
    )
    shown = {name: n for name, n in blocks}
    problems = [f"source block of {n} missing on the page" for n in names if n not in shown]
    problems += [f"source block of {n} is empty" for n, length in shown.items() if length < 10]
    return problems


_LEDGER_FIT = """
var d = document.querySelector('details.nlcl-ledger');
if (!d) return 'missing';
if (d.open) return 'open by default';
d.open = true;
var col = (d.closest('article') || document.body).getBoundingClientRect();
var t = d.querySelector('table'), s = d.querySelector('summary');
var out = [];
[['table', t], ['summary', s]].forEach(function (p) {
  if (!p[1]) { out.push(p[0] + ' missing'); return; }
  var r = p[1].getBoundingClientRect();
  if (r.right > col.right + 1 || r.left < col.left - 1) out.push(p[0] + ' ' + Math.round(r.left) + '..' + Math.round(r.right) + ' outside the column ' + Math.round(col.left) + '..' + Math.round(col.right));
});
if (t && t.scrollWidth > t.clientWidth + 1) out.push('table content cut off (' + t.scrollWidth + ' > ' + t.clientWidth + ')');
d.open = false;
return out.join('; ');
"""


def _ledger_fit_problems(driver) -> list[str]:
    """The ledger at the top of the chapter is collapsed by default, and opened at a 1280-pixel window
    its summary line and table fit the content column."""
    size = driver.get_window_size()
    driver.set_window_size(1280, size["height"])
    try:
        result = driver.execute_script(_LEDGER_FIT)
    finally:
        driver.set_window_size(size["width"], size["height"])
    return [f"the ledger table at 1280 px: {result}"] if result else []


def _records_with_paper_scale() -> list[dict]:
    """The build's claims, each with its committed paper-scale verdict (``full``), as the
    dashboard shows them."""
    from nlcl.harness.records.paper_scale import FULL_DIR, load_full_records
    from nlcl.harness.site.report import merge_full

    records = [r for p in sorted((BUILD / "claims").glob("*.json")) for r in json.loads(p.read_text())]
    if (ROOT / FULL_DIR).is_dir():
        records = merge_full(records, load_full_records(ROOT / FULL_DIR))
    return records


def test_dashboard_filters_sorts_and_links_to_claims(server, driver):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    page = next((p for p in PAGES if Path(p).name == "reproducibility"), None)
    if page is None or not (SITE / f"{page}.html").is_file():
        _unavailable("the reproducibility page was not built")
    records = _records_with_paper_scale()
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


#: A laptop's window: 1280 × 800, less a 15-pixel vertical scrollbar (the test hides scrollbars).
LAPTOP = (1280 - 15, 800)

_TABLE_LAYOUT = """
var wrap = document.querySelector('.nlcl-table-wrap'), table = wrap.querySelector('table');
wrap.scrollIntoView({block: 'center'});
var box = wrap.getBoundingClientRect();
function inside(el) {
  if (!el) return 'missing';
  var r = el.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return 'not shown';
  if (r.left < box.left - 1 || r.right > box.right + 1) return 'cut off: ' + r.left + '..' + r.right;
  var x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
  var top = Math.max(80, el.closest('thead') ? box.top : table.tHead.getBoundingClientRect().bottom);
  if (y > top && y < Math.min(box.bottom, window.innerHeight) && x < window.innerWidth) {  // on screen
    var hit = document.elementFromPoint(x, y);
    if (hit && hit !== el && !el.contains(hit) && !hit.contains(el))
      return 'covered by ' + hit.tagName.toLowerCase() + '.' + String(hit.className).split(' ')[0];
  }
  return '';
}
var head = table.tHead.rows[0].cells;
var cells = {claim: head[0], ci: head[4], full: head[5]};
var rows = Array.prototype.slice.call(table.tBodies[0].rows, 0, 40);
var bad = [];
Object.keys(cells).forEach(function (k) { var p = inside(cells[k]); if (p) bad.push('heading ' + k + ': ' + p); });
rows.forEach(function (row) {
  var id = row.cells[0].querySelector('code').textContent;
  var parts = {claim: row.cells[0].querySelector('code'), chapter: row.cells[0].querySelector('.nlcl-chapter'),
               ci: row.cells[4].firstElementChild || row.cells[4], full: row.cells[5].firstElementChild || row.cells[5]};
  Object.keys(parts).forEach(function (k) {
    var p = inside(parts[k]);
    var cell = parts[k] && parts[k].closest('td');
    if (!p && cell && parts[k] !== cell && parts[k].getBoundingClientRect().right > cell.getBoundingClientRect().right + 1)
      p = 'wider than its cell';
    if (p) bad.push(id + ' ' + k + ': ' + p);
  });
});
var doc = document.documentElement;
return {wrap: [wrap.scrollWidth, wrap.clientWidth], page: [doc.scrollWidth, doc.clientWidth], bad: bad,
        viewport: [window.innerWidth, window.innerHeight]};
"""


def test_reproducibility_page_reads_at_a_laptop_window(server, driver):
    """At 1280 × 800: the headline, figure and filters come first and the explanation below the
    table, collapsed; the claims table needs no horizontal scrolling, and its claim, chapter, ci
    verdict and paper-scale verdict are shown; a long statement expands on click."""
    from selenium.webdriver.common.by import By

    page = next((p for p in PAGES if Path(p).name == "reproducibility"), None)
    if page is None or not (SITE / f"{page}.html").is_file():
        _unavailable("the reproducibility page was not built")
    width, height = LAPTOP
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        _load(driver, _page_url(server, page))
        driver.execute_async_script(_WAIT_FOR_MATHJAX)
        layout = driver.execute_script(_TABLE_LAYOUT)
        assert layout["viewport"] == [width, height]
        assert layout["wrap"][0] <= layout["wrap"][1], f"the claims table scrolls sideways: {layout['wrap']}"
        assert layout["page"][0] <= layout["page"][1], f"the page scrolls sideways: {layout['page']}"
        assert not layout["bad"], "\n".join(layout["bad"][:20])
        with_full = sum(bool(r.get("full")) for r in _records_with_paper_scale())
        shown_full = driver.execute_script(
            "return document.querySelectorAll('table.nlcl-claims td.nlcl-verdict:nth-child(6) .nlcl-status').length"
        )
        assert shown_full == with_full, f"{shown_full} paper-scale verdicts shown, {with_full} recorded"

        # Reading order: headline, figure, filters, table; then the explanation, collapsed.
        def top(selector):
            return driver.execute_script(
                "var e = document.querySelector(arguments[0]); return e ? e.getBoundingClientRect().top + window.scrollY : null",
                selector,
            )

        tops = [
            top(s)
            for s in (
                "article h1",
                "img[src$='claims-summary.svg']",
                ".nlcl-filters",
                "table.nlcl-claims",
                "#how-to-read-this-report",
            )
        ]
        assert None not in tops and tops == sorted(tops), tops
        headline = driver.execute_script(
            "var p = Array.from(document.querySelectorAll('article p')).find(function(p){ return /reproductions/.test(p.textContent) && /reproduced/.test(p.textContent); });"
            "return p ? p.getBoundingClientRect().top + window.scrollY : null"
        )
        assert headline is not None and headline < tops[1], "the headline counts are not above the figure"
        assert tops[1] < height, "the summary figure does not start in the first screen"
        assert driver.execute_script(
            "var d = document.querySelector('#how-to-read-this-report details'); return d && !d.open"
        ), "the explanation is not a collapsed block"

        # A long statement is clamped to a few lines; a click shows all of it, another folds it.
        more = next(
            (b for b in driver.find_elements(By.CSS_SELECTOR, "button.nlcl-more") if b.is_displayed()), None
        )
        assert more is not None, "no statement is clamped (or none is long enough to be)"
        clamp = driver.execute_script("return arguments[0].previousElementSibling", more)

        def clamped():
            return driver.execute_script(
                "return arguments[0].scrollHeight > arguments[0].clientHeight + 1", clamp
            )

        assert clamped()
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", more)
        _screenshot_viewport(driver, "reproducibility-1280x800-table")
        more.click()
        assert not clamped() and more.get_attribute("aria-expanded") == "true"
        clamp.click()
        assert clamped() and more.get_attribute("aria-expanded") == "false"
        driver.execute_script("window.scrollTo(0, 0)")
        _screenshot_viewport(driver, "reproducibility-1280x800")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _screenshot_viewport(driver, name: str) -> Path:
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    path = SCREENSHOTS / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def test_find_browser_prefers_explicit_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("NLCL_CHROME", "/opt/chrome")
    monkeypatch.setenv("NLCL_CHROMEDRIVER", "/opt/chromedriver")
    assert find_browser() == ("/opt/chrome", "/opt/chromedriver")
