"""Tests for nlcl.tian.tokens.training (Tian 2023, Sec. 5 / App. E.2 batched contrastive training)."""

import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.tian.rf_network import TwoLayerRF
from nlcl.tian.tokens.grid import (
    TokenRun,
    TrainResult,
    grid_parameters,
    paper_grid,
    runs_from_table,
    train_token_runs,
)
from nlcl.tian.tokens.training import sgd_momentum_step, train_batched


def test_sgd_step_matches_torch_optim():
    g = torch.Generator().manual_seed(1)
    p0 = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    grads = [torch.randn(2, 3, 4, generator=g, dtype=torch.float64) for _ in range(3)]
    lrs = [0.1, 0.02]
    ours = p0.clone().requires_grad_()
    buf = torch.zeros_like(ours)
    for gr in grads:
        ours.grad = gr.clone()
        sgd_momentum_step([ours], [buf], torch.tensor(lrs, dtype=torch.float64), 0.9, 5e-3)
    for r, lr in enumerate(lrs):
        ref = p0[r].clone().requires_grad_()
        opt = torch.optim.SGD([ref], lr=lr, momentum=0.9, weight_decay=5e-3)
        for gr in grads:
            ref.grad = gr[r].clone()
            opt.step()
        assert torch.allclose(ours[r].detach(), ref.detach())


def test_batched_training_equals_run_by_run_and_is_deterministic():
    runs = [
        TokenRun("relu", "infonce", "none", 2, 3, 1.0, 0),
        TokenRun("linear", "quadratic", "mean", 1, 6, 2.0, 1),
        TokenRun("sigmoid", "infonce", "vanilla", 3, 2, 5.0, 2),
    ]
    together = train_token_runs(runs, 15, batch_size=16).table
    again = train_token_runs(runs, 15, batch_size=16).table
    assert together.equals(again)
    for i, r in enumerate(runs):
        alone = train_token_runs([r], 15, batch_size=16).table
        assert alone.chi_plus[0] == pytest.approx(together.chi_plus[i], abs=1e-5)
        assert alone.final_loss[0] == pytest.approx(together.final_loss[i], abs=1e-4)


def test_training_learns_relevant_tokens():
    res = train_token_runs([TokenRun("relu", beta=2, P=3, seed=0, lr=1e-2)], 600, keep_weights=[0])
    assert isinstance(res, TrainResult) and res.wall_s > 0 and res.run_steps_per_s > 0
    row = res.table.iloc[0]
    assert row.chi_plus > row.chi_minus + 0.1
    assert res.weights[0].shape == (10, 6, 20)


def test_nan_raises_a_clear_error():
    m = TwoLayerRF(2, 2, 3, 2)
    x = torch.randn(2, 8, 2, 3)
    x[1, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"run\(s\) \[1\]"):
        train_batched(m, lambda step: (x, x), 2)


@pytest.mark.parametrize(
    "run, match",
    [
        (TokenRun(activation="tanhh"), "activation"),
        (TokenRun(loss="triplet"), "loss"),
        (TokenRun(bn="group"), "bn"),
        (TokenRun(beta=0), "beta"),
        (TokenRun(P=21), "P"),
        (TokenRun(lr=-1.0), "lr"),
        (TokenRun(zeta=0.0), "zeta"),
    ],
)
def test_bad_runs_raise(run, match):
    with pytest.raises(ValueError, match=match):
        train_token_runs([run], 1)


def test_bad_trainer_arguments():
    m = TwoLayerRF(1, 2, 3, 2)
    x = torch.randn(1, 4, 2, 3)
    with pytest.raises(ValueError, match="lr"):
        train_batched(m, lambda s: (x, x), 1, lr=0.0)
    with pytest.raises(ValueError, match="loss"):
        train_batched(m, lambda s: (x, x), 1, loss="hinge")
    with pytest.raises(ValueError, match="steps"):
        train_batched(m, lambda s: (x, x), 0)


