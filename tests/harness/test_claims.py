import json

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.harness.claims import registry as claims
from nlcl.harness.claims.registry import (
    RECORD_FIELDS,
    ClaimRegistry,
    NotReproduced,
    Revision,
    approx,
    at_least,
    at_most,
    between,
    check_on_mean,
    check_on_pooled,
    exactly,
    greater_than,
    holds_on_fraction,
    is_true,
    less_than,
    load_records,
    mean_minus_2se_above,
    mean_plus_2se_below,
    status_badge,
    to_plain,
)


def registry(tmp_path, profile="ci"):
    return ClaimRegistry(
        "chap", profile=profile, device="cpu", commit="abc", directory=tmp_path, glue=False, display=False
    )


def test_checks_and_descriptions():
    assert at_least(8)(9) and at_least(8)(8) and not at_least(8)(7)
    assert at_most(2)(2) and not at_most(2)(3)
    assert greater_than(0)(1e-9) and not greater_than(0)(0)
    assert less_than(1)(0.5) and not less_than(1)(1)
    assert exactly(2)(2) and not exactly(2)(3)
    assert between(0, 1)(0.5) and not between(0, 1)(2)
    assert is_true()(True) and not is_true()(False) and not is_true()(1)
    assert at_least(8).description == "≥ 8"
    assert exactly(2).description == "= 2"
    assert approx(0.382, atol=0.01).description == "0.382 ± 0.01"
    assert approx(1.0, rtol=0.05).description == "1 ± 5%"


@given(st.floats(-1e6, 1e6), st.floats(1e-6, 1e3))
def test_approx_is_symmetric_tolerance(value, tol):
    check = approx(value, atol=tol)
    assert check(value + 0.999 * tol) and check(value - 0.999 * tol)
    assert not check(value + 1.001 * tol + 1e-9 * abs(value))


def test_nan_never_passes():
    assert not at_most(1.0)(float("nan"))
    assert not approx(0.0, atol=1.0)(float("nan"))


def test_bad_checks():
    with pytest.raises(ParameterError, match="tolerance > 0"):
        approx(1.0)
    with pytest.raises(ParameterError, match="low must be <= high"):
        between(2, 1)
    with pytest.raises(ParameterError, match="must be a number"):
        at_least("8")
    with pytest.raises(ParameterError, match="cannot be compared"):
        at_least(3)("x")


def test_to_plain():
    assert to_plain(np.float32(1.5)) == 1.5
    assert to_plain(torch.tensor([1, 2])) == [1, 2]
    assert to_plain({"a": np.arange(2)}) == {"a": [0, 1]}
    assert to_plain((np.int64(3), "x")) == [3, "x"]
    assert isinstance(to_plain(np.bool_(True)), bool)


def test_record_fields_and_json(tmp_path):
    reg = registry(tmp_path)
    assert isinstance(at_least(8), claims.Check) and set(claims.STATUSES) == {
        "pass",
        "fail",
        "not-reproduced",
        "invalid",
        "not-gated",
    }
    c = reg.declare("c1", source="Tian 2023, Fig. 8", statement="s", check=at_least(8))
    rec = c.measure(np.int64(9))
    assert set(rec) == set(RECORD_FIELDS)
    assert rec["status"] == "pass" and rec["measured"] == 9 and rec["required"]
    assert rec["expected"] == "≥ 8" and rec["tolerance"] == "≥ 8"
    data = json.loads((tmp_path / "chap.json").read_text())
    assert data == [rec]
    assert load_records(tmp_path) == [rec]
    assert isinstance(c, claims.Claim) and c.passed


def test_fail_not_reproduced_and_required(tmp_path):
    reg = registry(tmp_path)
    reg.declare("a", source="s", statement="s", check=exactly(1)).measure(2)
    reg.declare(
        "b",
        source="s",
        statement="s",
        check=exactly(1),
        not_reproduced=NotReproduced("because X", expected=lambda m: m == 2),
    ).measure(2)
    reg.declare("c", source="s", statement="s", check=exactly(1), required=False).measure(2)
    reg.declare("d", source="s", statement="s", check=exactly(1), profiles=("full",)).measure(2)
    status = {r["id"]: (r["status"], r["required"]) for r in reg.records}
    assert status == {
        "a": ("fail", True),
        "b": ("not-reproduced", True),
        "c": ("fail", False),
        "d": ("fail", False),
    }
    assert [r["id"] for r in reg.failed_required()] == ["a"]
    assert "✗ fail" in reg.table_markdown() and "(info)" in reg.table_markdown()


