"""The fast training step of the captions chapter's heads against its former formulation (the oracle).

``train_heads`` now evaluates Eq. 3 with :func:`nlcl.renli.head_loss.fused_contrastive_loss`, runs
the hidden layers of :class:`MLPHeads` transposed with one fused BatchNorm call, gathers the inputs
first when the caption table is larger than the batch, and uses torch's fused Adam.  All of these are
the same mathematics; the tests below keep the former step (reference loss, two-pass BatchNorm on
the (R, n, w) layout, first layer on the whole table, the for-loop Adam) as the oracle.

Tolerances.  In float64 every quantity is a sum of O(10²-10³) rounded terms, so agreement to 1e-9
relative leaves six orders of magnitude above rounding (2e-16) while any change of the method (a
missing factor, a wrong stabilizer, another random draw) shows up at O(1).  In float32 (the
chapter's dtype) the losses of a few Adam steps are compared to 1e-5 absolute (observed: at most
2.4e-7, two float32 ulps of a loss of order 1; the per-operation rounding is 6e-8).  The float32
parameters and evaluation outputs are not compared: Adam divides each coordinate's update by its
running gradient scale, so a coordinate whose gradient is at rounding level (the biases in front
of a BatchNorm or of the output centring, whose exact gradient is 0) takes steps of up to ``lr`` in
directions set by rounding, in the former formulation as in the new one.  The next normalization
cancels them in training, so the losses agree to rounding, but the running means that evaluation
uses carry them; in float64 those gradients are ~1e-17, far below Adam's ``eps``, and everything is
compared.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.renli.head_layers import batch_norm_columns, batch_norm_rows, normalize_output
from nlcl.renli.head_loss import fused_contrastive_loss
from nlcl.renli.heads import LinearHeads, MLPHeads, train_heads
from nlcl.renli.losses import contrastive_loss


def _pair(seed, R=4, n=32, m=8, scale=1.0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(R, n, m, generator=g, dtype=dtype) * scale / math.sqrt(m)
    b = a + 0.5 * torch.randn(R, n, m, generator=g, dtype=dtype) * scale / math.sqrt(m)
    return a, b


def _loss_and_grads(loss_fn, a0, b0, lam, beta, upstream):
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    loss = loss_fn(a, b, lam, beta)
    (loss * upstream).sum().backward()
    return loss.detach(), a.grad, b.grad


@pytest.mark.parametrize("dtype, rtol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
@pytest.mark.parametrize("beta", [0.5, 2.0, torch.tensor([0.3, 1.0, 2.0, 5.0])])
def test_fused_loss_equals_reference_loss_and_gradient(dtype, rtol, beta):
    a, b = _pair(0, dtype=dtype)
    lam = torch.tensor([0.0, 0.5, 1.0, 3.0], dtype=dtype)
    upstream = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=dtype)  # a general upstream gradient
    got = _loss_and_grads(fused_contrastive_loss, a, b, lam, beta, upstream)
    ref = _loss_and_grads(contrastive_loss, a, b, lam, beta, upstream)
    for x, y in zip(got, ref):
        torch.testing.assert_close(x, y, rtol=rtol, atol=rtol * float(y.abs().max()))


def test_fused_loss_falls_back_to_the_reference_when_the_shared_stabilizer_underflows():
    """A row whose similarities all lie ~200 below the largest would underflow: the reference runs."""
    a, b = _pair(1, scale=30.0)
    lam = torch.ones(4, dtype=torch.float64)
    got = _loss_and_grads(fused_contrastive_loss, a, b, lam, 2.0, torch.ones(4, dtype=torch.float64))
    ref = _loss_and_grads(contrastive_loss, a, b, lam, 2.0, torch.ones(4, dtype=torch.float64))
    for x, y in zip(got, ref):
        assert torch.equal(x, y)


def test_fused_loss_errors():
    a, b = _pair(2)
    lam = torch.ones(4, dtype=torch.float64)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b[:, :-1], lam, 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a[:, :1], b[:, :1], lam, 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b, lam[:2], 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b, -lam, 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b, lam, 0.0)


def test_weighted_table_normalizations_equal_the_batch_with_repeated_rows():
    """batch_norm_rows and normalize_output with counts ``w_c`` over a table (R, C, w) equal
    batch_norm_columns and normalize_output over the batch that repeats row ``c`` ``w_c`` times, in
    both modes and for the running statistics (float64: rounding only)."""
    g = torch.Generator().manual_seed(5)
    table = torch.randn(2, 7, 16, generator=g, dtype=torch.float64) * 2 + 1
    index = torch.randint(0, 7, (2, 30), generator=g)
    counts = torch.zeros(2, 7, dtype=torch.float64).scatter_add_(
        1, index, torch.ones(2, 30, dtype=torch.float64)
    )
    batch = torch.gather(table, 1, index[..., None].expand(-1, -1, 16))
    a, b = MLPHeads(6, 16, 16, seeds=[0, 1]).double(), MLPHeads(6, 16, 16, seeds=[0, 1]).double()
    for p in (a.bn_gamma1, a.bn_beta1):
        p.data = torch.randn(2, 16, generator=g, dtype=torch.float64)
    b.load_state_dict(a.state_dict())
    for mode in ("train", "eval"):
        a.train(mode == "train")
        b.train(mode == "train")
        rows = torch.gather(batch_norm_rows(a, table, 1, counts), 1, index[..., None].expand(-1, -1, 16))
        cols = batch_norm_columns(b, batch.transpose(1, 2).contiguous(), 1).transpose(1, 2)
        torch.testing.assert_close(rows, cols, rtol=1e-12, atol=1e-12)
        out_rows = torch.gather(normalize_output(a, table, counts), 1, index[..., None].expand(-1, -1, 16))
        torch.testing.assert_close(out_rows, normalize_output(b, batch), rtol=1e-12, atol=1e-12)
    for name, buf in a.named_buffers():
        torch.testing.assert_close(buf, dict(b.named_buffers())[name], rtol=1e-12, atol=1e-12, msg=name)


# --- the oracle: the former forward pass and training loop --------------------------------------


def _normalize_output(heads, h):
    if heads.training:
        mean = h.mean(1)
        centred = h - mean[:, None]
        scale2 = centred.pow(2).sum(-1).mean(-1)
        with torch.no_grad():
            heads.out_mean.lerp_(mean.detach(), heads.momentum)
            heads.out_scale2.lerp_(scale2.detach(), heads.momentum)
        return centred / torch.sqrt(scale2 + 1e-12)[:, None, None]
    return (h - heads.out_mean[:, None]) / torch.sqrt(heads.out_scale2 + 1e-12)[:, None, None]


def _old_bn(heads, h, layer):
    rm, rv = getattr(heads, f"running_mean{layer}"), getattr(heads, f"running_var{layer}")
    mean = h.mean(1)
    centred = h - mean[:, None]
    var = (centred * centred).mean(1)
    with torch.no_grad():
        n = h.shape[1]
        rm.lerp_(mean.detach(), heads.momentum)
        rv.lerp_(var.detach() * n / max(n - 1, 1), heads.momentum)
    h = centred / torch.sqrt(var[:, None] + 1e-5)
    return h * getattr(heads, f"bn_gamma{layer}")[:, None] + getattr(heads, f"bn_beta{layer}")[:, None]


def _old_forward(heads, x, index=None):
    if isinstance(heads, LinearHeads):
        h = torch.bmm(x, heads.weight)
        if index is not None:
            h = torch.gather(h, 1, index[..., None].expand(-1, -1, h.shape[-1]))
        return _normalize_output(heads, h)
    h = torch.baddbmm(heads.bias1[:, None], x, heads.weight1)
    if index is not None:
        h = torch.gather(h, 1, index[..., None].expand(-1, -1, h.shape[-1]))
    h = torch.relu(_old_bn(heads, h, 1))
    h = torch.relu(_old_bn(heads, torch.baddbmm(heads.bias2[:, None], h, heads.weight2), 2))
    h = torch.baddbmm(heads.bias3[:, None], h, heads.weight3)
    return _normalize_output(heads, h)


def _old_train(img, txt, cap, lam, seeds, *, width, d_out, steps, beta, lr, batch_size, heads):
    make = (
        (lambda d, s: LinearHeads(d, d_out, s))
        if heads == "linear"
        else (lambda d, s: MLPHeads(d, width, d_out, s))
    )
    img_heads = make(img.shape[1], [2 * s for s in seeds])
    txt_heads = make(txt.shape[1], [2 * s + 1 for s in seeds])
    opt = torch.optim.Adam([*img_heads.parameters(), *txt_heads.parameters()], lr=lr)
    gens = [torch.Generator().manual_seed(10_000 + s) for s in seeds]
    lam_t, txt_table = torch.tensor(lam), txt.expand(len(seeds), -1, -1)
    losses = np.empty((len(seeds), steps))
    for step in range(steps):
        idx = torch.stack([torch.randint(0, img.shape[0], (batch_size,), generator=g) for g in gens])
        loss = contrastive_loss(
            _old_forward(img_heads, img[idx]), _old_forward(txt_heads, txt_table, cap[idx]), lam_t, beta
        )
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        losses[:, step] = loss.detach().numpy()
    return img_heads.eval(), txt_heads.eval(), losses


def _features(n_captions, dtype, N=300, d_img=12, d_txt=20, seed=3):
    g = torch.Generator().manual_seed(seed)
    cap = torch.randint(0, n_captions, (N,), generator=g)
    txt = torch.randn(n_captions, d_txt, generator=g, dtype=dtype)
    img = txt[cap, :d_img] + 0.7 * torch.randn(N, d_img, generator=g, dtype=dtype)
    return img, txt, cap


@pytest.mark.parametrize("heads", ["mlp", "linear"])
@pytest.mark.parametrize("n_captions", [10, 90])  # a table smaller, then larger, than the batch
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_train_heads_equals_the_former_formulation(heads, n_captions, dtype):
    img, txt, cap = _features(n_captions, dtype)
    lam, seeds = [0.0, 1.0, 1.0], [0, 1, 2]
    kw = dict(width=16, d_out=6, steps=6, beta=2.0, lr=1e-3, batch_size=48, heads=heads)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # the heads' parameters and λ in the dtype of the features
    try:
        new = train_heads(img, txt, cap, lam, seeds, progress=False, **kw)
        old_img, old_txt, old_loss = _old_train(img, txt, cap, lam, seeds, **kw)
    finally:
        torch.set_default_dtype(previous)
    tol = 1e-9 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(new.loss, old_loss, rtol=tol, atol=tol)
    if dtype == torch.float64:
        for (name, p), q in zip(
            [*new.image_heads.named_parameters(), *new.text_heads.named_parameters()],
            [*old_img.parameters(), *old_txt.parameters()],
        ):
            torch.testing.assert_close(p.detach(), q.detach(), rtol=tol, atol=tol, msg=name)
    if dtype == torch.float32:  # evaluation uses running means that include the rounding-driven biases
        return
    x = img[:40].expand(3, -1, -1).contiguous()
    with torch.no_grad():
        torch.testing.assert_close(new.image_heads(x), _old_eval(old_img, x), rtol=10 * tol, atol=10 * tol)


def _old_eval(heads, x):
    """The former evaluation-mode forward: running statistics everywhere."""
    if isinstance(heads, LinearHeads):
        return _normalize_output(heads, torch.bmm(x, heads.weight))

    def bn(h, layer):
        rm, rv = getattr(heads, f"running_mean{layer}"), getattr(heads, f"running_var{layer}")
        h = (h - rm[:, None]) / torch.sqrt(rv[:, None] + 1e-5)
        return torch.relu(
            h * getattr(heads, f"bn_gamma{layer}")[:, None] + getattr(heads, f"bn_beta{layer}")[:, None]
        )

    h = bn(torch.baddbmm(heads.bias1[:, None], x, heads.weight1), 1)
    h = bn(torch.baddbmm(heads.bias2[:, None], h, heads.weight2), 2)
    return _normalize_output(heads, torch.baddbmm(heads.bias3[:, None], h, heads.weight3))
