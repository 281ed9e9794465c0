import functools
import json

import pytest

from nlcl.harness.records import paper_scale
from nlcl.harness.site import report


def rec(id, status="pass", kind="reproduction", chapter="ch", **extra):
    base = {
        "id": id,
        "chapter": chapter,
        "source": "Tian 2023",
        "statement": "s",
        "expected": "≥ 8",
        "measured": 9,
        "tolerance": "≥ 8",
        "status": status,
        "required": True,
        "profile": "ci",
        "commit": "c",
        "note": None,
        "kind": kind,
        "revised": [],
        "note_scope": None,
        "note_stale": False,
    }
    return {**base, **extra}


def write_full(directory, chapter, claims, profile="full"):
    build = directory / "build"
    (build / "claims").mkdir(parents=True, exist_ok=True)
    (build / "provenance").mkdir(parents=True, exist_ok=True)
    (build / "claims" / f"{chapter}.json").write_text(json.dumps([{**c, "profile": profile} for c in claims]))
    prov = {
        "profile": profile,
        "commit": "f00",
        "date": "2026-11-23T16:00:00",
        "device": "cpu",
        "wall_time_s": 12.0,
    }
    (build / "provenance" / f"{chapter}.json").write_text(json.dumps(prov))
    return paper_scale.main(["--build", str(build), "--out", str(directory / "full"), chapter])


def make_report(tmp_path, records, full=None):
    template = tmp_path / "t.md"
    template.write_text("# Report\n\n" + report.REPORT_MARKER + "\n")
    counts = report.write_report(
        records,
        {"ch": {"seconds": 1.5, "ok": True, "profile": "ci"}},
        template,
        tmp_path / "out.md",
        ["ch"],
        full_dir=full or tmp_path / "none",
    )
    return counts, (tmp_path / "out.md").read_text()


def test_report_has_reproductions_and_checks_tables_and_counts_reproductions_only(tmp_path):
    records = [
        rec("a"),
        rec("k", kind="check"),
        rec("b", status="not-reproduced", note="because", note_scope="profile ci"),
    ]
    counts, text = make_report(tmp_path, records)
    assert counts["pass"] == 1 and counts["not-reproduced"] == 1 and counts["checks"] == 1
    assert text.startswith("# Report") and "**2 reproductions**: 1 reproduced, 1 not reproduced" in text
    repro, checks = text.index("## Reproductions"), text.index("## Checks")
    assert repro < text.index("| `a` |") < checks < text.index("| `k` |")
    assert "observed in: profile ci" in text and "because" in text and "1.5 s" in text
    assert "not run at paper scale" in text and report.REPORT_MARKER not in text


def test_report_headline_at_its_marker(tmp_path):
    template = tmp_path / "t.md"
    template.write_text(
        f"# Report\n\nIntro.\n\n{report.HEADLINE_MARKER}\n\nDashboard.\n\n{report.REPORT_MARKER}\n"
    )
    report.write_report([rec("a"), rec("b", kind="check")], {}, template, tmp_path / "out.md", ["ch"])
    text = (tmp_path / "out.md").read_text()
    assert report.HEADLINE_MARKER not in text and report.REPORT_MARKER not in text
    assert text.count("**1 reproductions**") == 1
    assert text.index("Intro.") < text.index("**1 reproductions**") < text.index("Dashboard.")
    assert text.index("Dashboard.") < text.index("## Reproductions")
    # Without the marker the headline opens the report, as before.
    (tmp_path / "elsewhere").mkdir()
    _, plain = make_report(tmp_path / "elsewhere", [rec("a")])
    assert plain.index("**1 reproductions**") < plain.index("## Reproductions")


def test_report_flags_stale_explanation_and_revisions(tmp_path):
    rev = [{"from": "≤ 0.01", "to": "≤ 0.05", "reason": "seen 0.031", "date": "2026-11-23"}]
    records = [rec("a", note="old why", note_stale=True), rec("b", revised=rev)]
    _, text = make_report(tmp_path, records)
    assert "## Stale explanations" in text and "old why" in text and "(stale explanation)" in text
    assert "## Tolerances revised after results were seen" in text and "seen 0.031" in text
    assert "(tolerance revised)" in text


