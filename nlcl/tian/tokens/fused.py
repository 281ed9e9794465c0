"""The fused token step: one compiled kernel graph per stack shape (Tian 2023, Sec. 5, opt-in).

The ``tables`` engine (:func:`nlcl.tian.tokens.tables.token_step`) does little arithmetic, but one step
issues about a hundred small torch operators, and their dispatch is most of its time.  The ``fused`` engine
of :func:`nlcl.tian.tokens.training.train_batched` writes the whole training step as one pure tensor
function, compiled once per shape by ``torch.compile`` (TorchInductor's C++ backend on CPU):

* the minibatch draw of :func:`nlcl.tian.tokens.world.sample_views` (the same counter-based hash, with
  the step as a tensor, so the token indices are bitwise those of the eager sampler);
* the forward pass in token-table space, the loss (InfoNCE or quadratic), its exact closed-form
  backward (the same formulas as ``token_step``: BatchNorm variants, ℓ2 normalisation);
* SGD with momentum and weight decay (:func:`nlcl.tian.tokens.training.sgd_momentum_step`'s rule),
  updating W, V and the momentum buffers in place.

The compiler fuses the elementwise work and the gather / scatter between tables and samples into a few
loops and leaves the matrix products to the BLAS; the arithmetic is the ``tables`` engine's, in another
order (so the last bits may differ): equal within a stated tolerance (``tests/tian/tokens/test_fused.py``).
InfoNCE runs in blocks of runs whose (runs, N, N) matrices stay in cache (``_LOSS_CHUNK_ELEMENTS``; a
run's bits do not depend on its block).  Compiled steps are cached per shape and configuration
(:func:`compile_log`).  M, the number of filters per RF, is a symbolic size (M = 1 has its own graph), so
the token grid's stacks share 2 graphs.  Without ``torch.compile`` (no C++ compiler) the same function
runs eagerly, after a one-line warning.
"""

from __future__ import annotations

import os
import time
import types
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from nlcl.core.activations import get_activation
from nlcl.tian.rf_network import BN_BACKPROP, BN_POOLED, segments
from nlcl.tian.tokens.tables import _EPS_NORMALIZE, _loss_and_grad
from nlcl.tian.tokens.world import TokenWorld, _mix32, _position_hash

__all__ = ["TokenViews", "compile_log", "fused_stepper", "train_fused"]


@dataclass(frozen=True)
class TokenViews:
    """``data(step)`` of token-task training: the views (x, x') of :func:`~nlcl.tian.tokens.world.sample_views`.

    Calling it returns ``sample_views(world, step, batch_size)`` without the generator indices, so any
    trainer can use it; the ``fused`` engine draws the same indices in its step (Tian 2023, Sec. 5).
    """

    world: TokenWorld
    batch_size: int
    embedding: torch.Tensor

    def __call__(self, step: int):
        from nlcl.tian.tokens.world import sample_views

        e = self.embedding
        x1, x2, _ = sample_views(self.world, step, self.batch_size, device=e.device, embedding=e)
        return x1, x2


# ---- the step as a pure tensor function ------------------------------------------------------


def _hash_ints(seeds, step, stream: int, pos, high: int):
    """:func:`nlcl.tian.tokens.world.hash_uniform_int` with a tensor step (R, n); the same integers."""
    key = _mix32(seeds * 0x9E3779B1 + 0x632BE5AB)
    key = _mix32(key ^ (step * 0x85EBCA77 + stream * 0xC2B2AE3D))
    return (_mix32(key[:, None] ^ pos[None, :]) * high) >> 32


def _draw(seeds, gens, step, pos_g, pos_f, N: int, T: int):
    """The token indices (R, 2, N, K) of both views at ``step`` (:func:`~nlcl.tian.tokens.world.sample_views`)."""
    R, G, K = gens.shape
    g = _hash_ints(seeds, step, 10, pos_g, G)  # (R, N)
    pattern = torch.gather(gens, 1, g[:, :, None].expand(R, N, K))
    fill = _hash_ints(seeds, step, 11, pos_f, T).reshape(R, 2, N, K)
    # where(pattern >= 0, pattern, fill), in integer arithmetic: a wildcard is −1 (inductor's
    # vectorised int64 select is wrong on AVX2 in torch 2.13; this form is exact everywhere)
    pattern = pattern[:, None]
    return pattern + (fill + 1) * (pattern < 0).to(pattern.dtype)


