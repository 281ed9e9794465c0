"""The GPU path (marker ``gpu``): trainers and two chapters on CUDA, compared with the CPU.

Skipped where no CUDA device is present (as on the CI machine); run them with
``.venv/bin/python -m pytest -m gpu tests/test_gpu.py`` on a machine with a GPU.
"""

from pathlib import Path

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]

ROOT = Path(__file__).resolve().parents[1]


def test_token_trainer_on_cuda_matches_cpu():
    from nlcl.tian.tokens.grid import paper_grid, runs_from_table, train_token_runs

    runs = runs_from_table(
        paper_grid(["fig9"], seeds=[0], activations=["relu", "linear"], betas=[1], Ps=[1, 3])
    )
    cpu = train_token_runs(runs, 50, batch_size=32, dtype=torch.float64)
    gpu = train_token_runs(runs, 50, batch_size=32, dtype=torch.float64, device="cuda")
    assert abs(cpu.table.chi_plus - gpu.table.chi_plus).max() < 1e-6
    assert abs(cpu.table.final_loss - gpu.table.final_loss).max() < 1e-6


@pytest.mark.parametrize("chapter", ["tian-tokens", "renli-mnist-captions"])
def test_chapter_runs_on_cuda(chapter, tmp_path):
    from nlcl.harness.run import notebook

    res = notebook.run_chapter(
        chapter,
        parameters={"device": "cuda"},
        profile="ci",
        root=ROOT,
        progress_bar=False,
        run_dir=tmp_path / chapter,
    )
    assert res.ok, res
