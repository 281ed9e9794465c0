"""Verdicts across base seeds: the committed ci sweep records and their section of the report."""

import json

import pytest

from nlcl.harness.records import seed_sweeps
from nlcl.harness.site import report


def claim(id, status, required=True, kind="reproduction", measured=1.0):
    return {"id": id, "status": status, "required": required, "kind": kind, "measured": measured}


def points():
    return [
        {
            "params": {"seed": 1},
            "ok": False,
            "error": "ClaimsFailed: a",
            "claims": [claim("a", "fail"), claim("b", "pass")],
        },
        {
            "params": {"seed": 0},
            "ok": True,
            "error": None,
            "claims": [claim("a", "pass"), claim("b", "pass")],
        },
        {"params": {"seed": 2}, "ok": False, "error": "KeyError: x\nmore", "claims": []},
    ]


def make_record(sha="s" * 64):
    return seed_sweeps.record_from_points(
        "ch", points(), chapter_sha256=sha, commit="abc", profile="ci", seconds=12.34
    )


def test_record_from_points_orders_seeds_and_keeps_errors():
    rec = make_record()
    assert rec["seeds"] == [0, 1, 2] and rec["points_time_s"] == 12.3 and rec["profile"] == "ci"
    assert [(r["seed"], r["claim"], r["status"]) for r in rec["rows"]] == [
        (0, "a", "pass"),
        (0, "b", "pass"),
        (1, "a", "fail"),
        (1, "b", "pass"),
    ]
    assert rec["errors"] == {"2": "KeyError: x"}


def test_claim_stability_names_changing_verdicts_and_build_breaking_seeds():
    rows = {r["claim"]: r for r in seed_sweeps.claim_stability(make_record())}
    assert not rows["a"]["stable"] and rows["a"]["breaks_build"] == [1]
    assert rows["a"]["summary"] in ("pass 1, fail 1", "fail 1, pass 1")
    # b holds at every seed that ran, but seed 2 measured nothing: not "one verdict at every seed"
    assert not rows["b"]["stable"] and rows["b"]["breaks_build"] == []
    full = {**make_record(), "seeds": [0, 1]}
    assert {r["claim"]: r for r in seed_sweeps.claim_stability(full)}["b"]["stable"]
    informational = {**full, "rows": [{**r, "required": False} for r in full["rows"]]}
    assert all(not r["breaks_build"] for r in seed_sweeps.claim_stability(informational))


def test_report_shows_the_seed_sweeps_and_flags_stale_ones(tmp_path):
    root = tmp_path
    (root / "_toc.yml").write_text("root: intro\n")
    (root / "book").mkdir()
    (root / "book" / "ch.py").write_text("# %%\n")
    sweeps = root / "results" / "seed-sweeps"
    sweeps.mkdir(parents=True)
    (sweeps / "ch.json").write_text(json.dumps(make_record()))
    template = root / "book" / "t.md"
    template.write_text("# Report\n\n" + report.REPORT_MARKER + "\n")
    report.write_report(
        [], {}, template, tmp_path / "out.md", ["ch"], full_dir=root / "results" / "claims-full"
    )
    text = (tmp_path / "out.md").read_text()
    assert "## Verdicts across base seeds" in text
    assert "| {doc}`ch` | 0, 1, 2 | 0 of 2 | 2 | `a` (seeds 1) — errors: seed 2: KeyError: x |" in text
    assert "**stale**: book/ch.py changed since the sweep (commit abc)" in text
    assert "| `a` | {doc}`ch` | reproduction | yes | 0: pass · 1: fail |" in text
    from nlcl.harness.records import provenance

    (sweeps / "ch.json").write_text(json.dumps(make_record(provenance.chapter_sha256("ch", root))))
    assert seed_sweeps.stale_sweeps(sweeps, root) == {}
    report.write_report(
        [], {}, template, tmp_path / "out.md", ["ch"], full_dir=root / "results" / "claims-full"
    )
    assert "| yes |" in (tmp_path / "out.md").read_text()
    (root / "book" / "ch.py").unlink()
    assert "no longer exists" in seed_sweeps.stale_sweeps(sweeps, root)["ch"]


def test_load_rejects_a_file_that_is_not_a_sweep_record(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"chapter": "x", "claims": []}))
    with pytest.raises(ValueError, match="seed-sweep record"):
        seed_sweeps.load_seed_sweeps(tmp_path)


def test_check_cli(one_chapter_repo, capsys):
    tmp_path = one_chapter_repo
    out = tmp_path / "sw"
    out.mkdir()
    (out / "ch.json").write_text(json.dumps(make_record()))
    assert seed_sweeps.main(["--check", "--out", str(out)]) == 1
    assert "stale:" in capsys.readouterr().out
    from nlcl.harness.records import provenance

    (out / "ch.json").write_text(json.dumps(make_record(provenance.chapter_sha256("ch", tmp_path))))
    assert seed_sweeps.main(["--check", "--out", str(out)]) == 0
    assert "every record is current" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        seed_sweeps.main(["--out", str(out)])  # neither a chapter nor --check
    with pytest.raises(SystemExit):
        seed_sweeps.main(["no-such-chapter", "--out", str(out)])


def test_report_lines_orders_chapters_and_omits_the_change_table_when_all_are_stable():
    stable = {
        **make_record(),
        "seeds": [0, 1],
        "rows": [r for r in make_record()["rows"] if r["claim"] == "b"],
    }
    stable["errors"] = {}
    lines = seed_sweeps.report_lines({"z": stable, "y": stable}, order={"z": 0, "y": 1})
    table = [line for line in lines if line.startswith("| {doc}")]
    assert [line.split("`")[1] for line in table] == ["z", "y"]
    assert all("| 1 of 1 | 0 | none | yes |" in line for line in table)
    assert not any("verdict changes with the base seed:" in line for line in lines)
    moving = seed_sweeps.report_lines({"ch": make_record()})
    assert "Claims whose verdict changes with the base seed:" in moving


def test_a_sweep_from_a_dirty_tree_is_refused(monkeypatch, capsys):
    from nlcl.harness.records import provenance, seed_sweeps

    monkeypatch.setattr(provenance, "git_commit", lambda root=None: "abc+dirty")
    assert seed_sweeps.main(["tian-fig8-landscape"]) == 2
    assert "uncommitted changes" in capsys.readouterr().out
