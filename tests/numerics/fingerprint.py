"""Print the numeric fingerprint of this process: short trainings whose final weights depend on
every last bit of the kernels that computed them (issue 29).

``python tests/numerics/fingerprint.py`` prints one JSON object: the SHA-256 of the final weights of

* ``oracle_float32``: 200 steps of the released token-task trainer (``tests/oracle``: float32,
  ``nn.Linear``, BatchNorm, softmax; MKL's SGEMM and ATen's reductions), the quadratic/BN-mean/x²
  cell, seed 0;
* ``nlcl_float64``: 200 steps of nlcl's exact token-table engine (float64, MKL's DGEMM), two runs
  of that cell in one stack;

their scores (to read, not to compare: the hashes decide), and the numeric environment
(:func:`nlcl.core.numerics.environment`). The process takes its numeric path from the environment
(``NLCL_NUMERICS``, ``MKL_CBWR``, ``MKL_ENABLE_INSTRUCTIONS``, ``ATEN_CPU_CAPABILITY``) and runs with
one torch thread (MKL's CNR guarantee is for a fixed thread count).
"""

import hashlib
import json
import sys
from pathlib import Path

import torch  # noqa: E402

import nlcl  # noqa: F401  (applies NLCL_NUMERICS before torch loads)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "oracle"))

STEPS = 200


def _sha(tensors) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().to(torch.float64).contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def fingerprint() -> dict:
    from released_trainer import OracleConfig, train

    from nlcl.core import numerics
    from nlcl.tian.tokens.grid import TokenRun, train_token_runs

    torch.set_num_threads(1)
    model, *_ = train(OracleConfig(activation="quadratic", loss="quadratic", bn="mean", seed=0, niter=STEPS))
    oracle = [p for _, p in sorted(model.state_dict().items())]
    runs = [TokenRun("quadratic", "quadratic", "mean", 5, 5, 1.0, s, lr=0.02, tau=0.1) for s in (0, 1)]
    res = train_token_runs(runs, STEPS, out_dim=50, dtype=torch.float64, keep_weights=[0, 1])
    return {
        "oracle_float32": _sha(oracle),
        "nlcl_float64": _sha([res.weights[0], res.weights[1]]),
        "nlcl_chi_plus": [round(float(v), 6) for v in res.table.chi_plus],
        "numerics": numerics.environment(),
    }


if __name__ == "__main__":
    print(json.dumps(fingerprint()))
