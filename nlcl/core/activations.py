"""Activations h(x) for one- and two-layer contrastive learning, with their gating functions.

Tian (2023), *Understanding the role of nonlinearity in training dynamics of contrastive
learning*, Assumption 1 asks for *homogeneous* activations, h(x) = h'(x) x, so that a node's
output is linear in its weight once the gate is frozen (Eq. 6):

    h(wᵀx) = wᵀ x̃ʷ,   x̃ʷ := x · gate(wᵀx).

* linear, ReLU and LeakyReLU satisfy h(x) = h'(x) x exactly (degree 1, gate = h').
* The monomial h(x) = x^p is homogeneous of degree p (Euler: h'(x) x = p h(x)); the paper's
  "additional global constant" is absorbed in the gate, gate(x) = h'(x)/p = x^(p-1), so that
  h(x) = gate(x) x holds exactly *without* rescaling h. We keep h(x) = x^p (so "quadratic" is
  x²) rather than x^p/p, because x^p/p does not satisfy h = h' x either; the constant only
  rescales time in Lemma 3: ∇_w ½C_α[h(wᵀx)] = p · A(w) w.
* sigmoid and tanh are non-homogeneous controls: ``homogeneous`` is False, their gate is the
  paper's literal x̃ʷ = x h'(wᵀx), and h(wᵀx) ≠ wᵀx̃ʷ in general.

Every activation works on numpy arrays and torch tensors (autograd-compatible), returning the
same type. Explained in the chapter ``book/tian-alpha-cl.py`` (Lemma 3) and
``book/tian-one-layer.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy import special

from nlcl.core.tensors import as_array, is_torch

__all__ = ["ACTIVATIONS", "Activation", "get_activation"]

#: Names accepted by :func:`get_activation`.
ACTIVATIONS: tuple[str, ...] = (
    "linear",
    "relu",
    "leaky_relu",
    "quadratic",
    "monomial",
    "sigmoid",
    "tanh",
)

_HOMOGENEOUS = frozenset({"linear", "relu", "leaky_relu", "quadratic", "monomial"})


@dataclass(frozen=True)
class Activation:
    """An elementwise activation h with its derivative and gate (Tian 2023, Assumption 1, Eq. 6).

    Build instances with :func:`get_activation`. Calling ``act(x)`` evaluates h(x) on a numpy
    array or torch tensor (differentiable under torch autograd).

    Attributes
    ----------
    name:
        One of :data:`ACTIVATIONS`.
    slope:
        Negative-side slope of ``leaky_relu`` (ignored otherwise).
    p:
        Exponent of ``monomial`` (``quadratic`` has p = 2; ``linear`` p = 1; others ignore it).
    """

    name: str
    slope: float = 0.0
    p: int = 1

    def __post_init__(self) -> None:
        if self.name not in ACTIVATIONS:
            raise ValueError(f"unknown activation {self.name!r}; allowed: {', '.join(ACTIVATIONS)}")
        if isinstance(self.p, bool) or not isinstance(self.p, (int, np.integer)) or self.p < 1:
            raise ValueError(f"p must be an integer >= 1, got {self.p!r}")

    @property
    def homogeneous(self) -> bool:
        """True when h(x) = gate(x)·x exactly, with gate = h'/degree (Assumption 1)."""
        return self.name in _HOMOGENEOUS

    @property
    def degree(self) -> int:
        """Homogeneity degree k with h'(x) x = k h(x): p for monomials, 1 otherwise."""
        return self.p if self.name in ("quadratic", "monomial") else 1

    def __call__(self, x: Any) -> Any:
        """h(x), elementwise; numpy in → numpy out, torch in → torch out."""
        x = as_array(x)
        t = is_torch(x)
        if self.name == "linear":
            return x * 1.0
        if self.name == "relu":
            return torch.relu(x) if t else np.maximum(x, 0.0)
        if self.name == "leaky_relu":
            if t:
                return torch.nn.functional.leaky_relu(x, negative_slope=self.slope)
            return np.where(x > 0, x, self.slope * x)
        if self.name in ("quadratic", "monomial"):
            return x**self.p
        if self.name == "sigmoid":
            return torch.sigmoid(x) if t else special.expit(x)
        if self.name == "tanh":
            return torch.tanh(x) if t else np.tanh(x)
        raise AssertionError(self.name)  # pragma: no cover - guarded by get_activation

    def derivative(self, x: Any) -> Any:
        """h'(x), elementwise, with the convention h'(0) = 0 for ReLU (Tian 2023, App. B.1).

        LeakyReLU uses h'(0) = slope, matching torch autograd.
        """
        x = as_array(x)
        t = is_torch(x)
        if self.name == "linear":
            return torch.ones_like(x) if t else np.ones_like(x)
        if self.name == "relu":
            return (x > 0).to(x.dtype) if t else (x > 0).astype(float)
        if self.name == "leaky_relu":
            one = torch.ones_like(x) if t else np.ones_like(x)
            return torch.where(x > 0, one, self.slope * one) if t else np.where(x > 0, 1.0, self.slope)
        if self.name in ("quadratic", "monomial"):
            return self.p * x ** (self.p - 1)
        if self.name == "sigmoid":
            s = self(x)
            return s * (1 - s)
        if self.name == "tanh":
            return 1 - self(x) ** 2
        raise AssertionError(self.name)  # pragma: no cover

    def gate(self, x: Any) -> Any:
        """The gate g with x̃ʷ = x·g(wᵀx) (Tian 2023, Eq. 6): h'(x)/degree.

        For homogeneous activations h(x) = g(x)·x holds exactly (for ReLU and LeakyReLU g = h',
        for x^p it is x^(p-1)). For the non-homogeneous controls g = h' (the paper's literal
        x̃ʷ := x h'(wᵀx)) and h(x) ≠ g(x)·x.
        """
        d = self.derivative(x)
        return d / self.degree if self.degree != 1 else d


def get_activation(name: str | Activation, **kwargs: Any) -> Activation:
    """Return the activation called ``name`` (Tian 2023, Assumption 1; see module docstring).

    Parameters
    ----------
    name:
        One of :data:`ACTIVATIONS` (an :class:`Activation` is returned unchanged).
    slope:
        ``leaky_relu`` only: negative-side slope, default 0.05 (the paper's Fig. 4 value).
    p:
        ``monomial`` only: integer exponent ≥ 1, default 2 (h(x) = x^p).

    Raises
    ------
    ValueError
        For an unknown name, an invalid slope or exponent, or a keyword the activation does
        not take.
    """
    if isinstance(name, Activation):
        if kwargs:
            raise ValueError(
                f"activation: keyword arguments {sorted(kwargs)} given with an Activation instance"
            )
        return name
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; allowed: {', '.join(ACTIVATIONS)}")
    allowed = {"leaky_relu": {"slope"}, "monomial": {"p"}}.get(name, set())
    extra = set(kwargs) - allowed
    if extra:
        raise ValueError(
            f"activation {name!r} takes no keyword(s) {sorted(extra)}; allowed: {sorted(allowed) or 'none'}"
        )
    if name == "leaky_relu":
        slope = float(kwargs.get("slope", 0.05))
        if not np.isfinite(slope):
            raise ValueError(f"slope must be a finite float, got {slope!r}")
        return Activation("leaky_relu", slope=slope)
    if name == "monomial":
        p = kwargs.get("p", 2)
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValueError(f"p must be an integer >= 1 for the monomial activation, got {p!r}")
        return Activation("monomial", p=int(p))
    if name == "quadratic":
        return Activation("quadratic", p=2)
    return Activation(name)
