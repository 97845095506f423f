"""The direct front end (compiler/direct): which kernels it compiles, that they compute what
Numba's front end's do (both compiled here, results compared, and against NumPy), and that
whatever it does not model goes to Numba's front end unchanged."""

import importlib
import json
import math
import sys
import textwrap

import dpnp
import numpy as np
import pytest
from conftest_kernels import run_python

import dpex_kernels as dk
from dpex_kernels.compiler.frontend import direct

F32 = dk.usm_array(dk.float32, 1)
F64 = dk.usm_array(dk.float64, 1)
I64 = dk.usm_array(dk.int64, 1)
N = 64
DEBUG = False  # a global constant: branches on it are decided before typing
BIG = 9007199254740993  # 2**53 + 1: exact as an integer, not as a float64


def front_end(kernel) -> str:
    (compiled,) = kernel.definitions.values()
    return compiled.artifacts.front_end


def run_both(monkeypatch, function, host_args: list, size=N) -> tuple:
    """Compile `function` with each front end, launch it on copies of `host_args` (NumPy
    arrays go to the device), and return (direct front end's arrays, Numba's arrays)."""
    results = []
    for choice in ("direct", "numba"):
        monkeypatch.setenv("DPEX_KERNELS_FRONT_END", choice)
        kernel = dk.kernel(function)
        args = [dpnp.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args]
        kernel[size](*args).wait()
        results.append([dpnp.asnumpy(a) for a in args if isinstance(a, dpnp.ndarray)])
        assert front_end(kernel).startswith(choice), front_end(kernel)
    return tuple(results)


def assert_same(direct_arrays, numba_arrays) -> None:
    for mine, theirs in zip(direct_arrays, numba_arrays):
        np.testing.assert_array_equal(mine, theirs)


# --- what it compiles ---------------------------------------------------------------------


_EXAMPLES = """
import json
import numpy as np
import dpnp
from dpex_kernels.dispatcher import jit_kernel
from examples import histogram, kmeans, matmul_tiled, reduction, scan

seen = []
compile_kernel = jit_kernel.compile_kernel


def recording(py_func, *args, **kwargs):
    artifacts = compile_kernel(py_func, *args, **kwargs)
    seen.append((py_func.__name__, artifacts.front_end))
    return artifacts


jit_kernel.compile_kernel = recording
rng = np.random.default_rng(0)
a = dpnp.asarray(rng.random((40, 24), dtype=np.float32))
b = dpnp.asarray(rng.random((24, 40), dtype=np.float32))
matmul_tiled.matmul(a, b)
matmul_tiled.matmul(a, b, blocked=True)
x = dpnp.asarray(rng.random(4096, dtype=np.float32))
reduction.device_sum(x, False)
reduction.device_sum(x, True)
values = dpnp.asarray(rng.integers(0, 256, 4096).astype(np.int32))
histogram.histogram(values)
histogram.histogram(values, x)
scan.exclusive_scan(values)
data = rng.random((500, 14), dtype=np.float32)
kmeans.kmeans(data, data[:8], max_iter=1)
print(json.dumps(seen))
"""


def test_the_examples_kernels_compile_with_the_direct_front_end():
    done = run_python(_EXAMPLES)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    names = {name for name, _ in seen}
    assert {"matmul_kernel", "tree_sum", "histogram_counts", "scan_blocks", "assign"} <= names
    assert all(used == "direct" for _, used in seen), seen


def test_inspect_types_says_which_front_end_typed_the_kernel():
    @dk.kernel(dk.void(F32, F32))
    def scale(a, out):
        i = dk.get_global_id(0)
        v = a[i] * 2.5
        v += 1.0
        out[i] = v

    text = scale.inspect_types(dk.void(F32, F32))
    assert "direct front end" in text
    assert "i = call dk.get_global_id" in text and "-> int64" in text
    assert "v += 1.0  :: (float32, float32) -> float32" in text


