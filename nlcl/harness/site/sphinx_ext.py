"""Sphinx extension of the nlcl site (``_config.yml``: ``sphinx.extra_extensions``).

* **MathJax from the site itself, no CDN.** Sphinx loads MathJax from a CDN by default. This
  extension serves MathJax 3 from the built site instead: the MathJax files come from a Python
  package of the book's dependencies (:data:`MATHJAX_PACKAGE`, in the ``[book]`` extra that
  ``make setup`` installs), are copied into ``_static/mathjax/`` of the built site when the build
  finishes, and ``mathjax_path`` points there. Without the package the build fails at once, saying
  what to install (:class:`MathJaxMissing`); a ``mathjax_path`` that names a URL is refused.
  Pages whose math is in raw HTML (the claims table of the reproducibility page writes
  ``\\(…\\)``) are marked as having equations, so MathJax is loaded there too.
* **The book's directives** (:mod:`nlcl.harness.site.directives`): ``nlcl-source`` shows the package's
  code on the page from its source file, ``nlcl-claims`` a claim's declaration from the ledger.
* **Identical page scripts once.** With Sphinx 7.4, sphinx-thebe 0.3.1 (part of jupyter-book
  1.0.4) registers its inline configuration script twice, so each page declares
  ``const THEBE_JS_URL`` twice and the browser logs "Identifier 'THEBE_JS_URL' has already been
  declared" (a console error the browser test, tests/test_site_browser.py, would report on every
  page). Identical scripts are kept once.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

__all__ = [
    "MATHJAX_ENTRY",
    "MATHJAX_PACKAGE",
    "MATHJAX_PATH",
    "MathJaxMissing",
    "mathjax_source",
    "mathjax_version",
    "vendor_mathjax",
    "unique_scripts",
    "setup",
]

#: The PyPI package that ships MathJax 3's browser files (``mathjax/static/mathjax/es5``).
MATHJAX_PACKAGE = "django-static-mathjax"
#: MathJax's combined component the pages load (TeX and MathML input, CommonHTML output): the one
#: Sphinx loads from its CDN by default.
MATHJAX_ENTRY = "tex-mml-chtml.js"
#: ``mathjax_path``: relative to the built site's ``_static``.
MATHJAX_PATH = f"mathjax/{MATHJAX_ENTRY}"
_INSTALL = f"install nlcl with the [book] extra (`make setup`, or pip install -e '.[book]'), which brings {MATHJAX_PACKAGE}"


class MathJaxMissing(RuntimeError):
    """MathJax's files are not installed: the site would show raw TeX."""


def mathjax_source() -> Path:
    """The directory of MathJax 3's browser files (``es5``) in the installed package.

    Raises :class:`MathJaxMissing` naming what to install when the package is missing, lacks
    :data:`MATHJAX_ENTRY` or is not MathJax 3 (``mathjax3_config`` of ``_config.yml`` is for 3.x).
    """
    try:
        import mathjax  # django-static-mathjax's package
    except ImportError:
        raise MathJaxMissing(
            f"MathJax is not installed: the site serves MathJax itself (no CDN); {_INSTALL}"
        ) from None
    es5 = Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5"
    if not (es5 / MATHJAX_ENTRY).is_file():
        raise MathJaxMissing(f"MathJax's {MATHJAX_ENTRY} is missing under {es5}; {_INSTALL}")
    version = mathjax_version(es5)
    if not version.startswith("3."):
        raise MathJaxMissing(f"MathJax {version} under {es5} is not MathJax 3; {_INSTALL}")
    return es5


def mathjax_version(es5: Path) -> str:
    """MathJax's version, from the ``package.json`` beside ``es5`` ("unknown" without one)."""
    try:
        return str(json.loads((Path(es5).parent / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "unknown"


def vendor_mathjax(es5: Path, static: Path) -> Path:
    """Copy MathJax into ``static/mathjax``: :data:`MATHJAX_ENTRY`, the components it loads on
    demand (fonts, extensions, the menu, speech) and the licence; not the other combined bundles,
    which no page loads. Returns the target directory."""
    es5, target = Path(es5), Path(static) / "mathjax"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(es5 / MATHJAX_ENTRY, target / MATHJAX_ENTRY)
    for sub in sorted(p for p in es5.iterdir() if p.is_dir()):
        shutil.copytree(sub, target / sub.name, dirs_exist_ok=True)
    licence = es5.parent / "LICENSE"
    if licence.is_file():
        shutil.copy2(licence, target / "LICENSE")
    return target


def _is_url(path: str) -> bool:
    return bool(re.match(r"^([a-z][a-z0-9+.-]*:)?//", path, re.IGNORECASE))


def check_mathjax(app: Any, config: Any) -> None:
    """``config-inited``: MathJax from the site. Sphinx's default (a CDN URL) becomes
    :data:`MATHJAX_PATH`; any other URL is refused; the package must be installed."""
    from sphinx.errors import ConfigError
    from sphinx.ext.mathjax import MATHJAX_URL

    path = getattr(config, "mathjax_path", None) or MATHJAX_URL
    if path == MATHJAX_URL:
        path = MATHJAX_PATH
    if _is_url(path):
        raise ConfigError(
            f"mathjax_path = {path!r} loads MathJax from another site; the book serves MathJax "
            f"itself: use {MATHJAX_PATH!r} (or leave it out)"
        )
    if path != MATHJAX_PATH:
        raise ConfigError(f"mathjax_path = {path!r}: the book vendors MathJax as {MATHJAX_PATH!r}")
    config.mathjax_path = path
    try:
        mathjax_source()
    except MathJaxMissing as exc:
        raise ConfigError(str(exc)) from None


def copy_mathjax(app: Any, exception: Exception | None) -> None:
    """``build-finished``: copy MathJax into the built site's ``_static`` (HTML builders)."""
    if exception is not None or getattr(app.builder, "format", None) != "html":
        return
    vendor_mathjax(mathjax_source(), Path(app.outdir) / "_static")


def mark_raw_math(app: Any, doctree: Any) -> None:
    """``doctree-read``: a page whose raw HTML holds ``\\(…\\)`` math has equations (Sphinx loads
    MathJax only on pages with math nodes)."""
    from docutils import nodes

    if any(
        "html" in node.get("format", "").split() and "\\(" in node.astext()
        for node in doctree.findall(nodes.raw)
    ):
        app.env.get_domain("math").data["has_equations"][app.env.docname] = True


def _key(script: Any) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    filename = getattr(script, "filename", script) or ""  # an inline script has None or ""
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def unique_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """``html-page-context`` handler: drop repeated identical entries of ``script_files``."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def setup(app: Any) -> dict[str, Any]:
    """Register the extension with Sphinx."""
    app.connect("config-inited", check_mathjax)
    app.connect("doctree-read", mark_raw_math)
    app.connect("build-finished", copy_mathjax)
    app.connect("html-page-context", unique_scripts, priority=900)
    from nlcl.harness.site import directives

    directives.setup(app)  # nlcl-source, nlcl-claims
    return {"parallel_read_safe": True, "parallel_write_safe": True}