def test_a_declared_failure_is_a_failure_that_does_not_stop_the_chapter(tmp_path):
    reg = registry(tmp_path)
    why = "no quantity of the run predicts it"
    reg.declare("a", source="s", statement="s", check=exactly(1), fails=why, basis="dynamical").measure(2)
    reg.declare("b", source="s", statement="s", check=exactly(1), fails=why).measure(1)
    reg.declare("c", source="s", statement="s", check=exactly(1)).measure(2)
    rec = {r["id"]: r for r in reg.records}
    assert rec["a"]["status"] == "fail" and rec["a"]["declared_failure"] == why
    assert rec["b"]["status"] == "pass" and "declared_failure" not in rec["b"]
    assert [r["id"] for r in reg.failed_required()] == ["c"]  # the undeclared failure stops it
    assert [r["id"] for r in reg.declared_failures()] == ["a"]


def test_a_declared_failure_is_refused_on_checks_explanations_and_empty_reasons(tmp_path):
    reg = registry(tmp_path)
    nr = NotReproduced("because X", expected=lambda m: m == 2)
    with pytest.raises(ParameterError, match="fails .*not_reproduced explanation"):
        reg.declare("a", source="s", statement="s", check=exactly(1), fails="x", not_reproduced=nr)
    with pytest.raises(ParameterError, match="kind='check'"):
        reg.declare("b", source="s", statement="s", check=exactly(1), fails="x", kind="check")
    with pytest.raises(ParameterError, match="non-empty reason"):
        reg.declare("c", source="s", statement="s", check=exactly(1), fails=" ")


def test_declaration_errors(tmp_path):
    reg = registry(tmp_path)
    reg.declare("x", source="s", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="declared twice"):
        reg.declare("x", source="s", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="without spaces"):
        reg.declare("a b", source="s", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="must be an nlcl.harness.claims.registry check"):
        reg.declare("y", source="s", statement="s", check=lambda m: True)
    with pytest.raises(ParameterError, match="source must be a non-empty"):
        reg.declare("z", source="", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="not_reproduced must be an explanation"):
        reg.declare("w", source="s", statement="s", check=at_least(1), not_reproduced=" ", required=False)
    assert reg.unmeasured() == ["x"]


def test_measure_twice_is_an_error(tmp_path):
    c = registry(tmp_path).declare("x", source="s", statement="s", check=at_least(1))
    c.measure(1)
    with pytest.raises(ParameterError, match="already measured"):
        c.measure(2)


def test_status_badge():
    assert status_badge("pass") == "✓ pass"
    assert status_badge("not-reproduced", required=False).endswith("(info)")


def test_new_registry_clears_previous_file(tmp_path):
    registry(tmp_path).declare("x", source="s", statement="s", check=at_least(1)).measure(1)
    registry(tmp_path)
    assert json.loads((tmp_path / "chap.json").read_text()) == []


def test_glue_and_display_outside_notebook(tmp_path, capsys):
    reg = ClaimRegistry("g", profile="ci", device="cpu", commit="c", directory=tmp_path)
    reg.declare("g1", source="src", statement="st.", check=at_least(0)).measure(1.25)
    out = capsys.readouterr().out
    assert "g1" in out and "measured: 1.25" in out


def test_show_markdown_prints_outside_notebook(capsys):
    claims.show_markdown("**x**")
    assert capsys.readouterr().out == "**x**\n"


def test_load_records_rejects_non_list(tmp_path):
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="expected a JSON list"):
        load_records(tmp_path)


# -- verdicts (issue 13): kinds, scoped explanations, invalid, revisions, seeds -------------------


def test_explanation_applies_only_where_observed(tmp_path):
    reg = registry(tmp_path, profile="full")
    why = NotReproduced("ci grid too coarse", profiles=("ci",), evidence="Fig. 2", expected=lambda m: m == 2)
    reg.declare("a", source="s", statement="s", check=exactly(1), not_reproduced=why).measure(2)
    reg.declare(
        "b",
        source="s",
        statement="s",
        check=exactly(1),
        not_reproduced=NotReproduced("seen in ci", expected=lambda m: m == 2),
    ).measure(2)
    reg.declare(
        "c",
        source="s",
        statement="s",
        check=exactly(1),
        not_reproduced=NotReproduced("x", profiles=("full",), expected=lambda m: m == 2),
    ).measure(2)
    assert [r["status"] for r in reg.records] == ["fail", "fail", "not-reproduced"]
    assert [r["id"] for r in reg.failed_required()] == ["a", "b"]


