"""The site's Sphinx extension (nlcl.harness.site.sphinx_ext)."""

import json
import sys
from types import SimpleNamespace

import pytest

from nlcl.harness.site import sphinx_ext


def _script(filename, **attributes):
    return SimpleNamespace(filename=filename, attributes=attributes)


def test_unique_scripts_keeps_identical_scripts_once():
    body = "const THEBE_JS_URL = 1"
    scripts = [
        _script("a.js"),
        _script(None, body=body),
        _script("b.js", defer="defer"),
        _script("", body=body),
        _script("a.js"),
        _script("b.js"),
    ]
    context = {"script_files": scripts}
    sphinx_ext.unique_scripts(None, "page", "page.html", context, None)
    assert context["script_files"] is scripts  # changed in place, as Sphinx keeps the list
    assert [(s.filename, s.attributes) for s in scripts] == [
        ("a.js", {}),
        (None, {"body": body}),
        ("b.js", {"defer": "defer"}),
        ("b.js", {}),
    ]


def test_unique_scripts_without_scripts():
    context = {}
    sphinx_ext.unique_scripts(None, "page", "page.html", context, None)
    assert context == {}


def test_setup_connects_the_handlers():
    from nlcl.harness.site import directives

    calls, added = [], {}
    app = SimpleNamespace(
        connect=lambda *args, **kwargs: calls.append((args, kwargs)),
        add_directive=lambda name, cls: added.setdefault(name, cls),
    )
    meta = sphinx_ext.setup(app)
    assert added == {"nlcl-source": directives.NlclSource, "nlcl-claims": directives.NlclClaims}
    assert calls == [
        (("config-inited", sphinx_ext.check_mathjax), {}),
        (("doctree-read", sphinx_ext.mark_raw_math), {}),
        (("build-finished", sphinx_ext.copy_mathjax), {}),
        (("html-page-context", sphinx_ext.unique_scripts), {"priority": 900}),
    ]
    assert meta["parallel_read_safe"]


# MathJax from the site itself.


def test_mathjax_source_is_the_installed_mathjax_3():
    es5 = sphinx_ext.mathjax_source()
    assert (es5 / sphinx_ext.MATHJAX_ENTRY).is_file()
    assert sphinx_ext.mathjax_version(es5).startswith("3.")
    assert (es5 / "output" / "chtml" / "fonts" / "woff-v2").is_dir()  # the fonts it loads


def test_mathjax_missing_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mathjax", None)  # import mathjax raises ImportError
    with pytest.raises(sphinx_ext.MathJaxMissing, match=r"django-static-mathjax.*|\[book\]"):
        sphinx_ext.mathjax_source()


def test_mathjax_of_another_major_version_is_refused(monkeypatch, tmp_path):
    es5 = tmp_path / "mathjax" / "static" / "mathjax" / "es5"
    es5.mkdir(parents=True)
    (es5 / sphinx_ext.MATHJAX_ENTRY).write_text("//")
    (es5.parent / "package.json").write_text(json.dumps({"version": "4.0.0"}))
    (tmp_path / "mathjax" / "__init__.py").write_text("")
    monkeypatch.setitem(
        sys.modules, "mathjax", SimpleNamespace(__file__=str(tmp_path / "mathjax" / "__init__.py"))
    )
    with pytest.raises(sphinx_ext.MathJaxMissing, match="4.0.0 .* is not MathJax 3"):
        sphinx_ext.mathjax_source()
    (es5 / sphinx_ext.MATHJAX_ENTRY).unlink()
    with pytest.raises(sphinx_ext.MathJaxMissing, match="tex-mml-chtml.js is missing"):
        sphinx_ext.mathjax_source()


def test_vendor_mathjax_copies_the_entry_its_components_and_the_licence(tmp_path):
    target = sphinx_ext.vendor_mathjax(sphinx_ext.mathjax_source(), tmp_path / "_static")
    assert target == tmp_path / "_static" / "mathjax"
    assert (target / "tex-mml-chtml.js").is_file() and (target / "LICENSE").is_file()
    assert "Apache License" in (target / "LICENSE").read_text()
    assert list((target / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert (target / "input" / "tex" / "extensions").is_dir()  # \require'd extensions
    assert not (target / "tex-svg-full.js").exists()  # bundles no page loads stay out
    # A second build copies over the first.
    assert sphinx_ext.vendor_mathjax(sphinx_ext.mathjax_source(), tmp_path / "_static") == target


def _config(**values):
    return SimpleNamespace(**values)


def test_check_mathjax_serves_it_locally():
    from sphinx.ext.mathjax import MATHJAX_URL

    for given in (MATHJAX_URL, None, sphinx_ext.MATHJAX_PATH):
        config = _config(mathjax_path=given)
        sphinx_ext.check_mathjax(None, config)
        assert config.mathjax_path == "mathjax/tex-mml-chtml.js"


@pytest.mark.parametrize(
    "path",
    ["https://cdn.example.org/mathjax@3/es5/tex-mml-chtml.js", "//cdn.example.org/tex-chtml.js", "mine/x.js"],
)
def test_check_mathjax_refuses_a_cdn_or_another_file(path):
    from sphinx.errors import ConfigError

    with pytest.raises(ConfigError, match="mathjax_path"):
        sphinx_ext.check_mathjax(None, _config(mathjax_path=path))


def test_check_mathjax_fails_the_build_without_the_package(monkeypatch):
    from sphinx.errors import ConfigError

    monkeypatch.setitem(sys.modules, "mathjax", None)
    with pytest.raises(ConfigError, match=r"MathJax is not installed.*\[book\] extra"):
        sphinx_ext.check_mathjax(None, _config(mathjax_path=sphinx_ext.MATHJAX_PATH))


def test_copy_mathjax_after_a_successful_html_build(tmp_path):
    app = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(tmp_path))
    sphinx_ext.copy_mathjax(app, RuntimeError("failed"))
    assert not (tmp_path / "_static").exists()
    sphinx_ext.copy_mathjax(
        SimpleNamespace(builder=SimpleNamespace(format="text"), outdir=str(tmp_path)), None
    )
    assert not (tmp_path / "_static").exists()
    sphinx_ext.copy_mathjax(app, None)
    assert (tmp_path / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()


def test_mark_raw_math_loads_mathjax_on_pages_with_math_in_raw_html():
    from docutils import nodes
    from docutils.utils import new_document

    has = {}
    app = SimpleNamespace(
        env=SimpleNamespace(
            docname="page", get_domain=lambda name: SimpleNamespace(data={"has_equations": has})
        )
    )
    doc = new_document("page")
    doc += nodes.raw("", "<td>no math: 3 \\times 4</td>", format="html")
    sphinx_ext.mark_raw_math(app, doc)
    assert has == {}
    doc += nodes.raw("", "<pre>\\(x\\)</pre>", format="latex")
    sphinx_ext.mark_raw_math(app, doc)
    assert has == {}
    doc += nodes.raw("", "<td>\\(\\alpha\\)</td>", format="html")
    sphinx_ext.mark_raw_math(app, doc)
    assert has == {"page": True}
