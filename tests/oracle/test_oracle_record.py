"""The committed comparison record ``results/tian-tokens-oracle.json`` (issue 18, item 2).

Fast: the record is what ``compare_oracle.py`` builds from the committed runs (oracle:
``results/tian-tokens-oracle-runs.jsonl``; nlcl: ``results/tian-tokens-oracle-nlcl-runs.json``),
the rule is applied as stated, and the verdicts are the ones the token chapter reports.
Slow: re-training one oracle run and one nlcl cell reproduces the portable reference bitwise and the
committed numbers within the measured cross-path tolerance (issue 29).
"""

import json
import math

import pytest
from compare_oracle import CACHE, NLCL, RECORD, build
from run_oracle_grid import BOLD, GRID


def _oracle_runs():
    return [json.loads(line) for line in CACHE.read_text().splitlines() if line.strip()]


def _volatile(rec):
    return {k: v for k, v in rec.items() if k not in ("commit", "date", "machine")}


def test_record_is_built_from_the_committed_runs():
    record = json.loads(RECORD.read_text())
    rebuilt = json.loads(json.dumps(build(_oracle_runs(), json.loads(NLCL.read_text())), ensure_ascii=False))
    assert _volatile(rebuilt) == _volatile(record)
    assert [(c["loss"], c["bn"], c["activation"]) for c in record["cells"]] == GRID


def test_record_covers_the_grid_and_applies_the_rule():
    record = json.loads(RECORD.read_text())
    nlcl = json.loads(NLCL.read_text())
    assert len(nlcl["config"]["seeds"]) >= 5 and nlcl["config"]["steps"] == 5000
    assert nlcl["released_scoring_max_abs_diff"] <= 1e-5  # nlcl's released normaliser is check_result
    for c in record["cells"]:
        assert len(c["nlcl_seeds"]) >= 5
        assert len(c["oracle_seeds"]) >= (3 if (c["loss"], c["bn"], c["activation"]) in BOLD else 1)
        for scoring in ("released", "cosine"):
            for s in ("chi_plus", "chi_minus"):
                d, tol = c[f"diff_{scoring}_{s}"], c[f"tol_{scoring}_{s}"]
                assert tol >= 0.02 and math.isfinite(d)
            ok = all(
                abs(c[f"diff_{scoring}_{s}"]) <= c[f"tol_{scoring}_{s}"] for s in ("chi_plus", "chi_minus")
            )
            assert c[f"verdict_{scoring}"].startswith("agrees" if ok else "differs")


@pytest.mark.slow
@pytest.mark.numerics
def test_one_oracle_run_and_one_nlcl_cell_reproduce_the_record():
    """Determinism across machines (issue 29): the oracle's seed-0 run of the quadratic/BN-mean/x²
    cell and nlcl's first two runs of that cell (5,000 steps; about a minute on one thread).

    On the portable numeric path (the suite's default: any x86-64 CPU with AVX2, this torch, one
    thread) they equal ``results/numerics-reference.json`` bitwise. On any other path (an explicit
    ``MKL_CBWR``, ``NLCL_NUMERICS=native`` on a CPU whose native path differs) a single 5,000-step
    run is chaotic in the last bits, so it is compared with the reference within the tolerance
    measured across nine numeric paths on one machine (``results/numerics-spread.json``, rule
    ``3·√2·sd`` declared in ``tests/numerics/record.py``). The committed comparison record was
    trained on its author's CPU, whose path it does not name: its runs of this cell must lie within
    the same tolerance of the fresh run, like a run on any other path.
    """
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "numerics"))
    from record import REFERENCE, SPREAD, cell_scores

    from nlcl.core import numerics

    reference = json.loads(REFERENCE.read_text())
    tol = {s: v["tol"] for s, v in json.loads(SPREAD.read_text())["stats"].items() if isinstance(v, dict)}
    fresh = cell_scores()
    env, ref_env = fresh["numerics"], reference["numerics"]
    assert ref_env["portable"] and not reference["commit"].endswith("+dirty")
    assert fresh["cell"] == reference["cell"] and fresh["nlcl_seeds"] == reference["nlcl_seeds"]
    bitwise = numerics.on_portable_path(env) and numerics.same_numbers(env, ref_env, numpy=False)
    for s, want in reference["scores"].items():
        got = fresh["scores"][s]
        if bitwise:
            assert got == want, (s, got, want)
        else:
            assert abs(got - want) <= tol[s], (s, got, want, tol[s], numerics.describe(env))
    loss, bn, act = fresh["cell"]
    committed = next(
        r for r in _oracle_runs() if (r["loss"], r["bn"], r["activation"], r["seed"]) == (loss, bn, act, 0)
    )
    for s in ("chi_plus", "chi_minus"):
        assert abs(committed[s] - fresh["scores"][f"oracle_{s}"]) <= tol[f"oracle_{s}"], s
    nlcl = json.loads(NLCL.read_text())
    rows = [r for r in nlcl["runs"] if (r["loss"], r["bn"], r["activation"]) == (loss, bn, act)][:2]
    for i, r in enumerate(rows):
        for s in ("chi_plus", "chi_minus", "chi_plus_released", "chi_minus_released"):
            assert abs(r[s] - fresh["scores"][f"nlcl_{s}_{i}"]) <= tol[f"nlcl_{s}_{i}"], (i, s)


