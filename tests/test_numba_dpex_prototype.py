"""dpex_kernels.numba_dpex (API.md §7): numba-dpex 0.23's kernel_api in Python, its import
paths and exceptions, and `import numba_dpex` through the opt-in alias.

kernel_api.call_kernel runs a kernel function in Python as numba-dpex 0.23's did (work-items
one after another, items made for them), so the same function gives NumPy's results there and
compiled; the alias is tested in fresh interpreters, with and without a numba_dpex of its own.
"""

from __future__ import annotations

import pickle
import sys
import textwrap

import dpnp
import numpy as np
import pytest
from conftest_kernels import assert_close, run_python, to_device
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk
import dpex_kernels.numba_dpex as dpex
from dpex_kernels.numba_dpex import kernel_api as kapi
from dpex_kernels.numba_dpex.core import exceptions

# --- one kernel function, in Python and compiled --------------------------------------------


def scaled_add(item: kapi.Item, a, b, c, scale):
    i = item.get_id(0)
    c[i] = a[i] * scale + b[i]


@given(
    values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=64),
    scale=st.integers(-5, 5),
)
def test_call_kernel_in_python_equals_numpy_and_the_compiled_kernel(values, scale):
    a = np.asarray(values, dtype="i8")
    b = a[::-1].copy()
    in_python = np.zeros_like(a)
    assert kapi.call_kernel(scaled_add, kapi.Range(len(a)), a, b, in_python, scale) is None
    np.testing.assert_array_equal(in_python, a * scale + b)
    compiled = dpnp.zeros(len(a), dtype="i8")
    dpex.call_kernel(
        dpex.kernel(scaled_add), kapi.Range(len(a)), to_device(a), to_device(b), compiled, scale
    )
    assert_close(compiled, in_python)


def ids(nd_item: kapi.NdItem, out):
    g = nd_item.get_group()
    i, j = nd_item.get_global_id(0), nd_item.get_global_id(1)
    out[0, i, j] = nd_item.get_global_linear_id()
    out[1, i, j] = nd_item.get_local_linear_id() * 100 + g.get_group_linear_id()
    out[2, i, j] = nd_item.get_local_id(0) * 10 + nd_item.get_local_id(1)
    out[3, i, j] = g.get_group_id(0) * 10 + g.get_group_id(1)
    out[4, i, j] = nd_item.get_global_linear_range() * 100 + nd_item.get_local_linear_range()
    out[5, i, j] = g.get_group_linear_range() * 100 + g.get_local_linear_range()
    out[6, i, j] = g.get_group_range(1) * 10 + g.get_local_range(1)
    out[7, i, j] = nd_item.get_global_range(1) * 10 + nd_item.get_local_range(1)
    out[8, i, j] = nd_item.dimensions * 10 + g.dimensions
    out[9, i, j] = 1 if g.leader else 0


@pytest.mark.parametrize(("global_size", "local_size"), [((4, 6), (2, 3)), ((6, 2), (1, 2))])
def test_nd_items_in_python_equal_the_compiled_kernels(global_size, local_size):
    in_python = np.zeros((10, *global_size), dtype=np.int64)
    kapi.call_kernel(ids, kapi.NdRange(global_size, local_size), in_python)
    compiled = dpnp.zeros(in_python.shape, dtype="i8")
    dpex.call_kernel(dpex.kernel(ids), dpex.NdRange(global_size, local_size), compiled)
    assert_close(compiled, in_python)
    i, j = np.indices(global_size)
    np.testing.assert_array_equal(in_python[0], i * global_size[1] + j)
    np.testing.assert_array_equal(in_python[9], (i % local_size[0] == 0) & (j % local_size[1] == 0))


def item_queries(item: kapi.Item, out):
    k = item.get_linear_id()
    out[k, 0] = item.get_id(item.dimensions - 1)
    out[k, 1] = item.get_range(0)
    out[k, 2] = item.get_linear_range()


def test_items_in_python():
    out = np.zeros((12, 3), dtype=np.int64)
    kapi.call_kernel(item_queries, kapi.Range(3, 4), out)
    np.testing.assert_array_equal(out[:, 0], np.tile(np.arange(4), 3))
    np.testing.assert_array_equal(out[:, 1:], [[3, 12]] * 12)


