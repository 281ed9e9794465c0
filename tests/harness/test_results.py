import json

import pandas as pd
import pytest

from nlcl.core.validate import ParameterError
from nlcl.harness.records import results
from nlcl.harness.records.results import ArtifactMismatch

TABLE = pd.DataFrame({"beta": [1, 2], "P": [3, 3], "chi_plus": [0.5, 0.75]})
PARAMS = {"steps": 5000, "betas": [1, 2]}


def test_roundtrip(tmp_path):
    path = results.save(
        "tok", TABLE, params=PARAMS, profile="full", device="cuda:0", notes="n", directory=tmp_path
    )
    assert path.name == "tok.csv"
    art = results.load("tok", params=PARAMS, columns=list(TABLE.columns), directory=tmp_path)
    assert isinstance(art, results.Artifact)
    pd.testing.assert_frame_equal(art.table, TABLE)
    assert art.meta["profile"] == "full" and art.meta["rows"] == 2 and art.meta["schema"] == results.SCHEMA
    assert "full profile, cuda:0" in art.label()


def test_parameter_mismatch_names_differences(tmp_path):
    results.save("tok", TABLE, params=PARAMS, profile="full", directory=tmp_path)
    with pytest.raises(ArtifactMismatch, match=r"steps: stored 5000, chapter 100"):
        results.load("tok", params={**PARAMS, "steps": 100}, directory=tmp_path)
    with pytest.raises(ArtifactMismatch, match=r"lr: stored '<absent>'"):
        results.load("tok", params={**PARAMS, "lr": 0.1}, directory=tmp_path)


def test_columns_schema_and_corruption(tmp_path):
    results.save("tok", TABLE, params=PARAMS, profile="full", directory=tmp_path)
    with pytest.raises(ArtifactMismatch, match="expects"):
        results.load("tok", columns=["x"], directory=tmp_path)
    (tmp_path / "tok.csv").write_text("beta\n1\n")
    with pytest.raises(ArtifactMismatch, match="does not match its record"):
        results.load("tok", directory=tmp_path)
    meta = json.loads((tmp_path / "tok.json").read_text())
    meta["schema"] = 99
    (tmp_path / "tok.json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactMismatch, match="schema 99"):
        results.load("tok", directory=tmp_path)


def test_missing_and_bad_names(tmp_path):
    with pytest.raises(FileNotFoundError, match="--profile full"):
        results.load("nothing", directory=tmp_path)
    with pytest.raises(ParameterError, match="artifact name"):
        results.save("../x", TABLE, params={}, profile="ci", directory=tmp_path)
    with pytest.raises(ParameterError, match="DataFrame"):
        results.save("x", [1, 2], params={}, profile="ci", directory=tmp_path)


def test_results_dir_env(tmp_path, monkeypatch):
    monkeypatch.setenv("NLCL_RESULTS_DIR", str(tmp_path))
    assert results.results_dir() == tmp_path
    assert results.results_dir(tmp_path / "y") == tmp_path / "y"


def test_save_records_a_given_commit(tmp_path):
    import pandas as pd

    from nlcl.harness.records import results

    results.save(
        "with-commit", pd.DataFrame({"a": [1]}), params={}, profile="ci", directory=tmp_path, commit="abc123"
    )
    assert results.load("with-commit", directory=tmp_path).meta["commit"] == "abc123"


def test_records_reads_json_records_but_not_table_artifacts(tmp_path):
    import json

    import pandas as pd

    from nlcl.harness.records import results

    (tmp_path / "bench-cpu.json").write_text(json.dumps({"device": "cpu"}))
    (tmp_path / "bench-gpu.json").write_text(json.dumps({"device": "cuda"}))
    results.save("bench-table", pd.DataFrame({"a": [1]}), params={}, profile="ci", directory=tmp_path)
    assert results.records("bench-", directory=tmp_path) == {
        "bench-cpu": {"device": "cpu"},
        "bench-gpu": {"device": "cuda"},
    }
    assert set(results.records("tian-tokens-bench-")) == {
        "tian-tokens-bench-cpu",
        "tian-tokens-bench-cpu-autograd",
    }
    with pytest.raises(ParameterError, match="prefix"):
        results.records("../x")


def test_concat_seeds_combines_disjoint_seeds_of_one_grid(tmp_path):
    def part(seeds, extra_column=False, lr=0.01):
        t = pd.DataFrame({"seed": seeds, "x": [float(s) for s in seeds]})
        if extra_column:
            t["y"] = 1.0
        results.save(
            f"g-{seeds[0]}", t, params={"lr": lr, "seeds": seeds}, profile="full", directory=tmp_path
        )
        return results.load(f"g-{seeds[0]}", directory=tmp_path)

    a, b = part([0, 1, 2]), part([3, 4], extra_column=True)
    both = results.concat_seeds([a, b])
    assert both.table.seed.tolist() == [0, 1, 2, 3, 4] and list(both.table.columns) == ["seed", "x"]
    assert both.meta["parameters"] == {"lr": 0.01, "seeds": [0, 1, 2, 3, 4]} and both.meta["rows"] == 5
    assert both.label().startswith("seeds [0, 1, 2]: full profile") and " + seeds [3, 4]: " in both.label()
    assert results.concat_seeds([a]).table.equals(a.table)
    with pytest.raises(results.ArtifactMismatch, match=r"repeats seeds \[1\]"):
        results.concat_seeds([a, part([1, 5])])
    with pytest.raises(results.ArtifactMismatch, match=r"\['lr'\]"):
        results.concat_seeds([a, part([7], lr=0.002)])
    with pytest.raises(ParameterError, match="at least one"):
        results.concat_seeds([])