def _grads(W, Vk, iv, emb, tau, cfg):
    """Per-run loss, (∂W, ∂V) and ∂o from token indices iv (R, 2, N, K), as ``token_step`` computes them.

    The tables are kept filter-major, (R, K, M, [view,] T), the layout of W: elementwise work and
    the BatchNorm sums over tokens run along contiguous memory, and ∂W needs no transpose.  The
    top layer is held as Vk (R, K, M, O) (Vk[r, k, m, o] = V[r, o, kM + m]), the layout of its
    gradient Yᵀ∂Z: every product then reads contiguous operands (∂V as ∂Zᵀ Y, with both transposed,
    took 5× as long at small M) and the update reads ∂V contiguously; ∂V comes back in that layout.
    """
    R, K, M, d = W.shape
    O = Vk.shape[3]
    N, T = iv.shape[2], cfg.T
    if cfg.diagonal:  # emb: ‖u_a‖ (R, T); w_kmᵀ u_a = ‖u_a‖ w_km[a]
        scale = emb[:, None, None, :]
        Pre = W * scale  # (R, K, M, T)
    else:  # emb: E (R, T, d)
        Pre = torch.matmul(W, emb.transpose(1, 2)[:, None])
    counts = None
    if any(BN_BACKPROP[bn] is not None for _, (_, bn) in cfg.segments):
        ivk = iv.permute(0, 3, 1, 2)  # (R, K, 2, N)
        c = torch.zeros(R, K, 2, T, dtype=W.dtype, device=W.device)
        c = c.scatter_add(3, ivk, torch.ones_like(ivk, dtype=W.dtype))
        counts = (c / N)[:, :, None]  # (R, K, 1, 2, T)
    Ys, saved = [], []
    for sl, (act, bn) in cfg.segments:
        h = cfg.acts[act](Pre[sl])[:, :, :, None]  # (r, K, M, 1, T)
        spec = BN_BACKPROP[bn]
        if spec is None:
            Ys.append(h.expand(-1, -1, -1, 2, -1))
            saved.append(None)
            continue
        p = counts[sl]
        if bn in BN_POOLED:
            p = p.mean(3, keepdim=True)
        mu = (p * h).sum(4, keepdim=True)
        cen = h - mu
        s = torch.rsqrt((p * cen * cen).sum(4, keepdim=True) + cfg.bn_eps)
        y = cen * s
        Ys.append(y.expand(-1, -1, -1, 2, -1))
        saved.append((s, p, y))
    Y = Ys[0] if len(Ys) == 1 else torch.cat(Ys, 0)  # (R, K, M, 2, T)
    Yt = Y.reshape(R, K, M, 2 * T)
    Z = torch.matmul(Yt.transpose(2, 3), Vk)  # (R, K, 2T, O)
    # o_n = Σ_k Z[k, v, a_{n,k}]: rows ((r K + k) 2 + v) T + a
    ar = torch.arange
    off = ((ar(R)[:, None, None, None] * K + ar(K)) * 2 + ar(2)[None, :, None, None]) * T
    flat = iv + off.to(iv.device)  # (R, 2, N, K)
    Zr = Z.reshape(-1, O)
    out = Zr[flat[..., 0]]  # (R, 2, N, O); one gathered row per RF, added in order k = 0, 1, ...
    for k in range(1, K):
        out = out + Zr[flat[..., k]]
    if cfg.normalize:
        norm = out.norm(dim=-1, keepdim=True)
        f = out / norm.clamp_min(_EPS_NORMALIZE)
    else:
        f = out
    values, d1s, d2s = [], [], []
    # InfoNCE in blocks of ≤ loss_chunk runs, so that a block's (runs, N, N) logits and softmax are
    # cache-sized instead of the whole stack's; each run's arithmetic is the same
    for sl, name in cfg.losses:
        width = cfg.loss_chunk if name == "infonce" else sl.stop - sl.start
        for c in (slice(i, min(i + width, sl.stop)) for i in range(sl.start, sl.stop, width)):
            v, d1, d2 = _loss_and_grad(f[c, 0], f[c, 1], name, tau[c])
            values.append(v)
            d1s.append(d1)
            d2s.append(d2)
    value = torch.cat(values) if len(values) > 1 else values[0]
    df = torch.stack(
        [torch.cat(d1s) if len(d1s) > 1 else d1s[0], torch.cat(d2s) if len(d2s) > 1 else d2s[0]], 1
    )
    if cfg.normalize:
        radial = (f * df).sum(-1, keepdim=True) * (norm >= _EPS_NORMALIZE)
        dout = (df - f * radial) / norm.clamp_min(_EPS_NORMALIZE)
    else:
        dout = df
    src = dout[:, :, :, None, :].expand(R, 2, N, K, O).reshape(-1, O)
    dZ = torch.zeros(R * K * 2 * T, O, dtype=W.dtype, device=W.device)
    dZ = dZ.index_put((flat.reshape(-1),), src, accumulate=True).reshape(R, K, 2 * T, O)
    dZt = dZ.transpose(2, 3)  # (R, K, O, 2T)
    dVk = torch.matmul(Yt, dZ)  # (R, K, M, O)
    dY = torch.matmul(Vk, dZt).reshape(R, K, M, 2, T)
    dHs = []
    for (sl, (act, bn)), sv in zip(cfg.segments, saved):
        dy = dY[sl]
        spec = BN_BACKPROP[bn]
        if spec is None:
            dh = dy.sum(3)
        else:
            s, p, y = sv
            if bn in BN_POOLED:
                dy = dy.sum(3, keepdim=True)
            dc = dy * s
            if spec[0]:
                dc = dc - p * (s * dy.sum(4, keepdim=True))
            if spec[1]:
                dc = dc - p * y * (s * (dy * y).sum(4, keepdim=True))
            dh = dc.sum(3)
        dHs.append(dh * cfg.acts[act].derivative(Pre[sl]))
    dH = dHs[0] if len(dHs) == 1 else torch.cat(dHs, 0)  # (R, K, M, T)
    if cfg.diagonal:
        dW = dH * scale
    else:
        dW = torch.matmul(dH, emb[:, None])
    return value, dW, dVk, dout, flat


