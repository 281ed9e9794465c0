"""The figures of the chapter ``book/tian-alpha-cl.py`` (Tian 2023, Sec. 2; Lemmas 1-3).

* :func:`plot_infonce_identity` — ∇InfoNCE against the α-CL gradient, entry by entry, and the
  relative differences per network (Eqs. 1-3);
* :func:`plot_lemma1` — the truncation error of the Lemma 1 feature map against the Poisson tail,
  and the spectrum of the Gram matrix [α_ij];
* :func:`plot_lemma2` — the RMS error of C_α[g] against N per seed, and the bias at the largest N
  in standard errors (Lemma 2, Eq. 4);
* :func:`plot_lemma3` — the Lemma 3 gap per activation (Eq. 7).

Built on the shared style of :mod:`nlcl.core.plotting`; every function returns the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from nlcl.core.plotting import subplots

__all__ = ["plot_infonce_identity", "plot_lemma1", "plot_lemma2", "plot_lemma3"]


def plot_infonce_identity(
    g_nce: Sequence[torch.Tensor],
    g_acl: Sequence[torch.Tensor],
    rel_grad: np.ndarray,
    rel_const: np.ndarray,
    *,
    tau: float,
    eps: float,
    n: int,
):
    """Left: |∂L_nce/∂θ| against |∂ 2N²E_sg(α)/∂θ| for every gradient entry of every network.
    Right: histograms of log10 of the per-network relative differences (gradient and constant)."""
    fig, axes = subplots(1, 2, width=4.6, height=3.6)
    ax = axes[0, 0]
    gn = torch.cat([g.flatten() for g in g_nce]).numpy()
    ga = torch.cat([g.flatten() for g in g_acl]).numpy()
    ax.loglog(np.abs(gn), np.abs(ga), ".", ms=2, alpha=0.4)
    lim = [np.abs(gn).min() + 1e-300, np.abs(gn).max()]
    ax.plot(lim, lim, "k--", lw=1, label="equality")
    ax.set_xlabel(r"$|\partial L_{\mathrm{nce}}/\partial\theta|$ (autograd)")
    ax.set_ylabel(r"$|\partial\, 2N^2\mathcal{E}_{\mathrm{sg}(\alpha)}/\partial\theta|$")
    ax.set_title(f"All {gn.size} gradient entries, {len(rel_grad)} networks")
    ax.legend()
    ax = axes[0, 1]
    ax.hist(np.log10(rel_grad + 1e-20), bins=20, alpha=0.8, label="gradient")
    ax.hist(np.log10(rel_const + 1e-20), bins=20, alpha=0.8, label=r"$2N^2\mathcal{E}_\alpha$ constant")
    ax.set_xlabel(r"$\log_{10}$ relative difference per network")
    ax.set_ylabel("networks")
    ax.set_title(rf"$\tau$ = {tau}, $\epsilon$ = {eps}, N = {n}")
    ax.legend()
    return fig


def plot_lemma1(ks: np.ndarray, measured: np.ndarray, predicted: np.ndarray, eig: np.ndarray, *, tau: float):
    """Left: the largest truncation error of the feature map per order K, measured and predicted
    (the Poisson tail). Right: |λ| of the Gram matrix [α_ij], sorted, with the smallest λ."""
    fig, axes = subplots(1, 2, width=4.6, height=3.6)
    ax = axes[0, 0]
    ax.semilogy(ks, np.abs(measured).max(axis=(1, 2)) + 1e-300, "o-", ms=3, label="measured")
    ax.semilogy(
        ks,
        predicted.max(axis=(1, 2)) + 1e-300,
        "k--",
        label=r"$\alpha_{ij}\Pr[\mathrm{Pois}(s_{ij})>K]$",
    )
    ax.set_xlabel("truncation order $K$")
    ax.set_ylabel(r"$\max_{ij}|\alpha_{ij} - \phi_{\leq K}(x_i)^\top\phi_{\leq K}(x_j)|$")
    ax.set_title(rf"Lemma 1 feature map, $\tau$ = {tau}")
    ax.legend()
    ax = axes[0, 1]
    ax.semilogy(np.arange(1, eig.size + 1), np.sort(np.abs(eig))[::-1], ".-")
    ax.set_xlabel("index")
    ax.set_ylabel(r"$|\lambda|$ of the Gram matrix $[\alpha_{ij}]$")
    ax.set_title(rf"spectrum (min $\lambda$ = {eig.min():.1e})")
    return fig


def plot_lemma2(
    ns: np.ndarray,
    seeds: Sequence[int],
    rms: np.ndarray,
    fits: np.ndarray,
    z: np.ndarray,
    *,
    family: str,
    n_repeats: int,
    bound: float = 3.0,
):
    """Left: the RMS relative error of C_α[g] against N per seed (``rms`` (seeds, len(ns))) with its
    log-log fit (``fits`` rows [slope, intercept]) and the N^{-1/2} reference. Right: the largest
    |z| of the mean at the largest N per seed (``z``), red above ``bound``."""
    fig, axes = subplots(1, 2, width=5.0, height=3.8)
    ax = axes[0, 0]
    for k, (s, r) in enumerate(zip(seeds, rms)):
        ax.loglog(ns, r, "o-", ms=3, color=f"C{k}", label=f"seed {s}: slope {fits[k, 0]:.2f}")
        ax.loglog(ns, np.exp(fits[k, 1]) * ns ** fits[k, 0], "--", lw=0.8, color=f"C{k}")
    ax.loglog(ns, rms[:, 0].mean() * (ns / ns[0]) ** -0.5, ":", color="0.3", lw=2, label=r"$N^{-1/2}$")
    ax.set_xlabel("batch size $N$")
    ax.set_ylabel(
        r"RMS $\|\mathbb{C}_\alpha[\mathbf{g}] - \mathbb{C}_\infty\|_F \,/\, \|\mathbb{C}_\infty\|_F$"
    )
    ax.set_title(f"Lemma 2, {family} α: {n_repeats} batches per N")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    ax.bar([str(s) for s in seeds], z, color=["C0" if v <= bound else "C3" for v in z])
    ax.axhline(bound, color="k", ls="--", lw=1, label=f"declared bound {bound:g}")
    ax.set_xlabel("seed")
    ax.set_ylabel(r"largest $|z|$ of the mean at $N_{\max}$")
    ax.set_title(f"bias at N = {ns[-1]} in standard errors")
    ax.legend(fontsize="small")
    return fig


def plot_lemma3(rel: Mapping[str, float], homogeneous: Mapping[str, bool], *, alpha: str, tol: float = 1e-10):
    """The Lemma 3 gap per activation of ``rel`` (log scale; blue homogeneous, red the controls),
    with the tolerance ``tol`` dashed."""
    names = list(rel)
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    colors = ["C0" if homogeneous[n] else "C3" for n in names]
    ax.bar(names, [max(rel[n], 1e-17) for n in names], color=colors)
    ax.set_yscale("log")
    ax.axhline(tol, color="k", ls="--", lw=1)
    ax.set_ylabel(
        r"$\max_\mathbf{w}\|P^\perp_\mathbf{w}\nabla\mathcal{E}_\alpha"
        r" - k P^\perp_\mathbf{w}A(\mathbf{w})\mathbf{w}\| / \max\|\cdot\|$"
    )
    ax.set_xlabel("activation $h$ (blue: homogeneous, red: control)")
    ax.set_title(rf"Lemma 3 on a random batch, {alpha} $\alpha$")
    plt.setp(ax.get_xticklabels(), rotation=20)
    return fig