def atomics(item: kapi.Item, a, totals, expected, won):
    i = item.get_id(0)
    kapi.AtomicRef(totals, 0).fetch_add(a[i])
    kapi.AtomicRef(totals, 1).fetch_max(a[i])
    kapi.AtomicRef(totals, 2).fetch_xor(a[i])
    won[i] = kapi.AtomicRef(totals, 3).compare_exchange(expected, a[i], i)
    kapi.atomic_fence(kapi.MemoryOrder.SEQ_CST, kapi.MemoryScope.DEVICE)


@given(values=st.lists(st.integers(0, 50), min_size=1, max_size=40), first=st.integers(0, 50))
def test_atomics_in_python_as_numba_dpex_ran_them(values, first):
    a = np.asarray(values, dtype=np.int64)
    totals = np.array([0, -1, 0, first], dtype=np.int64)
    guesses = np.full(len(a), first, dtype=np.int64)
    won = np.zeros(len(a), dtype=bool)
    kapi.call_kernel(atomics, kapi.Range(len(a)), a, totals, guesses, won)
    assert totals[:3].tolist() == [a.sum(), a.max(), np.bitwise_xor.reduce(a)]
    # work-items one after another: each compares the slot with `first`
    slot, found = first, []
    for value in a:
        found.append(slot)
        slot = value if slot == first else slot
    found = np.asarray(found)
    np.testing.assert_array_equal(won, found == first)
    np.testing.assert_array_equal(guesses, found)
    assert totals[3] == slot


def test_atomic_ref_in_python():
    values = np.array([5, 7], dtype=np.int32)
    ref = kapi.AtomicRef(values, 1, kapi.MemoryOrder.ACQ_REL, kapi.MemoryScope.WORK_GROUP)
    assert (ref.memory_order, ref.memory_scope, ref.address_space) == (
        dk.MemoryOrder.ACQ_REL,
        dk.MemoryScope.WORK_GROUP,
        None,
    )
    assert ref.fetch_sub(2) == 7 and ref.ref == 5
    assert ref.fetch_min(3) == 5 and ref.fetch_and(6) == 3 and ref.fetch_or(8) == 2
    assert ref.exchange(1) == 10 and ref.load() == 1
    ref.store(4)
    assert values.tolist() == [5, 4]
    usm = dpnp.zeros(2, dtype="i4")
    assert int(kapi.AtomicRef(usm, 0).fetch_add(3)) == 0 and int(usm[0]) == 3
    with pytest.raises(TypeError, match="element of an array"):
        kapi.AtomicRef(3, 0)


def private_and_local(nd_item: kapi.NdItem, out, slm):
    scratch = kapi.PrivateArray(2, np.int64, fill_zeros=True)
    scratch[1] = nd_item.get_global_id(0)
    slm[nd_item.get_local_id(0)] = scratch[0] + scratch[1]
    out[nd_item.get_global_id(0)] = slm[nd_item.get_local_id(0)] * 2


def test_private_arrays_and_local_accessors_in_python():
    out = np.zeros(8, dtype=np.int64)
    kapi.call_kernel(private_and_local, kapi.NdRange((8,), (4,)), out, kapi.LocalAccessor(4, "i8"))
    np.testing.assert_array_equal(out, np.arange(8) * 2)


def test_what_python_cannot_run_raises_as_in_numba_dpex():
    def waits(nd_item, out):
        kapi.group_barrier(nd_item.get_group())

    with pytest.raises(NotImplementedError, match="dpex.call_kernel"):
        kapi.call_kernel(waits, kapi.NdRange((4,), (4,)), np.zeros(4))
    with pytest.raises(TypeError, match="LocalAccessor.*NdRange"):
        kapi.call_kernel(private_and_local, kapi.Range(4), np.zeros(4), kapi.LocalAccessor(4, "i8"))
    with pytest.raises(ValueError, match="'scaled_add' takes 5 parameter"):
        kapi.call_kernel(scaled_add, kapi.Range(4), np.zeros(4))
    with pytest.raises(ValueError, match="Range or NdRange"):
        kapi.call_kernel(scaled_add, 4, *[np.zeros(4)] * 3, 1)
    with pytest.raises(ValueError, match="runs a function"):
        kapi.call_kernel(42, kapi.Range(4))