def test_report_separates_explanations_that_apply_at_other_base_seeds(tmp_path):
    """A passing claim with an explanation is stale unless a current seed sweep shows it not
    reproduced at some base seed: then the report says at which."""
    sweeps = tmp_path / "sweeps"
    sweeps.mkdir()
    rows = [
        {"seed": s, "claim": cid, "kind": "reproduction", "required": True, "status": st, "measured": 1}
        for s, statuses in (
            (0, ("pass", "pass")),
            (1, ("not-reproduced", "pass")),
            (2, ("not-reproduced", "pass")),
        )
        for cid, st in zip(("a", "b"), statuses)
    ]
    (sweeps / "ch.json").write_text(
        json.dumps({"chapter": "ch", "profile": "ci", "seeds": [0, 1, 2], "rows": rows})
    )
    template = tmp_path / "t.md"
    template.write_text(report.REPORT_MARKER + "\n")
    records = [rec("a", note="why a", note_stale=True), rec("b", note="why b", note_stale=True)]
    report.write_report(
        records, {}, template, tmp_path / "out.md", ["ch"], full_dir=tmp_path / "none", sweeps_dir=sweeps
    )
    text = (tmp_path / "out.md").read_text()
    other = text.index("## Explanations that apply at other base seeds")
    stale = text.index("## Stale explanations")
    assert other < text.index("why a") < stale < text.index("why b")
    assert "not reproduced at base seeds 1, 2" in text


def test_report_shows_seed_statistics_and_small_margins(tmp_path):
    seeds = {
        "n": 3,
        "mean": 0.01,
        "std": 0.02,
        "holds_fraction": 2 / 3,
        "values": [0, 0.01, 0.02],
        "rule": "holds on ≥ 80% of seeds",
        "margin_within_spread": True,
    }
    _, text = make_report(tmp_path, [rec("a", status="fail", seeds=seeds)])
    assert "0.01 ± 0.02 (n=3), holds on 67%" in text and "margin < spread" in text
    names = {
        "n": 3,
        "mean": None,
        "std": None,
        "holds_fraction": 2 / 3,
        "values": ["relu", "x", "relu"],
        "rule": "r",
    }
    _, text = make_report(tmp_path, [rec("b", seeds=names)])
    assert "relu, x, relu (n=3), holds on 67%" in text
    nan = {**names, "values": [1.0, float("nan"), 1.0]}
    _, text = make_report(tmp_path, [rec("c", status="invalid", seeds=nan)])
    assert "3 seeds, non-finite" in text


def test_report_paper_scale_verdict_beside_ci(tmp_path):
    assert write_full(tmp_path, "ch", [rec("a"), rec("b")]) == 0
    records = [rec("a", status="not-reproduced", note="ci too small"), rec("b"), rec("c", chapter="other")]
    counts, text = make_report(tmp_path, records, full=tmp_path / "full")
    assert counts["reproduced"] == 3 and counts["pass"] == 2
    assert "✓ pass (ci caveat)" in text and "## Where ci and paper scale differ" in text
    assert "`results/claims-full/ch.json`" in text and "`f00`" in text
    merged = report.merge_full(records, paper_scale.load_full_records(tmp_path / "full"))
    assert merged[0]["full"]["status"] == "pass" and "full" not in merged[2]
    assert report.published_verdict(merged[0]) == "reproduced"
    assert report.published_verdict(rec("x", status="invalid")) == "invalid"


def test_paper_scale_refuses_ci_records(tmp_path, capsys):
    assert write_full(tmp_path, "ch", [rec("a")], profile="ci") == 2
    assert "refused" in capsys.readouterr().out
    with pytest.raises(ValueError, match="needs 'full'"):
        paper_scale.save_full_record(
            "ch",
            tmp_path / "build" / "claims" / "ch.json",
            tmp_path / "build" / "provenance" / "ch.json",
            tmp_path / "x",
        )
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.json").write_text("[]")
    with pytest.raises(ValueError, match="paper-scale record"):
        paper_scale.load_full_records(tmp_path / "bad")


def test_save_full_record_fields(tmp_path):
    write_full(tmp_path, "ch", [rec("a")])
    data = json.loads((tmp_path / "full" / "ch.json").read_text())
    assert data["profile"] == "full" and data["commit"] == "f00" and data["wall_time_s"] == 12.0
    assert paper_scale.save_full_record and paper_scale.FULL_DIR.name == "claims-full"


