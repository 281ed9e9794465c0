"""nlcl.harness.records.held_out: verdicts of record from base seeds drawn at the run (issue 26, item 1),
accumulated over every held-out set at today's code and decided by a declared rule (issue 52, item 3)."""

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


# -- the decision rule and the accumulation (issue 52, item 3) -------------------------------------


def test_interval_is_clopper_pearson_and_the_rule_needs_seventeen_clean_seeds():
    from scipy.stats import binomtest

    ci = binomtest(9, 10).proportion_ci(confidence_level=0.95, method="exact")
    assert held_out.interval(9, 10) == pytest.approx((ci.low, ci.high))
    assert held_out.interval(0, 0) is None
    # n passes of n: the lower bound is (0.025)^(1/n), ≥ 0.8 from n = 17 on
    assert held_out.interval(10, 10)[0] == pytest.approx(0.025**0.1)
    assert held_out.seeds_to_decide() == 17 == held_out.N_SEEDS
    assert held_out.N_SEEDS >= held_out.MIN_SEEDS == 10
    assert held_out.decide(16, 16) == "underpowered" and held_out.decide(17, 17) == "reproduced"
    assert held_out.decide(19, 20) == "fragile" and held_out.decide(29, 30) == "reproduced"
    assert held_out.decide(25, 26) == "reproduced" and held_out.decide(24, 25) == "fragile"  # CONTRIBUTING
    assert held_out.decide(1, 10, {"pass": 1, "fail": 9}) == "fragile"
    assert held_out.decide(0, 10, {"not-reproduced": 10}) == "not-reproduced"
    assert held_out.decide(0, 10, {"not-reproduced": 9, "missing": 1}) == "fails"
    assert held_out.decide(0, 3, {"fail": 3}) == "fails" and held_out.decide(0, 0) == "none"
    with pytest.raises(ValueError, match="0 ≤ passes ≤ n"):
        held_out.interval(4, 3)
    # the power CONTRIBUTING states: at 17 seeds, a claim failing at 20% of seeds is reproduced
    # with probability 0.8^17 ≈ 0.023, one failing at 1% with 0.99^17 ≈ 0.84
    assert held_out.p_reproduced(0.8, 17) == pytest.approx(0.8**17)
    assert held_out.p_reproduced(0.99, 17) == pytest.approx(0.99**17)
    assert held_out.p_reproduced(1.0, 10) == 0.0  # 10 seeds can never decide "reproduced"


def test_accumulate_counts_every_set_at_todays_code_and_no_other(held_out_set):
    ten = list(range(100, 110))
    sets = {
        "ch": [
            held_out_set(ten, ["pass"] * 10, date="2026-12-08T01:00:00Z"),
            held_out_set(
                range(200, 207), ["pass"] * 6 + [None], date="2026-12-08T02:00:00Z"
            ),  # 206 died: missing
            held_out_set([300, 301, 302], ["fail"] * 3, sha="c0"),  # the chapter changed since
            held_out_set([400, 401, 402], ["fail"] * 3, mods="m0"),  # the nlcl code it imports changed since
            held_out_set(
                [500, 501, 502], ["fail"] * 3, mods=None
            ),  # made before records carried modules_sha256
        ],
        "gone": [held_out_set([600], ["pass"], sha="old")],
    }
    acc = held_out.accumulate(sets, {"ch": ("c1", "m1"), "gone": None})
    a = acc[("ch", "a")]
    assert (a["passes"], a["n"], a["statuses"]) == (16, 17, {"pass": 16, "missing": 1})
    assert a["seeds"] == ten + list(range(200, 207)) and len(a["sets"]) == 2 and a["excluded_sets"] == 3
    assert a["interval"] == pytest.approx(held_out.interval(16, 17)) and a["class"] == "fragile"
    assert (
        a["evidence"] == "seeded" and "16/17 pass (1 missing)" in a["summary"] and "fragile" in a["summary"]
    )
    assert not a["one_value"]  # a seed without a value
    # the seventeenth seed passing instead: reproduced
    sets["ch"][1]["rows"].append({**sets["ch"][1]["rows"][0], "seed": 206})
    a = held_out.accumulate(sets, {"ch": ("c1", "m1")})[("ch", "a")]
    assert (a["passes"], a["n"], a["class"]) == (17, 17, "reproduced") and a["one_value"]
    # nothing at today's code: shown, never counted
    g = acc[("gone", "a")]
    assert g["class"] == "revised" and g["n"] == 0 and g["earlier"] == {"passes": 1, "n": 1}
    assert (
        g["summary"]
        == "no held-out set at the current code (1 set at earlier code; 1/1 pass at earlier code, not counted)"
    )
    assert a["earlier"] == {"passes": 0, "n": 9}  # the three sets at other code: shown, not counted
    h = held_out.headline(acc)
    assert (h["total"], h["fragile"], h["revised"], h["seeds"]) == (2, 1, 1, (17, 17))


