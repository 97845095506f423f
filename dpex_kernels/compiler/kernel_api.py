"""What kernels may call: each feature's Python stub, its typing and its lowering, side by side.

The stubs are the public names (`dk.get_global_id`); called from host code they raise.
Lowering calls OpenCL built-ins by their Itanium-mangled names, which the SPIR-V back end
turns into SPIR-V built-in variables and instructions.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import Registry as LoweringRegistry
from numba.core.typing.templates import AbstractTemplate, Registry, signature

typing_registry = Registry()
lowering_registry = LoweringRegistry("dpex_kernels.kernel_api")

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _host_stub(name: str, doc: str):
    def stub(*args, **kwargs):
        raise TypeError(
            f"dk.{name}() can only be called inside a @dk.kernel or @dk.func, not from host code"
        )

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    stub.__module__ = __name__
    globals()[name] = stub  # Numba keys typing on globally reachable objects
    return stub


def call_builtin(builder: ir.IRBuilder, name: str, return_type, arg_types, args):
    """Call an OpenCL built-in (a spir_func declaration) by its mangled name."""
    fnty = ir.FunctionType(return_type, arg_types)
    function = cgutils.get_or_insert_function(builder.module, fnty, name)
    function.calling_convention = "spir_func"
    return builder.call(function, args, cconv="spir_func")


# --- index space --------------------------------------------------------------------------

_INDEX_FUNCTIONS = {
    "get_global_id": ("_Z13get_global_idj", "the work-item's id in the global range"),
    "get_local_id": ("_Z12get_local_idj", "the work-item's id inside its work-group"),
    "get_group_id": ("_Z12get_group_idj", "the work-group's id"),
    "get_global_size": ("_Z15get_global_sizej", "the global range's size"),
    "get_local_size": ("_Z14get_local_sizej", "the work-group's size"),
    "get_num_groups": ("_Z14get_num_groupsj", "the number of work-groups"),
}


def _opencl_dimension(builder: ir.IRBuilder, dim_type: types.Integer, dim) -> ir.Value:
    """SYCL dimension d is OpenCL dimension (work_dim - 1 - d): the last one varies fastest."""
    work_dim = call_builtin(builder, "_Z12get_work_dimv", _I32, [], [])
    dim32 = builder.trunc(dim, _I32) if dim.type.width > 32 else builder.zext(dim, _I32)
    return builder.sub(builder.sub(work_dim, ir.Constant(_I32, 1)), dim32)


def _index_function(name: str, mangled: str, doc: str):
    stub = _host_stub(name, f"In a kernel: {doc} in dimension `dim` (0 = slowest varying).")

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub

        def generic(self, args, kws):
            if not kws and len(args) == 1 and isinstance(args[0], types.Integer):
                return signature(types.intp, args[0])
            return None

    @lowering_registry.lower(stub, types.Integer)
    def _lower(context, builder, sig, args):
        dimension = _opencl_dimension(builder, sig.args[0], args[0])
        return call_builtin(builder, mangled, _I64, [_I32], [dimension])

    return stub


get_global_id = _index_function("get_global_id", *_INDEX_FUNCTIONS["get_global_id"])
get_local_id = _index_function("get_local_id", *_INDEX_FUNCTIONS["get_local_id"])
get_group_id = _index_function("get_group_id", *_INDEX_FUNCTIONS["get_group_id"])
get_global_size = _index_function("get_global_size", *_INDEX_FUNCTIONS["get_global_size"])
get_local_size = _index_function("get_local_size", *_INDEX_FUNCTIONS["get_local_size"])
get_num_groups = _index_function("get_num_groups", *_INDEX_FUNCTIONS["get_num_groups"])

get_work_dim = _host_stub("get_work_dim", "In a kernel: the number of dimensions of the range.")


@typing_registry.register_global(get_work_dim)
class _WorkDimTemplate(AbstractTemplate):
    key = get_work_dim

    def generic(self, args, kws):
        if not args and not kws:
            return signature(types.intp)
        return None


@lowering_registry.lower(get_work_dim)
def _lower_work_dim(context, builder, sig, args):
    return builder.zext(call_builtin(builder, "_Z12get_work_dimv", _I32, [], []), _I64)


__all__ = [
    "get_global_id",
    "get_global_size",
    "get_group_id",
    "get_local_id",
    "get_local_size",
    "get_num_groups",
    "get_work_dim",
]
