"""Item kernels (API.md §3, SYCL 2020 forms): every item, nd-item, group and sub-group method
in 1, 2 and 3 dimensions against NumPy's index arithmetic, the launches each form needs, the
item's place among the parameters, and the code both forms compile to."""

from __future__ import annotations

import difflib
import math
import re

import dpnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk

I64 = dk.usm_array(dk.int64, 2, device="opencl:cpu")


# --- items under a Range --------------------------------------------------------------------


@dk.kernel
def item_methods(item, out):
    """Row get_linear_id(): the ids and ranges of dimensions 0-2, the linear id and range."""
    row = item.get_linear_id()
    out[row, 0] = item.get_id(0)
    out[row, 1] = item.get_id(1)
    out[row, 2] = item.get_id(2)
    out[row, 3] = item.get_range(0)
    out[row, 4] = item.get_range(1)
    out[row, 5] = item.get_range(2)
    out[row, 6] = item.get_linear_id()
    out[row, 7] = item.get_linear_range()


def _padded(shape: tuple, ndim: int = 3) -> tuple:
    """`shape` with the dimensions a launch lacks as 1 (where their ids are 0)."""
    return tuple(shape) + (1,) * (ndim - len(shape))


@given(global_range=st.lists(st.integers(1, 7), min_size=1, max_size=3).map(tuple))
def test_item_methods_match_numpy_index_arithmetic(global_range):
    n = math.prod(global_range)
    out = dpnp.full((n, 8), -1, dtype="i8")
    item_methods[dk.Range(*global_range)](out).wait()
    result = dpnp.asnumpy(out)
    ids = np.indices(_padded(global_range)).reshape(3, -1).T  # C order: the last fastest
    np.testing.assert_array_equal(result[:, 0:3], ids)
    np.testing.assert_array_equal(result[:, 3:6], np.broadcast_to(_padded(global_range), (n, 3)))
    np.testing.assert_array_equal(
        result[:, 6], np.ravel_multi_index(ids[:, : len(global_range)].T, global_range)
    )
    np.testing.assert_array_equal(result[:, 7], n)


# --- nd-items, groups and sub-groups under an NdRange -----------------------------------------

#: Column -> what it holds (nd_item_methods writes them in this order).
ND_COLUMNS = (
    [f"global_id{d}" for d in range(3)]
    + [f"global_range{d}" for d in range(3)]
    + [f"local_id{d}" for d in range(3)]
    + [f"local_range{d}" for d in range(3)]
    + [f"group_range{d}" for d in range(3)]
    + [f"id{d}" for d in range(3)]
    + [f"range{d}" for d in range(3)]
    + ["global_linear_id", "global_linear_range", "local_linear_id", "local_linear_range"]
    + ["linear_id", "linear_range"]
    + [f"group.group_id{d}" for d in range(3)]
    + [f"group.local_id{d}" for d in range(3)]
    + [f"group.local_range{d}" for d in range(3)]
    + [f"group.group_range{d}" for d in range(3)]
    + [f"group.global_range{d}" for d in range(3)]
    + ["group.group_linear_id", "group.local_linear_id", "group.local_linear_range"]
    + ["group.group_linear_range", "group.leader"]
    + ["sg.local_id", "sg.local_range", "sg.max_local_range", "sg.group_id", "sg.group_range"]
    + ["sg.leader"]
)