def test_a_claim_no_longer_in_the_chapter_is_not_counted(held_out_set):
    """A claim recorded only at earlier code, where every run at today's code completed without
    recording it, was withdrawn or renamed: no entry. Where a run at today's code died, the claim is
    missing at that seed and counted."""
    old = held_out_set([1, 2, 3], ["pass"] * 3, sha="c0", claim="renamed")
    today = held_out_set(range(100, 110), ["pass"] * 10)
    acc = held_out.accumulate({"ch": [old, today]}, {"ch": ("c1", "m1")})
    assert set(acc) == {("ch", "a")}
    died = {**held_out_set(range(200, 210), ["pass"] * 9 + [None]), "errors": {"209": "killed"}}
    acc = held_out.accumulate({"ch": [old, died]}, {"ch": ("c1", "m1")})
    assert acc[("ch", "renamed")]["statuses"] == {"missing": 10}


def test_artifact_and_unseeded_verdicts_are_labelled_and_not_counted(held_out_set):
    seeds = list(range(10, 30))
    sets = {
        "ch": [
            held_out_set(seeds, ["pass"] * 20, claim="read", computed="read from results/grid.json"),
            held_out_set(seeds, ["pass"] * 20, claim="fixed"),
            held_out_set(seeds, ["not-gated"] * 20, claim="timing"),
        ]
    }
    merged = {**sets["ch"][0], "rows": [r for s in sets["ch"] for r in s["rows"]]}
    acc = held_out.accumulate({"ch": [merged]}, {"ch": ("c1", "m1")}, unseeded={("ch", "fixed")})
    read, fixed, timing = acc[("ch", "read")], acc[("ch", "fixed")], acc[("ch", "timing")]
    assert read["class"] == "artifact" and read["read_from"] == "read from results/grid.json"
    assert "not held-out evidence: read from results/grid.json" in read["summary"]
    assert fixed["class"] == "unseeded" and "nothing random" in fixed["summary"]
    assert timing["class"] == "not-gated" and timing["n"] == 0
    h = held_out.headline(acc)
    assert (h["reproduced"], h["artifact"], h["unseeded"], h["not_gated"]) == (0, 1, 1, 1)
    text = held_out.headline_text(acc)
    assert "1 read from committed artifacts" in text and "1 without randomness" in text
    assert f"declared on {held_out.RULE_DATE}" in "\n".join(held_out.report_lines(acc))
    # a declaration of no randomness that the rows contradict
    merged["rows"][20]["measured"] = 2.0
    assert held_out.unseeded_problems({"ch": [merged]}, {("ch", "fixed")}) == [
        f"ch/fixed: declared seeded: false, yet 2 different values at held-out seeds {seeds}"
    ]
    assert held_out.unseeded_problems({"ch": [merged]}, {("ch", "read")}) == []


def test_sets_are_appended_never_rewritten_and_the_record_counts_too(held_out_set, tmp_path):
    rec = held_out_set([11, 22], ["pass", "pass"])
    assert held_out.append_sets(tmp_path, {"ch": rec}, "abc", "2026-12-08T00:00:00Z") == ["ch"]
    assert held_out.append_sets(tmp_path, {"ch": {**rec, "rows": []}}) == []  # the same seeds: kept as it was
    with pytest.raises(ValueError, match=r"seeds \[22\] are in an archived set"):
        held_out.append_sets(tmp_path, {"ch": held_out_set([22, 33], ["pass", "pass"])})
    held_out.append_sets(tmp_path, {"ch": held_out_set([44], ["fail"], date="2026-12-09T00:00:00Z")})
    sets = held_out.load_sets(tmp_path)
    assert [s["seeds"] for s in sets["ch"]] == [[11, 22], [44]] and len(sets["ch"][0]["rows"]) == 2
    # record.json's sets that the archive lacks are read too (a record made before the archive)
    record = held_out.build_record(
        [55], {"other": held_out_set([55], ["pass"])}, commit="c", numerics=None, seconds=1
    )
    (tmp_path / "record.json").write_text(json.dumps(record))
    assert set(held_out.load_sets(tmp_path)) == {"ch", "other"}
    acc = held_out.evidence(tmp_path, tmp_path)  # no book here: every set is at other code
    assert acc[("ch", "a")]["class"] == "revised"
    assert "at the chapter's current code: none yet" in held_out.headline_text(acc)
    assert held_out.evidence(tmp_path / "none") is None