def test_the_environment_variable_turns_it_off(monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_FRONT_END", "numba")

    @dk.kernel(dk.void(F32))
    def fill(a):
        a[dk.get_global_id(0)] = 1.0

    assert front_end(fill) == "numba"
    assert not direct.enabled()


# --- the same results as Numba's front end -------------------------------------------------


def _mixed_arithmetic(a, b, out_f, out_i, n):
    i = dk.get_global_id(0)
    x = a[i] * 1.5 + b[i]  # a weak float constant: float32 stays float32
    k = (i - n) // 3  # Python's floor division and modulo of negatives
    r = (i - n) % 7
    total = 0  # an int joined with float32 in the loop: Numba's float64
    for j in range(i % 5):
        total += a[j]
    y = -x if x > 0.5 and not i % 2 == 0 else x**2  # noqa: SIM201 (`not` as written)
    out_f[i] = y + total
    out_i[i] = k * 100 + r if 0 <= r < 4 else -1  # noqa: SIM300 (a chained comparison)


def test_arithmetic_and_types_match_numbas_front_end(monkeypatch):
    rng = np.random.default_rng(1)
    a, b = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    host = [a, b, np.zeros(N, np.float32), np.zeros(N, np.int64), 9]
    mine, theirs = run_both(monkeypatch, _mixed_arithmetic, host)
    assert_same(mine, theirs)
    i = np.arange(N)
    k, r = (i - 9) // 3, (i - 9) % 7
    np.testing.assert_array_equal(mine[3], np.where((r >= 0) & (r < 4), k * 100 + r, -1))
    x = a * np.float32(1.5) + b
    totals = np.array([np.sum(a[: j % 5], dtype=np.float64) for j in i])
    y = np.where((x > 0.5) & (i % 2 != 0), -x, x**2)
    np.testing.assert_allclose(mine[2], (y + totals).astype(np.float32), rtol=1e-6)


def _loops(out, limit):
    i = dk.get_global_id(0)
    count = 0
    for k in range(10, i % 7 - 3, -2):  # a negative step, and ranges that run no round
        count += k
    w = 0
    while w < 3:  # the first test is decided before typing; `continue` goes back to it
        w += 1
        if i > limit:
            continue
        count += w
        if 40 < i:  # noqa: SIM300 (a constant on the left)
            break
    while True:
        count += 1
        if count % 4 == 0:
            break
    out[i] = count


def test_loops_match_numbas_front_end_and_python(monkeypatch):
    mine, theirs = run_both(monkeypatch, _loops, [np.zeros(N, np.int64), 20])
    assert_same(mine, theirs)
    expected = []
    for i in range(N):
        count = sum(range(10, i % 7 - 3, -2))
        w = 0
        while w < 3:
            w += 1
            if i > 20:
                continue
            count += w
            if 40 < i:  # noqa: SIM300 (a constant on the left)
                break
        count += 1
        while count % 4 != 0:
            count += 1
        expected.append(count)
    np.testing.assert_array_equal(mine[0], expected)


def _pruned(a, out):
    i = dk.get_global_id(0)
    x = BIG
    if DEBUG:  # decided before typing: x stays an integer (as a float it would round)
        x = 2.5
    y = 0.5 if DEBUG else 7  # one side only: an integer
    z = BIG + i
    if a.ndim == 2:  # a parameter's ndim is a constant: decided before typing too
        z = 0.5
    out[i] = (x + y) - BIG + (z - BIG)


def test_branches_decided_before_typing_are_decided_as_numba_does(monkeypatch):
    mine, theirs = run_both(monkeypatch, _pruned, [np.zeros(N), np.zeros(N, np.int64)])
    assert_same(mine, theirs)
    np.testing.assert_array_equal(mine[1], 7 + np.arange(N))


def _late_pruning(out):
    i = dk.get_global_id(0)
    x = 1
    y = BIG
    k = 1
    for _ in range(3):
        k = 0  # k is assigned twice: Numba knows it is constant only after SSA
        if k == 1:  # so this side is dead only after SSA, and x keeps a phi in the loop
            x = 2
        if x != 1:  # x is not a constant then: this branch stays, and y becomes a float
            y = 0.5
    out[i] = y - (BIG - 1)  # 1 while y is an integer, 0 once it is a float (2**53)


def test_a_branch_decided_only_after_ssa_inside_a_loop_goes_to_numba(monkeypatch):
    kernel = dk.kernel(_late_pruning)
    out = dpnp.zeros(N, dtype=np.int64)
    kernel[N](out).wait()
    assert front_end(kernel).startswith("numba (direct: Unsupported: a branch inside a loop")
    monkeypatch.setenv("DPEX_KERNELS_FRONT_END", "numba")
    again = dpnp.zeros(N, dtype=np.int64)
    dk.kernel(_late_pruning)[N](again).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(again), 0)  # Numba's y is a float64
    np.testing.assert_array_equal(dpnp.asnumpy(out), dpnp.asnumpy(again))