def test_report_escapes_pipes_in_cells(tmp_path):
    _, text = make_report(
        tmp_path, [rec("a", statement="max |x − y|", kind="check"), rec("b", statement="|z|")]
    )
    assert "max \\|x − y\\|" in text and "| \\|z\\| |" in text


def test_paper_scale_takes_the_newest_finished_full_run_folder(tmp_path, monkeypatch):
    """``python -m nlcl.harness.records.paper_scale CHAPTER`` reads run folders (runs/<chapter>/<run id>/):
    the newest full-profile run that finished (complete, or its required claims failed); not a ci run,
    not an interrupted one."""
    from nlcl.core.validate import ParameterError

    monkeypatch.setenv("NLCL_RUNS_DIR", str(tmp_path / "runs"))

    def folder(name, profile, status, error=""):
        f = tmp_path / "runs" / "ch" / name
        (f / "claims").mkdir(parents=True)
        (f / "claims" / "ch.json").write_text(json.dumps([{**rec(name), "profile": profile}]))
        (f / "run.json").write_text(json.dumps({"profile": profile, "status": status, "error": error}))
        (f / "provenance.json").write_text(json.dumps({"profile": profile, "commit": name}))
        return f

    with pytest.raises(ParameterError, match="no finished full-profile run"):
        paper_scale.latest_full_run("ch", tmp_path)
    folder("20261123T100000-a-1", "full", "complete")
    want = folder("20261123T110000-b-1", "full", "failed", "ClaimsFailed: x")
    folder("20261123T120000-c-1", "full", "interrupted")
    folder("20261123T130000-d-1", "ci", "complete")
    assert paper_scale.latest_full_run("ch", tmp_path) == want
    newest_ok = folder("20261123T140000-e-1", "full", "complete")  # the status runs.py writes
    assert paper_scale.latest_full_run("ch", tmp_path) == newest_ok
    paper_scale.main(["--run", str(want), "--out", str(tmp_path / "full"), "ch"])
    assert json.loads((tmp_path / "full" / "ch.json").read_text())["commit"] == want.name


def test_stale_records_compare_the_chapter_source_hash(tmp_path):
    """A committed full record is current only while ``book/<chapter>.py`` is the file it ran."""
    from nlcl.harness.records import provenance

    root = tmp_path / "book-root"
    (root / "book").mkdir(parents=True)
    (root / "_toc.yml").write_text("root: intro\n")
    source = root / "book" / "ch.py"
    source.write_text("# %%\nx = 1\n")
    full = root / "results" / "claims-full"
    full.mkdir(parents=True)

    def record(sha):
        return {"chapter": "ch", "profile": "full", "commit": "abc", "chapter_sha256": sha, "claims": []}

    (full / "ch.json").write_text(json.dumps(record(provenance.chapter_sha256("ch", root))))
    assert paper_scale.stale_records(full, root) == {}
    source.write_text("# %%\nx = 2\n")
    assert "changed since the run (commit abc)" in paper_scale.stale_records(full, root)["ch"]
    (full / "ch.json").write_text(json.dumps(record(None)))
    assert "no chapter_sha256" in paper_scale.stale_records(full, root)["ch"]
    source.unlink()
    assert "no longer exists" in paper_scale.stale_records(full, root)["ch"]


def test_report_marks_a_stale_full_record(tmp_path):
    root = tmp_path
    (root / "_toc.yml").write_text("root: intro\n")
    (root / "book").mkdir()
    (root / "book" / "ch.py").write_text("# %%\n")
    write_full(tmp_path, "ch", [rec("a", status="pass")])
    full = tmp_path / "results" / "claims-full"
    full.parent.mkdir()
    (tmp_path / "full").rename(full)
    _, text = make_report(tmp_path, [rec("a")], full=full)
    assert "**stale**: the record has no chapter_sha256" in text


