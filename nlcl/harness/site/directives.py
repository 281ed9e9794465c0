"""The book's own MyST directives: the package's code on the page, and a claim's declaration where a
section needs it.

* ``nlcl-source``: the source of one or more ``nlcl`` functions or classes, read from the package
  file at build time, never from a copy (as Sphinx's ``literalinclude`` with ``:pyobject:`` does)::

      ```{nlcl-source} nlcl.tian.alpha_cl.lemma2_study nlcl.tian.contrastive.energy
      ```

  Each object is shown in its own block headed by its file, name and line numbers; an object longer
  than :data:`OPEN_LINES` lines is collapsed (the reader opens it), a short one is open (option
  ``:collapsed:`` collapses every block, ``:open:`` opens every block). A name that does not resolve to
  an ``nlcl`` function, class or method is a build error (:class:`SourceNotFound`), never a silent gap.
* ``nlcl-claims``: the declaration of claims of the page's chapter as its ledger states them
  (``book/claims/<chapter>.yaml``): statement, source, check and the paper's value, so that a
  prediction and its tolerance are written once, in the ledger, and rendered where the section
  tests them::

      ```{nlcl-claims} lemma2-rate lemma2-total-variance
      ```

  An id the ledger lacks is a build error (:class:`ClaimNotFound`).
"""

from __future__ import annotations

import html
import importlib
import inspect
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

__all__ = [
    "OPEN_LINES",
    "SourceNotFound",
    "ClaimNotFound",
    "resolve",
    "source_of",
    "claim_declarations",
    "setup",
]

#: A shown object longer than this many lines starts collapsed.
OPEN_LINES = 30


class SourceNotFound(ExtensionError):
    """An ``nlcl-source`` name that is not an ``nlcl`` function, class or method."""


class ClaimNotFound(ExtensionError):
    """An ``nlcl-claims`` id that the chapter's ledger does not declare."""


def resolve(dotted: str) -> Any:
    """The object a dotted name ``nlcl.pkg.module.name[.attr]`` names: the longest importable module
    prefix, then attributes. Raises :class:`SourceNotFound` naming what is missing."""
    if not dotted.startswith("nlcl."):
        raise SourceNotFound(
            f"nlcl-source: {dotted!r} is not an nlcl name (nlcl.<package>.<module>.<object>)"
        )
    parts = dotted.split(".")
    for n in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        for i, attr in enumerate(parts[n:]):
            if not hasattr(obj, attr):
                where = ".".join(parts[: n + i])
                raise SourceNotFound(f"nlcl-source: {where} has no {attr!r} (from {dotted!r})")
            obj = getattr(obj, attr)
        return obj
    raise SourceNotFound(f"nlcl-source: no module of {dotted!r} can be imported")


def source_of(dotted: str) -> tuple[Path, int, str]:
    """``(file, first line, source text)`` of the function, class or method ``dotted`` names, read from
    the file that defines it (a re-exported name shows its definition)."""
    obj = inspect.unwrap(resolve(dotted))
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj)):
        raise SourceNotFound(
            f"nlcl-source: {dotted!r} is a {type(obj).__name__}, not a function, class or method"
        )
    try:
        path = Path(inspect.getsourcefile(obj) or "")
        lines, start = inspect.getsourcelines(obj)
    except (OSError, TypeError) as exc:
        raise SourceNotFound(f"nlcl-source: the source of {dotted!r} cannot be read: {exc}") from None
    return path, max(start, 1), "".join(lines)


def _package_path(path: Path) -> str:
    """``nlcl/tian/alpha_cl.py`` for a file of the package."""
    parts = path.resolve().parts
    return "/".join(parts[len(parts) - 1 - parts[::-1].index("nlcl") :]) if "nlcl" in parts else path.name


