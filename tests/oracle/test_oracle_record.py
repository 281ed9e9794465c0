"""The committed comparison record ``results/tian-tokens-oracle.json`` (issue 18, item 2).

Fast: the record is what ``compare_oracle.py`` builds from the committed runs (oracle:
``results/tian-tokens-oracle-runs.jsonl``; nlcl: ``results/tian-tokens-oracle-nlcl-runs.json``),
the rule is applied as stated, and the verdicts are the ones the token chapter reports.
Slow: re-training one oracle run and one nlcl cell reproduces the committed numbers.
"""

import json
import math

import pytest
import torch
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
def test_one_oracle_run_and_one_nlcl_cell_reproduce_the_record():
    """Determinism: the oracle's seed-0 run of the quadratic/BN-mean/x² cell (about 1-2 minutes on
    one thread) and nlcl's runs of that cell give the committed numbers."""
    from released_trainer import OracleConfig, train_and_score
    from score_nlcl_runs import CONFIG

    from nlcl.tian.token_grid import TokenRun, train_token_runs

    torch.set_num_threads(1)
    loss, bn, act = BOLD[0]
    committed = next(
        r for r in _oracle_runs() if (r["loss"], r["bn"], r["activation"], r["seed"]) == (loss, bn, act, 0)
    )
    out = train_and_score(OracleConfig(activation=act, loss=loss, bn=bn, seed=0))
    assert out["chi_plus"] == pytest.approx(committed["chi_plus"], abs=1e-6)
    assert out["chi_minus"] == pytest.approx(committed["chi_minus"], abs=1e-6)
    nlcl = json.loads(NLCL.read_text())
    rows = [r for r in nlcl["runs"] if (r["loss"], r["bn"], r["activation"]) == (loss, bn, act)][:2]
    c = CONFIG
    runs = [
        TokenRun(act, loss, bn, c["beta"], c["P"], c["zeta"], r["seed"], lr=c["lr"], tau=c["tau"])
        for r in rows
    ]
    table = train_token_runs(
        runs,
        c["steps"],
        batch_size=c["batch_size"],
        momentum=c["momentum"],
        weight_decay=c["weight_decay"],
        K=c["K"],
        n_tokens=c["n_tokens"],
        G=c["G"],
        n_fixed=c["n_fixed"],
        out_dim=c["out_dim"],
    ).table
    for r, (_, t) in zip(rows, table.iterrows()):
        for key in ("chi_plus", "chi_minus", "chi_plus_released", "chi_minus_released"):
            assert t[key] == pytest.approx(r[key], abs=1e-5), key


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