def test_check_cli_names_stale_records(one_chapter_repo, capsys):
    tmp_path = one_chapter_repo
    write_full(tmp_path, "ch", [rec("a", status="pass")])
    capsys.readouterr()
    assert paper_scale.main(["--check", "--out", str(tmp_path / "full")]) == 1
    assert "stale:" in capsys.readouterr().out
    record = json.loads((tmp_path / "full" / "ch.json").read_text())
    from nlcl.harness.records import provenance

    record["chapter_sha256"] = provenance.chapter_sha256("ch", tmp_path)
    (tmp_path / "full" / "ch.json").write_text(json.dumps(record))
    assert paper_scale.main(["--check", "--out", str(tmp_path / "full")]) == 0
    assert "every record is current" in capsys.readouterr().out


def test_full_record_from_a_book_build_reads_the_chapter_run_folder(tmp_path):
    """`nlcl book --profile full` keeps each chapter's run under <build>/runs/<chapter>/."""
    folder = tmp_path / "build" / "runs" / "ch"
    (folder / "claims").mkdir(parents=True)
    (folder / "claims" / "ch.json").write_text(json.dumps([{**rec("a"), "profile": "full"}]))
    prov = {"profile": "full", "commit": "f00", "date": "2026-11-26", "device": "cpu", "wall_time_s": 3.0}
    (folder / "provenance.json").write_text(json.dumps(prov))
    out = tmp_path / "full"
    assert paper_scale.main(["--build", str(tmp_path / "build"), "--out", str(out), "ch"]) == 0
    saved = json.loads((out / "ch.json").read_text())
    assert saved["wall_time_s"] == 3.0 and saved["claims"][0]["id"] == "a"


def test_report_shows_a_not_gated_timing_claim_with_its_reason(tmp_path):
    """Issue 26 §6: a timing claim measured beside other chapters is shown as not gated, with what
    its check gave and why; it is counted apart from pass/fail and is not a ci/full difference."""
    note = "timing claim measured while other chapters ran on the same machine"
    records = [
        rec("a"),
        rec("t", status="not-gated", outcome="fail", timing=True, gate_note=note, measured=1.29),
    ]
    counts, text = make_report(tmp_path, records)
    assert counts["not-gated"] == 1 and counts["fail"] == 0 and counts["pass"] == 1
    assert "1 fail" not in text and "1 timing claim not gated (see below)" in text
    assert "| ◷ not gated (check gave fail, not gated) |" in text
    section = text[text.index("## Timing claims not gated in this build") :]
    assert "`t`" in section and "measured 1.29" in section and note in section
    assert report.published_verdict(records[1]) == "not-gated"
    # the section is absent when every timing claim was gated
    _, text = make_report(tmp_path, [rec("a"), rec("t", timing=True)])
    assert "not gated" not in text


def test_headline_reads_the_accumulated_held_out_verdicts(tmp_path, monkeypatch):
    """The verdicts of record are the held-out ones (issue 26), accumulated over every held-out set
    at today's code and decided by the declared rule (issue 52): the headline counts required
    reproductions by class, each claim shows its pass count and interval, and a section lists the
    required reproductions that are not reproduced."""
    from nlcl.harness.records import held_out

    def sweep(seeds, b_fails_at=()):
        rows = [
            {
                "seed": s,
                "claim": c,
                "kind": "reproduction",
                "required": True,
                "measured": 1,
                "status": "fail" if c == "b" and s in b_fails_at else "pass",
            }
            for c in ("a", "b")
            for s in seeds
        ]
        return {"chapter_sha256": "x", "modules_sha256": "m", "seeds": seeds, "errors": {}, "rows": rows}

    first, second = list(range(100, 110)), list(range(200, 210))
    (tmp_path / "held-out").mkdir()
    held_out.append_sets(tmp_path / "held-out", {"ch": sweep(first)}, "h1", "2026-12-08T00:00:00Z")
    record = held_out.build_record(
        second, {"ch": sweep(second, b_fails_at={205})}, commit="h2", numerics=None, seconds=1
    )
    (tmp_path / "held-out" / "record.json").write_text(json.dumps(record))
    monkeypatch.setattr(
        held_out, "current_hashes", lambda chapters, root=None: {c: ("x", "m") for c in chapters}
    )
    (tmp_path / "claims-full").mkdir()
    _, text = make_report(tmp_path, [rec("a"), rec("b")], full=tmp_path / "full")
    assert "**Verdicts of record**" in text and "20 seeds per claim" in text
    assert "of **2 required reproductions**, 1 reproduced" in text and "1 fragile" in text
    assert "held-out: 20/20 pass, 95% CI [0.83, 1.00]: reproduced (2 sets)" in text
    assert "held-out: 19/20 pass (1 fail), 95% CI [0.75, 1.00]: fragile (2 sets)" in text
    section = text[text.index("## Held-out evidence") :]
    assert "| `b` |" in section and "| `a` |" not in section
    # a set made at other code is not counted
    monkeypatch.setattr(
        held_out, "current_hashes", lambda chapters, root=None: {c: ("y", "m") for c in chapters}
    )
    _, text = make_report(tmp_path, [rec("a")], full=tmp_path / "full")
    assert "1 whose chapter changed since its last held-out set" in text
    assert "held-out: no held-out set at the current code (2 sets at earlier code; 20/20 pass" in text
    (tmp_path / "elsewhere").mkdir()
    _, plain = make_report(tmp_path / "elsewhere", [rec("a")])
    assert "**No held-out verdicts yet**" in plain