class NlclSource(SphinxDirective):
    """``nlcl-source``: see the module docstring."""

    required_arguments = 1
    optional_arguments = 20
    final_argument_whitespace = False
    option_spec = {"collapsed": directives.flag, "open": directives.flag}

    def run(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        for dotted in self.arguments:
            try:
                path, start, code = source_of(dotted)
            except SourceNotFound as exc:
                raise SourceNotFound(f"{self.env.docname}:{self.lineno}: {exc}") from None
            self.env.note_dependency(str(path))
            n = code.count("\n")
            is_open = "open" in self.options or ("collapsed" not in self.options and n <= OPEN_LINES)
            label = (
                f"<code>{html.escape(_package_path(path))}</code> · <code>{html.escape(dotted.rsplit('.', 1)[-1])}</code>"
                f" <span class='nlcl-source-lines'>(lines {start}–{start + n - 1})</span>"
            )
            block = nodes.literal_block(code, code, language="python")
            block["linenos"] = True
            block["highlight_args"] = {"linenostart": start}
            out += [
                nodes.raw(
                    "",
                    f"<details class='nlcl-source' data-object='{html.escape(dotted)}'{' open' if is_open else ''}>"
                    f"<summary>{label}</summary>",
                    format="html",
                ),
                block,
                nodes.raw("", "</details>", format="html"),
            ]
        return out


def claim_declarations(chapter: str, ids: list[str], root: str | Path | None = None) -> list[dict[str, Any]]:
    """The ledger entries of ``ids`` in the chapter's ledger, in the order asked; raises
    :class:`ClaimNotFound` for an id the ledger does not declare."""
    from nlcl.harness.claims.ledger import ledger_path, read_ledger

    led = read_ledger(ledger_path(chapter, root), chapter)
    by_id = {c["id"]: c for c in led.claims}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ClaimNotFound(
            f"nlcl-claims: {led.label} declares no claim {missing}; it declares {sorted(by_id)}"
        )
    return [by_id[i] for i in ids]


def _statement(text: Any) -> str:
    """A ledger statement as HTML: ``{name}`` (a chapter parameter, filled in at run time) shown as
    the parameter's name in italics, ``{{``/``}}`` as braces."""
    import re

    out = html.escape(str(text)).replace("{{", "\0").replace("}}", "\1")
    out = re.sub(r"\{(\w+)\}", r"<em>\1</em>", out)
    return out.replace("\0", "{").replace("\1", "}")


def _check_text(check: Any) -> str:
    from nlcl.harness.claims.ledger import make_check

    try:
        return make_check(check, {}).description
    except (KeyError, TypeError, ValueError):  # references a chapter value ({ref: NAME}): as declared
        return str(check)


class NlclClaims(SphinxDirective):
    """``nlcl-claims``: see the module docstring."""

    required_arguments = 1
    optional_arguments = 50
    final_argument_whitespace = False

    def run(self) -> list[nodes.Node]:
        chapter = Path(self.env.docname).name
        try:
            entries = claim_declarations(chapter, self.arguments)
        except ClaimNotFound as exc:
            raise ClaimNotFound(f"{self.env.docname}:{self.lineno}: {exc}") from None
        items = []
        for c in entries:
            required = c.get("required", True)
            kind = c.get("kind", "reproduction")
            tag = (
                "required"
                if required is True
                else "reported"
                if required is False
                else "required where stated"
            ) + f" {kind}"
            paper = c.get("paper")
            items.append(
                "<li>"
                f"<code>{html.escape(c['id'])}</code> <span class='nlcl-claim-tag'>{html.escape(tag)}</span>: "
                f"{_statement(c['statement'])} "
                f"<span class='nlcl-claim-check'>Check: {html.escape(_check_text(c['check']))}"
                + (f"; the paper: {html.escape(str(paper))}" if paper is not None else "")
                + f". Source: {html.escape(str(c['source']))}.</span>"
                + (
                    f" <span class='nlcl-claim-fails'>Declared failure: {html.escape(str(c['fails']['why']))}</span>"
                    if c.get("fails")
                    else ""
                )
                + "</li>"
            )
        text = (
            "<div class='nlcl-claims'><p class='nlcl-claims-title'>Declared in the ledger, before the measurement</p><ul>"
            + "".join(items)
            + "</ul></div>"
        )
        return [nodes.raw("", text, format="html")]


def setup(app: Any) -> dict[str, Any]:
    """Register ``nlcl-source`` and ``nlcl-claims`` (called by :mod:`nlcl.harness.site.sphinx_ext`)."""
    app.add_directive("nlcl-source", NlclSource)
    app.add_directive("nlcl-claims", NlclClaims)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
