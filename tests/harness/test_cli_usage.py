"""Usage errors answer before any kernel, cluster or heavy library starts (issue 29, item 5).

Each command runs in a fresh process, which reports its exit code and whether torch, the site
machinery, Dask or a Jupyter kernel manager were imported: a usage error needs none of them.
Counted, not timed (timings belong to benchmarks).
"""

import json
import subprocess
import sys

import pytest

from nlcl.core.validate import cuda_unavailable

HEAVY = ("torch", "nlcl.harness.site.build", "distributed", "jupyter_client", "papermill", "seaborn")
PROBE = """
import json, sys
from nlcl.harness.run.cli import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "loaded": [m for m in %r if m in sys.modules]}))
"""


def _probe(*argv: str) -> tuple[dict, str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), *argv], capture_output=True, text=True, timeout=120
    )
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


@pytest.mark.parametrize(
    "argv,message",
    [
        (["sweep", "tian-fig8-landscape", "-p", "activaton", "relu,linear"], "did you mean 'activation'"),
        (["sweep", "no-such-chapter", "-p", "seed", "0,1"], "no-such-chapter"),
        (["book", "--only", "no-such-chapter"], "unknown chapters ['no-such-chapter']"),
        (["book", "--jobs", "0"], "jobs"),
        (["run", "tian-fig8-landscape", "-p", "n_grid", "-5"], "n_grid"),
    ],
)
def test_usage_errors_load_nothing_heavy(argv, message):
    res, err = _probe(*argv)
    assert res["rc"] == 2 and message in err, err
    assert res["loaded"] == [], f"{argv}: imported {res['loaded']} before answering"


@pytest.mark.skipif(cuda_unavailable() is None, reason="CUDA may be available here")
@pytest.mark.parametrize(
    "argv",
    [
        ["run", "tian-fig8-landscape", "-p", "device", "cuda"],
        ["sweep", "tian-fig8-landscape", "-p", "device", "cuda,cpu"],
    ],
)
def test_cuda_on_a_machine_without_it_is_a_usage_error_before_any_kernel(argv):
    res, err = _probe(*argv)
    assert res["rc"] == 2 and res["loaded"] == []
    assert "device='cuda' but CUDA is not available here (" in err and "use 'cpu' or 'auto'" in err


def test_cuda_unavailable_names_the_reason(monkeypatch):
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.13.0+cpu")
    assert cuda_unavailable() == "torch 2.13.0+cpu is a CPU-only build"

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert cuda_unavailable() == "torch is not installed"