def test_dashboard_cell_shows_the_held_out_verdict():
    from nlcl.harness.site import dashboard

    row = dashboard.claim_rows(
        [rec("a", held_out={"summary": "3 pass", "seeds": [7, 8, 9], "revised": True})]
    )[0]
    html = dashboard.dashboard_html([row])
    assert "held-out: 3 pass (chapter revised since)" in html and "held-out base seeds 7, 8, 9" in html


def test_paper_scale_refuses_a_non_default_or_dirty_full_run(tmp_path):
    """Provenance that binds (issue 26 item 5): `--profile full -p n_grid 4000` is not the paper's
    verdict, nor is a run from a tree with uncommitted changes."""
    from nlcl.harness.records import provenance
    from nlcl.harness.run import spec

    root = provenance.repo_root()
    want = spec.resolve({}, spec.read_chapter(root / "book" / "tian-fig8-landscape.py").parameters, "full")
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps([{**rec("a"), "profile": "full"}]))
    prov = tmp_path / "prov.json"

    def save(**p):
        prov.write_text(json.dumps({"profile": "full", "commit": "abc", **p}))
        return paper_scale.save_full_record("tian-fig8-landscape", claims, prov, tmp_path / "out.json")

    assert save(parameters={**want, "device": "cuda"})["parameters"]["n_grid"] == want["n_grid"]
    with pytest.raises(ValueError, match=r"parameters differ .*n_grid: 4000 != "):
        save(parameters={**want, "n_grid": 4000})
    with pytest.raises(ValueError, match="uncommitted changes"):
        save(parameters=want, commit="abc+dirty")
    assert paper_scale.non_default_parameters("tian-fig8-landscape", {**want, "activation": "tanh"}) == [
        f"activation: 'tanh' != {want['activation']!r}"
    ]


def test_claim_records_name_their_run_and_parameters(tmp_path):
    from nlcl.harness.claims.registry import ClaimRegistry, at_least

    reg = ClaimRegistry(
        "ch", profile="ci", device="cpu", commit="c", directory=tmp_path, glue=False, display=False
    )
    reg.settings, reg.run_id = {"n": 3}, "20261126T100000-abc"
    r = reg.declare("x", source="s", statement="t", check=at_least(1)).measure(5)
    assert r["run_id"] == "20261126T100000-abc" and r["parameters"] == {"n": 3}


def test_reproductions_made_informational_are_named_beside_the_headline():
    from nlcl.harness.site.report import demoted, demoted_sentence

    recs = [
        {
            "id": "a",
            "required": False,
            "status": "fail",
            "revised": [{"from": "required", "to": "informational"}],
        },
        {"id": "b", "required": False, "status": "pass", "revised": []},
        {"id": "c", "required": True, "status": "pass", "revised": [{"from": "≤ 1", "to": "≤ 2"}]},
    ]
    assert [r["id"] for r in demoted(recs)] == ["a"]
    assert "1 reproductions were made informational by a revision" in demoted_sentence(recs)
    assert "`a` (fail)" in demoted_sentence(recs) and demoted_sentence(recs[1:]) == ""


