"""Index space: dk.get_global_id & co, lowered to `dpex.*` placeholders.

Codegen defines the placeholders per launch dimension count with OpenCL built-ins
(Itanium-mangled names, which the SPIR-V back end turns into SPIR-V built-in variables).
"""

from __future__ import annotations

import re

from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.typing.templates import AbstractTemplate, signature

from ...types.ranges import MAX_DIMENSION
from .registry import host_stub, lowering_registry, typing_registry

_I64 = ir.IntType(64)

# --- index space --------------------------------------------------------------------------

_INDEX_FUNCTIONS = {
    "get_global_id": ("_Z13get_global_idj", "the work-item's id in the global range"),
    "get_local_id": ("_Z12get_local_idj", "the work-item's id inside its work-group"),
    "get_group_id": ("_Z12get_group_idj", "the work-group's id"),
    "get_global_size": ("_Z15get_global_sizej", "the global range's size"),
    "get_local_size": ("_Z14get_local_sizej", "the work-group's size"),
    "get_num_groups": ("_Z14get_num_groupsj", "the number of work-groups"),
}


def call_index_placeholder(builder: ir.IRBuilder, name: str, args, result=_I64) -> ir.Value:
    """Call `dpex.<name>`, which the back end defines once the launch's dimension count is known.

    SYCL dimension d is OpenCL dimension (ndim - 1 - d), so that the last one varies fastest.
    With ndim a constant every index call gets a constant OpenCL dimension, which the device
    compiler needs to vectorise across work-items.
    """
    fnty = ir.FunctionType(result, [_I64] * len(args))
    function = cgutils.get_or_insert_function(builder.module, fnty, f"dpex.{name}")
    return builder.call(function, args)


def sub_group_size(builder: ir.IRBuilder) -> ir.Value:
    """The sub-group's lane count (an i32), through the placeholder `dpex.sub_group_size` that
    the back end defines per device (groups.py group_definitions)."""
    return call_index_placeholder(builder, "sub_group_size", [], ir.IntType(32))


def sub_group_id(builder: ir.IRBuilder) -> ir.Value:
    """The sub-group's index in its work-group (an i32), as sub_group_size() is defined."""
    return call_index_placeholder(builder, "sub_group_id", [], ir.IntType(32))


def _index_function(name: str, mangled: str, doc: str):
    stub = host_stub(name, f"In a kernel: {doc} in dimension `dim` (0 = slowest varying).")

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub
        prefer_literal = True  # so that lowering sees a constant dimension as one

        def generic(self, args, kws):
            if not kws and len(args) == 1 and isinstance(args[0], types.Integer):
                return signature(types.intp, args[0])
            return None

    @lowering_registry.lower(stub, types.Integer)
    def _lower(context, builder, sig, args):
        dim_type = sig.args[0]
        if not isinstance(dim_type, types.IntegerLiteral):
            raise errors.UnsupportedError(
                f"dk.{name}(d): the dimension is a constant 0, 1 or 2, not a value computed "
                f"at run time (here a variable of type {dim_type}): write a literal, or a global, "
                f"closure variable or NumPy integer that holds one (a constant lets the device "
                f"compiler vectorise); for code generic over the range's rank, branch on "
                f"dk.get_work_dim()"
            )
        if dim_type.literal_value not in (0, 1, 2):
            raise errors.UnsupportedError(
                f"dk.{name}({dim_type.literal_value}): the dimension is a constant 0, 1 or 2 "
                f"(SYCL ranges have at most three dimensions)"
            )
        dim = ir.Constant(_I64, dim_type.literal_value)
        return call_index_placeholder(builder, name, [dim])

    return stub


get_global_id = _index_function("get_global_id", *_INDEX_FUNCTIONS["get_global_id"])
get_local_id = _index_function("get_local_id", *_INDEX_FUNCTIONS["get_local_id"])
get_group_id = _index_function("get_group_id", *_INDEX_FUNCTIONS["get_group_id"])
get_global_size = _index_function("get_global_size", *_INDEX_FUNCTIONS["get_global_size"])
get_local_size = _index_function("get_local_size", *_INDEX_FUNCTIONS["get_local_size"])
get_num_groups = _index_function("get_num_groups", *_INDEX_FUNCTIONS["get_num_groups"])

get_work_dim = host_stub("get_work_dim", "In a kernel: the number of dimensions of the range.")


@typing_registry.register_global(get_work_dim)
class _WorkDimTemplate(AbstractTemplate):
    key = get_work_dim

    def generic(self, args, kws):
        if not args and not kws:
            return signature(types.intp)
        return None


@lowering_registry.lower(get_work_dim)
def _lower_work_dim(context, builder, sig, args):
    return call_index_placeholder(builder, "get_work_dim", [])


index_add = host_stub(
    "index_add",
    "For generated code: base + offset of an element index that cannot overflow.",
    "dpex_kernels.compiler.kernel_api.index_add",
)


