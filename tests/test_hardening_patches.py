"""Numba's CPU target is unchanged by dpex_kernels; its changes to Numba live in one module."""

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

import dpnp
import numpy as np
import pytest
from numba.core import compiler

import dpex_kernels as dk
from dpex_kernels.compiler.frontend import direct
from dpex_kernels.compiler.patches import collector_paused

CPU_CODE_BEFORE_AND_AFTER = textwrap.dedent(
    """
    import re
    import numba, numpy as np

    SOURCE = '''
    def strided_sum(a):
        total = 0.0
        for row in a[::2]:
            for x in row[1::3]:
                total += x
        return total

    def triangle(n):
        s = 0
        for i in range(n):
            s += i
        return s

    def at(a, i):
        return a[i]
    '''

    def compile_and_run():
        namespace = {}
        exec(SOURCE, namespace)
        functions = (
            numba.njit(namespace["strided_sum"]),
            numba.njit(namespace["triangle"]),
            numba.njit(boundscheck=True)(namespace["at"]),
        )
        results = [functions[0](np.arange(60.0).reshape(6, 10)), functions[1](1000)]
        try:
            functions[2](np.arange(3.0), 5)
        except IndexError as exc:
            results.append(str(exc))
        # Numba's mangled names carry a per-process version counter: drop them.
        ir = [re.sub(r"\\w*v\\d+B\\w*", "F", f.inspect_llvm(f.signatures[0])) for f in functions]
        return results, ir

    before = compile_and_run()
    import dpnp
    import dpex_kernels as dk

    @dk.kernel(debug=True)
    def triangles(x):
        i = dk.get_global_id(0)
        s = 0
        for j in range(i):
            s += j
        x[i, 0] = s

    triangles[4](dpnp.zeros((4, 1), dtype="i8"))
    after = compile_and_run()
    assert before[0] == after[0], (before[0], after[0])
    assert before[1] == after[1], "CPU LLVM IR changed after dpex_kernels compiled a kernel"

    @numba.njit
    def total(a):
        return a.shape[0]

    # CPU njit sees a dpnp array as its usm_array, so host code can launch kernels on it.
    assert total(dpnp.ones(3)) == 3
    print("unchanged")
    """
)


def test_cpu_njit_code_is_unchanged_by_compiling_kernels():
    done = subprocess.run(
        [sys.executable, "-c", CPU_CODE_BEFORE_AND_AFTER],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("unchanged")


def test_numba_and_llvm_state_is_changed_in_patches_only():
    package = Path(dk.__file__).parent
    markers = (
        "cgutils.pointer_add =",
        "cgutils.do_boundscheck =",
        "GetItemBuffer.generic =",
        "set_option(",
        "typeof_impl.register(",
    )
    for path in package.rglob("*.py"):
        text = path.read_text()
        for marker in markers:
            if marker in text and path.name != "patches.py":
                # Registrations of this package's own types (see patches.py's docstring).
                allowed = marker == "typeof_impl.register(" and (
                    path.name in ("functions.py", "njit.py")
                    or path.relative_to(package).as_posix()
                    in ("offloading/dispatcher.py", "offloading/allocation.py")
                )
                assert allowed, f"{path.relative_to(package)} changes Numba/LLVM state: {marker}"


def test_patches_are_applied_once_and_refuse_other_versions(monkeypatch):
    import pytest
    from numba.core import cgutils

    from dpex_kernels.compiler import patches

    patches.apply()
    installed = cgutils.pointer_add
    patches.apply()
    assert cgutils.pointer_add is installed is patches._pointer_add
    monkeypatch.setitem(patches.PINNED, "numba", ("0.99.0", "0.68."))
    with pytest.raises(ImportError, match="numba 0.68.x"):
        patches._check_versions()


@pytest.mark.parametrize(
    "front_end, owner, name",
    [("numba", compiler, "compile_extra"), ("direct", direct, "type_function")],
)
def test_kernels_compile_with_the_collector_paused_and_leave_it_as_it_was(
    monkeypatch, front_end, owner, name
):
    monkeypatch.setenv("DPEX_KERNELS_FRONT_END", front_end)
    seen = []
    original = getattr(owner, name)

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:

            @dk.kernel
            def twice(a, out):
                i = dk.get_global_id(0)
                out[i] = a[i] * 2

            a, out = dpnp.arange(4, dtype="f4"), dpnp.zeros(4, dtype="f4")
            twice[4](a, out).wait()
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
        np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(4) * 2)
    assert seen and not any(seen)


def test_the_collector_resumes_after_a_failed_compile_and_nested_pauses():
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
        raise RuntimeError("a compile failed")
    assert gc.isenabled()


def test_vectorize_results_are_numba_s_outside_offloaded_typing():
    """patches._dufunc_type_me changes a DUFunc's result type only while @dk.offload types a
    function with USM inputs: @njit code keeps NumPy arrays."""
    import numba
    import numpy as np

    from dpex_kernels.compiler import patches

    patches.apply()

    @numba.vectorize
    def twice(x):
        return 2 * x

    @numba.njit
    def use(a):
        return twice(a) + 1

    result = use(np.arange(4.0))
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, np.arange(4.0) * 2 + 1)
    (signature,) = use.signatures
    assert str(use.nopython_signatures[0].return_type) == "array(float64, 1d, C)"


def test_mask_reads_are_numpy_s_only_while_offload_types_a_function():
    """patches._getitem_generic types a USM array read through a boolean mask of its own rank
    as NumPy's 1-d result only while @dk.offload types a function; elsewhere, and for NumPy
    arrays and masks of another rank, Numba's typing (a rank of 2n - 1) stays."""
    from numba.core import types
    from numba.core.registry import cpu_target
    from numba.core.typing.arraydecl import GetItemBuffer

    from dpex_kernels.compiler import patches
    from dpex_kernels.types.usm_array_type import elementwise_on_device

    patches.apply()
    template = GetItemBuffer(cpu_target.typing_context)
    array = dk.usm_array(dk.float64, 2, "C")
    mask = dk.usm_array(dk.boolean, 2, "C")
    rows = dk.usm_array(dk.boolean, 1, "C")
    numpy_array, numpy_mask = types.float64[:, :], types.boolean[:, :]

    def ndim(*args) -> int:
        return template.generic(args, {}).return_type.ndim

    assert ndim(array, mask) == 3  # Numba's
    with elementwise_on_device():
        assert ndim(array, mask) == 1
        assert ndim(array, rows) == 2  # a mask over the rows: Numba's, which is NumPy's
        assert ndim(numpy_array, numpy_mask) == 3
    assert ndim(array, mask) == 3
