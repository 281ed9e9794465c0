import json
import math

import pandas as pd
import pytest

import nlcl
from nlcl.core.validate import ParameterError
from nlcl.harness.claims.registry import ClaimsFailed, at_least
from nlcl.harness.run import runs
from nlcl.harness.run import spec as spec_mod
from nlcl.harness.run.chapter import Params, namespace_parameters, resolve_sizes

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


@pytest.fixture()
def runs_dir(tmp_path, monkeypatch):
    """Run folders of these tests go under a temporary folder."""
    monkeypatch.setenv("NLCL_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path / "runs"


def test_start_finish_writes_claims_and_provenance(runs_dir):
    run = nlcl.start("unit", profile="ci", seed=3, device="cpu", sizes=SIZES, params={"n": None})
    assert isinstance(run, nlcl.Run) and run.profile in nlcl.harness.run.chapter.PROFILES
    assert run.params.n == 3 and run.device.type == "cpu"
    assert run.run_dir.parent == runs_dir / "unit" and run.run_id == run.run_dir.name
    assert runs.read_run(run.run_dir)["status"] == "running"
    run.expect("u1", source="s", statement="s", check=at_least(1)).measure(2)
    run.claim("u2", 5, source="s", statement="s", check=at_least(1))
    run.finish()
    claims = json.loads((run.run_dir / "claims" / "unit.json").read_text())
    assert [c["id"] for c in claims] == ["u1", "u2"]
    prov = json.loads((run.run_dir / "provenance.json").read_text())
    assert prov["profile"] == "ci" and prov["parameters"]["n"] == 3 and "torch" in prov["versions"]
    assert run.record["chapter"] == "unit" and prov["run_id"] == run.run_id
    record = runs.read_run(run.run_dir)
    assert (
        record["status"] == "complete"
        and record["seed"] == 3
        and record["parameters"] == {"n": 3, "steps": 10}
    )


def test_finish_raises_on_failed_required_claim_after_recording_all(runs_dir):
    run = nlcl.start("unit2", sizes=SIZES, device="cpu")
    run.claim("bad", 0, source="s", statement="s", check=at_least(1))
    run.claim("good", 1, source="s", statement="s", check=at_least(1))
    with pytest.raises(ClaimsFailed, match="bad"):
        run.finish()
    assert len(json.loads((run.run_dir / "claims" / "unit2.json").read_text())) == 2
    assert runs.read_run(run.run_dir)["status"] == "failed"


def test_finish_raises_on_unmeasured_claim(runs_dir):
    run = nlcl.start("unit3", device="cpu")
    run.expect("never", source="s", statement="s", check=at_least(1))
    with pytest.raises(ClaimsFailed, match="never measured: never"):
        run.finish()


def test_finish_fails_on_non_finite_claim(runs_dir):
    run = nlcl.start("unit5", device="cpu")
    run.claim("nan", math.nan, source="s", statement="s", check=at_least(1), required=False)
    run.claim("ok", 2, source="s", statement="s", check=at_least(1))
    with pytest.raises(ClaimsFailed, match=r"invalid claims \(NaN or infinite measurement\): nan"):
        run.finish()


def test_some_cases_stops_a_chapter_with_nothing_to_test(runs_dir):
    """A test with no cases at these parameter values stops with a ParameterError naming them
    (nlcl run: exit 1, one sentence), not a NaN fraction."""
    run = nlcl.start("unit7", device="cpu")
    assert run.some_cases(3, "unused", q=0.2) == 3
    with pytest.raises(ParameterError, match=r"^q=0\.45, activation='relu': no LME"):
        run.some_cases(0, "no LME", q=0.45, activation="relu")


def test_setting_names_the_given_and_the_changed_parameters(runs_dir):
    """A stop sentence names the parameters behind the result and every one the reader changed."""
    ns = {
        "__annotations__": {
            "profile": str,
            "seed": int,
            "device": str,
            "lr": float,
            "kappa": float,
            "width": int | None,
        },
        "profile": "ci",
        "seed": 3,
        "device": "cpu",
        "lr": 2.0,
        "kappa": 1000.0,
        "width": None,
    }
    spec = {
        "lr": {"range": [1e-6, 10.0]},
        "kappa": {"range": [1.0, 1000.0]},
        "width": {"range": [1, 64], "ci": 8, "full": 16},
    }
    spec["lr"].update(paper=2.0, source="our choice")
    spec["kappa"].update(paper=4.0, source="our choice")
    run = nlcl.start("unit8", ns, spec=spec)  # no such chapter: the paper values stand in for defaults
    assert run.setting("lr") == "lr=2.0, kappa=1000.0"
    assert run.setting() == "kappa=1000.0"
    ns["width"] = 4  # a size other than the profile's
    assert nlcl.start("unit9", ns, spec=spec).setting("lr") == "lr=2.0, kappa=1000.0, width=4"


def test_glue_outside_notebook_is_harmless(runs_dir):
    run = nlcl.start("unit4", device="cpu")
    run.glue("x", 1.5)
    assert run.wall_time >= 0


def _namespace(**values):
    ns = {"__annotations__": {"profile": str, "seed": int, "device": str, "n": int | None, "lr": float}}
    ns.update(profile="ci", seed=0, device="cpu", n=None, lr=0.1, nlcl=nlcl, _private=1, In=[])
    ns.update(values)
    return ns


SPEC = {
    "n": {"range": [1, 10], "ci": 2, "full": 8},
    "lr": {"range": [0.0, 1.0], "paper": 0.1, "source": "our choice"},
}


def test_start_keeps_freed_memory_for_reuse(runs_dir, monkeypatch):
    calls = []
    monkeypatch.setattr(nlcl.harness.run.chapter, "keep_freed_memory", lambda: calls.append(1) or True)
    nlcl.start("unit", profile="ci", seed=0, device="cpu", sizes=SIZES, params={})
    assert calls == [1]  # every chapter run: its steps reuse freed blocks instead of fresh pages


def test_start_from_namespace(runs_dir, tmp_path):
    run = nlcl.start("unit6", _namespace(), spec=SPEC)
    assert dict(run.params) == {"n": 2, "lr": 0.1} and run.paper_setting and run.at_paper("lr")
    run = nlcl.start("unit6", _namespace(lr=0.5, profile="full", nlcl_run_dir=str(tmp_path / "r")), spec=SPEC)
    assert run.params.n == 8 and not run.paper_setting and run.run_dir == tmp_path / "r"
    with pytest.raises(ParameterError, match="declares no paper value"):
        run.at_paper("n")


def test_start_rejects_unknown_injected_and_bad_values(runs_dir):
    with pytest.raises(ParameterError, match=r"unit7 has no parameter 'nn'; did you mean 'n'\?"):
        nlcl.start("unit7", _namespace(nn=3), spec=SPEC)
    with pytest.raises(
        ParameterError, match=r"unit7: parameter n=11 is not allowed; expected an int in \[1, 10\]"
    ):
        nlcl.start("unit7", _namespace(n=11), spec=SPEC)
    assert not (runs_dir / "unit7").exists()  # nothing started
    assert (
        namespace_parameters(_namespace(), spec_mod.declare(_namespace()["__annotations__"], SPEC), "u")["n"]
        is None
    )


def test_run_artifact_saves_in_full_and_loads_otherwise(runs_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("NLCL_RESULTS_DIR", str(tmp_path / "results"))
    table = pd.DataFrame({"a": [1, 2]})
    full = nlcl.start("unit8", _namespace(profile="full"), spec=SPEC)
    art = full.artifact("unit8-full", lambda: table, notes="n")
    assert art is not None and art.table.equals(table) and art.meta["parameters"] == {"n": 8, "lr": 0.1}
    ci = nlcl.start("unit8", _namespace(), spec=SPEC)
    assert ci.artifact("unit8-full", lambda: 1 / 0).table.equals(table)  # compute is not called in ci
    other = nlcl.start("unit8", _namespace(lr=0.2), spec=SPEC)
    assert other.artifact("unit8-full") is None  # other parameters: mismatch, printed
    assert ci.artifact("missing") is None