def test_sets_from_history_reads_every_committed_record(held_out_set, tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "_toc.yml").write_text("root: intro\n")
    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    path = tmp_path / "results" / "held-out" / "record.json"
    path.parent.mkdir(parents=True)
    first = held_out.build_record(
        [1], {"ch": held_out_set([1], ["pass"])}, commit="c1", numerics=None, seconds=1
    )
    path.write_text(json.dumps(first))
    git("add", ".")
    git("commit", "-q", "-m", "one")
    second = held_out.merge_records(
        first,
        held_out.build_record(
            [2], {"other": held_out_set([2], ["fail"])}, commit="c2", numerics=None, seconds=1
        ),
    )
    second["chapters"]["ch"]["chapter_sha256"] = "rehashed"  # a later commit rewrote the hash, not the rows
    path.write_text(json.dumps(second))
    git("commit", "-q", "-am", "two")
    found = held_out.sets_from_history(tmp_path)
    assert sorted(found) == ["ch", "other"]
    assert [s["seeds"] for s in found["ch"]] == [[1]] and found["ch"][0]["chapter_sha256"] == "rehashed"
    assert found["ch"][0]["commit"] == "c1" and found["ch"][0]["archived_from"].startswith("git ")
    assert found["other"][0]["rows"][0]["status"] == "fail"


def test_run_refuses_fewer_than_the_minimum_seeds(monkeypatch, capsys):
    from nlcl.harness.records import provenance

    monkeypatch.setattr(provenance, "git_commit", lambda root=None: "abc")
    assert held_out.main(["run", "--n", "3"]) == 2
    assert "at least 10 seeds" in capsys.readouterr().out


def test_attach_and_report_lines_show_the_accumulated_verdict(held_out_set):
    acc = held_out.accumulate(
        {"ch": [held_out_set(range(10, 20), ["pass"] * 9 + ["not-reproduced"])]}, {"ch": ("c1", "m1")}
    )
    out = held_out.attach([{"chapter": "ch", "id": "a"}, {"chapter": "ch", "id": "new"}], acc)
    h = out[0]["held_out"]
    assert (h["class"], h["passes"], h["n"], h["sets"], h["revised"]) == ("fragile", 9, 10, 1, False)
    assert h["summary"].startswith("9/10 pass (1 not-reproduced), 95% CI [0.55, 1.00]: fragile")
    assert "held_out" not in out[1] and held_out.attach([{"chapter": "ch", "id": "a"}], None)[0] == {
        "chapter": "ch",
        "id": "a",
    }
    lines = held_out.report_lines(acc)
    assert "## Held-out evidence" in lines and any(
        line.startswith("| `a` |") and "9/10" in line for line in lines
    )
    assert held_out.report_lines(None) == []


def test_rows_keep_the_diagnostics_an_explanation_tested():
    from nlcl.harness.records import seed_sweeps

    claims = [
        {
            "id": "x",
            "status": "not-reproduced",
            "required": True,
            "measured": 0.3,
            "note_prediction": {"kind": "diagnostics", "diagnostics": {"gap": 0.01}},
        },
        {
            "id": "y",
            "status": "pass",
            "required": True,
            "measured": 1.0,
            "note_prediction": {"kind": "band", "excluded": 0.9},
        },
    ]
    rec = seed_sweeps.record_from_points(
        "ch",
        [{"params": {"seed": 7}, "claims": claims}],
        chapter_sha256="s",
        commit="c",
        profile="ci",
        seconds=1.0,
        numerics={},
    )
    assert rec["rows"][0]["diagnostics"] == {"gap": 0.01} and "diagnostics" not in rec["rows"][1]