@typing_registry.register_global(index_add)
class _IndexAddTemplate(AbstractTemplate):
    key = index_add

    def generic(self, args, kws):
        if not kws and len(args) == 2 and all(isinstance(a, types.Integer) for a in args):
            return signature(types.intp, types.intp, types.intp)
        return None


@lowering_registry.lower(index_add, types.Integer, types.Integer)
def _lower_index_add(context, builder, sig, args):
    """`add nsw`: the offloaded loops' chunk + iteration (offloading/outline.py) is an index
    that cannot overflow, and LLVM's loop vectoriser needs to know it to write vector code.
    Everywhere else integer arithmetic wraps (arithmetic.py)."""
    return builder.add(*args, flags=["nsw"])


def _linear_placeholder(name: str, doc: str):
    """A stub for the kernel API's own Python code (groups.py): `dpex.<name>()`."""
    stub = host_stub(name, doc, f"dpex_kernels.compiler.kernel_api.{name}")

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub

        def generic(self, args, kws):
            return signature(types.intp) if not args and not kws else None

    @lowering_registry.lower(stub)
    def _lower(context, builder, sig, args):
        return call_index_placeholder(builder, f"get_{name}", [])

    return stub


local_linear_id = _linear_placeholder("local_linear_id", "The work-item's linear local id.")
local_linear_range = _linear_placeholder("local_linear_range", "The work-group's size.")


def _linear(ndim: int, name: str, ids: str | None, sizes: str) -> str:
    """`dpex.<name>`: SYCL's linear id over dimensions 0 .. ndim - 1, the last fastest
    (id0 * size1 + id1) * size2 + id2; without `ids`, the product of the sizes."""
    lines = [f"define i64 @dpex.{name}() alwaysinline {{"]
    for d in range(ndim):
        lines.append(f"  %s{d} = call i64 @dpex.{sizes}(i64 {d})")
        if ids is not None:
            lines.append(f"  %i{d} = call i64 @dpex.{ids}(i64 {d})")
    value = "%i0" if ids is not None else "%s0"
    for d in range(1, ndim):
        lines.append(f"  %m{d} = mul nuw nsw i64 {value}, %s{d}")
        value = f"%m{d}"
        if ids is not None:
            lines.append(f"  %a{d} = add nuw nsw i64 {value}, %i{d}")
            value = f"%a{d}"
    lines.append(f"  ret i64 {value}\n}}")
    return "\n".join(lines)


#: name -> (the id placeholder, the size placeholder) of the linear ids and ranges.
_LINEAR = {
    "get_global_linear_id": ("get_global_id", "get_global_size"),
    "get_local_linear_id": ("get_local_id", "get_local_size"),
    "get_group_linear_id": ("get_group_id", "get_num_groups"),
    "get_global_linear_range": (None, "get_global_size"),
    "get_local_linear_range": (None, "get_local_size"),
    "get_group_linear_range": (None, "get_num_groups"),
}


def index_definitions(ndim: int) -> str:
    """LLVM IR defining the `dpex.*` index placeholders for a launch of `ndim` dimensions."""
    lines = [f"define i64 @dpex.get_work_dim() alwaysinline {{\n  ret i64 {ndim}\n}}"]
    for marker in ("nd_item", "group_scratch"):  # facts for the compiler, no code
        lines.append(f"define void @dpex.{marker}() alwaysinline {{\n  ret void\n}}")
    for name, (mangled, _doc) in _INDEX_FUNCTIONS.items():
        # Ids are >= 0 and sizes >= 1, both below MAX_DIMENSION: LLVM then knows `x[i + 1]`
        # and `i += get_global_size(0)` loops never index negatively and drops Numba's
        # wraparound, so the loads vectorise.
        is_id = name.endswith("_id")
        lines.append(
            f"declare spir_func i64 @{mangled}(i32)\n"
            f"define i64 @dpex.{name}(i64 %d) alwaysinline {{\n"
            f"  %t = trunc i64 %d to i32\n"
            f"  %o = sub i32 {ndim - 1}, %t\n"
            f"  %r = call spir_func i64 @{mangled}(i32 %o), !range !{0 if is_id else 1}"
            "\n  ret i64 %r\n}"
        )
    for name, (ids, sizes) in _LINEAR.items():
        lines.append(_linear(ndim, name, ids, sizes))
    lines.append(f"!0 = !{{i64 0, i64 {MAX_DIMENSION}}}")
    lines.append(f"!1 = !{{i64 1, i64 {MAX_DIMENSION + 1}}}")
    return "\n".join(lines) + "\n"


_PLACEHOLDER_CALL = re.compile(
    r'call i64 @"?dpex\.get_(?:global_id|local_id|group_id|global_size|'
    r'local_size|num_groups)"?\(i64 (\d+)\)'
)


def dimensions_used(llvm_ir: str) -> int:
    """The launch dimension count a kernel most likely expects: 1 + its largest constant dim."""
    dims = [int(d) for d in _PLACEHOLDER_CALL.findall(llvm_ir)]
    return min(3, max(dims, default=0) + 1)