def test_paper_grid_size_and_round_trip():
    grid = paper_grid()
    assert len(grid) == 960
    assert grid.groupby("figure").size().to_dict() == {"fig9": 240, "fig10": 240, "fig11": 288, "table1": 192}
    runs = runs_from_table(grid)
    assert runs[0] == TokenRun(**{k: grid.iloc[0][k] for k in TokenRun.__dataclass_fields__})
    with pytest.raises(ValueError, match="figures"):
        paper_grid(["fig4x"])


def test_paper_grid_pooled_moments_has_the_batchnorm_runs_only():
    view = paper_grid(["fig11", "table1"])
    pooled = paper_grid(["fig11", "table1"], bn_moments="pooled")
    bn_runs = view[view.bn != "none"].reset_index(drop=True)
    assert len(pooled) == len(bn_runs) == 144 + 192
    assert (pooled.bn == "pooled-" + bn_runs.bn).all()
    assert pooled.drop(columns="bn").equals(bn_runs.drop(columns="bn"))
    assert "bn_moments" not in grid_parameters(5000)
    assert grid_parameters(5000, bn_moments="pooled")["bn_moments"] == "pooled"
    with pytest.raises(ValueError, match="bn_moments"):
        paper_grid(["fig11"], bn_moments="both")


ARTIFACT_COLUMNS = [
    "figure",
    "activation",
    "loss",
    "bn",
    "beta",
    "P",
    "zeta",
    "seed",
    "lr",
    "tau",
    "M",
    "chi_plus",
    "chi_minus",
    "final_loss",
]
SCORE_COLUMNS = [
    f"chi_{pm}_{scoring}" for scoring in ("released", "symmetric", "printed") for pm in ("plus", "minus")
]


@pytest.mark.parametrize(
    "prefix,lr,expected_seeds",
    [
        ("tian-tokens-full", 2e-3, [0, 1, 2]),
        ("tian-tokens-full-lr0.01", 1e-2, [0, 1, 2]),
        ("tian-tokens-full-seeds3-4", 2e-3, [3, 4]),  # extra seeds, combined by the chapter
        ("tian-tokens-full-lr0.01-seeds3-4", 1e-2, [3, 4]),
    ],
)
@pytest.mark.parametrize("fig", ["fig9", "fig10", "fig11", "table1"])
def test_committed_full_profile_artifact_matches_the_code(fig, prefix, lr, expected_seeds):
    """results/<prefix>-<fig>: schema, parameters and runs agree with paper_grid (complete grids)."""
    from nlcl.harness.records import results
    from nlcl.tian.tokens.grid import grid_parameters

    name = f"{prefix}-{fig}"
    meta = results.load(name).meta
    seeds = meta["parameters"]["seeds"]
    art = results.load(name, params={**grid_parameters(5000, lr, seeds), "figure": fig})
    t = art.table
    # Every artifact has the base columns; grids re-trained since the extra scorings were added
    # (Fig. 9 at both rates) also carry them, and nothing else.
    cols = list(t.columns)
    assert cols[: len(ARTIFACT_COLUMNS)] == ARTIFACT_COLUMNS, cols
    assert set(cols[len(ARTIFACT_COLUMNS) :]) <= set(SCORE_COLUMNS), cols
    if fig == "fig9":
        assert set(SCORE_COLUMNS) <= set(cols), "the re-trained Fig. 9 grids store every scoring"
    assert meta["profile"] == "full" and len(t) > 0
    assert seeds == expected_seeds and not meta["commit"].endswith("+dirty")
    grid = paper_grid([fig], seeds=seeds, lr=lr)
    keys = ["figure", "activation", "loss", "bn", "beta", "P", "zeta", "seed", "lr", "tau"]
    stored = [tuple(r) for r in t[keys].astype(str).values]
    allowed = {tuple(r) for r in grid[keys].astype(str).values}
    assert len(set(stored)) == len(stored), "duplicate runs in the artifact"
    assert set(stored) <= allowed, "the artifact holds runs that paper_grid does not list"
    assert (t.M == t.beta * t.P).all()
    assert t.chi_plus.between(-1, 1).all() and t.chi_minus.between(-1, 1).all()
    assert len(t) == len(grid) and "complete" in meta["notes"]