def test_declared_unseeded_reads_the_ledgers(one_chapter_repo):
    (one_chapter_repo / "book" / "claims").mkdir()
    (one_chapter_repo / "book" / "claims" / "ch.yaml").write_text(
        "chapter: ch\n"
        "defaults:\n  seeded: false\n  kind: check\n"
        "claims:\n"
        "  - {id: a, source: s, statement: t, check: {at_least: 1}}\n"
        "  - {id: b, source: s, statement: t, check: {at_least: 1}, seeded: true}\n"
    )
    assert held_out.declared_unseeded(one_chapter_repo) == {("ch", "a")}


def test_a_run_appends_its_sets_and_reads_the_accumulated_verdicts(one_chapter_repo, monkeypatch, capsys):
    from types import SimpleNamespace

    from nlcl.harness.records import provenance

    monkeypatch.setattr(provenance, "git_commit", lambda root=None: "abc")

    def fake_sweep(chapter, seeds, args):
        claims = lambda s: [
            {"id": "a", "status": "pass" if s % 2 else "fail", "required": True, "measured": s}
        ]  # noqa: E731
        return SimpleNamespace(
            points=[{"params": {"seed": s}, "claims": claims(s), "seconds": 1.0} for s in seeds]
        )

    monkeypatch.setattr(held_out, "_sweep", fake_sweep)
    out = one_chapter_repo / "held"
    for _ in range(2):
        assert held_out.main(["run", "--n", "10", "--chapters", "ch", "--out", str(out), "--quiet"]) == 0
    sets = held_out.load_sets(out)["ch"]
    assert len(sets) == 2 and all(len(s["seeds"]) == 10 and len(s["rows"]) == 10 for s in sets)
    assert len(held_out.load_ledger(out)) == 2 and held_out.load_record(out)["seeds"] == sets[1]["seeds"]
    a = held_out.evidence(out, one_chapter_repo)[("ch", "a")]
    assert a["n"] == 20 and len(a["sets"]) == 2
    assert f"ch a: {a['summary']} required" in capsys.readouterr().out


# -- paper scale at held-out seeds: the full profile (issue 52, item 4) ------------------------------


def test_the_full_profile_has_its_own_directory_seed_counts_and_errors():
    assert held_out.PROFILES == ("ci", "full")
    assert held_out.PROFILE_DIRS == {"ci": held_out.HELD_OUT_DIR, "full": held_out.HELD_OUT_FULL_DIR}
    assert str(held_out.HELD_OUT_FULL_DIR) == "results/held-out-full"
    assert held_out.seed_counts("ci") == (held_out.N_SEEDS, held_out.MIN_SEEDS) == (17, 10)
    assert held_out.seed_counts("full") == (3, 3)
    # 3 passes of 3 cannot reach "reproduced": the full profile's result is a pass count, not a class
    assert (
        held_out.interval(3, 3)[0] == pytest.approx(0.025 ** (1 / 3))
        and held_out.decide(3, 3) == "underpowered"
    )
    assert held_out.check_profile("full") == "full"
    for bad in ("paper", None, "FULL"):
        with pytest.raises(ValueError, match="a held-out run takes one of ci, full"):
            held_out.check_profile(bad)
    with pytest.raises(ValueError, match="one of ci, full"):
        held_out.seed_counts("paper")
    with pytest.raises(ValueError, match="one of ci, full"):
        held_out.build_record([1], {}, commit="c", numerics=None, seconds=1, profile="paper")


def test_a_full_record_says_its_profile_and_is_never_merged_with_a_ci_one(held_out_set, tmp_path):
    sweep = {**held_out_set([77, 88, 99], ["pass"] * 3), "chapter_sha256": "y"}
    full = held_out.build_record(
        [77, 88, 99], {"ch": sweep}, commit="f", numerics=None, seconds=1, profile="full"
    )
    assert full["profile"] == "full" and full["chapters"]["ch"]["profile"] == "full"
    assert held_out.build_record([1], {}, commit="c", numerics=None, seconds=1)["profile"] == "ci"
    with pytest.raises(ValueError, match="of profile 'ci' cannot take a run of profile 'full'"):
        held_out.merge_records(_record(), full)
    assert held_out.merge_records(full, full)["profile"] == "full"
    (tmp_path / "record.json").write_text(json.dumps(full))
    assert held_out.load_record(tmp_path)["artifact"] == "results/held-out-full/record.json"
    (tmp_path / "record.json").write_text(json.dumps({**full, "profile": "paper"}))
    with pytest.raises(ValueError, match="profile 'paper'"):
        held_out.load_record(tmp_path)