@dk.kernel
def nd_item_methods(it, out):
    row = it.get_global_linear_id()
    out[row, 0] = it.get_global_id(0)
    out[row, 1] = it.get_global_id(1)
    out[row, 2] = it.get_global_id(2)
    out[row, 3] = it.get_global_range(0)
    out[row, 4] = it.get_global_range(1)
    out[row, 5] = it.get_global_range(2)
    out[row, 6] = it.get_local_id(0)
    out[row, 7] = it.get_local_id(1)
    out[row, 8] = it.get_local_id(2)
    out[row, 9] = it.get_local_range(0)
    out[row, 10] = it.get_local_range(1)
    out[row, 11] = it.get_local_range(2)
    out[row, 12] = it.get_group_range(0)
    out[row, 13] = it.get_group_range(1)
    out[row, 14] = it.get_group_range(2)
    out[row, 15] = it.get_id(0)
    out[row, 16] = it.get_id(1)
    out[row, 17] = it.get_id(2)
    out[row, 18] = it.get_range(0)
    out[row, 19] = it.get_range(1)
    out[row, 20] = it.get_range(2)
    out[row, 21] = it.get_global_linear_id()
    out[row, 22] = it.get_global_linear_range()
    out[row, 23] = it.get_local_linear_id()
    out[row, 24] = it.get_local_linear_range()
    out[row, 25] = it.get_linear_id()
    out[row, 26] = it.get_linear_range()
    g = it.get_group()
    out[row, 27] = g.get_group_id(0)
    out[row, 28] = g.get_group_id(1)
    out[row, 29] = g.get_group_id(2)
    out[row, 30] = g.get_local_id(0)
    out[row, 31] = g.get_local_id(1)
    out[row, 32] = g.get_local_id(2)
    out[row, 33] = g.get_local_range(0)
    out[row, 34] = g.get_local_range(1)
    out[row, 35] = g.get_local_range(2)
    out[row, 36] = g.get_group_range(0)
    out[row, 37] = g.get_group_range(1)
    out[row, 38] = g.get_group_range(2)
    out[row, 39] = g.get_global_range(0)
    out[row, 40] = g.get_global_range(1)
    out[row, 41] = g.get_global_range(2)
    out[row, 42] = g.get_group_linear_id()
    out[row, 43] = g.get_local_linear_id()
    out[row, 44] = g.get_local_linear_range()
    out[row, 45] = g.get_group_linear_range()
    out[row, 46] = g.leader()
    sg = it.get_sub_group()
    out[row, 47] = sg.get_local_id()
    out[row, 48] = sg.get_local_range()
    out[row, 49] = sg.get_max_local_range()
    out[row, 50] = sg.get_group_id()
    out[row, 51] = sg.get_group_range()
    out[row, 52] = sg.leader()


