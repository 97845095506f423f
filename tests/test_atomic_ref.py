"""dk.AtomicRef and dk.atomic_fence (API.md §3, SYCL 2020 forms): every method on every atomic
dtype on global and local arrays against NumPy, every memory order and scope the device takes
(and a KernelCompileError naming those it does not), orders a method cannot take, arrays it
cannot refer to, and bounds checks in debug mode."""

from __future__ import annotations

import itertools
from dataclasses import replace

import dpnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpex_kernels as dk
from dpex_kernels.artifacts.target import Target
from dpex_kernels.compiler.compile import compile_kernel
from dpex_kernels.compiler.kernel_api.items import ITEM

CPU = "opencl:cpu:0"
DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")
N, LOCAL = 32, 16  # two work-groups
#: The methods each test kernel calls, in the order of the slots they update.
FETCHES = ("fetch_add", "fetch_sub", "fetch_min", "fetch_max", "exchange")
BITWISE = ("fetch_and", "fetch_or", "fetch_xor")


def _kernel_source(dtype: str, space: str) -> str:
    """A kernel in which every work-item calls each method once on slot k of `acc` (global) or
    of its work-group's local copy of `acc`, keeping the old values in `olds[k]`."""
    methods = FETCHES + (BITWISE if dtype.startswith(("int", "uint")) else ())
    lines = ["def atomics(it, values, acc, olds):", "    g = it.get_global_linear_id()"]
    target = "acc"
    if space == "local":
        target = "slots"
        lines += [
            f"    slots = dk.local.array({len(methods)}, dk.{dtype})",
            "    if it.get_local_linear_id() == 0:",
            f"        for k in range({len(methods)}):",
            "            slots[k] = acc[it.get_group().get_group_linear_id(), k]",
            "    dk.group_barrier(it.get_group())",
        ]
    for slot, method in enumerate(methods):
        lines.append(f"    olds[{slot}, g] = dk.AtomicRef({target}, {slot}).{method}(values[g])")
    if space == "local":
        lines += [
            "    dk.group_barrier(it.get_group())",
            "    if it.get_local_linear_id() == 0:",
            f"        for k in range({len(methods)}):",
            "            acc[it.get_group().get_group_linear_id(), k] = slots[k]",
        ]
    return "\n".join(lines) + "\n"


_KERNELS: dict = {}


def _atomics_kernel(dtype: str, space: str):
    if (dtype, space) not in _KERNELS:
        namespace = {"dk": dk}
        source = _kernel_source(dtype, space)
        exec(compile(source, f"<atomics {dtype} {space}>", "exec"), namespace)  # noqa: S102
        _KERNELS[dtype, space] = dk.kernel(namespace["atomics"])
    return _KERNELS[dtype, space]


_UPDATES = {
    "fetch_add": np.add,
    "fetch_sub": np.subtract,
    "fetch_min": np.minimum,
    "fetch_max": np.maximum,
    "exchange": lambda old, value: value,
    "fetch_and": np.bitwise_and,
    "fetch_or": np.bitwise_or,
    "fetch_xor": np.bitwise_xor,
}


def _check_one_location(method: str, start, values, olds, final) -> None:
    """The updates of one location happened one at a time, none lost: then the old values
    and the final value are the values it held, each the update of the one before, so the
    old values and the final one are, as a multiset, the start and the updated values."""
    with np.errstate(over="ignore"):
        updated = _UPDATES[method](olds, values).astype(values.dtype)
    held = np.sort(np.append(olds, final))
    np.testing.assert_array_equal(held, np.sort(np.append(updated, start)), err_msg=method)


def _values(dtype: str):
    """Values whose sums are exact (floats: small integers) and wrap as NumPy's (integers)."""
    if dtype.startswith("float"):
        elements = st.integers(-100, 100).map(float)
    else:
        info = np.iinfo(dtype)
        elements = st.integers(int(info.min), int(info.max))
    return hnp.arrays(np.dtype(dtype), N, elements=elements)


