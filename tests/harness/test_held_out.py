"""nlcl.harness.records.held_out: verdicts of record from base seeds drawn at the run (issue 26, item 1)."""

import json
import random

import pytest

from nlcl.harness.records import held_out


def test_draw_seeds_avoids_the_development_set_and_earlier_sets():
    ledger = [{"seeds": [10_001, 10_002]}]
    used = held_out.used_seeds(ledger)
    assert used >= set(held_out.DEV_SEEDS) | {10_001, 10_002}
    rng = random.Random(0)
    seeds = held_out.draw_seeds(3, used, rng)
    assert len(set(seeds)) == 3 and seeds == sorted(seeds)
    assert all(held_out.DRAW_RANGE[0] <= s < held_out.DRAW_RANGE[1] and s not in used for s in seeds)

    # a draw that keeps hitting used seeds still ends with fresh ones
    class Stubborn:
        def __init__(self):
            self.values = [10_001, 10_001, 10_002, 20_000, 20_000, 30_000, 40_000]

        def randrange(self, low, high):
            return self.values.pop(0)

    assert held_out.draw_seeds(3, used, Stubborn()) == [20_000, 30_000, 40_000]
    with pytest.raises(ValueError, match="at least one seed"):
        held_out.draw_seeds(0, used)


def _rows(claim, statuses, required=True, kind="reproduction"):
    return [
        {"seed": s, "claim": claim, "kind": kind, "required": required, "status": st, "measured": 1.0}
        for s, st in statuses.items()
    ]


def _record(tmp_path=None):
    seeds = [11, 22, 33]
    rows = (
        _rows("a", {11: "pass", 22: "pass", 33: "pass"})
        + _rows("b", {11: "pass", 22: "fail", 33: "pass"})
        + _rows("c", {11: "not-reproduced", 22: "not-reproduced", 33: "not-reproduced"})
        + _rows("d", {11: "pass", 22: "not-reproduced", 33: "pass"})
        + _rows("e", {11: "pass", 22: "fail", 33: "fail"}, required=False)
        + _rows("f", {11: "pass", 22: "pass"})  # the run at seed 33 died before measuring f
        + _rows("g", {11: "pass", 22: "pass", 33: "pass"}, kind="check")
    )
    sweep = {"chapter_sha256": "x", "seeds": seeds, "errors": {}, "rows": rows, "points_time_s": 3.0}
    return held_out.build_record(seeds, {"ch": sweep}, commit="abc", numerics={"cpu": "x"}, seconds=9.0)


def test_claim_verdicts_follow_the_declared_rule():
    v = held_out.claim_verdicts(_record())
    assert v[("ch", "a")]["verdict"] == "pass"
    assert v[("ch", "b")]["verdict"] == "fail"  # required and failing at one held-out seed
    assert v[("ch", "c")]["verdict"] == "not-reproduced"
    assert v[("ch", "d")]["verdict"] == "mixed" and v[("ch", "d")]["summary"] == "2 pass, 1 not-reproduced"
    assert v[("ch", "e")]["verdict"] == "mixed"  # informational: a failure does not make it "fail"
    assert v[("ch", "f")]["statuses"][33] == "missing" and v[("ch", "f")]["verdict"] == "mixed"


def test_headline_counts_required_reproductions_only(one_chapter_repo):
    rec = _record()
    h = held_out.headline(rec, one_chapter_repo)
    assert (h["total"], h["reproduced"], h["not_reproduced"], h["failed"]) == (5, 1, 1, 3)
    assert h["seeds"] == [11, 22, 33]
    # book/ch.py's hash is not "x": the chapter was revised after the held-out run
    assert "changed since the held-out run" in h["revised"]["ch"]
    assert h["revised"] == held_out.revised_since(rec, one_chapter_repo)


def test_record_and_ledger_round_trip(tmp_path):
    rec = _record()
    (tmp_path / "record.json").write_text(json.dumps(rec))
    assert held_out.load_record(tmp_path)["seeds"] == [11, 22, 33]
    assert held_out.load_record(tmp_path / "nowhere") is None
    (tmp_path / "ledger.json").write_text(json.dumps({"sets": [{"seeds": [11, 22, 33]}]}))
    assert held_out.used_seeds(held_out.load_ledger(tmp_path)) >= {11, 22, 33}
    (tmp_path / "record.json").write_text("[]")
    with pytest.raises(ValueError, match="expected a held-out record"):
        held_out.load_record(tmp_path)


def test_run_refuses_a_dirty_tree(monkeypatch, capsys):
    from nlcl.harness.records import provenance

    monkeypatch.setattr(provenance, "git_commit", lambda root=None: "abc+dirty")
    assert held_out.main(["run"]) == 2
    assert "uncommitted changes" in capsys.readouterr().out


def test_a_partial_run_replaces_its_chapters_and_keeps_the_others():
    old = _record()
    rows = _rows("a", {77: "pass", 88: "pass", 99: "pass"})
    sweep = {"chapter_sha256": "y", "seeds": [77, 88, 99], "errors": {}, "rows": rows, "points_time_s": 1.0}
    new = held_out.build_record([77, 88, 99], {"other": sweep}, commit="def", numerics=None, seconds=1.0)
    merged = held_out.merge_records(old, new)
    assert set(merged["chapters"]) == {"ch", "other"} and merged["seeds"] == [11, 22, 33, 77, 88, 99]
    assert merged["chapters"]["ch"]["commit"] == "abc" and merged["chapters"]["other"]["commit"] == "def"
    assert held_out.merge_records(None, new) == new
    # a chapter of an older record format without its own commit keeps the old run's, not the new one's
    bare = {**old, "chapters": {"ch": {k: v for k, v in old["chapters"]["ch"].items() if k != "commit"}}}
    assert held_out.merge_records(bare, new)["chapters"]["ch"]["commit"] == old["commit"]