def _sgd(p, b, g, lr, momentum: float, weight_decay: float):  # sgd_momentum_step's rule, in place
    d = g + weight_decay * p if weight_decay else g
    b.mul_(momentum).add_(d)
    p.sub_(lr.reshape(-1, *([1] * (p.ndim - 1))) * b)


@dataclass(frozen=True)
class _Config:
    """Everything a compiled step is specialised on (besides tensor shapes and dtypes)."""

    segments: tuple  # ((slice, (activation, bn)), ...)
    acts: dict  # activation name → Activation, resolved before tracing (its checks use numpy)
    losses: tuple  # ((slice, loss), ...)
    T: int
    N: int
    diagonal: bool
    normalize: bool
    bn_eps: float
    momentum: float
    weight_decay: float
    draw: bool  # indices drawn in the step (TokenViews) or passed in
    loss_chunk: int  # runs per InfoNCE block (_LOSS_CHUNK_ELEMENTS // N²)


def _make_step(cfg: _Config):
    def step_fn(W, V, bW, bV, emb, lr, tau, a, b, c, d):
        # a, b, c, d = seeds, generators, step, (pos_g, pos_f) with draw; else a = the indices
        iv = _draw(a, b, c, d[0], d[1], cfg.N, cfg.T) if cfg.draw else a
        value, dW, dV, dout, flat = _grads(W, V, iv, emb, tau, cfg)
        _sgd(W, bW, dW, lr, cfg.momentum, cfg.weight_decay)
        _sgd(V, bV, dV, lr, cfg.momentum, cfg.weight_decay)
        # the indices, table rows and ∂o are returned so that the compiler computes each once (an
        # output is a buffer) instead of recomputing it inside every kernel that reads it; the
        # finiteness flag is one read outside (isfinite + any there took ~35 µs a step)
        return value, iv, flat, dout, torch.isfinite(value).all()

    return step_fn


# ---- cache of compiled steps -----------------------------------------------------------------

_CACHE: dict = {}
_LOG: list[dict] = []
_WARNED: list[str] = []
_DYNAMIC_M = True  # M symbolic (one graph for every M > 1 of a layout); False: one graph per M
_CPP_WRAPPER = True  # on CPU, inductor's wrapper code in C++ (False: in Python)
_LOSS_CHUNK_ELEMENTS = 1 << 18  # N² × runs per InfoNCE block: 16 runs of N = 128 (1 MiB a matrix)


def compile_log() -> list[dict]:
    """One entry per cached step of this process: its shape key, the seconds of its first call
    (the compilation), the backend used (``"inductor"``, with a C++ wrapper on CPU) and, after a
    failed compilation, the error."""
    return [dict(e) for e in _LOG]


def _compile(fn: Callable, name: str) -> Callable:
    """``torch.compile`` of ``fn`` under its own code object (its own cache); sizes static unless marked."""
    code = fn.__code__.replace(co_name=name)
    fresh = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    return torch.compile(fresh, fullgraph=True, dynamic=None)


