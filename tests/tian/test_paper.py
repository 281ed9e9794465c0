"""nlcl.tian.paper: each setting of Tian 2023 declared once; chapters' literal parameters agree."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from nlcl.tian import paper
from nlcl.tian.tokens import grid, training

ROOT = Path(__file__).resolve().parents[2]


def _chapter_literals(chapter: str) -> tuple[dict, dict]:
    """(parameter defaults of the parameters cell, the ``spec=`` of ``nlcl.start``) as literals."""
    tree = ast.parse((ROOT / "book" / f"{chapter}.py").read_text())
    defaults = {
        n.target.id: ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None
    }
    spec = next(
        ast.literal_eval(k.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "start"
        for k in n.keywords
        if k.arg == "spec"
    )
    return defaults, spec


def test_every_setting_cites_where_it_is_stated():
    source = inspect.getsource(paper)
    for name in paper.__all__:
        line = next(i for i, text in enumerate(source.splitlines()) if text.startswith(f"{name}:"))
        comment = source.splitlines()[line - 1]
        assert comment.startswith("#:") and ("Tian 2023" in comment or "released code" in comment), name


def test_the_token_chapter_agrees_with_the_declared_settings():
    defaults, spec = _chapter_literals("tian-tokens")
    assert defaults["lr"] == spec["lr"]["paper"] == paper.SGD_LR
    assert defaults["tau"] == spec["tau"]["paper"] == paper.RELEASED_TAU
    assert spec["steps"]["full"] == paper.TOKEN_STEPS
    assert tuple(spec["betas"]["full"]) == paper.TOKEN_BETAS and tuple(spec["Ps"]["full"]) == paper.TOKEN_PS


def test_the_mnist_chapter_agrees_with_the_declared_settings():
    defaults, spec = _chapter_literals("tian-mnist-filters")
    assert defaults["batch_size"] == spec["batch_size"]["paper"] == paper.MNIST_BATCH
    assert spec["steps"]["full"] == paper.MNIST_STEPS


@pytest.mark.parametrize(
    "func, name, value",
    [
        (training.train_batched, "lr", paper.SGD_LR),
        (training.train_batched, "momentum", paper.SGD_MOMENTUM),
        (training.train_batched, "weight_decay", paper.WEIGHT_DECAY),
        (grid.paper_grid, "lr", paper.SGD_LR),
        (grid.paper_grid, "tau", paper.RELEASED_TAU),
        (grid.train_token_runs, "batch_size", paper.TOKEN_BATCH),
    ],
)
def test_module_defaults_are_the_declared_settings(func, name, value):
    assert inspect.signature(func).parameters[name].default == value


def test_grid_parameters_record_the_declared_settings():
    rec = grid.grid_parameters(paper.TOKEN_STEPS)
    assert (rec["lr"], rec["tau"], rec["batch_size"], rec["momentum"], rec["weight_decay"]) == (
        paper.SGD_LR,
        paper.RELEASED_TAU,
        paper.TOKEN_BATCH,
        paper.SGD_MOMENTUM,
        paper.WEIGHT_DECAY,
    )
    assert rec["zetas"] == list(paper.TOKEN_ZETAS) and tuple(rec["betas"]) == paper.TOKEN_BETAS