def test_a_dpex_kernel_runs_its_python_function_in_call_kernel():
    c = np.zeros(4)
    kapi.call_kernel(dpex.kernel(scaled_add), kapi.Range(4), np.ones(4), np.ones(4), c, 2.0)
    np.testing.assert_array_equal(c, np.full(4, 3.0))


# --- the kernel_api objects -----------------------------------------------------------------


def test_ranges():
    r = kapi.Range(2, 3, 4)
    assert r == (2, 3, 4) and r.ndim == 3 and r.size() == 24 and r.get(1) == 3
    assert (r.dim0, r.dim1, r.dim2) == (2, 3, 4)
    assert (kapi.Range(5).dim1, kapi.Range(5).dim2, kapi.Range(5, 6).dim2) == (-1, -1, -1)
    assert dpex.Range is kapi.Range and dpex.NdRange is kapi.NdRange
    nd = kapi.NdRange((8, 4), kapi.Range(2, 2))
    assert nd.global_range == (8, 4) and isinstance(nd.get_global_range(), kapi.Range)
    assert nd.local_range == nd.get_local_range() == (2, 2)
    assert str(nd) == repr(nd) == "((8, 4), (2, 2))"
    assert nd == kapi.NdRange(kapi.Range(8, 4), [2, 2]) and nd != kapi.NdRange((8, 4), (4, 4))
    for value in (r, nd):
        clone = pickle.loads(pickle.dumps(value))
        assert clone == value and type(clone) is type(value)
    with pytest.raises(TypeError):
        kapi.Range(1.5)
    with pytest.raises(exceptions.UnmatchedNumberOfRangeDimsError):
        kapi.NdRange((8, 4), (2,))
    with pytest.raises(exceptions.UnsupportedGroupWorkItemSizeError, match="dimension 1"):
        kapi.NdRange((8, 6), (2, 4))
    with pytest.raises(dk.InvalidRangeError):  # numba-dpex's range errors are dk's
        kapi.NdRange((8,), (3,))
    with pytest.raises(TypeError, match="global_size"):
        kapi.NdRange(8, 4)


def test_local_accessor_and_private_array_objects():
    accessor = kapi.LocalAccessor(np.array([4, 2]), dtype=np.float32)
    assert accessor.shape == (4, 2) and accessor.dtype == np.float32
    assert kapi.LocalAccessor(8, dpnp.arange(3).dtype).shape == (8,)
    with pytest.raises(NotImplementedError):
        accessor[0, 0]
    with pytest.raises(NotImplementedError):
        accessor[0, 0] = 1.0
    for shape in (0, (1, 2, 3, 4), 2.5, (2, -1)):
        with pytest.raises(TypeError, match="shape"):
            kapi.LocalAccessor(shape, np.float32)
    for dtype in (np.complex64, bool, "U3"):
        with pytest.raises(TypeError, match="dtype"):
            kapi.LocalAccessor(4, dtype)
    zeros = kapi.PrivateArray((2, 2), np.int32, fill_zeros=True)
    zeros[1, 1] = 7
    assert zeros[0, 0] == 0 and zeros[1, 1] == 7


def test_memory_enums_are_dks():
    assert kapi.MemoryOrder is dk.MemoryOrder and kapi.MemoryScope is dk.MemoryScope
    assert kapi.AddressSpace is dk.AddressSpace
    assert [m.value for m in kapi.MemoryOrder] == [0, 1, 3, 4, 5]
    assert kapi.AddressSpace.GLOBAL == 1 and kapi.AddressSpace.LOCAL == 3


def test_kernel_api_names():
    names = {
        "AddressSpace",
        "AtomicRef",
        "Group",
        "Item",
        "LocalAccessor",
        "MemoryOrder",
        "MemoryScope",
        "NdItem",
        "NdRange",
        "PrivateArray",
        "Range",
        "atomic_fence",
        "call_kernel",
        "group_barrier",
    }
    assert set(kapi.__all__) == names
    assert {"call_kernel", "call_kernel_async", "device_func", "kernel", "kernel_api"} <= set(
        dpex.__all__
    )
    assert dpex.float_ is dk.float32  # numba-dpex's float_ is float32


# --- import paths and exceptions ------------------------------------------------------------