def _expected_nd(global_range: tuple, local_range: tuple, sub_group_size: int) -> dict:
    """Each column of nd_item_methods computed with NumPy, work-items in C order. Sub-groups
    are cut from each row of the work-group along its last dimension, `sub_group_size` lanes
    each, the last one of a row shorter (docs/kernel-language.md#sub-group-size)."""
    g3, l3 = np.array(_padded(global_range)), np.array(_padded(local_range))
    n, ndim = int(g3.prod()), len(global_range)
    gid = np.indices(tuple(g3)).reshape(3, -1).T
    lid, grp, groups = gid % l3, gid // l3, g3 // l3
    every = lambda values: np.broadcast_to(values, (n, 3))  # noqa: E731
    real = slice(0, ndim)  # the linear ids run over the launch's own dimensions
    local_linear = np.ravel_multi_index(lid[:, real].T, local_range)
    expected = {
        "global_linear_id": np.arange(n),
        "global_linear_range": n,
        "local_linear_id": local_linear,
        "local_linear_range": math.prod(local_range),
        "linear_id": np.arange(n),
        "linear_range": n,
        "group.group_linear_id": np.ravel_multi_index(grp[:, real].T, tuple(groups[real])),
        "group.local_linear_id": local_linear,
        "group.local_linear_range": math.prod(local_range),
        "group.group_linear_range": int(groups.prod()),
        "group.leader": local_linear == 0,
    }
    for d in range(3):
        expected |= {
            f"global_id{d}": gid[:, d],
            f"global_range{d}": every(g3)[:, d],
            f"local_id{d}": lid[:, d],
            f"local_range{d}": every(l3)[:, d],
            f"group_range{d}": every(groups)[:, d],
            f"id{d}": gid[:, d],
            f"range{d}": every(g3)[:, d],
            f"group.group_id{d}": grp[:, d],
            f"group.local_id{d}": lid[:, d],
            f"group.local_range{d}": every(l3)[:, d],
            f"group.group_range{d}": every(groups)[:, d],
            f"group.global_range{d}": every(g3)[:, d],
        }
    row_length = local_range[-1]
    along, row = lid[:, ndim - 1], local_linear // row_length
    per_row = -(-row_length // sub_group_size)
    in_row = along // sub_group_size
    expected |= {
        "sg.local_id": along % sub_group_size,
        "sg.local_range": np.minimum(sub_group_size, row_length - in_row * sub_group_size),
        "sg.max_local_range": sub_group_size,
        "sg.group_id": row * per_row + in_row,
        "sg.group_range": math.prod(local_range) // row_length * per_row,
        "sg.leader": along % sub_group_size == 0,
    }
    return expected


def _nd_kernel(sub_group_size: int | None):
    if sub_group_size is None:
        return nd_item_methods
    return dk.kernel(nd_item_methods.py_func, sub_group_size=sub_group_size)


_ND_RANGES = st.lists(st.tuples(st.integers(1, 10), st.integers(1, 3)), min_size=1, max_size=3)


@given(extents=_ND_RANGES, sub_group_size=st.sampled_from([None, 4, 8]))
def test_nd_item_group_and_sub_group_methods_match_numpy(extents, sub_group_size):
    local_range = tuple(local for local, _ in extents)
    global_range = tuple(local * groups for local, groups in extents)
    n = math.prod(global_range)
    out = dpnp.full((n, len(ND_COLUMNS)), -1, dtype="i8")
    _nd_kernel(sub_group_size)[dk.NdRange(global_range, local_range)](out).wait()
    result = dict(zip(ND_COLUMNS, dpnp.asnumpy(out).T))
    size = sub_group_size or int(result["sg.max_local_range"][0])  # the runtime's choice
    assert size >= 1
    for column, expected in _expected_nd(global_range, local_range, size).items():
        np.testing.assert_array_equal(
            result[column], np.broadcast_to(expected, (n,)), err_msg=column
        )


# --- what a launch needs, and where the item goes ----------------------------------------------

#: The methods only an nd-item (and its groups and sub-groups) has.
ND_ONLY = [
    "it.get_global_id(0)",
    "it.get_global_range(0)",
    "it.get_local_id(0)",
    "it.get_local_range(0)",
    "it.get_group_range(0)",
    "it.get_global_linear_id()",
    "it.get_global_linear_range()",
    "it.get_local_linear_id()",
    "it.get_local_linear_range()",
    "it.get_group().get_group_id(0)",
    "it.get_group().get_group_linear_id()",
    "it.get_group().leader()",
    "it.get_sub_group().get_local_id()",
    "it.get_sub_group().get_group_range()",
]


def _kernel_from(source: str, name: str, **options):
    namespace = {"dk": dk}
    exec(compile(source, f"<{name}>", "exec"), namespace)  # noqa: S102 - one kernel per case
    return dk.kernel(namespace[name], **options)


@pytest.mark.parametrize("expression", ND_ONLY)
def test_nd_item_methods_under_a_range_are_refused_before_submission(expression):
    kernel = _kernel_from(f"def nd_only(it, out):\n    out[0] = {expression}\n", "nd_only")
    out = dpnp.full(1, -7, dtype="i8")
    with pytest.raises(dk.InvalidRangeError, match=r"nd_only.*dk\.NdRange"):
        kernel[dk.Range(4)](out)
    assert dpnp.asnumpy(out)[0] == -7  # nothing ran
    kernel[dk.NdRange(4, 2)](out).wait()  # the same kernel under an NdRange runs


@pytest.mark.parametrize("position", [1, 2])
def test_an_item_anywhere_but_first_is_a_compile_error_naming_the_line(position):
    names = ["a", "b"]
    names.insert(position, "item")
    source = f"def misplaced({', '.join(names)}):\n    i = item.get_id(0)\n    a[i] = b\n"
    with pytest.raises(dk.KernelCompileError) as info:
        _kernel_from(source, "misplaced")
    message = str(info.value)
    assert "'misplaced'" in message and f"'item' (position {position})" in message
    assert "<misplaced>:2" in message  # the line of item.get_id
    assert "def misplaced(item, a, b)" in message  # what to write instead


def test_an_item_anywhere_but_first_is_refused_with_declared_signatures_too():
    with pytest.raises(dk.KernelCompileError, match=r"'it' \(position 1\)"):

        @dk.kernel(dk.void(I64))
        def misplaced(a, it):
            a[it.get_id(0), 0] = 1


def test_declared_signatures_take_one_type_fewer_for_the_item():
    @dk.kernel([dk.void(I64, dk.int64), dk.void(I64, dk.float64)])
    def scaled(item, out, factor):
        i, j = item.get_id(0), item.get_id(1)
        out[i, j] = (i * item.get_range(1) + j) * factor

    assert len(scaled.definitions) == 2 and scaled.takes_item
    out = dpnp.zeros((3, 4), dtype="i8")
    scaled[dk.Range(3, 4)](out, 3).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(12).reshape(3, 4) * 3)
    with pytest.raises(TypeError, match="one fewer when the first parameter is the"):
        dk.kernel(dk.void(I64, dk.int64, dk.int64))(scaled.py_func)
    with pytest.raises(dk.KernelSignatureError, match="factor"):  # named without the item
        scaled[dk.Range(3, 4)](out, 3j)