class _Stepper:
    """A cached step: compiled at its first call (timed); eager after a failed compilation."""

    def __init__(self, cfg: _Config, key: tuple, compile: bool, dynamic_M: bool = False, cpp: bool = False):
        self.eager, self.cfg, self.key, self.cpp = _make_step(cfg), cfg, key, cpp
        self.fn = _compile(self.eager, f"fused_token_step_{len(_CACHE)}") if compile else self.eager
        self.compiled, self.dynamic_M, self.ready = compile, dynamic_M, False

    def __call__(self, *args):
        if self.ready:
            with torch.no_grad():
                return self.fn(*args)
        t0 = time.perf_counter()
        backend, error = ("inductor" if self.compiled else "eager"), None
        try:
            if self.dynamic_M:  # W (R, K, M, d), Vk (R, K, M, O) and their buffers
                for t in args[:4]:
                    torch._dynamo.mark_dynamic(t, 2)
            # no bounds check per gathered row: indices are in range by construction (drawn modulo
            # n_tokens, or checked by the caller); on CPU a C++ wrapper calls the same kernels
            inductor = torch._inductor.config.patch(assert_indirect_indexing=False, cpp_wrapper=self.cpp)
            dynamo = torch._dynamo.config.patch(automatic_dynamic_shapes=False)
            with torch.no_grad(), inductor, dynamo, warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # torch's own deprecation notices
                out = self.fn(*args)
        except Exception as err:  # noqa: BLE001 - any compiler failure falls back to eager
            if not self.compiled:
                raise
            msg = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"[:200]
            if not _WARNED:
                note = f"nlcl: torch.compile failed ({msg}); the fused token engine runs eagerly"
                warnings.warn(note, RuntimeWarning, stacklevel=3)
            _WARNED.append(msg)
            self.fn, backend, error = self.eager, "eager (compile failed)", msg
            with torch.no_grad():
                out = self.fn(*args)
        self.ready = True
        _LOG.append(
            dict(key=repr(self.key), compile_s=time.perf_counter() - t0, backend=backend, error=error)
        )
        return out