def test_load_sets_keeps_the_profiles_apart(held_out_set, tmp_path):
    held_out.append_sets(
        tmp_path, {"ch": {**held_out_set([11, 22], ["pass"] * 2), "profile": "full"}}, "c", "d"
    )
    sets = held_out.load_sets(tmp_path, "full")
    assert sets["ch"][0]["profile"] == "full" and held_out.load_sets(tmp_path)["ch"] == sets["ch"]
    with pytest.raises(ValueError, match=r"sets at seeds \[\[11, 22\]\] are not of profile 'ci'"):
        held_out.load_sets(tmp_path, "ci")
    with pytest.raises(ValueError, match=r"sets at seeds \[\[11, 22\]\] are not of profile 'ci'"):
        held_out.evidence(tmp_path)  # the ci verdicts of record never count a full set
    held_out.append_sets(
        tmp_path / "ci", {"ch": held_out_set([33], ["pass"])}
    )  # a set of before the field: ci
    assert "profile" not in held_out.load_sets(tmp_path / "ci", "ci")["ch"][0]
    with pytest.raises(ValueError, match="not of profile 'full'"):
        held_out.load_sets(tmp_path / "ci", "full")
    with pytest.raises(ValueError, match="one of ci, full"):
        held_out.load_sets(tmp_path, "paper")


def test_all_ledgers_reads_both_profiles_and_the_run_directory(tmp_path):
    def ledger(directory, *seeds):
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "ledger.json").write_text(json.dumps({"sets": [{"seeds": list(seeds)}]}))

    ledger(tmp_path / held_out.HELD_OUT_DIR, 10_001, 10_002)
    ledger(tmp_path / held_out.HELD_OUT_FULL_DIR, 20_001)
    ledger(tmp_path / "elsewhere", 30_001)
    both = held_out.all_ledgers(root=tmp_path)
    assert sorted(s for e in both for s in e["seeds"]) == [10_001, 10_002, 20_001]
    # the run's own directory is read once, whether or not it is one of the two
    assert len(held_out.all_ledgers(tmp_path / held_out.HELD_OUT_FULL_DIR, tmp_path)) == 2
    used = held_out.used_seeds(held_out.all_ledgers(tmp_path / "elsewhere", tmp_path))
    assert used == set(held_out.DEV_SEEDS) | {10_001, 10_002, 20_001, 30_001}
    assert held_out.all_ledgers(root=tmp_path / "nothing") == []


def _fake_sweep(calls):
    from types import SimpleNamespace

    def fake(chapter, seeds, args):
        calls.append((chapter, list(seeds), args.profile))
        claims = [{"id": "a", "status": "pass", "required": True, "measured": 1.0}]
        return SimpleNamespace(
            points=[{"params": {"seed": s}, "claims": claims, "seconds": 1.0} for s in seeds]
        )

    return fake


def test_a_full_run_draws_seeds_of_neither_ledger_and_records_its_profile(
    one_chapter_repo, monkeypatch, capsys
):
    from nlcl.harness.records import provenance

    monkeypatch.setattr(provenance, "git_commit", lambda root=None: "abc")
    calls = []
    monkeypatch.setattr(held_out, "_sweep", _fake_sweep(calls))
    ci = one_chapter_repo / held_out.HELD_OUT_DIR
    ci.mkdir(parents=True)
    (ci / "ledger.json").write_text(json.dumps({"sets": [{"seeds": [10_001, 10_002]}]}))
    drawn = []

    def draw(n, used, rng=None):
        drawn.append(set(used))
        return sorted(max(used) + 1 + i for i in range(n))

    monkeypatch.setattr(held_out, "draw_seeds", draw)
    assert held_out.main(["run", "--profile", "full", "--chapters", "ch", "--quiet"]) == 0
    full = one_chapter_repo / held_out.HELD_OUT_FULL_DIR
    record = held_out.load_record(full)
    assert record["profile"] == "full" and record["seeds"] == [10_003, 10_004, 10_005]
    assert calls == [("ch", [10_003, 10_004, 10_005], "full")]
    assert {r["profile"] for r in record["chapters"]["ch"]["rows"]} == {"full"}
    assert held_out.load_ledger(full)[0]["profile"] == "full"
    assert held_out.load_sets(full, "full")["ch"][0]["profile"] == "full"
    assert drawn[0] >= set(held_out.DEV_SEEDS) | {10_001, 10_002}
    out = capsys.readouterr().out
    assert "profile full" in out and "paper scale at held-out seeds" in out
    # the next draw of either profile avoids the full set's seeds too; a chapter run alone is merged
    assert held_out.main(["run", "--n", "10", "--chapters", "ch", "--quiet"]) == 0
    assert drawn[1] >= {10_001, 10_002, 10_003, 10_004, 10_005}
    assert held_out.main(["run", "--profile", "full", "--n", "4", "--chapters", "ch", "--quiet"]) == 0
    assert (
        len(held_out.load_sets(full, "full")["ch"]) == 2 and held_out.load_record(full)["profile"] == "full"
    )
    assert drawn[2] >= set(held_out.load_record(ci)["seeds"])


