"""Debug-mode bounds checks: every index into a kernel array, with what a failure reports.

With debug=True each array access (plain loads and stores, slices' element reads, every
dk.atomic.*) compares its index with the axis' size. A failing work-item claims the launch's
error record (errors.py) once, writes the status code, the index and the bound there, and
returns the status: the host then names the kernel, the array, the index, the bound and the
source line. The array and the line are known here at compile time and travel in the
exception table; the index and the bound are run-time values and travel in the record.
"""

from __future__ import annotations

import linecache

from llvmlite import ir
from numba.core import cgutils
from numba.core import errors as numba_errors
from numba.core import ir as numba_ir

from ..errors import BOUNDS_MARK, ERROR_RECORD_BOUND, ERROR_RECORD_INDEX
from .kernel_api.atomics import compare_exchange_bits

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _indexed_array(inst) -> str:
    """The user's name for the array that instruction `inst` indexes, if it has one."""
    var = None
    if isinstance(inst, (numba_ir.SetItem, numba_ir.StaticSetItem)):
        var = inst.target
    elif isinstance(inst, numba_ir.Assign) and isinstance(inst.value, numba_ir.Expr):
        expr = inst.value
        if expr.op in ("getitem", "static_getitem"):
            var = expr.value
        elif expr.op == "call" and expr.args:
            var = expr.args[0]
    name = var.unversioned_name if isinstance(var, numba_ir.Var) else ""
    return "" if name.startswith("$") else name


def current_site() -> tuple[str, str, str]:
    """(array name, "file:line", source text) of the instruction Numba is lowering now.

    Numba keeps the user-code instruction being lowered in `errors.loc_info` (for its own
    error messages); compiles run under Numba's global compiler lock, so it is this one's.
    """
    loc = numba_errors.loc_info.get("loc")
    inst = numba_errors.loc_info.get("inst")
    if loc is None:
        return "", "<unknown source>", ""
    source = linecache.getline(loc.filename, loc.line).strip()
    return _indexed_array(inst), f"{loc.filename}:{loc.line}", source


def check_index(context, builder, index, size, axis=None) -> None:
    """Return a bounds error from the current function unless 0 <= index < size.

    One unsigned comparison catches negative indices too (they are already wrapped around
    once, so a negative value here was below -size as written).
    """
    array, location, source = current_site()
    outside = builder.icmp_unsigned(">=", index, size)
    with cgutils.if_unlikely(builder, outside):
        call_conv = context.call_conv
        code = call_conv.add_exception(
            builder,
            IndexError,
            (BOUNDS_MARK, array, -1 if axis is None else int(axis), location, source),
        )
        written = builder.select(
            builder.icmp_signed("<", index, index.type(0)), builder.sub(index, size), index
        )
        _claim_record(builder, call_conv.error_record(builder), code, written, size)
        call_conv.return_code(builder, code)


def _claim_record(builder, record, code: int, index, size) -> None:
    """The first failing work-item writes code, index and bound; the others leave them."""
    null = ir.Constant(record.type, None)
    with builder.if_then(builder.icmp_unsigned("!=", record, null)):
        zero = ir.Constant(_I32, 0)
        previous = compare_exchange_bits(builder, record, zero, ir.Constant(_I32, code))
        with builder.if_then(builder.icmp_signed("==", previous, zero)):
            base = builder.bitcast(record, ir.IntType(8).as_pointer(record.type.addrspace))
            for offset, value in ((ERROR_RECORD_INDEX, index), (ERROR_RECORD_BOUND, size)):
                slot = builder.gep(base, [ir.Constant(_I64, offset)], inbounds=True)
                slot = builder.bitcast(slot, _I64.as_pointer(record.type.addrspace))
                builder.store(builder.sext(value, _I64) if value.type != _I64 else value, slot)