def test_explanation_setting_and_expected_predicate(tmp_path):
    reg = registry(tmp_path)
    reg.settings = {"n_grid": 3601}
    in_setting = NotReproduced("coarse", setting={"n_grid": 3601}, expected=lambda m: 5 <= m < 7.5)
    other = NotReproduced("coarse", setting={"n_grid": 999}, expected=lambda m: 5 <= m < 7.5)
    shaped = NotReproduced("too few maxima", expected=lambda m: 5 <= m < 7.5)
    reg.declare("a", source="s", statement="s", check=at_least(8), not_reproduced=in_setting).measure(5)
    reg.declare("b", source="s", statement="s", check=at_least(8), not_reproduced=other).measure(5)
    reg.declare("c", source="s", statement="s", check=at_least(8), not_reproduced=shaped).measure(5)
    reg.declare("d", source="s", statement="s", check=at_least(8), not_reproduced=shaped).measure(0)
    status = [r["status"] for r in reg.records]
    assert status == ["not-reproduced", "fail", "not-reproduced", "fail"]
    assert "n_grid=3601" in reg.records[0]["note_scope"]


def test_nan_and_inf_are_invalid_and_fail_the_run(tmp_path):
    reg = registry(tmp_path)
    nr = NotReproduced("whatever", expected=lambda m: 1.5 < m < 3)
    reg.declare("a", source="s", statement="s", check=at_most(1.0), not_reproduced=nr).measure(float("nan"))
    reg.declare("b", source="s", statement="s", check=at_least(0.0)).measure([1.0, float("inf")])
    reg.declare("c", source="s", statement="s", check=at_least(0.0)).measure_seeds([1.0, float("nan"), 2.0])
    assert [r["status"] for r in reg.records] == ["invalid"] * 3
    assert {r["id"] for r in reg.failed_required()} == {"a", "b", "c"}
    assert "⊘ invalid" in reg.table_markdown()


def test_passing_claim_with_explanation_is_reproduced_and_stale(tmp_path):
    reg = registry(tmp_path)
    rec = reg.declare(
        "a",
        source="s",
        statement="s",
        check=exactly(1),
        not_reproduced=NotReproduced("old", expected=lambda m: m == 2),
    ).measure(1)
    assert rec["status"] == "pass" and rec["note_stale"]
    assert "stale explanation" in reg.table_markdown()


def test_kinds_and_revisions(tmp_path):
    reg = registry(tmp_path)
    rev = Revision("≤ 0.01", "≤ 0.05", "first ci run measured 0.031", "2026-11-23")
    reg.declare("r", source="s", statement="s", check=at_least(0), revised=[rev]).measure(1)
    reg.declare("k", source="s", statement="s", check=at_least(0), kind="check").measure(1)
    assert reg.records[0]["kind"] == "reproduction" and reg.records[1]["kind"] == "check"
    assert reg.records[0]["revised"] == [
        {"from": "≤ 0.01", "to": "≤ 0.05", "reason": "first ci run measured 0.031", "date": "2026-11-23"}
    ]
    table = reg.table_markdown()
    assert table.index("*Reproductions*") < table.index("*Checks of our implementation*")
    with pytest.raises(ParameterError, match="kind='proof'"):
        reg.declare("x", source="s", statement="s", check=at_least(0), kind="proof")
    with pytest.raises(ParameterError, match="needs a reason"):
        reg.declare("y", source="s", statement="s", check=at_least(0), revised=[Revision("a", "b", " ")])
    with pytest.raises(ParameterError, match="must be Revision"):
        reg.declare("z", source="s", statement="s", check=at_least(0), revised=["x"])
    with pytest.raises(ParameterError, match="never apply"):
        NotReproduced("x", profiles=())
    with pytest.raises(ParameterError, match="one explanation"):
        reg.declare(
            "w",
            source="s",
            statement="s",
            check=at_least(0),
            not_reproduced={"ci": "a", "full": "b"},
            required=False,
        )
    with pytest.raises(ParameterError, match="must be None, a string"):
        reg.declare("v", source="s", statement="s", check=at_least(0), not_reproduced=3, required=False)