def _unpacking(a, out):
    i = dk.get_global_id(0)
    rows, cols = a.shape
    p, q = i, rows  # CPython swaps these on the stack
    q, p = p, q
    last = a.shape[-1]
    out[i] = p * 1000 + q * 10 + (cols == last) + a[i % rows, i % cols]


def test_tuples_and_shapes_match_numbas_front_end(monkeypatch):
    a = np.arange(12.0).reshape(3, 4)
    mine, theirs = run_both(monkeypatch, _unpacking, [a, np.zeros(N)])
    assert_same(mine, theirs)
    i = np.arange(N)
    np.testing.assert_array_equal(mine[1], 3 * 1000 + i * 10 + 1 + a[i % 3, i % 4])


@dk.func
def _clamped(x, low, high):
    return min(max(x, low), high)


def _calls(a, out, counts):
    i = dk.get_global_id(0)
    local = dk.local.array(8, dk.int64)
    if dk.get_local_id(0) < 8:
        local[dk.get_local_id(0)] = 0
    dk.barrier(dk.LOCAL_MEM_FENCE)
    dk.atomic.add(local, i % 8, 1)
    dk.barrier()
    if dk.get_local_id(0) == 0:
        for k in range(8):
            dk.atomic.add(counts, k, local[k])
    out[i] = _clamped(math.sqrt(abs(a[i])), 0.25, 0.75) + dk.float32(i) / 2


def test_device_functions_local_memory_and_atomics_match_numbas_front_end(monkeypatch):
    a = np.linspace(-1, 1, N, dtype=np.float32)
    host = [a, np.zeros(N, np.float32), np.zeros(8, np.int64)]
    mine, theirs = run_both(monkeypatch, _calls, host, dk.NdRange(N, 16))
    assert_same(mine, theirs)
    expected = np.clip(np.sqrt(np.abs(a)), 0.25, 0.75) + np.arange(N, dtype=np.float32) / 2
    np.testing.assert_allclose(mine[1], expected, rtol=1e-6)
    np.testing.assert_array_equal(mine[2], np.full(8, N // 8))


# --- what goes to Numba's front end -------------------------------------------------------


def test_what_it_does_not_model_compiles_with_numbas_front_end():
    @dk.kernel
    def with_slice(a, out):
        i = dk.get_global_id(0)
        view = a[1:]
        out[i] = view[i % 3]

    a = dpnp.asarray(np.arange(4.0))
    out = dpnp.zeros(N)
    with_slice[N](a, out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(1.0, 4.0)[np.arange(N) % 3])
    assert front_end(with_slice).startswith("numba (direct: Unsupported: a slice")


def test_errors_read_as_numbas_front_end_reports_them():
    @dk.kernel
    def wrong(a):
        a[dk.get_global_id(0)] = undefined_name  # noqa: F821

    with pytest.raises(dk.KernelCompileError, match="undefined_name"):
        wrong.compile(dk.void(F32))


def test_a_source_file_changed_since_import_is_not_read(tmp_path, monkeypatch):
    module = tmp_path / "edited_kernel.py"
    module.write_text(
        textwrap.dedent(
            """
            import dpex_kernels as dk

            def add_one(a):
                a[dk.get_global_id(0)] += 1
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    edited = importlib.import_module("edited_kernel")
    module.write_text(module.read_text().replace("+= 1", "+= 1000"))
    import linecache

    linecache.checkcache(str(module))
    kernel = dk.kernel(edited.add_one)
    a = dpnp.zeros(4)
    kernel[4](a).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(a), np.ones(4))  # the imported bytecode's
    assert front_end(kernel).startswith("numba (direct: Unsupported: the source on disk")
    del sys.modules["edited_kernel"]
