"""Typical data-parallel programs (tests/offload_programs.py) run under @dk.offload on USM
arrays and equal their NumPy references: results and arguments afterwards (issue 40)."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest
from conftest import CPU
from offload_programs import PROGRAMS, Program

import dpex_kernels as dk


def _on_device(value):
    return dpnp.asarray(value, device=CPU) if isinstance(value, np.ndarray) else value


def _check(got, expected, rtol: float, what: str) -> None:
    """`got` equals `expected`, and every array in it is a dpnp array on the test's device."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), what
        for k, (g, e) in enumerate(zip(got, expected)):
            _check(g, e, rtol, f"{what}[{k}]")
        return
    if isinstance(expected, np.ndarray) and expected.ndim > 0:
        assert isinstance(got, dpnp.ndarray), f"{what}: a {type(got).__name__}, not a dpnp array"
        assert got.sycl_device.filter_string == CPU, what
        got = dpnp.asnumpy(got)
    expected = np.asarray(expected)
    got = np.asarray(got)
    assert got.shape == expected.shape, what
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


#: Programs that do not run yet, each with the documented error it raises (docs/offload.md).
EXPECTED_TO_FAIL: dict[str, tuple[type, str]] = {}  # none today


def _marked(program: Program):
    if program.name not in EXPECTED_TO_FAIL:
        return program
    error, reason = EXPECTED_TO_FAIL[program.name]
    return pytest.param(program, marks=pytest.mark.xfail(strict=True, raises=error, reason=reason))


@pytest.mark.parametrize("program", [_marked(p) for p in PROGRAMS], ids=[p.name for p in PROGRAMS])
def test_program_equals_numpy(program: Program):
    inputs = program.inputs(np.random.default_rng(40))
    arguments = tuple(_on_device(x) for x in inputs)
    expected_inputs = tuple(np.copy(x) if isinstance(x, np.ndarray) else x for x in inputs)
    got = dk.offload(program.function)(*arguments)
    expected = program.reference(*expected_inputs)
    _check(got, expected, program.rtol, "result")
    for k, (argument, after) in enumerate(zip(arguments, expected_inputs)):
        _check(argument, after, program.rtol, f"argument {k}")
