import json

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.harness import claims
from nlcl.harness.claims import (
    RECORD_FIELDS,
    ClaimRegistry,
    approx,
    at_least,
    at_most,
    between,
    exactly,
    greater_than,
    is_true,
    less_than,
    load_records,
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
    reg.declare("b", source="s", statement="s", check=exactly(1), not_reproduced="because X").measure(2)
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
    assert "❌ fail" in reg.table_markdown() and "(info)" in reg.table_markdown()


def test_declaration_errors(tmp_path):
    reg = registry(tmp_path)
    reg.declare("x", source="s", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="declared twice"):
        reg.declare("x", source="s", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="without spaces"):
        reg.declare("a b", source="s", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="must be an nlcl.harness.claims check"):
        reg.declare("y", source="s", statement="s", check=lambda m: True)
    with pytest.raises(ParameterError, match="source must be a non-empty"):
        reg.declare("z", source="", statement="s", check=at_least(1))
    with pytest.raises(ParameterError, match="not_reproduced must be an explanation"):
        reg.declare("w", source="s", statement="s", check=at_least(1), not_reproduced=" ")
    assert reg.unmeasured() == ["x"]


def test_measure_twice_is_an_error(tmp_path):
    c = registry(tmp_path).declare("x", source="s", statement="s", check=at_least(1))
    c.measure(1)
    with pytest.raises(ParameterError, match="already measured"):
        c.measure(2)


def test_status_badge():
    assert status_badge("pass") == "✅ pass"
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


def test_measured_record_shows_nothing_as_a_cell_result(tmp_path):
    rec = registry(tmp_path).declare("c", source="s", statement="s", check=at_least(1)).measure(2)
    assert isinstance(rec, dict) and rec["status"] == "pass"
    assert rec._ipython_display_() is None  # the verdict was displayed by the measurement
    assert json.loads(json.dumps(rec)) == dict(rec)


def test_shown_claim_carries_its_anchor_in_a_notebook(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(claims, "show_markdown", shown.append)
    reg = ClaimRegistry("chap", profile="ci", device="cpu", commit="abc", directory=tmp_path, glue=False)
    monkeypatch.setattr(claims, "_in_notebook", lambda: True)
    reg.declare("fig8-relu", source="s", statement="s", check=at_least(1)).measure(2)
    monkeypatch.setattr(claims, "_in_notebook", lambda: False)
    reg.declare("other", source="s", statement="s", check=at_least(1)).measure(2)
    assert shown[0].startswith('<span id="claim-fig8-relu"></span>✅ pass')
    assert shown[1].startswith("✅ pass")
