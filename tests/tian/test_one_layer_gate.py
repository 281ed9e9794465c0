"""The same-view A(w) of the one-layer chapter equals nlcl.tian.landscape.gate_matrix (the oracle)."""

import numpy as np
import pytest

from nlcl.tian import one_layer_study as study
from nlcl.tian.contrastive import stack_views
from nlcl.tian.landscape import gate_matrix
from nlcl.tian.one_layer_gate import same_view_gate_fn, same_view_gate_matrix, same_views


@pytest.mark.parametrize("n", [300, 400, 2000])
@pytest.mark.parametrize("shape", [(5, 8), (33, 8), (4, 3, 8)])
@pytest.mark.parametrize("kind", ["uniform", "feature", "array"])
def test_same_view_gate_matrix_matches_gate_matrix(n, shape, kind):
    rng = np.random.default_rng([n, len(shape), len(kind)])
    x = rng.standard_normal((n, 8))
    v = stack_views(x, x)
    w = rng.standard_normal(shape)
    alpha = {
        "uniform": None,
        "feature": study.gaussian_alpha_fn(x, "relu", 0.5),
        "array": np.exp(-rng.random((n, n))),
    }[kind]
    want = gate_matrix(v, w, "relu", alpha)
    got = same_view_gate_fn(v, "relu", alpha)(w)
    # the same operations on the same chunks: equal bits here; rtol 1e-12 allows a BLAS whose
    # results depend on the row count of a matrix (the oracle gates 2N rows, this N)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.array_equal(got, same_view_gate_matrix(x, w, "relu", alpha))


def test_same_view_gate_fn_falls_back():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((50, 4)), rng.standard_normal((50, 4))
    assert same_views(stack_views(x, x)) and not same_views(stack_views(x, y))
    w = rng.standard_normal((3, 4))
    v = stack_views(x, y)
    np.testing.assert_array_equal(same_view_gate_fn(v, "relu")(w), gate_matrix(v, w, "relu"))
    v = stack_views(x, x)
    np.testing.assert_array_equal(same_view_gate_fn(v, "relu")(w[0]), gate_matrix(v, w[0], "relu"))
    with pytest.raises(ValueError):
        same_view_gate_fn(v, "relu")(np.zeros((2, 4)))