def test_measure_seeds_rules(tmp_path):
    reg = registry(tmp_path)
    a = reg.declare("a", source="s", statement="s", check=greater_than(0.5), decide=holds_on_fraction(0.8))
    rec = a.measure_seeds([0.6, 0.7, 0.4, 0.9, 0.8])
    assert rec["status"] == "pass" and rec["seeds"]["holds_fraction"] == 0.8 and rec["seeds"]["n"] == 5
    assert rec["measured"] == pytest.approx(0.68) and rec["seeds"]["values"] == [0.6, 0.7, 0.4, 0.9, 0.8]
    assert rec["seeds"]["rule"] == "holds on ≥ 80% of seeds"
    b = reg.declare("b", source="s", statement="s", check=greater_than(0.5), decide=mean_minus_2se_above(0.5))
    assert b.measure_seeds([0.51, 0.9, 0.2])["status"] == "fail"
    c = reg.declare("c", source="s", statement="s", check=less_than(1.0))
    assert c.measure_seeds([0.1, 0.2], decide=mean_plus_2se_below(1.0))["status"] == "pass"
    d = reg.declare("d", source="s", statement="s", check=greater_than(0.0))
    rec = d.measure_seeds([0.007, -0.01, 0.02])
    assert rec["seeds"]["margin_within_spread"] and rec["status"] == "fail"
    with pytest.raises(ParameterError, match="≥ 2 seeds"):
        reg.declare("e", source="s", statement="s", check=greater_than(0.0)).measure_seeds([1.0])
    with pytest.raises(ParameterError, match="already measured"):
        d.measure_seeds([1.0, 2.0])
    with pytest.raises(ParameterError, match=r"\(0, 1\]"):
        holds_on_fraction(0)


def test_check_on_mean_rule(tmp_path):
    reg = registry(tmp_path)
    a = reg.declare("a", source="s", statement="mean", check=at_least(3.0), decide=check_on_mean())
    rec = a.measure_seeds([4, 3, 3, 2, 4])
    assert rec["status"] == "pass" and rec["seeds"]["holds_fraction"] == 0.8
    assert rec["seeds"]["rule"] == "check applied to the mean over seeds"


def test_measure_per_seed_decides_on_the_pooled_value(tmp_path):
    """measure(value, per_seed=...): the verdict is the check on ``value`` (data pooled over seeds);
    the seed values only show the spread, and a margin inside it is flagged."""
    reg = registry(tmp_path)
    a = reg.declare("a", source="s", statement="s", check=greater_than(0.0))
    rec = a.measure(0.007, per_seed=[0.03, -0.02, 0.01])
    assert rec["status"] == "pass" and rec["measured"] == 0.007
    s = rec["seeds"]
    assert s["n"] == 3 and s["holds_fraction"] == pytest.approx(2 / 3) and s["values"] == [0.03, -0.02, 0.01]
    assert s["pooled"] and a.decide == check_on_pooled() and a.decide.on_mean
    assert "0.007 (seed-averaged; per seed: 0.006667 ± 0.025, 67% of 3 hold)" in reg.table_markdown()
    assert s["margin"] == pytest.approx(0.007) and s["margin_within_spread"]
    assert s["rule"].startswith("check applied to the quantity of the seed-averaged data")
    # The pooled value decides even when most seeds disagree.
    b = reg.declare("b", source="s", statement="s", check=greater_than(0.0))
    assert b.measure(-0.1, per_seed=[0.2, 0.3, -0.9])["status"] == "fail"
    # Non-numeric quantities: no mean or margin, the fraction of seeds still counts.
    c = reg.declare("c", source="s", statement="s", check=exactly("relu"))
    rec = c.measure("relu", per_seed=["relu", "leaky_relu", "relu"])
    assert rec["status"] == "pass" and rec["seeds"]["mean"] is None and "margin" not in rec["seeds"]
    assert rec["seeds"]["holds_fraction"] == pytest.approx(2 / 3)
    # A NaN seed makes the record invalid, as for measure_seeds.
    d = reg.declare("d", source="s", statement="s", check=greater_than(0.0))
    assert d.measure(1.0, per_seed=[1.0, float("nan")])["status"] == "invalid"
    with pytest.raises(ParameterError, match="≥ 2 values"):
        reg.declare("e", source="s", statement="s", check=greater_than(0.0)).measure(1.0, per_seed=[1.0])
    f = reg.declare("f", source="s", statement="s", check=greater_than(0.0), decide=holds_on_fraction(0.8))
    with pytest.raises(ParameterError, match="use measure_seeds"):
        f.measure(1.0, per_seed=[1.0, 2.0])
    with pytest.raises(ParameterError, match="needs numbers"):
        reg.declare("g", source="s", statement="s", check=exactly("relu")).measure_seeds(["relu", "relu"])