def test_headline_gives_the_bases_apart_and_names_unclassified_records(tmp_path):
    """Exact results are verified, dynamical and statistical claims reproduced at held-out seeds,
    informational reproductions apart, and a record made before ``basis`` existed is unclassified."""
    records = [
        rec("e1", basis="exact"),
        rec("e2", basis="exact", status="fail"),
        rec("d1", basis="dynamical"),
        rec("s1", basis="statistical", status="not-reproduced"),
        rec("old"),  # predates the field
        rec("i1", basis="dynamical", required=False),
        rec("k", kind="check"),
    ]
    _, text = make_report(tmp_path, records)
    head = text[text.index("**By basis**") :].split("\n", 1)[0]
    assert "exact results: 1 of 2 verified" in head
    assert "dynamical claims: 0 of 0 reproduced at held-out seeds and 1 of 1" in head
    assert "statistical claims: 0 of 0 reproduced at held-out seeds and 0 of 1" in head
    assert "unclassified (records without a basis, made before records carried one): " in head
    assert (
        "**Informational reproductions** (not required, not counted above): 1, 1 of them reproduced" in head
    )
    assert "| `old` | {doc}`ch` | unclassified |" in text and "| `e1` | {doc}`ch` | exact |" in text
    # no unclassified record: the class is not named
    (tmp_path / "all").mkdir()
    _, text = make_report(tmp_path / "all", records[:4])
    assert "unclassified" not in text


def test_basis_counts_read_held_out_evidence_by_basis():
    """A dynamical claim counts as reproduced by the held-out class; an exact one needs every
    counted held-out seed to pass; unseeded or artifact entries are not held-out evidence."""
    held = lambda cls, passes, n: {"class": cls, "passes": passes, "n": n, "verdict": cls}  # noqa: E731
    counts = report.basis_counts(
        [
            rec("d1", basis="dynamical", held_out=held("reproduced", 10, 10)),
            rec("d2", basis="dynamical", held_out=held("fragile", 7, 10)),
            rec("d3", basis="dynamical", held_out=held("unseeded", 0, 0)),
            rec("e1", basis="exact", held_out=held("underpowered", 10, 10)),
            rec("e2", basis="exact", held_out=held("fragile", 9, 10)),
            rec("s1", basis="statistical", status="fail"),
        ]
    )
    assert counts["dynamical"] == {"total": 3, "reproduced": 2, "held_out": 2, "held_out_reproduced": 1}
    assert counts["exact"] == {"total": 2, "reproduced": 1, "held_out": 2, "held_out_reproduced": 1}
    assert counts["statistical"]["reproduced"] == 0 and counts["unclassified"]["total"] == 0
    assert counts["informational"] == {"total": 0, "reproduced": 0}
    sentence = report.basis_sentence([rec("e1", basis="exact")])
    assert sentence.startswith("**By basis**") and ": 1 of 1 verified" in sentence


def test_dashboard_shows_the_basis_beside_the_kind():
    from nlcl.harness.site import dashboard

    rows = dashboard.claim_rows([rec("a", basis="exact"), rec("b"), rec("k", kind="check")])
    assert [r["basis"] for r in rows] == ["exact", "unclassified", None]
    html = dashboard.dashboard_html(rows)
    assert "kind: reproduction (exact)" in html and "kind: reproduction (unclassified)" in html
    assert "kind: check</span>" in html


# -- paper scale at held-out seeds (issue 52, item 4) ------------------------------------------------


@pytest.fixture()
def full_set(held_out_set):
    """A held-out set of the full profile at hashes ("x", "m")."""
    return functools.partial(held_out_set, sha="x", mods="m", profile="full")


def _write_full_sets(directory, sets, today=("x", "m"), monkeypatch=None):
    """``sets``: chapter → list of sweep records, appended to ``directory/sets`` as held_out run does."""
    from nlcl.harness.records import held_out

    for i, (chapter, recs) in enumerate(sets.items()):
        for j, rec in enumerate(recs):
            held_out.append_sets(directory, {chapter: rec}, f"c{i}{j}", f"2026-12-1{j}T00:00:00Z")
    if monkeypatch is not None:
        monkeypatch.setattr(
            held_out, "current_hashes", lambda chapters, root=None: {c: today for c in chapters}
        )


