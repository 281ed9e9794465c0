"""Lemma 5.2's comparative Gronwall bound (Ren & Li 2023), in a reconstructed form, against the
measured growth of the finite-width error.

The paper's formula is lost; its prose says: "Let [X] be a positive process. Let [A] and [B] be
defined as [...] with [α, β] being positive. Then, for any [t], we have [...]", where A "represents
the progress we have made" (in Stage 1 "the maximum between [the misalignment] and the noise-signal
ratio") and B "the error we wish to control" ("the discretization error and condition number"):
"if the error growth rate decreases as we make more progress, then by coupling these two processes,
we can make sure the error does not blow up. Note that the exponent of the RHS is [...], which is
independent of time."  Our reading (the standard comparison lemma that prose describes):

    dA/dt ≤ −α X_t A_t and dB/dt ≤ β X_t B_t   ⇒   B_t ≤ B_0 (A_0/A_t)^(β/α),

a bound with the time-independent exponent p = β/α.  Its constants are lost too, so the tests
identify p on the first recorded interval (:func:`comparative_gronwall`) and check the bound at
every later record of stage 1; for Stage 2 the proof of Lemma C.1 (App. C.6) says the errors "can
at most double within [Stage 2] if they are sufficiently small at the beginning of Stage 2".  The
progress A is :func:`progress` of the infinite-width run; B is the measured distance of the width-m
run to it.  Explained in ``book/renli-simulation.py``.
"""

from __future__ import annotations

import pandas as pd
import torch

from nlcl.core.validate import ParameterError, positive_int
from nlcl.renli.analysis import signal_cosines
from nlcl.renli.tracking import gram_noise_to_signal, normalized_gram

__all__ = ["progress", "comparative_gronwall"]

#: The smallest progress A the bound is evaluated at: the round-off of a cosine near 1.
PROGRESS_FLOOR = 1e-15


def progress(G: torch.Tensor, r: int, r_xi: int) -> torch.Tensor:
    """Stage 1's progress A = max(1 − min_k cos(u_A,k, u_B,k), ‖V_A‖_F/‖U_A‖_F) from G (..., 2K, 2K).

    The misalignment of matching signal columns (:func:`nlcl.renli.analysis.signal_cosines`) and
    the noise-to-signal ratio (:func:`nlcl.renli.tracking.gram_noise_to_signal`), the maximum of
    which Ren & Li's Stage 1 drives to zero (Sec. 5.3, Lemma 5.2's A); clipped below at
    :data:`PROGRESS_FLOOR`.  Returns (...).
    """
    cos = signal_cosines(normalized_gram(G, r, r_xi), r, r_xi).amin(-1)
    return torch.maximum(1.0 - cos, gram_noise_to_signal(G, r, r_xi)).clamp_min(PROGRESS_FLOOR)


def comparative_gronwall(
    A: torch.Tensor, B: torch.Tensor, *, stage1_end: int, setting: str = ""
) -> pd.DataFrame:
    """Lemma 5.2's bound (module docstring) against the measured error, one row per run.

    ``A`` (T, runs): the progress at the records (:func:`progress`); ``B`` (T, runs): the error at
    the same records; record ``stage1_end`` is the end of stage 1.  Columns:

    * ``exponent``: p̂ = log(B_1/B_0)/log(A_0/A_1), the exponent the bound needs over the first
      recorded interval (the lemma's β/α, identified once);
    * ``stage1_ratio``: max over the later records t ≤ ``stage1_end`` of (B_t/B_0)/(A_0/A_t)^p̂, the
      measured growth over the bound (≤ 1: the bound with the early exponent holds);
    * ``stage2_growth``: max over the records t ≥ ``stage1_end`` of B_t/B_(stage1_end), the growth
      in stage 2 (App. C.6: at most 2).

    A run that makes no progress over the first interval stops with a ParameterError, which starts
    with ``setting`` (the parameters behind the runs, e.g. ``"track_batch=2"``).
    """
    where = f"{setting}: " if setting else ""
    if A.shape != B.shape or A.dim() != 2:
        raise ParameterError(f"A {tuple(A.shape)} and B {tuple(B.shape)} must both be (records, runs)")
    stage1_end = positive_int("stage1_end", stage1_end)
    if not 2 <= stage1_end < A.shape[0]:
        raise ParameterError(
            f"stage1_end={stage1_end}: needs 2 ≤ stage1_end < {A.shape[0]} (records in stage 1 after the "
            "first interval, and in stage 2)"
        )
    A, B = A.double(), B.double()
    stalled = torch.nonzero(~(A[1] < A[0])).flatten()
    if len(stalled):
        raise ParameterError(
            f"{where}runs {stalled.tolist()} make no progress over the first recorded interval (A_1 ≥ A_0); "
            "the bound's exponent cannot be identified"
        )
    exponent = torch.log(B[1] / B[0]) / torch.log(A[0] / A[1])
    later = slice(2, stage1_end + 1)
    ratio = (B[later] / B[0]) / (A[0] / A[later]) ** exponent
    growth = B[stage1_end:] / B[stage1_end]
    return pd.DataFrame(
        {
            "exponent": exponent.numpy(),
            "stage1_ratio": ratio.max(0).values.numpy(),
            "stage2_growth": growth.max(0).values.numpy(),
        }
    )