def test_run_expect_passes_kind_and_matches_explanation_setting(build_dir):
    import nlcl
    from nlcl.harness.claims.registry import ClaimsFailed

    sizes = {"ci": {"n": 3}, "full": {"n": 30}}
    run = nlcl.start("unitv", profile="ci", device="cpu", sizes=sizes, params={"n": None})
    run.expect("k", source="s", statement="s", check=at_least(1), kind="check").measure(1)
    here = NotReproduced("seen at n = 3", setting={"n": 3}, expected=lambda m: m == 0)
    elsewhere = NotReproduced("seen at n = 30", setting={"n": 30}, expected=lambda m: m == 0)
    run.expect("a", source="s", statement="s", check=at_least(1), not_reproduced=here).measure(0)
    run.expect("b", source="s", statement="s", check=at_least(1), not_reproduced=elsewhere).measure(0)
    with pytest.raises(ClaimsFailed, match=r"failed: b \(check"):
        run.finish()
    status = {r["id"]: (r["kind"], r["status"]) for r in run.registry.records}
    assert status == {
        "k": ("check", "pass"),
        "a": ("reproduction", "not-reproduced"),
        "b": ("reproduction", "fail"),
    }


def test_measured_record_shows_nothing_as_a_cell_result(tmp_path):
    rec = registry(tmp_path).declare("c", source="s", statement="s", check=at_least(1)).measure(2)
    assert isinstance(rec, dict) and rec["status"] == "pass"
    assert rec._ipython_display_() is None  # the verdict was displayed by the measurement
    assert json.loads(json.dumps(rec)) == dict(rec)


def test_shown_claim_carries_its_anchor_in_a_notebook(tmp_path, monkeypatch):
    from nlcl.harness.claims import display as claim_display

    shown = []
    monkeypatch.setattr(claim_display, "show_markdown", shown.append)
    reg = ClaimRegistry("chap", profile="ci", device="cpu", commit="abc", directory=tmp_path, glue=False)
    monkeypatch.setattr(claim_display, "_in_notebook", lambda: True)
    reg.declare("fig8-relu", source="s", statement="s", check=at_least(1)).measure(2)
    monkeypatch.setattr(claim_display, "_in_notebook", lambda: False)
    reg.declare("other", source="s", statement="s", check=at_least(1)).measure(2)
    assert shown[0].startswith('<span id="claim-fig8-relu"></span>✓ pass')
    assert shown[1].startswith("✓ pass")


def test_show_claim_prints_verdict_seeds_and_note(capsys):
    from nlcl.harness.claims.display import show_claim

    rec = {
        "id": "x",
        "source": "s",
        "statement": "st.",
        "tolerance": "> 0",
        "measured": 0.007,
        "status": "not-reproduced",
        "required": True,
        "note": "why",
        "note_scope": "profile ci",
        "seeds": {
            "n": 3,
            "mean": 0.01,
            "std": 0.02,
            "holds_fraction": 1 / 3,
            "values": [0, 0.03, 0],
            "rule": "r",
        },
    }
    show_claim(rec)
    out = capsys.readouterr().out
    assert out.startswith("⚠ not reproduced — **x** (s): st. Check: > 0; measured: 0.007.")
    assert (
        "Over 3 seeds: 0.01 ± 0.02, holds on 33% (r)." in out
        and "**Not reproduced** (profile ci). why" in out
    )


def test_measured_records_show_nothing_as_a_cell_result(tmp_path):
    """A chapter cell that ends in ``c.measure(...)`` or ``c.measure_seeds(...)`` must not print the
    record dict (the verdict was already displayed); the browser test flags long plain results."""
    reg = registry(tmp_path)
    a = reg.declare("a", source="s", statement="s", check=at_least(0.0)).measure(1.0)
    b = reg.declare("b", source="s", statement="s", check=at_least(0.0)).measure_seeds([1.0, 2.0])
    for rec in (a, b):
        assert hasattr(rec, "_ipython_display_") and rec["status"] == "pass"


