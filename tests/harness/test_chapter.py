import json

import pytest

import nlcl
from nlcl.core.validate import ParameterError
from nlcl.harness.chapter import Params, resolve_sizes
from nlcl.harness.claims import ClaimsFailed, at_least

SIZES = {"ci": {"n": 3, "steps": 10}, "full": {"n": 30, "steps": 5000}}


def test_resolve_sizes_fills_none_and_keeps_explicit():
    assert resolve_sizes("ci", SIZES, {"n": None, "act": "relu"}) == {"n": 3, "steps": 10, "act": "relu"}
    assert resolve_sizes("full", SIZES, {"n": 7}) == {"n": 7, "steps": 5000}


def test_resolve_sizes_errors():
    with pytest.raises(ParameterError, match="profile='paper' is not allowed"):
        resolve_sizes("paper", SIZES, {})
    with pytest.raises(ParameterError, match="missing"):
        resolve_sizes("ci", {"ci": {}}, {})
    with pytest.raises(ParameterError, match="keys differ"):
        resolve_sizes("ci", {"ci": {"n": 1}, "full": {"m": 2}}, {})
    with pytest.raises(ParameterError, match="unknown profiles"):
        resolve_sizes("ci", {"ci": {}, "full": {}, "gpu": {}}, {})


def test_params_read_only_attribute_access():
    p = Params({"a": 1})
    assert p.a == 1 and p["a"] == 1 and dict(p) == {"a": 1} and len(p) == 1
    with pytest.raises(AttributeError, match="parameters are: a"):
        p.b
    with pytest.raises(AttributeError, match="read-only"):
        p.a = 2


def test_start_finish_writes_claims_and_provenance(build_dir):
    run = nlcl.start("unit", profile="ci", seed=3, device="cpu", sizes=SIZES, params={"n": None})
    assert isinstance(run, nlcl.Run) and run.profile in nlcl.harness.chapter.PROFILES
    assert run.params.n == 3 and run.device.type == "cpu"
    run.expect("u1", source="s", statement="s", check=at_least(1)).measure(2)
    run.claim("u2", 5, source="s", statement="s", check=at_least(1))
    run.finish()
    claims = json.loads((build_dir / "claims" / "unit.json").read_text())
    assert [c["id"] for c in claims] == ["u1", "u2"]
    prov = json.loads((build_dir / "provenance" / "unit.json").read_text())
    assert prov["profile"] == "ci" and prov["parameters"]["n"] == 3 and "torch" in prov["versions"]
    assert run.record["chapter"] == "unit"


def test_finish_raises_on_failed_required_claim_after_recording_all(build_dir):
    run = nlcl.start("unit2", sizes=SIZES, device="cpu")
    run.claim("bad", 0, source="s", statement="s", check=at_least(1))
    run.claim("good", 1, source="s", statement="s", check=at_least(1))
    with pytest.raises(ClaimsFailed, match="bad"):
        run.finish()
    assert len(json.loads((build_dir / "claims" / "unit2.json").read_text())) == 2


def test_finish_raises_on_unmeasured_claim(build_dir):
    run = nlcl.start("unit3", device="cpu")
    run.expect("never", source="s", statement="s", check=at_least(1))
    with pytest.raises(ClaimsFailed, match="never measured: never"):
        run.finish()


def test_glue_outside_notebook_is_harmless(build_dir):
    run = nlcl.start("unit4", device="cpu")
    run.glue("x", 1.5)
    assert run.wall_time >= 0