def _cell(d_plus, tol_plus, d_minus, tol_minus):
    return dict(
        diff_released_chi_plus=d_plus,
        tol_released_chi_plus=tol_plus,
        diff_released_chi_minus=d_minus,
        tol_released_chi_minus=tol_minus,
    )


def _fresh(m_o, m_n, se=0.005):
    """compare_cell-like output for χ̄− only differing (χ̄+ equal)."""
    return dict(
        oracle_chi_plus=0.5,
        oracle_chi_plus_se=se,
        nlcl_released_chi_plus=0.5,
        nlcl_released_chi_plus_se=se,
        oracle_chi_minus=m_o,
        oracle_chi_minus_se=se,
        nlcl_released_chi_minus=m_n,
        nlcl_released_chi_minus_se=se,
        diff_released_chi_plus=0.0,
        diff_released_chi_minus=m_n - m_o,
    )


def test_replication_rule():
    from replicate_differing import differing_cells, replication

    record_cell = _cell(0.0, 0.03, -0.05, 0.02)  # differed in χ̄−, nlcl lower
    again = replication(record_cell, _fresh(0.20, 0.15))
    assert again == dict(differed_in=["chi_minus"], differs_again_in=["chi_minus"], replicates=True)
    # differs again but with the opposite sign: not a replication
    assert replication(record_cell, _fresh(0.15, 0.20))["replicates"] is False
    # within the tolerance on the fresh seeds: not a replication
    assert replication(record_cell, _fresh(0.20, 0.19))["replicates"] is False
    cells = [dict(verdict_released="agrees"), dict(verdict_released="differs")]
    assert differing_cells(dict(cells=cells)) == [cells[1]]


def test_replication_record_matches_the_comparison_record():
    from replicate_differing import OUT, differing_cells, replication

    if not OUT.is_file():
        pytest.skip("no replication record committed")
    rep = json.loads(OUT.read_text())
    record = json.loads(RECORD.read_text())
    assert [(c["loss"], c["bn"], c["activation"]) for c in rep["cells"]] == [
        (c["loss"], c["bn"], c["activation"]) for c in differing_cells(record)
    ]
    assert rep["nlcl_released_scoring_max_abs_diff"] <= 1e-5
    for c in rep["cells"]:
        assert c["fresh"]["oracle_seeds"] == c["fresh"]["nlcl_seeds"] == rep["fresh_seeds"]
        full = next(
            r
            for r in record["cells"]
            if (r["loss"], r["bn"], r["activation"]) == (c["loss"], c["bn"], c["activation"])
        )
        assert not set(rep["fresh_seeds"]) & set(full["oracle_seeds"] + full["nlcl_seeds"])
        rule = replication(full, c["fresh"])
        assert {k: c[k] for k in rule} == rule