def test_numba_dpex_import_paths():
    from dpex_kernels.numba_dpex.core import decorators, kernel_launcher, types
    from dpex_kernels.numba_dpex.core.kernel_interface import indexers
    from dpex_kernels.numba_dpex.core.types.kernel_api import index_space_ids

    assert indexers.Range is kapi.Range and indexers.NdRange is kapi.NdRange
    assert types.USMNdArray is dpex.usm_ndarray and types.float32 is dpex.f4 is dk.float32
    assert kernel_launcher.call_kernel is dpex.call_kernel
    assert kernel_launcher.call_kernel_async is dpex.call_kernel_async
    assert decorators.kernel is dpex.kernel and decorators.device_func is dpex.device_func
    assert str(index_space_ids.ItemType(2)) == "Item<2>"
    assert index_space_ids.NdItemType(3).ndim == 3
    with pytest.raises(Exception, match="1, 2 or 3"):
        index_space_ids.GroupType(4)


_EXCEPTIONS = {
    "KernelHasReturnValueError": (("k", "int64"), TypeError),
    "InvalidKernelLaunchArgsError": (("k",), dk.InvalidRangeError),
    "UnknownGlobalRangeError": (("k",), dk.InvalidRangeError),
    "IllegalRangeValueError": (("k",), dk.InvalidRangeError),
    "UnsupportedNumberOfRangeDimsError": (("k", 4, 3), dk.InvalidRangeError),
    "UnmatchedNumberOfRangeDimsError": (("k", 2, 1), dk.InvalidRangeError),
    "UnsupportedWorkItemSizeError": (("k", 0, 9999, 8192), dk.InvalidRangeError),
    "UnsupportedGroupWorkItemSizeError": (("k", 0, 10, 3), dk.InvalidRangeError),
    "ExecutionQueueInferenceError": (("k",), dk.ExecutionQueueError),
    "UnsupportedBackendError": (("k", "cuda", ["opencl", "level_zero"]), Exception),
    "UncompiledKernelError": (("k",), Exception),
    "UnreachableError": ((), Exception),
    "UnsupportedKernelArgumentError": (("list", [1], "k"), TypeError),
    "SUAIProtocolError": (("k", [1]), TypeError),
    "UnsupportedCompilationModeError": ((), Exception),
    "InvalidKernelSpecializationError": (("k", "(float32[::1],)", [0]), TypeError),
    "MissingSpecializationError": (("k", "(float64,)"), dk.KernelSignatureError),
    "UnsupportedParforError": (("a loop",), dk.KernelCompileError),
    "IllegalIntEnumLiteralValueError": ((), Exception),
    "InternalError": (("it broke",), Exception),
}


@pytest.mark.parametrize("name", sorted(_EXCEPTIONS))
def test_numba_dpex_exceptions(name):
    args, base = _EXCEPTIONS[name]
    error_class = getattr(exceptions, name)
    kwargs = {"usmarray_argnum_list": [1, 2]} if name == "ExecutionQueueInferenceError" else {}
    error = error_class(*args, **kwargs)
    assert isinstance(error, base)
    assert str(error) and ("'k'" in str(error) or "k" not in args)


def test_every_numba_dpex_exception_is_there():
    assert set(exceptions.__all__) == set(_EXCEPTIONS)


def test_numpy_array_signature_is_invalid_specialization():
    from numba import float32

    with pytest.raises(exceptions.InvalidKernelSpecializationError, match="usm_ndarray"):
        dpex.kernel((float32[::1], float32[::1]))(lambda a, b: None)


# --- import numba_dpex: the opt-in alias ----------------------------------------------------

