"""The site's Sphinx extension (nlcl.harness.sphinx_ext)."""

from types import SimpleNamespace

from nlcl.harness import sphinx_ext


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


def test_setup_connects_the_handler():
    calls = []
    app = SimpleNamespace(connect=lambda *args, **kwargs: calls.append((args, kwargs)))
    meta = sphinx_ext.setup(app)
    assert calls == [(("html-page-context", sphinx_ext.unique_scripts), {"priority": 900})]
    assert meta["parallel_read_safe"]
