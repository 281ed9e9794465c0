"""Sphinx extension of the nlcl site (``_config.yml``: ``sphinx.extra_extensions``).

It removes an upstream console error that the browser test (tests/test_site_browser.py) would
otherwise report on every page: with Sphinx 7.4, sphinx-thebe 0.3.1 (part of jupyter-book 1.0.4)
registers its inline configuration script twice, so each page declares ``const THEBE_JS_URL``
twice and the browser logs "Identifier 'THEBE_JS_URL' has already been declared". Identical
scripts are kept once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["unique_scripts", "setup"]


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
    app.connect("html-page-context", unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