def test_held_out_counts_are_pass_counts_at_todays_code(full_set, tmp_path, monkeypatch):
    full = tmp_path / "held-out-full"
    sets = {
        "ch": [
            {
                **full_set([1, 2, 3], ["pass"] * 3),
                "rows": full_set([1, 2, 3], ["pass"] * 3)["rows"]
                + full_set([1, 2, 3], ["pass", "fail", None], claim="b")["rows"]
                + full_set(
                    [1, 2, 3],
                    ["pass"] * 3,
                    claim="c",
                    computed="this run, joined with seeds read from results/g.json",
                )["rows"]
                + full_set([1, 2, 3], ["not-reproduced"] * 3, claim="d")["rows"],
            },
            full_set([4, 5, 6], ["fail"] * 3, sha="old"),  # at earlier code: not counted
        ],
        "gone": [full_set([7, 8, 9], ["pass"] * 3, sha="old")],
    }
    _write_full_sets(full, sets, monkeypatch=monkeypatch)
    counts = paper_scale.held_out_counts(full, tmp_path)
    a, b, c, d, g = (counts[k] for k in [("ch", "a"), ("ch", "b"), ("ch", "c"), ("ch", "d"), ("gone", "a")])
    assert (a["passes"], a["n"], a["failing"], a["count"]) == (3, 3, 0, "3/3 held-out seeds")
    assert a["interval"][0] == pytest.approx(0.025 ** (1 / 3))  # 0.29: no class could say "reproduced"
    assert (b["passes"], b["n"], b["failing"]) == (1, 3, 2)
    assert b["count"] == "1/3 held-out seeds (1 fail, 1 missing)"
    assert c["count"] == "3/3 held-out seeds; not held-out evidence: values pooled with committed artifacts"
    assert d["count"] == "0/3 held-out seeds (3 not-reproduced)" and d["failing"] == 0
    assert (
        g["failing"] == 0
        and g["count"] == "no held-out set at the current code (3/3 pass at earlier code, not counted)"
    )
    assert paper_scale.held_out_counts(tmp_path / "none") is None
    assert [f["claim"] for f in paper_scale.held_out_failures(counts)] == ["b"]
    assert (
        paper_scale.held_out_failures(counts, [("ch", "a")]) == []
        and paper_scale.held_out_failures(None) == []
    )
    # the words of the other cases
    text = paper_scale.pass_count_text
    assert text({**a, "n": 1, "passes": 1, "statuses": {"pass": 1}}) == "1/1 held-out seed"
    assert text({**a, "evidence": "artifact", "read_from": "read from results/g.json"}).endswith(
        "values read from committed artifacts"
    )
    assert text({**a, "evidence": "unseeded"}).endswith("nothing random (ledger: seeded: false)")
    assert text({**a, "n": 0, "statuses": {"not-gated": 3}}).startswith("not gated at any held-out seed")
    assert text({**g, "earlier": {"passes": 0, "n": 0}}) == "no held-out set at the current code"
    # a ci set in the full directory is refused
    from nlcl.harness.records import held_out

    held_out.append_sets(full, {"ci-only": {**full_set([10], ["pass"]), "profile": "ci"}})
    with pytest.raises(ValueError, match="not of profile 'full'"):
        paper_scale.held_out_counts(full, tmp_path)


def test_attach_held_out_gives_each_claim_its_count():
    counts = {
        ("ch", "a"): {
            "count": "3/3 held-out seeds",
            "passes": 3,
            "n": 3,
            "statuses": {"pass": 3},
            "interval": (0.29, 1.0),
            "evidence": "seeded",
            "seeds": [1, 2, 3],
            "failing": 0,
            "class": "underpowered",
            "sets": [{}],
        },
    }
    out = paper_scale.attach_held_out([rec("a"), rec("z")], counts)
    h = out[0]["held_out_full"]
    assert (h["count"], h["counted"], h["sets"], h["failing"]) == ("3/3 held-out seeds", True, 1, 0)
    assert h["artifact"] == "results/held-out-full/sets/ch.json" and "held_out_full" not in out[1]
    assert paper_scale.attach_held_out([rec("a")], None) == [rec("a")]


