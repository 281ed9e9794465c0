from pathlib import Path

from nlcl.harness.records import provenance, sources


def test_repo_root_found_from_tests():
    root = provenance.repo_root(Path(__file__).parent)
    assert (root / "_toc.yml").is_file()


def test_repo_root_env(monkeypatch, tmp_path):
    monkeypatch.setenv("NLCL_ROOT", str(tmp_path))
    assert provenance.repo_root() == tmp_path.resolve()


def test_build_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("NLCL_BUILD_DIR", raising=False)
    assert provenance.build_dir(tmp_path) == tmp_path / "_build"
    monkeypatch.setenv("NLCL_BUILD_DIR", str(tmp_path / "b"))
    assert provenance.build_dir() == (tmp_path / "b").resolve()
    # a relative NLCL_BUILD_DIR is taken from the book's root, whatever the current directory
    monkeypatch.setenv("NLCL_BUILD_DIR", "out")
    monkeypatch.chdir(tmp_path)
    assert provenance.build_dir(tmp_path / "root") == (tmp_path / "root" / "out").resolve()


def test_git_commit(monkeypatch, tmp_path):
    monkeypatch.setenv("NLCL_COMMIT", "deadbeef")
    assert provenance.git_commit() == "deadbeef"
    monkeypatch.delenv("NLCL_COMMIT")
    assert provenance.git_commit(tmp_path) == "unknown"  # not a git checkout
    commit = provenance.git_commit(Path(__file__).parents[2])
    assert commit == "unknown" or len(commit.split("+")[0]) == 12


def test_versions_and_collect():
    versions = provenance.library_versions()
    assert {"python", "nlcl", "torch", "numpy"} <= set(versions)
    assert provenance.library_versions(("no-such-package-xyz",))["no-such-package-xyz"] == "not installed"
    rec = provenance.collect(profile="ci", params={"a": 1}, device="cpu", extra=2)
    assert rec["profile"] == "ci" and rec["parameters"] == {"a": 1} and rec["extra"] == 2 and rec["date"]
    assert provenance.collect(profile="ci", params={}, device="cpu", commit="abc123")["commit"] == "abc123"


def test_git_commit_ignores_changes_under_results(monkeypatch, tmp_path):
    import subprocess

    monkeypatch.delenv("NLCL_COMMIT", raising=False)

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "a.csv").write_text("x\n1\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    clean = provenance.git_commit(tmp_path)
    assert "+" not in clean and len(clean) == 12
    (tmp_path / "results" / "a.csv").write_text("x\n2\n")
    assert provenance.git_commit(tmp_path) == clean  # a rewritten artifact is an output, not code
    (tmp_path / "code.py").write_text("x = 2\n")
    assert provenance.git_commit(tmp_path) == clean + "+dirty"


def test_stale_sources_and_print_stale(one_chapter_repo, capsys):
    sha = provenance.chapter_sha256("ch", one_chapter_repo)
    records = {
        "ch": {"chapter_sha256": sha, "commit": "c"},
        "gone": {"chapter_sha256": sha, "commit": "c"},
    }
    assert sources.stale_sources(records, one_chapter_repo) == {"gone": "book/gone.py no longer exists"}
    records["ch"] = {"chapter_sha256": "0" * 64, "commit": "abc"}
    stale = sources.stale_sources(records, one_chapter_repo, since="the sweep")
    assert stale["ch"] == "book/ch.py changed since the sweep (commit abc)"
    assert "no chapter_sha256" in sources.stale_sources({"ch": {}}, one_chapter_repo)["ch"]
    assert provenance.print_stale("out", stale) == 1
    assert "stale: out/ch.json: book/ch.py changed since the sweep" in capsys.readouterr().out
    assert provenance.print_stale("out", {}) == 0
    assert "out: every record is current" in capsys.readouterr().out


def test_every_record_names_its_numeric_environment(tmp_path):
    """Provenance, paper-scale and seed-sweep records carry nlcl.core.numerics.environment()
    (issue 29): CPU, torch's kernels and threads, MKL's code path."""
    import json

    from nlcl.harness.records import paper_scale, seed_sweeps

    rec = provenance.collect(profile="full", params={}, device="cpu", commit="abc")
    env = rec["numerics"]
    assert {"cpu", "torch_capability", "torch_threads", "mkl", "portable", "mode"} <= set(env)
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps([{"id": "c", "profile": "full", "status": "pass"}]))
    prov = tmp_path / "provenance.json"
    prov.write_text(json.dumps(rec))
    full = paper_scale.save_full_record("ch", claims, prov, tmp_path / "out.json")
    assert full["numerics"] == env
    sweep = seed_sweeps.record_from_points(
        "ch", [], chapter_sha256="x", commit="abc", profile="ci", seconds=1.0
    )
    assert sweep["numerics"]["cpu"] == env["cpu"]


def test_a_ledger_change_makes_the_chapter_source_change(one_chapter_repo):
    """book/claims/<chapter>.yaml is part of the chapter's source hash (records go stale with it)."""
    plain = provenance.chapter_sha256("ch", one_chapter_repo)
    assert plain == provenance.source_sha256(one_chapter_repo / "book" / "ch.py", one_chapter_repo)
    (one_chapter_repo / "book" / "claims").mkdir()
    ledger = one_chapter_repo / "book" / "claims" / "ch.yaml"
    ledger.write_text("chapter: ch\nclaims: []\n")
    with_ledger = provenance.chapter_sha256("ch", one_chapter_repo)
    ledger.write_text("chapter: ch\nclaims: [] # a comment is not data\n")
    assert provenance.chapter_sha256("ch", one_chapter_repo) == with_ledger
    ledger.write_text("chapter: ch\nclaims: [{id: a}]\n")
    assert len({plain, with_ledger, provenance.chapter_sha256("ch", one_chapter_repo)}) == 3


def test_the_source_hash_counts_code_cells_not_prose(tmp_path):
    """A chapter's records describe what computes its numbers: editing a markdown cell keeps the
    hash, editing a code cell (or its tags) changes it."""
    src = tmp_path / "book" / "ch.py"
    src.parent.mkdir()
    (tmp_path / ".git").mkdir()
    cells = ["# %% [markdown]\n# Some prose.\n", "# %% tags=['parameters']\nx = 1\n", "# %%\ny = x + 1\n"]
    src.write_text("\n".join(cells))
    first = provenance.source_sha256(src, tmp_path)
    src.write_text("\n".join(["# %% [markdown]\n# Other prose, $\\alpha$.\n", *cells[1:]]))
    assert provenance.source_sha256(src, tmp_path) == first
    src.write_text("\n".join([cells[0], "# %%\nx = 1\n", cells[2]]))
    assert provenance.source_sha256(src, tmp_path) != first
    src.write_text("\n".join([*cells[:2], "# %%\ny = x + 2\n"]))
    assert provenance.source_sha256(src, tmp_path) != first


def test_file_code_and_ledger_text(tmp_path):
    """file_sha256 hashes bytes; code_text keeps code cells and their tags only; ledger_text is the
    ledger as data."""
    import hashlib

    src = tmp_path / "ch.py"
    src.write_text("# %% [markdown]\n# prose\n\n# %% tags=['parameters']\nx = 1\n")
    assert provenance.file_sha256(src) == hashlib.sha256(src.read_bytes()).hexdigest()
    code = provenance.code_text(src)
    assert "prose" not in code and "x = 1" in code and "parameters" in code
    led = tmp_path / "l.yaml"
    led.write_text("# a comment\nb: &x {c: 1}\na: *x\n")
    assert provenance.ledger_text(led) == '{"a": {"c": 1}, "b": {"c": 1}}'
