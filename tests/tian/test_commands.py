"""nlcl.tian.commands: train_grid and the ``nlcl train-grid`` / ``nlcl bench`` subcommands it registers."""

import json

import pytest

from nlcl.core.commands import Command, Services
from nlcl.core.validate import ParameterError
from nlcl.harness.records import results
from nlcl.harness.run.cli import main, services
from nlcl.tian.commands import COMMANDS, train_grid


@pytest.fixture()
def tiny_grid(monkeypatch):
    """The paper grid cut to one activation, β and P, so that train_grid runs in seconds."""
    import nlcl.tian.tokens.grid as token_grid

    real = token_grid.paper_grid
    monkeypatch.setattr(
        token_grid,
        "paper_grid",
        lambda figures, seeds, lr, **kw: real(
            figures, seeds=seeds, lr=lr, activations=["relu"], betas=[1], Ps=[1], **kw
        ),
    )


def test_train_grid_saves_one_labeled_artifact_per_figure(tmp_path, monkeypatch, tiny_grid):
    monkeypatch.setenv("NLCL_RESULTS_DIR", str(tmp_path))
    lines = []
    train_grid(
        ["fig9"], steps=2, seeds=[0], prefix="tiny", profile="ci", services=services(), echo=lines.append
    )
    art = results.load("tiny-fig9")
    assert len(art.table) > 0 and art.meta["profile"] == "ci"
    assert "complete" in art.meta["notes"] and any("runs x 2 steps" in line for line in lines)
    assert art.meta["device"].startswith("cpu") and "worker" not in art.meta["device"]
    # trained on 2 Dask worker processes: the device field says so
    train_grid(
        ["fig9"],
        steps=1,
        seeds=[0],
        prefix="two",
        profile="ci",
        workers=2,
        services=services(),
        echo=lines.append,
    )
    assert results.load("two-fig9").meta["device"].endswith("per worker, 2 Dask worker processes")
    # pooled BatchNorm moments: only the BN runs, and the artifact records the choice
    train_grid(
        ["table1"],
        steps=1,
        seeds=[0],
        prefix="pooled",
        profile="ci",
        bn_moments="pooled",
        services=services(),
        echo=lines.append,
    )
    art = results.load("pooled-table1")
    assert set(art.table.bn) == {"pooled-detached", "pooled-var", "pooled-mean", "pooled-vanilla"}
    assert art.meta["parameters"]["bn_moments"] == "pooled"


def test_cli_bench_quick_writes_a_record(tmp_path, monkeypatch, capsys):
    import nlcl.tian.tokens.bench as bench
    from nlcl.tian.tokens.grid import paper_grid

    monkeypatch.setattr(
        bench,
        "paper_grid",
        lambda: paper_grid(["fig9"], seeds=[0], activations=["relu"], betas=[1, 5], Ps=[1, 3]),
    )
    out = tmp_path / "b.json"
    assert main(["bench", "--quick", "--steps", "1", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["quick"] is True
    assert "matmul peak" in capsys.readouterr().out


def test_train_grid_saves_through_the_services_it_is_given(tiny_grid):
    saved = []
    lent = Services(
        save_artifact=lambda name, table, **meta: saved.append((name, meta)), git_commit=lambda: "abc"
    )
    train_grid(["fig9"], steps=1, seeds=[0], prefix="mine", profile="ci", services=lent, echo=lambda _: None)
    assert saved and saved[-1][0] == "mine-fig9" and saved[-1][1]["commit"] == "abc"


def test_the_paper_registers_its_commands():
    assert [c.name for c in COMMANDS] == ["train-grid", "bench"]
    assert all(isinstance(c, Command) and c.help for c in COMMANDS)


def test_train_grid_records_a_non_default_engine(tiny_grid):
    saved = []
    lent = Services(save_artifact=lambda name, table, **meta: saved.append(meta), git_commit=lambda: "c")
    for engine in ("auto", "autograd"):
        train_grid(["fig9"], steps=1, seeds=[0], profile="ci", engine=engine, services=lent, echo=str)
    assert "engine" not in saved[0]["params"] and saved[-1]["params"]["engine"] == "autograd"
    with pytest.raises(ParameterError, match="engine"):
        train_grid(["fig9"], steps=1, seeds=[0], engine="warp", services=lent, echo=str)