def test_an_item_kernel_pickles_and_keeps_its_item():
    import pickle

    out = dpnp.zeros((6, 8), dtype="i8")
    again = pickle.loads(pickle.dumps(item_methods))
    assert again.takes_item and again.param_names == ("out",)
    again[dk.Range(2, 3)](out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out)[:, 6], np.arange(6))


# --- both forms compile to the same code -----------------------------------------------------

_VALUE = re.compile(r"%[-\w.$]+")


def _normalised_llvm(text: str) -> str:
    """LLVM IR with its local value names numbered in order of appearance (the two front ends
    name values differently) and without comments."""
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"%v{len(names)}")

    lines = [line.split(";")[0].rstrip() for line in text.splitlines()]
    return _VALUE.sub(rename, "\n".join(line for line in lines if line))


def _same_name(function, name: str):
    """`function` as a kernel whose Python name is `name` (so both kernels share a symbol)."""
    function.__name__ = function.__qualname__ = name
    return dk.kernel(function)


def _item_and_free_pairs():
    def item_form(item, a, b):
        i = item.get_id(0)
        b[i] = a[i] * 2.0 + item.get_range(0)

    def free_form(a, b):
        i = dk.get_global_id(0)
        b[i] = a[i] * 2.0 + dk.get_global_size(0)

    def item_form_2d(item, a, b):
        i, j = item.get_id(0), item.get_id(1)
        b[i, j] = a[i, j] + item.get_range(1) * i

    def free_form_2d(a, b):
        i, j = dk.get_global_id(0), dk.get_global_id(1)
        b[i, j] = a[i, j] + dk.get_global_size(1) * i

    def nd_item_form(it, a, b):
        i = it.get_global_id(0)
        b[i] = a[i] + it.get_local_id(0) * it.get_group().get_group_id(0)

    def nd_free_form(a, b):
        i = dk.get_global_id(0)
        b[i] = a[i] + dk.get_local_id(0) * dk.get_group_id(0)

    def item_stencil(item, a, b):
        i, j = item.get_id(0), item.get_id(1)
        rows, cols = item.get_range(0), item.get_range(1)
        if 0 < i < rows - 1 and 0 < j < cols - 1:
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    def free_stencil(a, b):
        i, j = dk.get_global_id(0), dk.get_global_id(1)
        rows, cols = dk.get_global_size(0), dk.get_global_size(1)
        if 0 < i < rows - 1 and 0 < j < cols - 1:
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    return [
        (item_form, free_form, (64,), dk.Range(64)),
        (item_form_2d, free_form_2d, (8, 16), dk.Range(8, 16)),
        (nd_item_form, nd_free_form, (64,), dk.NdRange(64, 16)),
        (item_stencil, free_stencil, (16, 24), dk.Range(16, 24)),
    ]