_INSTALL = textwrap.dedent(
    """
    import sys
    import dpex_kernels.numba_dpex
    assert "numba_dpex" not in sys.modules
    assert dpex_kernels.numba_dpex.install_alias() is True
    assert dpex_kernels.numba_dpex.install_alias() is True  # once in place, it stays
    """
)
#: A numba-dpex 0.23 program, unchanged.
_NUMBA_DPEX_PROGRAM = textwrap.dedent(
    """
    import sys

    import dpnp
    import numpy as np
    import numba_dpex as dpex
    import numba_dpex.kernel_api
    from numba_dpex import kernel_api as kapi
    from numba_dpex.core.exceptions import MissingSpecializationError
    from numba_dpex.core.kernel_interface.indexers import NdRange, Range

    assert numba_dpex.kernel_api is kapi and Range is kapi.Range


    @dpex.kernel
    def group_sums(nditem: kapi.NdItem, a, partial):
        group = nditem.get_group()
        kapi.AtomicRef(partial, group.get_group_id(0)).fetch_add(a[nditem.get_global_id(0)])
        kapi.group_barrier(group)
        if group.leader:
            partial[group.get_group_id(0)] *= 2


    values = np.arange(64, dtype=np.int64) % 7
    partial = dpnp.zeros(8, dtype="i8")
    dpex.call_kernel(group_sums, NdRange(Range(64), Range(8)), dpnp.asarray(values), partial)
    assert (dpnp.asnumpy(partial) == values.reshape(8, 8).sum(axis=1) * 2).all()
    print("aliased", sys.argv[1:])
    """
)


def test_import_numba_dpex_through_the_alias():
    same_modules = (
        "\nassert dpex is dpex_kernels.numba_dpex and kapi is dpex_kernels.numba_dpex.kernel_api"
    )
    done = run_python(_INSTALL + _NUMBA_DPEX_PROGRAM + same_modules)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "aliased []" in done.stdout


def test_python_m_runs_a_numba_dpex_script_unchanged(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(_NUMBA_DPEX_PROGRAM)
    done = run_python(
        f"import runpy, sys; sys.argv = ['dpex_kernels.numba_dpex', {str(script)!r}, 'x'];"
        "runpy.run_module('dpex_kernels.numba_dpex', run_name='__main__')"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "aliased ['x']" in done.stdout


def test_an_installed_numba_dpex_wins(tmp_path):
    fake = tmp_path / "numba_dpex"
    fake.mkdir()
    (fake / "__init__.py").write_text("INSTALLED = True\n")
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import dpex_kernels.numba_dpex as compat
        assert compat.install_alias() is False
        import numba_dpex
        assert numba_dpex.INSTALLED and numba_dpex is not compat
        assert "numba_dpex.kernel_api" not in sys.modules
        """
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr[-3000:]
    imported_first = run_python(
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import numba_dpex\n"
        "import dpex_kernels.numba_dpex as compat\n"
        "assert compat.install_alias() is False and numba_dpex.INSTALLED"
    )
    assert imported_first.returncode == 0, imported_first.stderr[-3000:]


def test_without_the_alias_numba_dpex_is_not_importable():
    assert "numba_dpex" not in sys.modules or sys.modules["numba_dpex"] is not dpex
    done = run_python("import dpex_kernels.numba_dpex\nimport numba_dpex")
    assert done.returncode != 0 and "No module named 'numba_dpex'" in done.stderr


_DK_KERNEL = """
import dpnp
import dpex_kernels as dk


@dk.kernel
def text(a):
    print("only text")
    a[0] = 1


a = dpnp.zeros(1)
text[1](a).wait()
assert dpnp.asnumpy(a)[0] == 1
"""
_COMPAT_KERNEL = """
import dpnp
import dpex_kernels.numba_dpex as dpex
from dpex_kernels.numba_dpex import kernel_api as kapi


@dpex.kernel
def leaders(nd_item: kapi.NdItem, out):
    g = nd_item.get_group()
    if g.leader:
        kapi.AtomicRef(out, 0).fetch_add(1)


out = dpnp.zeros(1, dtype="i8")
dpex.call_kernel(leaders, kapi.NdRange((16,), (4,)), out)
assert dpnp.asnumpy(out)[0] == 4
"""


@pytest.mark.parametrize("first", ["numba_dpex", "dk"])
def test_importing_numba_dpex_before_or_after_a_compile_changes_no_kernel(tmp_path, first):
    # kernel_forms registers its types' data models whether or not dk's target context
    # exists yet, and never makes it early (which would leave string models out of it).
    script = tmp_path / "order.py"
    if first == "numba_dpex":
        code = "import dpex_kernels.numba_dpex\n" + _DK_KERNEL + _COMPAT_KERNEL
    else:
        code = _DK_KERNEL + _COMPAT_KERNEL
    script.write_text(code)
    done = run_python(f"exec(open({str(script)!r}).read())")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "only text" in done.stdout
