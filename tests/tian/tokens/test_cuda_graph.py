"""Tests for nlcl.tian.tokens.cuda_graph on the CPU: the setting's parsing, and that it changes
nothing off a GPU. The capture itself needs CUDA: ``test_fused_cuda.py`` (skipped without a GPU)
checks that a replayed loop trains as the plain loop (to 1e-6 of the largest entry; bitwise expected)."""

import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.tian.tokens.bench import reference_runs
from nlcl.tian.tokens.cuda_graph import ENV, graph_wanted
from nlcl.tian.tokens.stacks import build_stack
from nlcl.tian.tokens.training import train_batched


@pytest.mark.parametrize(
    "value, device, wanted",
    [(None, "cuda", False), ("0", "cuda", False), ("", "cuda", False), ("1", "cuda", True),
     ("1", "cuda:1", True), ("1", "cpu", False), (" 1 ", "cuda", True)],
)  # fmt: skip
def test_graph_wanted_needs_the_setting_and_a_cuda_device(monkeypatch, value, device, wanted):
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    assert graph_wanted(torch.device(device)) is wanted


@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_graph_wanted_names_a_bad_setting(monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    with pytest.raises(ParameterError, match=f"NLCL_CUDA_GRAPH='{value}' is not allowed.*'0'.*'1'"):
        graph_wanted(torch.device("cpu"))


def test_the_setting_changes_nothing_on_the_cpu(monkeypatch):
    monkeypatch.setenv("NLCL_FUSED_COMPILE", "0")  # the same step, eagerly: fast to test

    def train(setting):
        monkeypatch.setenv(ENV, setting)
        _, model, data = build_stack(reference_runs(2), batch_size=16, out_dim=4)
        seen = []
        loss = train_batched(model, data, 6, engine="fused", lr=0.02, callback=lambda s, x: seen.append(x))
        return model.W.detach().clone(), model.V.detach().clone(), loss, torch.stack(seen)

    for plain, other in zip(train("0"), train("1"), strict=True):
        assert torch.equal(plain, other)