def test_checks_carry_their_bounds():
    assert between(-0.7, -0.3).bounds == (-0.7, -0.3) and at_least(8).bounds == (8,)
    assert approx(2.0, atol=0.1, rtol=0.05).bounds == pytest.approx((1.8, 2.2))
    assert less_than(1).bounds == (1,) and exactly("relu").bounds == () and is_true().bounds == ()


def test_interval_claim_margin_flag_uses_the_nearest_bound(tmp_path):
    """A claim over seeds with an interval check: near the centre the margin is large (no flag),
    near an edge it is inside the spread (flag), as the report shows it."""
    reg = registry(tmp_path)
    centre = reg.declare("centre", source="s", statement="s", check=between(-0.7, -0.3))
    rec = centre.measure_seeds([-0.52, -0.48, -0.50006])
    assert rec["status"] == "pass" and not rec["seeds"]["margin_within_spread"]
    edge = reg.declare("edge", source="s", statement="s", check=between(-0.7, -0.3))
    rec = edge.measure_seeds([-0.33, -0.29, -0.31])
    assert rec["seeds"]["margin"] == pytest.approx(0.01) and rec["seeds"]["margin_within_spread"]
    near = reg.declare("near", source="s", statement="s", check=approx(1.0, atol=0.1))
    assert near.measure_seeds([1.08, 1.12, 1.07])["seeds"]["margin_within_spread"]


def test_timing_claim_is_not_gated_beside_other_chapters(tmp_path, monkeypatch):
    """Issue 26 §6: a timing claim measured while other chapters run (NLCL_CONCURRENT=1) is shown
    with status not-gated, its outcome and the reason, and never fails the run; alone it gates."""
    from nlcl.harness.claims import verdicts

    monkeypatch.setenv(verdicts.CONCURRENT_ENV, "1")
    reg = registry(tmp_path / "book")
    assert reg.concurrent
    slow = reg.declare("slope", source="s", statement="s", check=between(0.75, 1.25), timing=True)
    rec = slow.measure(1.29)
    assert rec["status"] == "not-gated" and rec["outcome"] == "fail" and rec["timing"]
    assert "other chapters ran" in rec["gate_note"] and "nlcl run" in rec["gate_note"]
    assert set(rec) == set(RECORD_FIELDS) | {"timing", "outcome", "gate_note"}
    assert set(rec) <= set(RECORD_FIELDS) | set(claims.OPTIONAL_FIELDS)
    ok = reg.declare("fast", source="s", statement="s", check=greater_than(1.0), timing=True)
    assert ok.measure(15.0)["outcome"] == "pass" and ok.record["status"] == "not-gated"
    nan = reg.declare("nan", source="s", statement="s", check=greater_than(1.0), timing=True)
    assert nan.measure(float("nan"))["status"] == "invalid"  # a NaN time is a bug wherever it runs
    other = reg.declare("other", source="s", statement="s", check=greater_than(1.0))
    assert other.measure(0.5)["status"] == "fail"  # not a timing claim: gated as always
    assert [r["id"] for r in reg.failed_required()] == ["nan", "other"]
    assert "◷ not gated" in reg.table_markdown() and status_badge("not-gated", False).endswith("(info)")
    # alone (nlcl run, nlcl book --jobs 1) the same claim is decided as usual
    monkeypatch.setenv(verdicts.CONCURRENT_ENV, "0")
    alone = registry(tmp_path / "alone")
    rec = alone.declare("slope", source="s", statement="s", check=between(0.75, 1.25), timing=True).measure(
        1.29
    )
    assert rec["status"] == "fail" and rec["timing"] and "outcome" not in rec
    assert [r["id"] for r in alone.failed_required()] == ["slope"]
    explicit = ClaimRegistry(
        "c",
        profile="ci",
        device="cpu",
        commit="x",
        directory=tmp_path / "e",
        glue=False,
        display=False,
        concurrent=True,
    )
    assert (
        explicit.concurrent
        and not verdicts.concurrent_run({})
        and verdicts.concurrent_run({"NLCL_CONCURRENT": "yes"})
    )
