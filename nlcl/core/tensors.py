"""Small tensor helpers shared by every paper's code: one place for numpy/torch interoperation.

Functions here accept numpy arrays, torch tensors or nested sequences of numbers, and keep the
caller's array library where that matters (the landscape code runs on both).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from nlcl.core.validate import ParameterError, choice

__all__ = ["REDUCTIONS", "is_torch", "as_array", "like", "as_tensor", "reduce_samples"]

#: How a loss summed over n samples is reduced: the papers' sum, or the mean (÷ n).
REDUCTIONS: tuple[str, ...] = ("sum", "mean")


def is_torch(x: Any) -> bool:
    """Whether ``x`` is a torch tensor."""
    return isinstance(x, torch.Tensor)


def as_array(x: Any) -> Any:
    """``x`` unchanged if it is a torch tensor, else a float numpy array."""
    return x if is_torch(x) else np.asarray(x, dtype=float)


def like(x: Any, ref: Any) -> Any:
    """Convert ``x`` to the array type, dtype and device of ``ref``."""
    if is_torch(ref):
        return torch.as_tensor(x, dtype=ref.dtype, device=ref.device)
    if is_torch(x):
        x = x.detach().cpu().numpy()
    ref = np.asarray(ref)
    return np.asarray(x, dtype=ref.dtype if ref.dtype.kind == "f" else np.float64)


def as_tensor(name: str, x: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    """``x`` as a torch tensor (optionally cast to ``dtype``); a clear error names ``name`` if it is not numeric."""
    if isinstance(x, torch.Tensor):
        t = x
    else:
        try:
            t = torch.as_tensor(np.asarray(x, dtype=float))
        except (TypeError, ValueError) as err:
            raise ParameterError(
                f"{name} must be an array of numbers, got {type(x).__name__}: {err}"
            ) from None
    if dtype is not None:
        t = t.to(dtype)
    return t


def reduce_samples(total: Any, n: int, reduction: str) -> Any:
    """A loss summed over ``n`` samples, as that sum (``"sum"``) or its mean (``"mean"``, ÷ n).

    The ``reduction`` of the losses of Tian 2023 (Eq. 1, :mod:`nlcl.tian.losses`) and Esser et
    al. 2024 (Eqs. 1-2, :mod:`nlcl.esser.losses`); a :class:`ParameterError` names a bad value.
    """
    choice("reduction", reduction, REDUCTIONS)
    return total / n if reduction == "mean" else total