def test_train_token_runs_on_dask_workers_is_bitwise_one_process():
    """The token grid on a Dask LocalCluster (2 processes, 1 torch thread each) gives exactly the
    numbers of one process with 1 torch thread (Issue: the grid runs through Dask unchanged)."""
    runs = runs_from_table(
        paper_grid(["fig9"], seeds=[0], activations=["relu", "linear"], betas=[1, 2], Ps=[1, 3])
    )
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        one = train_token_runs(runs, 20, batch_size=16, keep_weights=[1])
    finally:
        torch.set_num_threads(old)
    seen = []
    two = train_token_runs(runs, 20, batch_size=16, keep_weights=[1], workers=2, on_stack=seen.append)
    for col in ("chi_plus", "chi_minus", "final_loss"):
        assert (one.table[col].values == two.table[col].values).all(), col
    assert torch.equal(one.weights[1], two.weights[1])
    assert len(seen) >= 1 and len(seen[-1]) == len(runs)


def test_train_token_runs_worker_errors():
    runs = [TokenRun()]
    with pytest.raises(ParameterError, match="workers"):
        train_token_runs(runs, 1, workers=0)
    with pytest.raises(ParameterError, match="device='cpu'"):
        train_token_runs(runs, 1, workers=2, device="cuda")


def test_training_curves_record_the_untrained_network_and_do_not_change_training():
    """record_every (issue 13 §5): step 0 holds the untrained filters' scores, the last record the
    final scores; recording leaves the results bitwise unchanged."""
    runs = [
        TokenRun("relu", beta=2, P=3, seed=0, lr=1e-2),
        TokenRun("quadratic", "quadratic", "none", 1, 3, 1.0, 1),
        TokenRun("linear", beta=1, P=3, seed=2),
    ]
    plain = train_token_runs(runs, 12, batch_size=16)
    rec = train_token_runs(runs, 12, batch_size=16, record_every=5)
    assert plain.curves is None
    assert rec.table.equals(plain.table)
    c = rec.curves
    assert list(c.columns) == ["run", "step", "loss", "chi_plus", "chi_minus"]
    assert sorted(c.step.unique()) == [0, 5, 10, 12] and len(c) == 4 * len(runs)
    last = c[c.step == 12].set_index("run")
    assert last.chi_plus.values == pytest.approx(rec.table.chi_plus.values, abs=1e-12)
    assert last.chi_minus.values == pytest.approx(rec.table.chi_minus.values, abs=1e-12)
    # Step 0: the scores of the untrained filters (the same for every step count and learning rate).
    short = train_token_runs(
        [TokenRun("relu", beta=2, P=3, seed=0, lr=2e-3)], 3, batch_size=16, record_every=1
    )
    assert short.curves.chi_plus[0] == pytest.approx(c[(c.run == 0) & (c.step == 0)].chi_plus.item())
    assert short.curves.loss[0] == pytest.approx(c[(c.run == 0) & (c.step == 0)].loss.item(), rel=1e-6)
    assert c.loss.notna().all() and c.chi_plus.between(-1, 1).all()
    with pytest.raises(ParameterError, match="record_every"):
        train_token_runs(runs, 2, record_every=0)


def test_sign_symmetric_scores_take_abs_cos_for_linear_and_quadratic():
    runs = [TokenRun(a, beta=2, P=3, seed=0) for a in ("relu", "linear", "quadratic")]
    t = train_token_runs(runs, 20, batch_size=16).table
    relu, lin, quad = (t.iloc[i] for i in range(3))
    # ReLU is not sign-symmetric and linear already takes |cos|: both scorings agree.
    for row in (relu, lin):
        assert row.chi_plus_symmetric == row.chi_plus and row.chi_minus_symmetric == row.chi_minus
    # x² with |cos| can only score higher (max |cos| >= max cos).
    assert quad.chi_plus_symmetric >= quad.chi_plus - 1e-12
    assert quad.chi_minus_symmetric >= quad.chi_minus - 1e-12
