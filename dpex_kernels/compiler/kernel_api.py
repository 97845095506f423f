"""What kernels may call: each feature's Python stub, its typing and its lowering, side by side.

The stubs are the public names (`dk.get_global_id`); called from host code they raise.
Index functions lower to `dpex.*` placeholders that codegen defines per launch dimension count
with OpenCL built-ins (Itanium-mangled names, which the SPIR-V back end turns into SPIR-V
built-in variables).
"""

from __future__ import annotations

import re

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import Registry as LoweringRegistry
from numba.core.typing.templates import AbstractTemplate, Registry, signature

typing_registry = Registry()
lowering_registry = LoweringRegistry("dpex_kernels.kernel_api")

_I64 = ir.IntType(64)


def host_stub(name: str, doc: str, public: str | None = None):
    """The Python object standing for a device-only function; called on the host, it raises.

    Every stub lives in this module under `name`: Numba keys typing on globally reachable
    objects. `public` is how users spell it (default dk.<name>).
    """
    public = public or f"dk.{name}"

    def stub(*args, **kwargs):
        raise TypeError(
            f"{public}() can only be called inside a @dk.kernel or @dk.func, not from host code"
        )

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    stub.__module__ = __name__
    globals()[name] = stub
    return stub


# --- index space --------------------------------------------------------------------------

_INDEX_FUNCTIONS = {
    "get_global_id": ("_Z13get_global_idj", "the work-item's id in the global range"),
    "get_local_id": ("_Z12get_local_idj", "the work-item's id inside its work-group"),
    "get_group_id": ("_Z12get_group_idj", "the work-group's id"),
    "get_global_size": ("_Z15get_global_sizej", "the global range's size"),
    "get_local_size": ("_Z14get_local_sizej", "the work-group's size"),
    "get_num_groups": ("_Z14get_num_groupsj", "the number of work-groups"),
}


def call_index_placeholder(builder: ir.IRBuilder, name: str, args) -> ir.Value:
    """Call `dpex.<name>`, which codegen defines once the launch's dimension count is known.

    SYCL dimension d is OpenCL dimension (ndim - 1 - d), so that the last one varies fastest.
    With ndim a constant every index call gets a constant OpenCL dimension, which the device
    compiler needs to vectorise across work-items.
    """
    fnty = ir.FunctionType(_I64, [_I64] * len(args))
    function = cgutils.get_or_insert_function(builder.module, fnty, f"dpex.{name}")
    return builder.call(function, args)


def _index_function(name: str, mangled: str, doc: str):
    stub = host_stub(name, f"In a kernel: {doc} in dimension `dim` (0 = slowest varying).")

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub

        def generic(self, args, kws):
            if not kws and len(args) == 1 and isinstance(args[0], types.Integer):
                return signature(types.intp, args[0])
            return None

    @lowering_registry.lower(stub, types.Integer)
    def _lower(context, builder, sig, args):
        dim = context.cast(builder, args[0], sig.args[0], types.int64)
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


def index_definitions(ndim: int) -> str:
    """LLVM IR defining the `dpex.*` index placeholders for a launch of `ndim` dimensions."""
    lines = [f"define i64 @dpex.get_work_dim() alwaysinline {{\n  ret i64 {ndim}\n}}"]
    for name, (mangled, _doc) in _INDEX_FUNCTIONS.items():
        # Ids are >= 0 and sizes >= 1: LLVM then knows `i += get_global_size(0)` loops never
        # index negatively and drops Numba's wraparound, so the loads vectorise.
        is_id = name.endswith("_id")
        lines.append(
            f"declare spir_func i64 @{mangled}(i32)\n"
            f"define i64 @dpex.{name}(i64 %d) alwaysinline {{\n"
            f"  %t = trunc i64 %d to i32\n"
            f"  %o = sub i32 {ndim - 1}, %t\n"
            f"  %r = call spir_func i64 @{mangled}(i32 %o), !range !{0 if is_id else 1}"
            "\n  ret i64 %r\n}"
        )
    lines.append("!0 = !{i64 0, i64 9223372036854775807}")
    lines.append("!1 = !{i64 1, i64 9223372036854775807}")
    return "\n".join(lines) + "\n"


_PLACEHOLDER_CALL = re.compile(
    r'call i64 @"?dpex\.get_(?:global_id|local_id|group_id|global_size|'
    r'local_size|num_groups)"?\(i64 (\d+)\)'
)


def dimensions_used(llvm_ir: str) -> int:
    """The launch dimension count a kernel most likely expects: 1 + its largest constant dim."""
    dims = [int(d) for d in _PLACEHOLDER_CALL.findall(llvm_ir)]
    return min(3, max(dims, default=0) + 1)


# --- print ----------------------------------------------------------------------------------

_CONSTANT = 2  # the SPIR-V UniformConstant address space, where printf's strings must live


def _constant_string(builder: ir.IRBuilder, text: str) -> ir.Value:
    """A pointer to `text` in constant memory, as OpenCL printf wants its strings.

    The array starts with one spare byte and the pointer is to element 1: a pointer to the
    array's start would fold to the array itself, which the SPIR-V validator refuses.
    """
    data = bytearray(b"\0" + text.encode() + b"\0")
    array_type = ir.ArrayType(ir.IntType(8), len(data))
    module = builder.module
    variable = ir.GlobalVariable(
        module, array_type, module.get_unique_name("dpex.str"), addrspace=_CONSTANT
    )
    variable.linkage = "internal"
    variable.global_constant = True
    variable.initializer = ir.Constant(array_type, data)
    zero, one = ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 1)
    return builder.gep(variable, [zero, one], inbounds=True)


def _print_piece(context, builder, argtype, value) -> tuple[str, list]:
    """The printf conversion for one print() argument and the values it consumes."""
    double = ir.DoubleType()
    if isinstance(argtype, types.StringLiteral):
        return argtype.literal_value.replace("%", "%%"), []
    if isinstance(argtype, types.Boolean):
        text = builder.select(
            value, _constant_string(builder, "True"), _constant_string(builder, "False")
        )
        return "%s", [text]
    if isinstance(argtype, types.Integer):
        wide = builder.sext(value, _I64) if argtype.signed else builder.zext(value, _I64)
        if argtype.bitwidth == 64:
            wide = value
        return ("%ld" if argtype.signed else "%lu"), [wide]
    if isinstance(argtype, types.Float):
        return "%g", [builder.fpext(value, double) if argtype.bitwidth < 64 else value]
    if isinstance(argtype, types.Complex):
        pair = context.make_complex(builder, argtype, value)
        parts = [pair.real, pair.imag]
        if argtype.underlying_float.bitwidth < 64:
            parts = [builder.fpext(part, double) for part in parts]
        return "(%g%+gj)", parts
    raise NotImplementedError(
        f"print() of {argtype} inside a kernel: kernels print scalars and string constants only"
    )


@lowering_registry.lower(print, types.VarArg(types.Any))
def _lower_print(context, builder, sig, args):
    """print(a, b, ...) as one OpenCL printf, so lines of different work-items do not mix."""
    pieces, values = [], []
    for argtype, value in zip(sig.args, args):
        piece, consumed = _print_piece(context, builder, argtype, value)
        pieces.append(piece)
        values.extend(consumed)
    format_string = _constant_string(builder, " ".join(pieces) + "\n")
    fnty = ir.FunctionType(ir.IntType(32), [format_string.type], var_arg=True)
    printf = cgutils.get_or_insert_function(builder.module, fnty, "printf")
    printf.calling_convention = "spir_func"
    builder.call(printf, [format_string, *values], cconv="spir_func")
    return context.get_dummy_value()