def test_a_full_run_refuses_bad_input(one_chapter_repo, monkeypatch, capsys):
    from nlcl.harness.records import provenance

    monkeypatch.setattr(provenance, "git_commit", lambda root=None: "abc")
    monkeypatch.setattr(held_out, "_sweep", _fake_sweep([]))
    assert held_out.main(["run", "--profile", "full", "--n", "2"]) == 2
    assert "a held-out full set has at least 3 seeds (default 3" in capsys.readouterr().out
    assert held_out.main(["run", "--n", "3"]) == 2
    assert "a held-out ci set has at least 10 seeds (default 17" in capsys.readouterr().out
    assert held_out.main(["run", "--profile", "full", "--chapters", "nope"]) == 2
    assert "--chapters: no chapter nope" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        held_out.main(["run", "--profile", "paper"])
    assert "invalid choice: 'paper'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        held_out.main(["check", "--n", "3"])
    assert "only a run draws seeds" in capsys.readouterr().err
    # a directory of the other profile's sets is refused before anything runs
    assert held_out.main(["run", "--chapters", "ch", "--n", "10", "--quiet"]) == 0
    capsys.readouterr()
    assert held_out.main(["run", "--profile", "full", "--out", str(held_out.HELD_OUT_DIR), "--quiet"]) == 2
    assert "holds held-out sets of profile ci" in capsys.readouterr().out


def test_check_and_replay_read_the_full_record_at_its_profile(held_out_set, tmp_path, monkeypatch, capsys):
    from types import SimpleNamespace

    from nlcl.harness.records import seed_sweeps
    from nlcl.harness.run import sweep

    sweep_rec = {**held_out_set([77, 88, 99], ["pass"] * 3), "chapter_sha256": "y"}
    full = held_out.build_record(
        [77, 88, 99], {"ch": sweep_rec}, commit="f", numerics=None, seconds=1, profile="full"
    )
    (tmp_path / "record.json").write_text(json.dumps(full))
    calls = []

    def fake_sweep(chapter, grid, **kw):
        calls.append((chapter, grid["seed"], kw["profile"]))
        return SimpleNamespace(points=[])

    monkeypatch.setattr(sweep, "run_sweep", fake_sweep)
    monkeypatch.setattr(seed_sweeps, "record_from_points", lambda *a, **k: {"rows": sweep_rec["rows"]})
    monkeypatch.setattr(held_out, "revised_since", lambda record, root=None: {})
    report = tmp_path / "replay.json"
    assert held_out.main(["replay", "--out", str(tmp_path), "--report", str(report), "--quiet"]) == 0
    assert calls == [("ch", [77, 88, 99], "full")]  # the record's profile, without --profile
    assert json.loads(report.read_text())["profile"] == "full"
    assert held_out.main(["replay", "--profile", "full", "--out", str(tmp_path), "--quiet"]) == 0
    assert calls[-1][2] == "full"
    capsys.readouterr()
    assert held_out.main(["replay", "--profile", "ci", "--out", str(tmp_path)]) == 2
    assert "holds a full-profile record" in capsys.readouterr().out
    assert held_out.main(["check", "--profile", "ci", "--out", str(tmp_path)]) == 2
    assert held_out.main(["check", "--profile", "full", "--out", str(tmp_path)]) == 0
    assert held_out.main(["check", "--profile", "full", "--out", str(tmp_path / "none")]) == 1
    assert "no held-out record" in capsys.readouterr().out