def test_paper_scale_column_shows_the_seed0_status_and_the_held_out_count(full_set, tmp_path, monkeypatch):
    """The paper-scale column reads the seed-0 record (results/claims-full) and the held-out full
    sets (results/held-out-full): 'pass · 3/3 held-out seeds'; without a held-out full run it says
    so; a set at earlier code is not counted; a required reproduction failing at a held-out full
    seed is marked and listed, while the published verdicts and the headline's classes stay the
    seed-0 record's."""
    assert write_full(tmp_path, "ch", [rec("a"), rec("b"), rec("c")]) == 0  # into tmp_path/full
    records = [rec("a"), rec("b"), rec("c"), rec("d"), rec("e", chapter="other")]
    # no held-out full run
    counts, plain = make_report(tmp_path, records, full=tmp_path / "full")
    assert "| ✓ pass · no held-out full run |" in plain
    assert "no held-out full run yet (`results/held-out-full/`)" in plain
    assert "The paper-scale column reads the full run at base seed 0 (`results/claims-full/`" in plain
    assert "| held-out seeds (`full`) |" in plain and "| — | no held-out full run |" in plain
    # a held-out full run of ch: a passes at 3 of 3 seeds, b fails at one, c was not measured
    _write_full_sets(
        tmp_path / "held-out-full",
        {
            "ch": [
                {
                    **full_set([11, 22, 33], ["pass"] * 3),
                    "rows": full_set([11, 22, 33], ["pass"] * 3)["rows"]
                    + full_set([11, 22, 33], ["pass", "fail", "pass"], claim="b")["rows"],
                }
            ]
        },
        monkeypatch=monkeypatch,
    )
    again, text = make_report(tmp_path, records, full=tmp_path / "full")
    assert again == counts  # the published verdicts and the headline's classes are the seed-0 record's
    assert "| ✓ pass · 3/3 held-out seeds |" in text
    assert "| ✓ pass · **⚠ 2/3 held-out seeds (1 fail)** |" in text
    assert "| ✓ pass · not measured at held-out full seeds |" in text  # c
    assert "| not measured at paper scale · not measured at held-out full seeds |" in text  # d
    assert "| not run at paper scale · no held-out full run of this chapter |" in text  # other
    assert "and the pass count at held-out base seeds in the full profile" in text
    # the sentence sits in 'Paper-scale runs', keeping the headline short enough for the figure to show
    section = text.split("## Paper-scale runs", 1)[1]
    assert "and the pass count at held-out base seeds in the full profile" in section
    assert (
        "3 seeds per claim" in text
        and "1 of 2 reproductions pass at every counted held-out full seed" in text
    )
    assert "**1 required reproduction fails at some held-out full seed** (`b`)" in text
    assert "| 11, 22, 33 (1 set) |" in text
    assert "- `b` ({doc}`ch`): 2/3 held-out seeds (1 fail) at seeds 11, 22, 33; at base seed 0: pass" in text
    # the same sets at earlier code: shown, not counted
    monkeypatch.setattr(
        held_out_module(), "current_hashes", lambda chapters, root=None: {c: ("new", "m") for c in chapters}
    )
    _, later = make_report(tmp_path, records, full=tmp_path / "full")
    assert "| ✓ pass · no held-out set at the current code (3/3 pass at earlier code, not counted) |" in later
    assert "1 set at earlier code, not counted |" in later and "⚠" not in later
    assert "0 of 0 reproductions pass at every counted held-out full seed, 2 without a count" in later


def held_out_module():
    from nlcl.harness.records import held_out

    return held_out


def test_dashboard_shows_the_held_out_full_count_under_the_paper_scale_verdict():
    from nlcl.harness.site import dashboard

    h = {"count": "2/3 held-out seeds (1 fail)", "seeds": [11, 22, 33], "counted": True, "failing": 1}
    rows = dashboard.claim_rows(
        [
            rec("a", full={"status": "pass", "measured": 9}, held_out_full=h),
            rec("b", held_out_full={**h, "count": "3/3 held-out seeds", "failing": 0}),
            rec("c", full={"status": "pass", "measured": 9}),
        ]
    )
    html = dashboard.dashboard_html(rows)
    assert "⚠ held-out: 2/3 held-out seeds (1 fail)" in html
    assert 'title="held-out base seeds 11, 22, 33 (full profile)"' in html
    assert "held-out: 3/3 held-out seeds</span>" in html  # under a missing seed-0 verdict too
    assert html.count("(full profile)") == 2
