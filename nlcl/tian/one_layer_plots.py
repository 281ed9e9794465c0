"""The figures of the one-layer chapter (Tian 2023, Sec. 3, App. B.5), one function per figure.

Each returns the figure (the chapter shows it with ``plt.show()``); labels use the paper's
notation; built on the shared style of :mod:`nlcl.core.plotting`. The numbers come from
:mod:`nlcl.tian.one_layer_study`; chapter ``book/tian-one-layer.py``.

* :func:`plot_eq9_threshold` — Eq. 9's eigenvalues and the LME margin against q; Monte Carlo
  errors of Eqs. 8-9;
* :func:`plot_theorem1` — λ_gap against ρ at the LMEs, perturbations decaying, optima per α;
* :func:`plot_theorem2` — ρ over Theorem 2's bound, and Corollary 2's ratios, per data seed;
* :func:`plot_two_sided` — Theorem 1 on both sides of λ_gap = ρ;
* :func:`plot_power_iteration` — power iteration steps for each ε (Fig. 1 right);
* :func:`plot_more_nodes` — patterns recovered against the number of filters K (Fig. 1);
* :func:`plot_rotation_sweep` — the energy with rotation augmentation, and its maxima (App. B.5);
* :func:`plot_sphere_energy` — the energy on the sphere with and without SO(2) augmentation;
* :func:`plot_tau_scan` — the Gaussian-α critical points over τ: LMEs or not, and their distance
  from the patterns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from nlcl.core.plotting import subplots

__all__ = [
    "plot_eq9_threshold",
    "plot_more_nodes",
    "plot_power_iteration",
    "plot_rotation_sweep",
    "plot_sphere_energy",
    "plot_tau_scan",
    "plot_theorem1",
    "plot_theorem2",
    "plot_two_sided",
]


def plot_eq9_threshold(q_grid, margins, q_star_theory, err_cat, err_sum, activation: str, n_samples: int):
    """Left: (1 − q)² and q (Eq. 9's eigenvalues) and the exact LME margin against q, with
    (3 − √5)/2 marked; right: the Monte Carlo relative errors of Eqs. 8 and 9 per pattern."""
    fig, axes = subplots(1, 2, width=4.6, height=3.6)
    ax = axes[0, 0]
    ax.plot(q_grid, (1 - q_grid) ** 2, label=r"$(1-q)^2$: eigenvalue of $\mathbf{u}_m$ (Eq. 9)")
    ax.plot(q_grid, q_grid, label=r"$q$: eigenvalue on $\mathbf{u}_m^\perp$ (Eq. 9)")
    ax.plot(q_grid, margins, "k.", ms=3, label="exact margin (enumeration)")
    ax.axvline(q_star_theory, color="0.5", ls=":", label=r"$(3-\sqrt{5})/2$")
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set_xlabel("$q_m = \\Pr[y_m > 0]$")
    ax.set_ylabel("eigenvalue / margin")
    ax.set_title(f"Latent summation, h = {activation}: LME iff margin > 0")
    ax.legend(fontsize="x-small")
    ax = axes[0, 1]
    m = np.arange(len(err_cat))
    ax.bar(m - 0.2, err_cat, width=0.4, label="categorical (Eq. 8)")
    ax.bar(m + 0.2, err_sum, width=0.4, label="summation (Eq. 9)")
    ax.set_xlabel("pattern $m$")
    ax.set_ylabel(r"$\|A_{\mathrm{MC}}(\mathbf{u}_m) - A_{\mathrm{Eq}}\|_F / \|A_{\mathrm{Eq}}\|_F$")
    ax.set_title(f"Monte Carlo, N = {n_samples}")
    ax.legend(fontsize="small")
    return fig


def plot_theorem1(rho, gap, sufficient, dist0, dist1, counts: Mapping[str, int], steps: int, n_init: int):
    """Left: λ_gap against ρ at each LME (green: λ_gap > ρ); middle: perturbation sizes before and
    after ``steps`` steps; right: distinct stable optima with uniform and Gaussian α."""
    fig, axes = subplots(1, 3, width=3.7, height=3.4)
    ax = axes[0, 0]
    ax.scatter(rho, gap, c=["C2" if s else "C3" for s in sufficient])
    lim = max(rho.max(), gap.max()) * 1.1
    ax.plot([0, lim], [0, lim], "k--", lw=1, label=r"$\lambda_{\mathrm{gap}} = \rho$")
    ax.set_xlabel(r"local roughness $\rho(\mathbf{w}_*)$")
    ax.set_ylabel(r"$\lambda_{\mathrm{gap}}(\mathbf{w}_*)$")
    ax.set_title("Theorem 1 at the LMEs")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    m = np.arange(dist0.shape[-1])
    ax.semilogy(m, dist0.mean(0), "o", label="initial")
    ax.semilogy(m, dist1.max(0) + 1e-16, "s", label=f"after {steps} steps (max)")
    ax.set_xlabel("LME near pattern $m$")
    ax.set_ylabel(r"$\|\mathbf{w} - \mathbf{w}_*\|$")
    ax.set_title("Perturbations decay")
    ax.legend(fontsize="small")
    ax = axes[0, 2]
    ax.bar(["uniform α", "Gaussian α"], [counts["uniform"], counts["gaussian"]], color=["C0", "C1"])
    ax.set_ylabel("distinct stable optima")
    ax.set_title(f"{n_init} random initializations")
    return fig


def plot_theorem2(b2: Mapping[str, Sequence[float]]):
    """Left: largest ρ over Theorem 2's bound per data seed, both α (Eq. 93); right: the
    scale-free roughness ratio, Gaussian over uniform α, and z₀, in both settings of Corollary 2."""
    seeds = np.arange(len(b2["uniform"]))
    fig, axes = subplots(1, 2, width=4.4, height=3.4)
    ax = axes[0, 0]
    ax.semilogy(seeds, b2["uniform"], "o", label=r"uniform $\alpha$")
    ax.semilogy(seeds, b2["gaussian"], "s", label=r"Gaussian $\alpha$")
    ax.axhline(1, color="k", ls="--", lw=1, label="bound")
    ax.set_xlabel("data seed")
    ax.set_ylabel(r"$\max_{\mathbf{w}_*}\ \rho(\mathbf{w}_*)$ / Theorem 2 bound")
    ax.set_title("Theorem 2 (Eq. 93)")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    ax.plot(seeds, b2["scale_free"], "o", label=r"measured: $\overline{\rho/\lambda_1}$ ratio")
    ax.plot(seeds, b2["z0"], "s", label=r"bound ratio $z_0(\alpha_g)$")
    ax.plot(seeds, b2["small"], "^", label=r"measured, $z_0 \ll 1$ setting")
    ax.plot(seeds, b2["small_z0"], "v", label=r"$z_0$, $z_0 \ll 1$ setting")
    ax.axhline(1, color="k", ls="--", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("data seed")
    ax.set_ylabel(r"Gaussian $\alpha$ / uniform $\alpha$")
    ax.set_title("At Gaussian-α critical points")
    ax.legend(fontsize="small")
    return fig


def plot_two_sided(t1: np.ndarray, n_cases: int, n_patterns: int):
    """λ_gap against ρ for every critical point of :func:`~nlcl.tian.one_layer_study.theorem1_two_sided`,
    marked by LME and stability, with the line λ_gap = ρ of Theorem 1."""
    is_l, stable = t1[:, 3] > 0, t1[:, 6] < 1
    fig, ax = plt.subplots(figsize=(5.4, 4.0))
    for sel, mk, lab in (
        (is_l & stable, "o", "LME, perturbations decay"),
        (is_l & ~stable, "x", "LME, perturbations grow"),
        (~is_l, "^", "critical point, not an LME"),
    ):
        ax.scatter(t1[sel, 5], t1[sel, 4], marker=mk, label=lab)
    lim = max(t1[:, 4].max(), t1[:, 5].max()) * 1.05
    ax.plot([0, lim], [0, lim], "k--", lw=1, label=r"$\lambda_{\mathrm{gap}} = \rho$")
    ax.set_xlabel(r"local roughness $\rho(\mathbf{w}_*)$")
    ax.set_ylabel(r"$\lambda_{\mathrm{gap}}(\mathbf{w}_*)$")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_title(rf"Theorem 1, $h(x) = x^2$: {n_cases} cases × {n_patterns} patterns")
    ax.legend(fontsize="x-small")
    return fig


def plot_power_iteration(eps_values: Sequence[float], steps: Sequence[np.ndarray], q: float):
    """‖w(t+1) − w(t)‖ of power iteration from u_m, largest over m, one line per ε (Fig. 1 right)."""
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    for e, step in zip(eps_values, steps, strict=True):
        t = np.arange(1, len(step) + 1)
        ax.semilogy(t, step.max(-1) + 1e-18, label=rf"$\varepsilon$ = {e:g} (max over m)")
    ax.set_xlabel("iteration $t$")
    ax.set_ylabel(r"$\|\mathbf{w}(t+1) - \mathbf{w}(t)\|_2$")
    ax.set_title(rf"Power iteration from $\mathbf{{u}}_m$, latent summation, $q$ = {q}")
    ax.set_ylim(1e-18, 2)
    ax.legend(fontsize="small")
    return fig


def plot_more_nodes(ks, recovered: Mapping[str, np.ndarray], activation: str, n_patterns: int, title: str):
    """Patterns recovered (mean ± sd over seeds) against the number of filters K, for the
    nonlinear ``activation`` and for linear h (Sec. 3, Fig. 1)."""
    fig, ax = plt.subplots(figsize=(5.4, 3.8))
    for h, style in ((activation, "o-"), ("linear", "s--")):
        r = recovered[h]
        ax.errorbar(ks, r.mean(0), yerr=r.std(0), fmt=style, capsize=3, label=f"h = {h}")
    ax.axhline(n_patterns, color="0.6", ls=":", label=f"all M = {n_patterns} patterns")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("number of filters $K$")
    ax.set_ylabel(r"patterns $\mathbf{u}_m$ recovered ($|\cos| \geq 0.95$)")
    ax.set_title(title)
    ax.legend()
    return fig


def plot_rotation_sweep(thetas, curves: Mapping[float, np.ndarray], shown, n_max, activation: str):
    """Left: E_α(θ) with rotation augmentation over [−β, β] for the β in ``shown``, relative to the
    largest energy at β = 0; right: the number of local maxima against β (App. B.5, Eq. 105)."""
    betas = np.array(list(curves))
    base = curves[betas[0]].max()
    fig, axes = subplots(1, 2, width=4.6, height=3.6)
    ax = axes[0, 0]
    for beta in shown:
        ax.plot(thetas, curves[beta] / base, label=rf"$\beta$ = {beta / np.pi:.2f}$\pi$")
    ax.set_xlabel(r"$\theta$, $\mathbf{w} = [\cos\theta, \sin\theta]^\top$")
    ax.set_ylabel(r"$\mathcal{E}_\alpha(\theta)$ / max at $\beta = 0$")
    ax.set_title("Energy with rotation augmentation")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    ax.plot(betas / np.pi, n_max, "o-")
    ax.set_xlabel(r"rotation range $\beta/\pi$ ($t \sim \mathrm{U}[-\beta, \beta]$)")
    ax.set_ylabel("local maxima of $\\mathcal{E}_\\alpha(\\theta)$")
    ax.set_title(f"h = {activation}, nine points of App. E.1")
    return fig


def plot_sphere_energy(theta, phi, e_plain, e_so2, scale: float, strict_mask):
    """E on the sphere grid (polar angle θ × azimuth φ) without and with SO(2) augmentation,
    relative to ``scale``; the strict local maxima without augmentation marked."""
    fig, axes = subplots(1, 2, width=4.6, height=3.4)
    panels = ((axes[0, 0], e_plain, "no augmentation"), (axes[0, 1], e_so2, "SO(2) augmentation"))
    for ax, e, title in panels:
        im = ax.pcolormesh(np.degrees(phi), np.degrees(theta), e / scale, shading="auto")
        ax.set_xlabel(r"azimuth $\phi$ of $\mathbf{w}$ (degrees)")
        ax.set_ylabel(r"polar angle $\theta$ (degrees)")
        ax.set_title(f"{title}: E / max E (no aug.)")
        fig.colorbar(im, ax=ax)
    ii, jj = np.nonzero(strict_mask)
    axes[0, 0].plot(np.degrees(phi[jj]), np.degrees(theta[ii]), "r^", label="strict maxima")
    axes[0, 0].legend(fontsize="x-small")
    return fig


def plot_tau_scan(scan: Mapping[str, np.ndarray], tau: float):
    """The Gaussian-α critical points over τ (:func:`nlcl.tian.one_layer_study.gaussian_cp_tau_scan`):
    the fraction that are LMEs of A_g (Def. 3), and max_m |cos(w*, u_m)| of each settled point."""
    fig, axes = subplots(1, 2, width=4.6, height=3.6)
    ax1, ax2 = axes[0, 0], axes[0, 1]
    taus = np.asarray(scan["tau"])
    ax1.plot(taus, scan["lme_fraction"], "o-")
    ax1.axvline(tau, color="grey", ls=":", label=f"chapter's τ = {tau:g}")
    ax1.set(xscale="log", xlabel="τ", ylabel="fraction of critical points that are LMEs", ylim=(-0.05, 1.05))
    ax1.set_title("Gaussian-α critical points: LMEs of $A_g$?")
    ax1.legend()
    ok, pc = np.asarray(scan["settled"]), np.asarray(scan["pattern_cos"])
    for i, t in enumerate(taus):
        vals = pc[i][ok[i]]
        ax2.plot(np.full(vals.shape, t), vals, "o", alpha=0.5, color="C0")
    ax2.set(xscale="log", xlabel="τ", ylabel=r"$\max_m |\cos(\mathbf{w}_*, \mathbf{u}_m)|$", ylim=(0, 1.02))
    ax2.set_title("distance of the critical points from the patterns")
    return fig