def test_timing_claims_measured_beside_others_are_undecided_not_failed(one_chapter_repo):
    rows = _rows("t", {11: "not-gated", 22: "not-gated", 33: "not-gated"})
    sweep = {"chapter_sha256": "x", "seeds": [11, 22, 33], "errors": {}, "rows": rows, "points_time_s": 1.0}
    rec = held_out.build_record([11, 22, 33], {"ch": sweep}, commit="abc", numerics=None, seconds=1.0)
    h = held_out.headline(rec, one_chapter_repo)
    assert (h["failed"], h["not_gated"]) == (0, 1)
    assert "1 timing claims not gated" in held_out.headline_text(rec, one_chapter_repo)


def test_attach_gives_each_claim_its_held_out_verdict(one_chapter_repo):
    rec = _record()
    out = held_out.attach(
        [{"chapter": "ch", "id": "b"}, {"chapter": "ch", "id": "new"}], rec, one_chapter_repo
    )
    assert out[0]["held_out"]["verdict"] == "fail" and out[0]["held_out"]["seeds"] == [11, 22, 33]
    assert out[0]["held_out"]["revised"] and "held_out" not in out[1]
    assert held_out.attach([{"chapter": "ch", "id": "b"}], None) == [{"chapter": "ch", "id": "b"}]


def test_compare_rows_matches_seed_and_claim_and_separates_status_from_value():
    old = _rows("a", {11: "pass", 22: "pass"}) + _rows("b", {11: "fail"}) + _rows("z", {11: "pass"})
    new = [dict(r) for r in old if r["claim"] != "z"]  # the replay lacks z
    new[1]["measured"] = 1.0 + 1e-9  # a (22): another value, the same status
    new[2]["status"] = "pass"  # b (11): another status
    cmp = held_out.compare_rows(old, new)
    assert cmp["rows"] == 4 and cmp["values_differ"] == 1
    assert [(d["seed"], d["claim"], d["record"][0]) for d in cmp["status_differs"]] == [
        (11, "b", "fail"),
        (11, "z", "pass"),
    ]
    assert cmp["status_differs"][0]["here"] == ["pass", 1.0] and cmp["status_differs"][1]["here"] is None
    rel, at = cmp["max_rel_difference"]
    assert rel == pytest.approx(1e-9) and at == "a"
    # a rounding residual of an identity (|value| ≤ 1e-12) counts as a value change, not in the largest one
    tiny = [{**old[0], "measured": 1e-15}]
    assert held_out.compare_rows(tiny, [{**tiny[0], "measured": 3e-15}])["max_rel_difference"] == (0.0, None)
    assert held_out.compare_rows(old, old) == {
        "rows": 4,
        "status_differs": [],
        "values_differ": 0,
        "max_rel_difference": (0.0, None),
    }


def test_replay_reruns_the_record_seeds_and_fails_on_a_changed_status(tmp_path, monkeypatch, capsys):
    from types import SimpleNamespace

    from nlcl.harness.records import seed_sweeps
    from nlcl.harness.run import sweep

    rec = _record()
    (tmp_path / "record.json").write_text(json.dumps(rec))
    calls = []
    replayed = [dict(r) for r in rec["chapters"]["ch"]["rows"]]

    def fake_sweep(chapter, grid, **kw):
        calls.append((chapter, grid["seed"], kw["profile"]))
        return SimpleNamespace(points=[])

    monkeypatch.setattr(sweep, "run_sweep", fake_sweep)
    monkeypatch.setattr(seed_sweeps, "record_from_points", lambda *a, **k: {"rows": replayed})
    monkeypatch.setattr(held_out, "revised_since", lambda record, root=None: {})
    report = tmp_path / "replay.json"
    assert held_out.main(["replay", "--out", str(tmp_path), "--report", str(report), "--quiet"]) == 0
    assert calls == [("ch", [11, 22, 33], "ci")]
    assert "ch: 20 of 20 rows with the record's status, 0 values differ" in capsys.readouterr().out
    assert json.loads(report.read_text())["chapters"]["ch"]["rows"] == 20
    replayed[0]["status"] = "fail"
    assert held_out.main(["replay", "--out", str(tmp_path), "--quiet"]) == 1
    assert "seed 11 a: record ['pass', 1.0], here ['fail', 1.0]" in capsys.readouterr().out
    # a chapter revised since the run, or not in the record, is not replayed
    monkeypatch.setattr(held_out, "revised_since", lambda record, root=None: {"ch": "book/ch.py changed"})
    assert held_out.main(["replay", "--out", str(tmp_path), "--chapters", "ch", "nope"]) == 0
    out = capsys.readouterr().out
    assert "ch: not replayed: revised since the run" in out and "nope: not replayed: not in the record" in out
    assert len(calls) == 2
    assert held_out.main(["replay", "--out", str(tmp_path / "none")]) == 1
