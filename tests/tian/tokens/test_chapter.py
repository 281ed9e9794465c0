"""The bookkeeping of book/tian-tokens.py (nlcl.tian.tokens.chapter): where tables come from,
Table 1 (App. E.2), re-scoring (Eqs. 16, 180-181), pooled moments (App. D) and the records."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlcl.harness.claims.ledger import ledger_path, make_check, read_ledger
from nlcl.tian.tokens import chapter, oracle_tables, paper_scale
from nlcl.tian.tokens.grid import paper_grid
from nlcl.tian.tokens.metrics import paper_table1

LEDGER = read_ledger(ledger_path("tian-tokens")).claims


class _Art:
    """A stand-in for a results.Artifact: a table and its meta."""

    def __init__(self, table, meta):
        self.table, self.meta = table, meta

    def label(self):
        return "a label"


@given(st.one_of(st.text(), st.integers()))
def test_rounded_keeps_strings_and_integers(v):
    assert chapter.rounded(v) == v


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_rounded_floats_to_three_decimals(v):
    assert chapter.rounded(v) == round(float(v), 3)
    assert chapter.rounded(np.float64(v)) == round(v, 3)


def test_seed_values_need_two_finite_seeds():
    assert chapter.seed_values(pd.DataFrame({"k": [0.12345]}), "k") is None
    assert chapter.seed_values(pd.DataFrame({"k": [0.12345, 0.5]}), "k") == [0.123, 0.5]
    assert chapter.seed_values(pd.DataFrame({"k": [0.1, float("nan")]}), "k") is None


def test_read_from_lists_files_in_figure_order_or_none_when_computed():
    files = {"fig9": ["a9", "b9"], "fig10": ["a10"], "fig11": None, "table1": ["t"]}
    assert paper_scale.read_from(files, {"fig10", "fig9"}) == ["a9", "b9", "a10"]
    assert paper_scale.read_from(files, {"fig11"}) is None
    assert paper_scale.read_from(files, {"fig9", "fig11"}) is None


def test_artifact_files_one_per_part():
    assert paper_scale.artifact_files(_Art(None, {"name": "x"})) == ["results/x.json"]
    parts = {"name": "x", "parts": [{"name": "a"}, {"name": "b"}]}
    assert paper_scale.artifact_files(_Art(None, parts)) == ["results/a.json", "results/b.json"]


def test_computed_text_names_committed_files_or_this_run():
    main_files = {"fig9": ["results/p-fig9.json"], "fig10": None}
    extra = {"fig9": None, "fig10": None}
    assert paper_scale.computed_text("fig9", main_files, [0], extra) == (
        "read from the committed results/p-<figure>.json, not computed in this run"
    )
    assert paper_scale.computed_text("fig10", main_files, [0, 1], extra) == (
        "computed in this run (seeds 0, 1)"
    )
    texts = {f: "read from the committed x-<figure>" for f in paper_scale.FIGURES}
    assert paper_scale.computed_main_text(texts).endswith("(<figure>: fig9, fig10, fig11, table1)")
    texts["fig10"] = "other"
    assert paper_scale.computed_main_text(texts).startswith("fig9: read from")


def test_is_complete_and_describe_on_the_paper_grid():
    full = paper_grid(["fig11"], lr=2e-3, tau=0.1)
    assert paper_scale.is_complete(full, "fig11", 2e-3, 0.1)
    assert not paper_scale.is_complete(full.iloc[1:], "fig11", 2e-3, 0.1)
    art = _Art(full.iloc[1:], {"parameters": {"seeds": [0, 1, 2], "lr": 2e-3}})
    text = paper_scale.describe(art, "fig11", "ci", short=True)
    assert "PARTIAL" in text and "η = 0.002" in text
    assert paper_scale.describe(None, "fig11", "ci") == "live ci run"


def test_table_for_joins_the_extra_seeds_on_common_columns():
    live = pd.DataFrame({"figure": ["fig9", "fig10"], "seed": [0, 0], "x": [1.0, 2.0]})
    extra = _Art(pd.DataFrame({"seed": [3], "x": [5.0], "y": [0]}), {})
    out = paper_scale.table_for("fig9", {"fig9": "live"}, {}, live, {"fig9": extra})
    assert out.seed.tolist() == [0, 3] and out.x.tolist() == [1.0, 5.0]
    assert list(out.columns) == ["seed", "x"]


def test_table1_subtracts_the_papers_values():
    paper = paper_table1()
    rows = paper[["beta", "P", "bn"]].assign(chi_plus=paper.paper_mean + 0.1, seed=0)
    s, wide = chapter.table1(pd.concat([rows, rows.assign(seed=1)]))
    assert np.allclose(s["diff"], 0.1)
    assert list(wide.columns) == list(chapter.VARIANT.values())


def test_rescored_swaps_the_scores_where_stored():
    t = pd.DataFrame(
        {"chi_plus": [0.1], "chi_minus": [0.2], "chi_plus_printed": [0.3], "chi_minus_printed": [0.4]}
    )
    out, have = chapter.rescored([t, t.drop(columns=["chi_plus_printed"]), t, t], "printed")
    assert have == {"fig9", "fig11", "table1"}
    assert out[0].chi_plus.item() == 0.3 and out[1].chi_plus.item() == 0.1


def test_per_view_names_drop_the_pooled_prefix():
    t = pd.DataFrame({"bn": ["pooled-vanilla", "none", "pooled-mean"]})
    assert chapter.per_view_names(t).bn.tolist() == ["vanilla", "none", "mean"]


def test_cell_name():
    assert oracle_tables.cell_name("quadratic", "mean", "quadratic") == "quadratic, BN mean, x²"
    assert oracle_tables.cell_name("infonce", "none", "relu") == "InfoNCE, no BN, ReLU"


def test_spread_rows_follow_the_given_order_and_skip_single_seed_claims():
    recs = [
        {
            "id": "b",
            "tolerance": "≥ 0",
            "measured": 0.2,
            "status": "pass",
            "seeds": {"values": [0.1, 0.3], "std": 0.1414, "holds_fraction": 1.0, "n": 2},
        },
        {"id": "a", "tolerance": "≥ 0", "measured": -0.1, "status": "fail", "seeds": None},
    ]
    rows = chapter.spread_rows(recs, ["a", "b"], "g")
    assert [r["claim"] for r in rows] == ["b"]
    assert rows[0]["holds on"] == "2/2" and rows[0]["std over seeds"] == 0.141


def test_the_ledger_declares_the_grid_checks_and_predictions():
    checks = chapter.grid_checks(LEDGER, make_check)
    assert [cid for cid, _, _ in chapter.GRID_CLAIMS] == list(checks)
    assert checks["relu-lowest-chi-minus"]("relu") and not checks["table1-vs-paper"](0.2)
    recs = [{"id": "tokens-table1-vs-paper", "measured": 0.2, "status": "fail"}]
    diagnostics = {"table1_minus_paper": -0.1, "lr0_01_table1_vs_paper": 0.3}
    rows = chapter.prediction_rows(recs, ["tokens-table1-vs-paper"], diagnostics, LEDGER, make_check)
    assert [r["prediction holds"] for r in rows] == [True, False]


def test_grid_measurements_cover_the_claims_of_the_given_figures():
    values = {key: 0.5 for _, key, _ in chapter.GRID_CLAIMS}
    per_seed = pd.DataFrame({key: [0.4, 0.6] for _, key, _ in chapter.GRID_CLAIMS})
    out = chapter.grid_measurements(values, per_seed, {"fig11": ["f"], "table1": None})
    assert sorted(out) == ["bn-helps-at-zeta10", "table1-no-var-backprop", "table1-vs-paper"]
    assert out["bn-helps-at-zeta10"] == dict(measured=0.5, per_seed=[0.4, 0.6], read_from=["f"])
    assert out["table1-vs-paper"]["read_from"] is None


def test_curve_summary_share_of_the_late_gain():
    steps = [0, 40, 80, 100]
    curves = pd.DataFrame(
        {
            "activation": "ReLU",
            "η": "0.01",
            "step": steps,
            "loss": [4.0, 3.0, 2.5, 2.4],
            "chi_plus": [0.2, 0.5, 0.6, 0.7],
        }
    )
    table, late = chapter.curve_summary(curves, 100)
    assert late == 80
    row = table.loc[("ReLU", "0.01")]
    assert math.isclose(row["share of the χ̄+ gain in the last fifth"], 0.1 / 0.5)


def test_replication_rows_mark_same_sign():
    cell = {
        "loss": "quadratic",
        "bn": "none",
        "activation": "relu",
        "differed_in": ["chi_minus"],
        "differs_again_in": [],
        "record": {"diff_released_chi_minus": 0.05, "tol_released_chi_minus": 0.02},
        "fresh": {"diff_released_chi_minus": 0.01, "tol_released_chi_minus": 0.03},
    }
    rows, same = oracle_tables.replication_rows({"cells": [cell]})
    assert rows[0]["replicates"] is False and same == ["quadratic, no BN, ReLU χ̄−"]


@pytest.mark.parametrize("v", [0.1, -0.1])
def test_pooled_rows_compare_verdicts(v):
    checks = chapter.grid_checks(LEDGER, make_check)
    values = {key: v for _, key, _ in chapter.GRID_CLAIMS}
    rows = chapter.pooled_rows(0.01, values, {**values, "bn_minus_none_zeta10": 0.2}, checks, 5)
    assert [r["claim"] for r in rows] == [
        "tokens-bn-helps-at-zeta10",
        "tokens-table1-no-var-backprop",
        "tokens-table1-vs-paper",
    ]
    assert rows[0]["same verdict"] == (v > 0)


class _Mismatch(Exception):
    pass


class _Store:
    """A stand-in for nlcl.harness.records.results: artifacts by name, params checked on load."""

    ArtifactMismatch = _Mismatch

    def __init__(self, arts):
        self.arts, self.calls = arts, []

    def load(self, name, params=None):
        self.calls.append((name, params))
        if name not in self.arts:
            raise FileNotFoundError(name)
        art = self.arts[name]
        if params is not None and params["lr"] != art.meta["parameters"]["lr"]:
            raise _Mismatch(f"lr {params['lr']}")
        return art

    def concat_seeds(self, parts):
        table = pd.concat([p.table for p in parts], ignore_index=True)
        return _Art(table, {**parts[0].meta, "parts": [p.meta for p in parts]})


def _stored(name, seeds, lr=2e-3):
    from nlcl.tian.tokens.grid import grid_parameters

    meta = {"name": name, "parameters": {**grid_parameters(5000, lr, seeds), "figure": "fig9"}}
    return _Art(pd.DataFrame({"seed": seeds}), meta)


def test_load_artifact_joins_the_extra_seeds_and_says_why_not(capsys):
    store = _Store(
        {
            "tian-tokens-full-fig9": _stored("tian-tokens-full-fig9", [0, 1, 2]),
            "tian-tokens-full-seeds3-4-fig9": _stored("tian-tokens-full-seeds3-4-fig9", [3, 4]),
        }
    )
    art = paper_scale.load_artifact(store, "tian-tokens-full", "fig9", 2e-3)
    assert art.table.seed.tolist() == [0, 1, 2, 3, 4]
    assert store.calls[1][1]["figure"] == "fig9" and store.calls[1][1]["seeds"] == [0, 1, 2]
    assert paper_scale.artifact_files(art) == [
        "results/tian-tokens-full-fig9.json",
        "results/tian-tokens-full-seeds3-4-fig9.json",
    ]
    assert paper_scale.load_artifact(store, "tian-tokens-full", "fig9", 1e-2) is None
    assert "no usable artifact" in capsys.readouterr().out
    del store.arts["tian-tokens-full-seeds3-4-fig9"]
    assert paper_scale.load_artifact(store, "tian-tokens-full", "fig9", 2e-3).table.seed.tolist() == [0, 1, 2]
    assert "extra seeds not used" in capsys.readouterr().out


def test_load_extra_for_live_refuses_overlapping_seeds(capsys):
    name = "tian-tokens-full-seeds3-4-fig9"
    store = _Store({name: _stored(name, [3, 4])})
    assert paper_scale.load_extra_for_live(store, "fig9", 2e-3, 5000, [0, 1, 2]) is not None
    assert paper_scale.load_extra_for_live(store, "fig9", 2e-3, 5000, [3]) is None
    assert "overlap" in capsys.readouterr().out
    assert paper_scale.load_pooled(store, "nothing", "fig11", 2e-3) is None


def test_load_one_checks_the_stored_seeds_and_figure():
    name = "tian-tokens-full-fig9"
    store = _Store({name: _stored(name, [0, 1])})
    assert paper_scale.load_one(store, name, "fig9", 2e-3).table.seed.tolist() == [0, 1]
    assert store.calls[-1][1]["seeds"] == [0, 1] and store.calls[-1][1]["figure"] == "fig9"


def test_bench_summary_glues_the_table_engines_record():
    class Records:
        def records(self, prefix):
            assert prefix == "tian-tokens-bench-"
            return {
                "tian-tokens-bench-cpu": {
                    "device": "cpu",
                    "projected_full_grid_min_wall": 9.87,
                    "fraction_of_peak": 0.123,
                    "fraction_of_peak_engine": 0.456,
                    "matmul_peak_gflops": 50.4,
                    "nested": {"x": 1},
                }
            }

    benches, glue = paper_scale.bench_summary(Records())
    assert "nested" not in benches["tian-tokens-bench-cpu"]
    assert glue == dict(device="cpu", projected="9.9", dense="12%", engine="46%", peak="50", workers="1")


def test_oracle_cells_and_table():
    cols = ["oracle_chi_plus", "oracle_chi_minus", "nlcl_released_chi_plus", "nlcl_released_chi_minus"]
    cols += ["nlcl_cosine_chi_minus"]
    cell = {c: 0.5 for c in cols} | {c + "_se": 0.01 for c in cols}
    cell |= dict(loss="quadratic", bn="mean", activation="quadratic", oracle_seeds=[0, 1])
    cell |= dict(verdict_released="agrees", verdict_cosine="differs", oracle_chi_plus_se=None)
    record = {"cells": [cell], "config": {"seeds": [0, 1, 2]}}
    oc = oracle_tables.oracle_cells(record)
    assert oc.cell.tolist() == ["quadratic, BN mean, x²"] and oc.n_oracle.tolist() == [2]
    table = oracle_tables.oracle_table(oc, record)
    assert table.index.name == "3 nlcl seeds per cell"
    assert table["oracle χ̄+"].tolist() == ["0.500"] and table["oracle χ̄−"].tolist() == ["0.500 ± 0.010"]


def test_scoring_comparison_flags_a_verdict_that_changes_and_scoring_cell(monkeypatch):
    checks = chapter.grid_checks(LEDGER, make_check)
    book = {key: 0.0 for _, key, _ in chapter.GRID_CLAIMS} | {"bn_minus_none_zeta10": 0.1}
    printed = {**book, "bn_minus_none_zeta10": -0.1}
    # the printed scores are stored for Fig. 11 only, where they are zero
    monkeypatch.setattr(
        chapter, "grid_predicates", lambda *t: printed if t[2].chi_plus.item() == 0.0 else book
    )
    t = pd.DataFrame({"chi_plus": [1.0], "chi_minus": [0.0]})
    tables = [t, t, t.assign(chi_plus_printed=0.0, chi_minus_printed=0.0), t]
    table, same = chapter.scoring_comparison({"g": tables}, checks, ["printed"])
    assert same["printed"] == [False]
    assert len(table) == len(chapter.GRID_CLAIMS)
    assert chapter.scoring_cell(table, "g", "bn-helps-at-zeta10", "printed") == "-0.1 (verdict differs)"
    assert chapter.scoring_cell(table, "g", "p1-linear-vs-relu", "printed") == "(not stored)"
    assert chapter.scoring_cell(table, "h", "bn-helps-at-zeta10", "printed") == "n/a"


def test_pooled_grids_join_the_per_view_no_bn_runs_on_the_pooled_seeds():
    v11 = pd.DataFrame({"bn": ["none", "none", "vanilla"], "seed": [0, 5, 0], "chi_plus": [1.0, 2.0, 3.0]})
    pooled11 = pd.DataFrame({"bn": ["pooled-vanilla"], "seed": [0], "chi_plus": [4.0], "x": [0]})
    pooled_t1 = pd.DataFrame({"bn": ["pooled-mean"], "seed": [0], "chi_plus": [5.0]})
    arts = {
        "fig11": _Art(pooled11, {"name": "p-fig11"}),
        "table1": _Art(pooled_t1, {"name": "p-table1"}),
    }
    empty = pd.DataFrame()
    out = chapter.pooled_grids(arts, [empty, empty, v11, pooled_t1], {"fig11": ["v.json"]})
    assert out["seeds"] == [0]
    assert out["tables"][2].bn.tolist() == ["none", "vanilla"]
    assert out["tables"][3].bn.tolist() == ["mean"]
    assert out["files"] == {"fig11": ["results/p-fig11.json", "v.json"], "table1": ["results/p-table1.json"]}
    assert out["view_same"][2].seed.tolist() == [0, 0]


def test_grid_measurements_name_the_seeds_joined_with_this_run():
    values = {key: 0.5 for _, key, _ in chapter.GRID_CLAIMS}
    per_seed = pd.DataFrame({key: [0.4, 0.6] for _, key, _ in chapter.GRID_CLAIMS})
    files = {"fig11": ["f"], "table1": None}
    out = chapter.grid_measurements(values, per_seed, files, {"fig11": None, "table1": ["x.json"]})
    assert out["table1-vs-paper"]["joined_with"] == ["x.json"] and out["table1-vs-paper"]["read_from"] is None
    assert "joined_with" not in out["bn-helps-at-zeta10"]  # read from a committed file: nothing joined


def test_fig5_capture_scores_each_run_on_its_own_world():
    import torch

    from nlcl.tian.tokens.grid import TokenRun
    from nlcl.tian.tokens.world import make_token_worlds

    runs = [TokenRun(a, beta=2, P=3, seed=s, lr=1e-2) for a in ("relu", "linear") for s in (0, 1)]
    weights = {}
    for i, r in enumerate(runs):
        rel = make_token_worlds([r.seed], 3).relevant[0]  # (K, n_tokens)
        W = torch.zeros(10, 6, 20, dtype=torch.float64)
        for k in range(10):
            toks = torch.nonzero(rel[k]).flatten()
            W[k, torch.arange(len(toks)), toks] = -1.0 if r.activation == "linear" else 1.0
        weights[i] = W
    t = chapter.fig5_capture(runs, weights)
    assert list(t.columns) == ["activation", "lr", "seed", "share", "weakest"]
    assert t.share.tolist() == [1.0] * 4  # linear: negated filters count with |cos|
    assert t.seed.tolist() == [0, 1, 0, 1]
    weights[0] = weights[1]  # seed 1's filters scored on seed 0's world
    assert chapter.fig5_capture(runs, weights).share[0] < 1.0