def _run(dtype: str, space: str, values: np.ndarray, start: np.ndarray):
    methods = FETCHES + (BITWISE if dtype.startswith(("int", "uint")) else ())
    groups = N // LOCAL
    acc = np.tile(start[: len(methods)], (groups, 1)) if space == "local" else start[: len(methods)]
    acc_device = dpnp.asarray(acc)
    olds = dpnp.zeros((len(methods), N), dtype=dtype)
    kernel = _atomics_kernel(dtype, space)
    kernel[dk.NdRange(N, LOCAL)](dpnp.asarray(values), acc_device, olds).wait()
    return methods, dpnp.asnumpy(acc_device), dpnp.asnumpy(olds)


def _every_method_matches_numpy(dtype: str, space: str, values, start) -> None:
    methods, acc, olds = _run(dtype, space, values, start)
    # Per location: all work-items (global) or those of one work-group (local).
    blocks = [slice(None)] if space == "global" else [slice(0, LOCAL), slice(LOCAL, N)]
    for slot, method in enumerate(methods):
        for group, block in enumerate(blocks):
            final = acc[slot] if space == "global" else acc[group, slot]
            mine = values[block]
            _check_one_location(method, start[slot], mine, olds[slot, block], final)
            with np.errstate(over="ignore"):
                if method in ("fetch_add", "fetch_sub"):
                    total = mine.sum(dtype=dtype)
                    want = start[slot] + total if method == "fetch_add" else start[slot] - total
                    assert final == np.array(want).astype(dtype), method
                elif method != "exchange":
                    want = _UPDATES[method].reduce(np.append(mine, start[slot]))
                    assert final == want, method


@pytest.mark.parametrize("space", ["global", "local"])
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_every_method_on_every_dtype_matches_numpy(dtype, space, data):
    values = data.draw(_values(dtype))
    start = data.draw(_values(dtype))
    _every_method_matches_numpy(dtype, space, values, start)