def test_an_item_kernel_of_index_methods_compiles_in_the_direct_front_end():
    """Like its free-function form: Numba's front end only for groups and sub-groups."""
    item_form, _, shape, launch = _item_and_free_pairs()[3]
    kernel = _same_name(item_form, "stencil")
    kernel[launch](dpnp.zeros(shape, dtype="f4"), dpnp.zeros(shape, dtype="f4")).wait()
    (compiled,) = kernel.definitions.values()
    assert compiled.artifacts.front_end == "direct", compiled.artifacts.front_end


#: SPIR-V's debug instructions (OpSource, OpName, OpMemberName, OpString, OpLine, OpNoLine),
#: which name values as each front end happened to.
_DEBUG_OPCODES = {3, 5, 6, 7, 8, 317}
_ID = re.compile(r"%\w+")


def _instructions(spirv: bytes) -> list[tuple[int, int]]:
    """(opcode, word count) of each instruction but the debug ones: the code without its ids,
    which the back end numbers differently from one emission to the next."""
    words = np.frombuffer(spirv, dtype="<u4")
    found, at = [], 5  # after the header
    while at < len(words):
        count, opcode = int(words[at]) >> 16, int(words[at]) & 0xFFFF
        if opcode not in _DEBUG_OPCODES:
            found.append((opcode, count))
        at += count
    return found


def _normalised_spirv(text: str) -> str:
    """A disassembly with its ids numbered in order of appearance, without debug names.

    The back end declares the built-in variables in an order that varies from one process to
    the next, so they keep their names and the lines that declare them are sorted in place."""
    lines = [
        line.strip()
        for line in text.splitlines()
        if not line.startswith("; Bound") and not re.search(r"\bOp(Name|Source|String)\b", line)
    ]
    declarations = [
        n
        for n, line in enumerate(lines)
        if re.match(r"(OpDecorate %__spirv_BuiltIn|%__spirv_BuiltIn\w+ = OpVariable)", line)
    ]
    for n, line in zip(declarations, sorted((lines[n] for n in declarations), key=_declared_first)):
        lines[n] = line
    lines = [_sorted_interface(line) if line.startswith("OpEntryPoint") else line for line in lines]
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        if match.group(0).startswith("%__spirv_BuiltIn"):
            return match.group(0)
        return names.setdefault(match.group(0), f"%i{len(names)}")

    return _ID.sub(rename, "\n".join(lines))


def _declared_first(line: str) -> tuple[bool, str]:
    return (not line.startswith("OpDecorate"), line)


def _sorted_interface(entry_point: str) -> str:
    head, quote, interface = entry_point.rpartition('"')
    return head + quote + " " + " ".join(sorted(interface.split()))


@pytest.mark.parametrize("pair", range(4))
def test_item_and_free_function_kernels_compile_to_the_same_code(pair):
    item_form, free_form, shape, launch = _item_and_free_pairs()[pair]
    kernels = [_same_name(item_form, "same_code"), _same_name(free_form, "same_code")]
    a = dpnp.asarray(np.random.default_rng(pair).random(shape).astype("f4"))
    results = []
    for kernel in kernels:
        b = dpnp.zeros(shape, dtype="f4")
        kernel[launch](a, b).wait()
        results.append(dpnp.asnumpy(b))
    np.testing.assert_array_equal(results[0], results[1])
    sig = kernels[0].signatures[0]
    item_compiled, free_compiled = (kernel.definitions[sig] for kernel in kernels)
    front_ends = [c.artifacts.front_end for c in (item_compiled, free_compiled)]
    item_llvm, free_llvm = (_normalised_llvm(kernel.inspect_llvm(sig)) for kernel in kernels)
    assert item_llvm == free_llvm, _difference(item_llvm, free_llvm, front_ends)
    item_text, free_text = (_normalised_spirv(kernel.inspect_spirv(sig)) for kernel in kernels)
    assert item_text == free_text, _difference(item_text, free_text, front_ends)
    assert _instructions(item_compiled.spirv) == _instructions(free_compiled.spirv), front_ends


def _difference(first: str, second: str, front_ends: list) -> str:
    lines = difflib.unified_diff(first.splitlines(), second.splitlines(), lineterm="")
    return f"front ends {front_ends}:\n" + "\n".join(list(lines)[:60])
