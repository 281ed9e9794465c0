"""The readers' extras added to the staged book (nlcl.harness.site.extras)."""

import json
import shutil
from pathlib import Path

import nbformat

from nlcl.harness.site.dashboard import DASHBOARD_MARKER
from nlcl.harness.site.extras import add_site_extras
from nlcl.harness.site.rerun import COLAB_TAG, RERUN_TAG

ROOT = Path(__file__).resolve().parents[2]


def test_add_site_extras(tmp_path):
    root, staging = tmp_path / "repo", tmp_path / "staging"
    (root / "book").mkdir(parents=True)
    (staging / "book").mkdir(parents=True)
    shutil.copytree(ROOT / "_static", root / "_static")
    (root / "_config.yml").write_text("repository:\n  url: https://github.com/me/fork\n")
    source = root / "book" / "x.py"
    source.write_text(
        '# %% tags=["parameters"]\nprofile: str = "ci"  # profile\nseed: int = 0  # seed\ndevice: str = "auto"  # device\nn: int | None = None  # size\n\n'
        '# %%\nimport nlcl\n\nrun = nlcl.start("x", globals(), spec={"n": {"ci": 3, "full": 30}})\n'
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# X"),
        nbformat.v4.new_code_cell(
            'profile: str = "ci"\nn: int = None  # size', metadata={"tags": ["parameters"]}
        ),
        nbformat.v4.new_code_cell(
            "import nlcl",
            outputs=[nbformat.v4.new_output("stream", name="stderr", text="UserWarning: careful\n")],
        ),
    ]
    nb.metadata["kernelspec"] = {"name": "nlcl", "display_name": "Python 3 (nlcl)", "language": "python"}
    nbformat.write(nb, str(staging / "book" / "x.ipynb"))
    (staging / "book" / "reproducibility.md").write_text(f"# Report\n\n{DASHBOARD_MARKER}\n")
    record = {
        "id": "c1",
        "chapter": "x",
        "source": "Tian 2023, Eq. 1",
        "statement": "s",
        "expected": 1,
        "measured": 1,
        "tolerance": "= 1",
        "status": "pass",
        "required": True,
        "profile": "ci",
    }
    # The committed paper-scale record of the chapter: its verdict joins the dashboard's row.
    (root / "results" / "claims-full").mkdir(parents=True)
    (root / "results" / "claims-full" / "x.json").write_text(
        json.dumps(
            {
                "chapter": "x",
                "commit": "abc",
                "date": "2026-01-01",
                "claims": [{**record, "profile": "full", "measured": 2, "status": "fail"}],
            }
        )
    )
    counts = add_site_extras(root, staging, {"x": source}, [record], {"x": {"seconds": 1.0, "ok": True}})
    assert counts["pass"] == 1
    assert (staging / "_static" / "nlcl.js").is_file() and (
        staging / "_static" / "nlcl-claims.json"
    ).is_file()
    staged = nbformat.read(str(staging / "book" / "x.ipynb"), as_version=4)
    tags = [t for c in staged.cells for t in c.metadata.get("tags", [])]
    assert RERUN_TAG in tags and COLAB_TAG in tags
    assert "nlcl-warnings" in staged.cells[-1].outputs[0].data["text/html"]
    assert (staging / "book" / "x.py").is_file()
    assert "claims-summary.svg" in (staging / "book" / "reproducibility.md").read_text()
    row = json.loads((staging / "_static" / "nlcl-claims.json").read_text())["claims"][0]
    assert row["at"]["ci"]["status"] == "pass"
    assert row["at"]["full"] == {
        "status": "fail",
        "measured": 2,
        "seeds": None,
        "artifact": "results/claims-full/x.json",
        "data_source": None,
        "computed": None,
    }
    assert 'data-status-full="fail"' in (staging / "book" / "reproducibility.md").read_text()


def test_build_book_stops_before_executing_without_mathjax(tmp_path, monkeypatch):
    import sys

    import yaml

    from nlcl.harness.site import build as site

    monkeypatch.delenv("NLCL_BUILD_DIR", raising=False)
    root = tmp_path / "repo"
    (root / "book").mkdir(parents=True)
    (root / "book" / "intro.md").write_text("# Intro\n")
    (root / "book" / "x.py").write_text("raise SystemExit('must not run')\n")
    (root / "_toc.yml").write_text(
        yaml.safe_dump({"format": "jb-book", "root": "book/intro", "chapters": [{"file": "book/x"}]})
    )
    monkeypatch.setitem(sys.modules, "mathjax", None)  # the package that ships MathJax is missing
    lines = []
    assert site.build_book(root=root, jobs=1, echo=lines.append) == 1
    assert lines[0].startswith("nlcl book: cannot build the site: MathJax is not installed")
    assert "[book] extra" in lines[0]
    assert not (root / "_build").exists()  # nothing executed, nothing staged