@pytest.mark.parametrize("dtype", DTYPES)
def test_load_and_store_copy_values(dtype):
    @dk.kernel
    def copy(it, source, out):
        g = it.get_id(0)
        dk.AtomicRef(out, (g, 0)).store(dk.AtomicRef(source, g).load())
        acquire = dk.AtomicRef(source, g).load(memory_order=dk.MemoryOrder.ACQUIRE)
        dk.AtomicRef(out, (g, 1)).store(acquire, memory_order=dk.MemoryOrder.RELEASE)
        ordered = dk.AtomicRef(source, g, memory_order=dk.MemoryOrder.SEQ_CST)
        dk.AtomicRef(out, (g, 2), memory_order=dk.MemoryOrder.SEQ_CST).store(ordered.load())

    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    host = np.random.default_rng(1).uniform(-1e6, 1e6, 64)
    host = np.clip(host, info.min, info.max).astype(dtype)
    host[:2] = info.min, info.max
    out = dpnp.zeros((64, 3), dtype=dtype)
    copy[dk.Range(64)](dpnp.asarray(host), out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.repeat(host[:, None], 3, axis=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_compare_exchange_loops_add_every_value_once(dtype):
    @dk.kernel
    def add_by_cas(it, values, total, seen):
        g = it.get_id(0)
        ref = dk.AtomicRef(total, 0)
        old = ref.load()
        while True:
            found = ref.compare_exchange(old, old + values[g])
            if found == old:
                break
            old = found
        seen[g] = old

    values = np.random.default_rng(2).integers(1, 20, 256).astype(dtype)
    total = dpnp.zeros(1, dtype=dtype)
    seen = dpnp.zeros(256, dtype=dtype)
    add_by_cas[dk.Range(256)](dpnp.asarray(values), total, seen).wait()
    final = dpnp.asnumpy(total)[0]
    assert final == values.sum(dtype=dtype)
    start = np.zeros(1, dtype)[0]
    _check_one_location("fetch_add", start, values, dpnp.asnumpy(seen), final)


def test_compare_exchange_returns_the_old_value_and_only_one_claim_wins():
    @dk.kernel
    def claim(it, slot, olds):
        g = it.get_id(0)
        olds[g] = dk.AtomicRef(slot, 0).compare_exchange(-1, g)

    slot = dpnp.full(1, -1, dtype="i8")
    olds = dpnp.zeros(100, dtype="i8")
    claim[dk.Range(100)](slot, olds).wait()
    winner, olds = dpnp.asnumpy(slot)[0], dpnp.asnumpy(olds)
    assert 0 <= winner < 100 and olds[winner] == -1
    assert (np.delete(olds, winner) == winner).all()


def test_tuple_indices_and_negative_indices_refer_to_the_element_numpy_would():
    @dk.kernel
    def counts(it, grid):
        i = it.get_id(0)
        dk.AtomicRef(grid, (i % 3, -1)).fetch_add(1)
        dk.AtomicRef(grid, (-1, i % 4)).fetch_add(10)

    grid = dpnp.zeros((3, 4), dtype="i4")
    counts[dk.Range(24)](grid).wait()
    expected = np.zeros((3, 4), "i4")
    for i in range(24):
        expected[i % 3, -1] += 1
        expected[-1, i % 4] += 10
    np.testing.assert_array_equal(dpnp.asnumpy(grid), expected)


# --- memory orders and scopes -----------------------------------------------------------------


def _order_scope_kernel(order: str, scope: str):
    """Every kind of method with `order` and `scope`, on a global array and on a LocalAccessor
    (loads and stores with the halves of `order` they take)."""
    ref = f"memory_order=dk.MemoryOrder.{order}, memory_scope=dk.MemoryScope.{scope}"
    source = f"""
def ordered(it, a, tile):
    dk.AtomicRef(a, 0, {ref}).fetch_add(1)
    if it.get_local_id(0) == 0:
        tile[0] = 0
    dk.group_barrier(it.get_group())
    dk.AtomicRef(tile, 0, {ref}).fetch_add(2)
    dk.group_barrier(it.get_group())
    if it.get_local_id(0) == 0:
        dk.AtomicRef(a, 1, {ref}).fetch_add(tile[0])
        dk.AtomicRef(a, 2, {ref}).compare_exchange(0, 5)
        dk.AtomicRef(a, 3, {ref}).exchange(7)
    if it.get_global_id(0) == 0:
        dk.AtomicRef(a, 4, {ref}).store(dk.AtomicRef(a, 4, {ref}).load() + 1)
"""
    namespace = {"dk": dk}
    exec(compile(source, f"<ordered {order} {scope}>", "exec"), namespace)  # noqa: S102
    return dk.kernel(namespace["ordered"])


@pytest.mark.parametrize(
    ("order", "scope"),
    list(itertools.product([o.name for o in dk.MemoryOrder], [s.name for s in dk.MemoryScope])),
)
def test_every_order_and_scope_computes_or_is_refused_by_name(order, scope):
    target = Target.of(CPU)
    assert target.atomic_memory is not None  # an OpenCL 3.0 device reports what it takes
    kernel = _order_scope_kernel(order, scope)
    a = dpnp.zeros(5, dtype="i8")
    launch = lambda: kernel[dk.NdRange(64, 16)](a, dk.LocalAccessor(1, dk.int64))  # noqa: E731
    if scope not in target.atomic_memory or order not in target.atomic_memory:
        refused = scope if scope not in target.atomic_memory else order
        with pytest.raises(dk.KernelCompileError, match=rf"\.{refused}: device {CPU} does not"):
            launch()
        return
    launch().wait()
    np.testing.assert_array_equal(dpnp.asnumpy(a), [64, 4 * 16 * 2, 5, 7, 1])


def test_orders_and_scopes_the_device_takes_are_read_from_opencl():
    target = Target.of(CPU)
    # Every OpenCL 3.0 device takes relaxed atomics at work-group scope (OpenCL 3.0 §4.2).
    assert {"RELAXED", "WORK_GROUP", "SUB_GROUP"} <= target.atomic_memory
    assert {"RELAXED", "WORK_GROUP"} <= target.atomic_fence
    names = {m.name for m in dk.MemoryOrder} | {s.name for s in dk.MemoryScope}
    assert target.atomic_memory <= names and target.atomic_fence <= names


def _device_lacking(**what) -> Target:
    return replace(Target.of(CPU), **{k: frozenset(v) for k, v in what.items()})


def _compile_for(target: Target, function) -> None:
    compile_kernel(function, (ITEM, dk.typeof(dpnp.zeros(4, dtype="i8"))), target=target)


def test_an_order_the_device_lacks_is_a_compile_error_naming_it():
    def seq_cst(it, a):
        dk.AtomicRef(a, 0, memory_order=dk.MemoryOrder.SEQ_CST).fetch_add(1)

    lacking = _device_lacking(atomic_memory={"RELAXED", "ACQ_REL", "WORK_GROUP", "DEVICE"})
    with pytest.raises(dk.KernelCompileError) as info:
        _compile_for(lacking, seq_cst)
    message = str(info.value)
    assert "seq_cst'" in message and "dk.MemoryOrder.SEQ_CST" in message
    assert "does not support that order in atomic operations" in message
    assert "dk.MemoryOrder.RELAXED, dk.MemoryOrder.ACQ_REL" in message  # what it does take
    assert "test_atomic_ref.py" in message  # the line
    _compile_for(replace(lacking, atomic_memory=None), seq_cst)  # not known: not refused


def test_a_scope_the_device_lacks_is_a_compile_error_naming_it():
    def system(it, a):
        dk.AtomicRef(a, 0, memory_scope=dk.MemoryScope.SYSTEM).load()

    lacking = _device_lacking(atomic_memory={"RELAXED", "WORK_GROUP", "DEVICE"})
    with pytest.raises(dk.KernelCompileError, match=r"load with dk.MemoryScope.SYSTEM.*scope in"):
        _compile_for(lacking, system)


@pytest.mark.parametrize(
    ("call", "refused"),
    [
        ("dk.atomic_fence(dk.MemoryOrder.SEQ_CST, dk.MemoryScope.WORK_GROUP)", "SEQ_CST"),
        ("dk.atomic_fence(dk.MemoryOrder.ACQUIRE, dk.MemoryScope.DEVICE)", "DEVICE"),
        ("dk.group_barrier(it.get_group(), dk.MemoryScope.DEVICE)", "DEVICE"),
    ],
)
def test_a_fence_the_device_lacks_is_a_compile_error_naming_it(call, refused):
    namespace = {"dk": dk}
    exec(f"def fenced(it, a):\n    a[it.get_global_id(0)] = 1\n    {call}\n", namespace)  # noqa: S102
    lacking = _device_lacking(
        atomic_fence={"RELAXED", "ACQUIRE", "RELEASE", "ACQ_REL", "WORK_GROUP", "SUB_GROUP"}
    )
    with pytest.raises(dk.KernelCompileError, match=rf"{refused}: device .* in fences"):
        _compile_for(lacking, namespace["fenced"])


@pytest.mark.parametrize(
    ("method", "order"),
    [("load", "RELEASE"), ("load", "ACQ_REL"), ("store", "ACQUIRE"), ("store", "ACQ_REL")],
)
def test_an_order_a_method_cannot_take_is_a_compile_error(method, order):
    call = "load(" if method == "load" else "store(1, "
    namespace = {"dk": dk}
    source = (
        f"def bad_order(it, a):\n"
        f"    a[1] = it.get_id(0)\n"
        f"    dk.AtomicRef(a, 0).{call}memory_order=dk.MemoryOrder.{order})\n"
    )
    exec(compile(source, "<bad_order>", "exec"), namespace)  # noqa: S102
    kernel = dk.kernel(namespace["bad_order"])
    with pytest.raises(
        dk.KernelCompileError, match=rf"AtomicRef.{method} with memory order {order}"
    ) as info:
        kernel[dk.Range(4)](dpnp.zeros(2, dtype="i8"))
    assert "'bad_order'" in str(info.value) and "<bad_order>:3" in str(info.value)


def test_loads_and_stores_of_a_reference_take_its_order_s_read_and_write_halves():
    @dk.kernel
    def halves(it, a):
        release = dk.AtomicRef(a, 0, memory_order=dk.MemoryOrder.RELEASE)
        acquire = dk.AtomicRef(a, 1, memory_order=dk.MemoryOrder.ACQUIRE)
        both = dk.AtomicRef(a, 2, memory_order=dk.MemoryOrder.ACQ_REL)
        if it.get_id(0) == 0:
            release.store(release.load() + 1)  # a relaxed load
            acquire.store(acquire.load() + 2)  # a relaxed store
            both.store(both.load() + 3)  # an acquire load, a release store

    a = dpnp.zeros(3, dtype="i8")
    halves[dk.Range(4)](a).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(a), [1, 2, 3])


# --- what an AtomicRef cannot refer to --------------------------------------------------------


def test_an_atomic_ref_of_a_private_array_is_a_compile_error():
    @dk.kernel
    def private(it, a):
        p = dk.private.array(4, dk.int64)
        p[0] = it.get_id(0)
        a[0] = dk.AtomicRef(p, 0).fetch_add(1)

    with pytest.raises(dk.KernelCompileError, match="private array is one work-item's own") as info:
        private[dk.Range(4)](dpnp.zeros(1, dtype="i8"))
    assert "private'" in str(info.value) and "dk.AtomicRef(p, 0)" in str(info.value)


def test_an_atomic_ref_of_a_read_only_array_is_refused():
    readonly = dk.usm_array(dk.int64, 1, readonly=True, device="opencl:cpu")
    with pytest.raises(dk.KernelCompileError, match="AtomicRef of a read-only array"):

        @dk.kernel(dk.void(readonly))
        def declared(it, a):
            dk.AtomicRef(a, it.get_id(0)).fetch_add(1)

    @dk.kernel
    def lazy(it, a):
        dk.AtomicRef(a, it.get_id(0)).fetch_add(1)

    frozen = dpnp.zeros(4, dtype="i8")
    frozen.flags.writable = False
    with pytest.raises(dk.KernelSignatureError, match="writes argument 0 'a', a read-only"):
        lazy[dk.Range(4)](frozen)


@pytest.mark.parametrize("method", BITWISE)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bitwise_methods_on_floats_are_a_compile_error(method, dtype):
    namespace = {"dk": dk}
    exec(f"def bits(it, a):\n    dk.AtomicRef(a, it.get_id(0)).{method}(1)\n", namespace)  # noqa: S102
    with pytest.raises(
        dk.KernelCompileError, match=rf"AtomicRef.{method} takes integers; got an array of {dtype}"
    ):
        dk.kernel(namespace["bits"])[dk.Range(4)](dpnp.zeros(4, dtype=dtype))


# --- debug mode -------------------------------------------------------------------------------


_BOUNDS_KERNELS = {
    "global": "    dk.AtomicRef(a, i + shift).fetch_add(1)\n",
    "local": (
        "    mine = dk.local.array(8, dk.int64)\n"
        "    mine[i] = 0\n"
        "    dk.group_barrier(it.get_group())\n"
        "    dk.AtomicRef(mine, i + shift).fetch_add(1)\n"
        "    dk.group_barrier(it.get_group())\n"
        "    a[i] = mine[i]\n"
    ),
    "accessor": (
        "    tile[i] = 0\n"
        "    dk.group_barrier(it.get_group())\n"
        "    dk.AtomicRef(tile, i + shift).fetch_add(1)\n"
        "    dk.group_barrier(it.get_group())\n"
        "    a[i] = tile[i]\n"
    ),
}


@pytest.mark.parametrize(
    ("space", "name"), [("global", "a"), ("local", "mine"), ("accessor", "tile")]
)
def test_debug_mode_checks_the_bounds_of_atomic_refs(space, name):
    source = (
        f"def counts(it, a, tile, shift):\n    i = it.get_local_id(0)\n{_BOUNDS_KERNELS[space]}"
    )
    namespace = {"dk": dk}
    exec(compile(source, "<counts>", "exec"), namespace)  # noqa: S102
    kernel = dk.kernel(namespace["counts"], debug=True)
    tile = dk.LocalAccessor(8, dk.int64)
    with pytest.raises(
        dk.KernelBoundsError, match=rf"index 8 is out of bounds for axis 0 of '{name}' with size 8"
    ):
        kernel[dk.NdRange(8, 8)](dpnp.zeros(8, dtype="i8"), tile, 1)
    a = dpnp.zeros(8, dtype="i8")
    kernel[dk.NdRange(8, 8)](a, tile, 0).wait()  # in bounds: it runs
    assert dpnp.asnumpy(a).tolist() == [1] * 8


# --- fences and acquire/release between work-groups -------------------------------------------


@pytest.mark.parametrize("order", [o.name for o in dk.MemoryOrder])
@pytest.mark.parametrize("scope", ["WORK_GROUP", "DEVICE"])
def test_the_last_work_group_sums_the_partials_it_acquired(order, scope):
    """Each work-group writes its partial sum, fences (release) and takes a ticket; the one
    that takes the last ticket fences (acquire) and sums every partial."""
    source = f"""
def last_sums(it, values, partials, ticket, total):
    g = it.get_group()
    partial = dk.reduce_over_group(g, values[it.get_global_id(0)], dk.plus)
    last = False
    if g.leader():
        partials[g.get_group_linear_id()] = partial
        dk.atomic_fence(dk.MemoryOrder.{order}, dk.MemoryScope.{scope})
        counter = dk.AtomicRef(ticket, 0, memory_order=dk.MemoryOrder.ACQ_REL)
        last = counter.fetch_add(1) == g.get_group_linear_range() - 1
    if dk.group_broadcast(g, last):
        dk.atomic_fence(dk.MemoryOrder.ACQUIRE, dk.MemoryScope.DEVICE)
        if g.leader():
            s = partials[0] * 0
            for k in range(g.get_group_linear_range()):
                s += partials[k]
            total[0] = s
"""
    namespace = {"dk": dk}
    exec(compile(source, "<last_sums>", "exec"), namespace)  # noqa: S102
    kernel = dk.kernel(namespace["last_sums"])
    values = np.random.default_rng(4).integers(-1000, 1000, 4096)
    partials, ticket, total = (dpnp.zeros(n, dtype="i8") for n in (64, 1, 1))
    kernel[dk.NdRange(4096, 64)](dpnp.asarray(values), partials, ticket, total).wait()
    assert dpnp.asnumpy(total)[0] == values.sum()
    assert dpnp.asnumpy(ticket)[0] == 64


def test_a_target_keeps_its_orders_and_scopes_in_json_and_older_json_still_loads():
    import json

    target = Target.of(CPU)
    again = Target.from_json(json.loads(json.dumps(target.to_json())))
    assert again == target and again.atomic_memory == target.atomic_memory
    older = {k: v for k, v in target.to_json().items() if not k.startswith("atomic_")}
    loaded = Target.from_json(older)  # a bundle or cache entry written before them
    assert loaded.atomic_memory is None and loaded.atomic_fence is None
    with pytest.raises(ValueError, match="fields Target.to_json"):
        Target.from_json({**target.to_json(), "atomic_memory": "all"})
