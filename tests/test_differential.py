"""Differential property test: random arithmetic kernels against the same expression in NumPy."""

import math

import dpnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dpex_kernels as dk

LEAVES = st.sampled_from(["a[i]", "b[i]", "1.5", "0.25", "c"])
UNARY = st.sampled_from(["abs({})", "math.sqrt(abs({}))", "math.sin({})", "math.exp(-abs({}))"])
BINARY = st.sampled_from(["({} + {})", "({} - {})", "({} * {})", "min({}, {})", "max({}, {})"])

NUMPY_NAMES = {"math.sqrt": "np.sqrt", "math.sin": "np.sin", "math.exp": "np.exp",
               "abs(": "np.abs(", "min(": "np.minimum(", "max(": "np.maximum("}


def _expressions():
    return st.recursive(
        LEAVES,
        lambda inner: st.one_of(
            st.tuples(UNARY, inner).map(lambda t: t[0].format(t[1])),
            st.tuples(BINARY, inner, inner).map(lambda t: t[0].format(t[1], t[2])),
        ),
        max_leaves=8,
    )


def _numpy_form(expression: str) -> str:
    for kernel_name, numpy_name in NUMPY_NAMES.items():
        expression = expression.replace(kernel_name, numpy_name)
    return expression.replace("a[i]", "a").replace("b[i]", "b")


@settings(max_examples=25)
@given(expression=_expressions(), dtype=st.sampled_from([np.float32, np.float64]))
def test_random_expressions_match_numpy(expression, dtype):
    body = f"    i = dk.get_global_id(0)\n    out[i] = {expression}\n"
    source = "def generated(a, b, out, c):\n" + body
    namespace = {"dk": dk, "math": math}
    exec(source, namespace)
    kernel = dk.kernel(namespace["generated"])
    rng = np.random.default_rng(len(expression))
    a = rng.standard_normal(64).astype(dtype)
    b = rng.standard_normal(64).astype(dtype)
    c = dtype(0.75)
    out = dpnp.empty(64, dtype=dtype)
    kernel[64](dpnp.asarray(a), dpnp.asarray(b), out, c)
    with np.errstate(all="ignore"):
        expected = eval(_numpy_form(expression), {"np": np, "a": a, "b": b, "c": c})
    expected = np.broadcast_to(np.asarray(expected, dtype=dtype), (64,))
    tolerance = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(dpnp.asnumpy(out), expected, rtol=tolerance, atol=tolerance)