def fused_stepper(
    model,
    *,
    losses: Sequence[str],
    N: int,
    T: int,
    diagonal: bool,
    draw: bool,
    momentum: float,
    weight_decay: float,
    compile: bool = True,
) -> Callable:
    """The cached fused step for ``model``'s shapes and configuration (see the module docstring).

    The returned callable takes (W, Vk, bW, bVk, emb, lr, tau, a, b, c, d), updates W, Vk (the
    top layer as (R, K, M, d_out)) and the momentum buffers bW, bVk in place and returns the
    per-run loss (R,) of the step (then the token indices, ∂o and whether every loss is finite).  With
    ``draw`` the batch is drawn in the step (a, b, c, d = seeds, generators, step (0-d int64),
    (position hashes of N and 2NK)); otherwise ``a`` is the token indices (R, 2, N, K).
    ``emb`` is ‖u_a‖ (R, T) when ``diagonal``, else E (R, T, d); models differing only in M > 1 share a step.
    """
    cfg = _Config(
        segments=tuple((sl, tuple(ab)) for sl, ab in model._segments),
        acts={a: get_activation(a) for _, (a, _) in model._segments},
        losses=tuple(segments(list(losses))),
        T=int(T),
        N=int(N),
        diagonal=bool(diagonal),
        normalize=bool(model.normalize_output),
        bn_eps=float(model.bn_eps),
        momentum=float(momentum),
        weight_decay=float(weight_decay),
        draw=bool(draw),
        loss_chunk=max(1, _LOSS_CHUNK_ELEMENTS // int(N) ** 2),
    )
    W = model.W
    R, K, M, d = W.shape
    dynamic_M = bool(compile) and _DYNAMIC_M and M > 1  # M symbolic: one graph for every M > 1
    m = "M" if dynamic_M else M
    plain = tuple((k, v) for k, v in vars(cfg).items() if k not in ("segments", "acts", "losses"))
    cpp = bool(compile) and _CPP_WRAPPER and W.device.type == "cpu"  # a compile setting: in the key
    key = (
        (R, K, m, d),
        (model.V.shape[0], model.V.shape[1], (K, m)),
        str(W.dtype),
        str(W.device),
        tuple((s.start, s.stop, ab) for s, ab in cfg.segments),
        tuple((s.start, s.stop, name) for s, name in cfg.losses),
        plain,
        (bool(compile), cpp),
    )
    if key not in _CACHE:
        _CACHE[key] = _Stepper(cfg, key, compile, dynamic_M, cpp)
    return _CACHE[key]


def _diagonal(E: torch.Tensor) -> torch.Tensor | None:
    """‖u_a‖ (R, T) when the embeddings E (R, T, d) are diagonal (the token task's), else None."""
    if E.shape[1] != E.shape[2]:
        return None
    dg = E.diagonal(dim1=1, dim2=2)
    return dg.contiguous() if torch.equal(E, torch.diag_embed(dg)) else None


def train_fused(
    model,
    data: Callable[[int], tuple],
    steps: int,
    *,
    losses: Sequence[str],
    tau: torch.Tensor,
    lr: torch.Tensor,
    momentum: float,
    weight_decay: float,
    check_every: int,
    callback: Callable[[int, torch.Tensor], None] | None,
    it,
    compile: bool | None = None,
) -> torch.Tensor:
    """The ``fused`` engine of :func:`nlcl.tian.tokens.training.train_batched` (arguments validated there).

    Trains ``model`` in place with the cached compiled step; returns the last step's per-run loss.
    :class:`TokenViews` are drawn inside the step; other ``data(step)`` must give TokenBatch views
    (indices).  ``model.W`` and ``model.V`` are current whenever ``callback`` runs and at the end; the
    non-finite check raises after the step's update (the eager engines raise before it).
    ``compile=None`` compiles unless ``NLCL_FUSED_COMPILE=0`` (the same step, eager: no compiler
    needed); ``NLCL_CUDA_GRAPH=1`` replays a drawn step on a GPU as one CUDA graph (``cuda_graph``).
    """
    from nlcl.core.validate import NonFiniteError, ParameterError
    from nlcl.tian.tokens import cuda_graph
    from nlcl.tian.tokens.world import TokenBatch

    W = model.W.detach()  # shares model.W's storage: updated in place
    R, K, M, _ = W.shape
    O = model.out_dim
    dev = W.device
    Vk = model.V.detach().reshape(R, O, K, M).permute(0, 2, 3, 1).contiguous()  # (R, K, M, O)
    bW, bVk = torch.zeros_like(W), torch.zeros_like(Vk)

    def sync() -> None:
        model.V.detach().copy_(Vk.permute(0, 3, 1, 2).reshape(R, O, K * M))

    if compile is None:
        compile = os.environ.get("NLCL_FUSED_COMPILE", "1") != "0"
    common = dict(losses=losses, momentum=momentum, weight_decay=weight_decay, compile=compile)
    views, made = (data if isinstance(data, TokenViews) else None), {}
    if views is not None:
        N, E = views.batch_size, views.embedding.to(W.dtype)
        dg = _diagonal(E)
        emb = E if dg is None else dg
        stepper = fused_stepper(model, N=N, T=E.shape[1], diagonal=dg is not None, draw=True, **common)
        seeds, gens = views.world.seeds.to(dev), views.world.generators.to(dev)
        pos, step_t = (_position_hash(N, dev), _position_hash(2 * N * K, dev)), seeds.new_zeros(())
        args = (W, Vk, bW, bVk, emb, lr, tau, seeds, gens, step_t, pos)
        stepper = cuda_graph.capture(stepper, args) if cuda_graph.graph_wanted(dev) else stepper
    last = torch.full((R,), float("nan"))
    try:
        for step in it:
            if views is not None:
                step_t.fill_(step)  # refilled: a new tensor a step is a synchronising copy on a GPU
                per_run, *_, ok = stepper(*args)
            else:
                x1, x2 = data(step)
                if not isinstance(x1, TokenBatch):
                    raise ParameterError(
                        f"engine='fused' needs TokenBatch views; data({step}) gave {type(x1).__name__}"
                    )
                N = x1.index.shape[1]
                iv = torch.stack([x1.index, x2.index], 1)  # (R, 2, N, K)
                E = x1.embedding.to(W.dtype)
                if bool((iv < 0).any()) or bool((iv >= E.shape[1]).any()):
                    raise ParameterError(f"data({step}) has token indices outside [0, {E.shape[1]})")
                dg = _diagonal(E)
                sh = (N, E.shape[1], dg is not None)
                if sh not in made:  # one stepper per batch shape, not a lookup every step
                    made[sh] = fused_stepper(model, N=N, T=sh[1], diagonal=sh[2], draw=False, **common)
                e = E if dg is None else dg
                per_run, *_, ok = made[sh](W, Vk, bW, bVk, e, lr, tau, iv, None, None, None)
            if (step + 1) % check_every == 0 or step == steps - 1:
                if not bool(ok):
                    runs = torch.nonzero(~torch.isfinite(per_run)).flatten().tolist()
                    raise NonFiniteError(
                        f"training diverged: loss is NaN or infinite at step {step} for run(s) {runs[:10]} "
                        f"(lr={lr[runs[0]].item():g}); lower lr or check the inputs"
                    )
            if callback is not None:
                sync()
                callback(step, per_run)
            last = per_run
    finally:
        sync()
    return last
