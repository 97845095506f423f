"""Host code of launches, emitted where the parfor was: a small builder over Numba's lowering.

The strategies describe a launch's host code with these calls (the loop's values read, trip
counts, allocations, launches and waits, branches), each emitting its LLVM in the host
function: no Python launcher to compile per loop (one cost a Numba compile, 0.25 s).
"""

from __future__ import annotations

import contextlib
import operator

from llvmlite import ir as llvm
from numba.core import cgutils, types
from numba.core.lowering import Lower

from ..dispatcher.njit_launch import emit_launch, emit_wait
from . import regions

_I64 = llvm.IntType(64)


class Host:
    """Emits a region's host code into a lowering of the host function."""

    def __init__(self, lowerer: Lower):
        self.lowerer = lowerer
        self.context = lowerer.context
        self.builder = lowerer.builder

    # --- values --------------------------------------------------------------------------

    def int64(self, value: int) -> llvm.Value:
        return llvm.Constant(_I64, value)

    def params(self, region: regions.Region) -> tuple[list, list]:
        """The LLVM values and types of a region's kernel parameters, in order."""
        values, argtypes = [], []
        for param in region.params.values():
            value = self.lowerer.loadvar(param.host)
            for item in param.items:
                value = self.builder.extract_value(value, item)
            values.append(value)
            argtypes.append(param.type)
        return values, argtypes

    def bound(self, bound: int | str) -> llvm.Value:
        """A loop bound as an int64."""
        if isinstance(bound, int):
            return self.int64(bound)
        value = self.lowerer.loadvar(bound)
        return self.context.cast(self.builder, value, self.lowerer.typeof(bound), types.int64)

    def trip_counts(self, levels) -> list:
        """Each level's iteration count, as Python's range counts it (a zero step raises
        ValueError, as range does)."""
        builder, counts = self.builder, []
        for level in levels:
            start, stop, step = (self.bound(b) for b in (level.start, level.stop, level.step))
            if isinstance(level.step, int) and level.step > 0:
                count = self.ceil_div(builder.sub(stop, start), level.step)
            else:
                count = self._variable_step_count(start, stop, step)
            counts.append(self.max(count, self.int64(0)))
        return counts

    def _variable_step_count(self, start, stop, step):
        builder, zero, one = self.builder, self.int64(0), self.int64(1)
        with builder.if_then(builder.icmp_signed("==", step, zero), likely=False):
            self.context.call_conv.return_user_exc(
                builder, ValueError, ("range() arg 3 must not be zero",)
            )
        up = builder.icmp_signed(">", step, zero)
        span = builder.select(up, builder.sub(stop, start), builder.sub(start, stop))
        size = builder.select(up, step, builder.neg(step))
        return builder.sdiv(builder.add(span, builder.sub(size, one)), size)

    def product(self, values: list) -> llvm.Value:
        total = self.int64(1)
        for value in values:
            total = self.builder.mul(total, value)
        return total

    def max(self, a, b):
        return self.builder.select(self.builder.icmp_signed(">", a, b), a, b)

    def min(self, a, b):
        return self.builder.select(self.builder.icmp_signed("<", a, b), a, b)

    def combine(self, op: str, numba_type, a, b) -> llvm.Value:
        """a op b for a reduction's operator: + and * as Numba computes them, min and max as
        Python's (b where it compares smaller or larger, else a)."""
        if op in ("+", "*"):
            function = operator.add if op == "+" else operator.mul
            value, result_type = self.call(function, [numba_type] * 2, [a, b])
            return self.context.cast(self.builder, value, result_type, numba_type)
        comparison = "<" if op == "min" else ">"
        if isinstance(numba_type, types.Float):
            better = self.builder.fcmp_ordered(comparison, b, a)
        elif numba_type.signed:
            better = self.builder.icmp_signed(comparison, b, a)
        else:
            better = self.builder.icmp_unsigned(comparison, b, a)
        return self.builder.select(better, b, a)

    def ceil_div(self, a, b: int):
        return self.builder.sdiv(self.builder.add(a, self.int64(b - 1)), self.int64(b))

    # --- calls, launches ---------------------------------------------------------------------

    def call(self, function, argtypes: list, args: list):
        """A call of a typed function (an intrinsic, a builtin, a jitted function), lowered
        as Numba lowers a call of it."""
        typing = self.context.typing_context
        typing.refresh()
        fnty = typing.resolve_value_type(function)
        signature = fnty.get_call_type(typing, tuple(argtypes), {})
        impl = self.context.get_function(fnty, signature)
        return impl(self.builder, args), signature.return_type

    def launch(self, kernel, argtypes: list, args: list, sizes: list, local: list | None = None):
        """Launch `kernel` over `sizes` (in work-groups of `local`): its event handle."""
        tuple_of = lambda values: cgutils.pack_array(self.builder, values, ty=_I64)  # noqa: E731
        local_size = None if local is None else tuple_of(local)
        return emit_launch(
            self.context, self.builder, kernel, argtypes, args, tuple_of(sizes), local_size
        )

    def wait(self, handle) -> None:
        emit_wait(self.builder, handle)

    @contextlib.contextmanager
    def if_then(self, condition):
        with self.builder.if_then(condition):
            yield

    def if_else(self, condition):
        return self.builder.if_else(condition)

    def all_positive(self, values: list) -> llvm.Value:
        condition = cgutils.true_bit
        for value in values:
            condition = self.builder.and_(
                condition, self.builder.icmp_signed(">", value, self.int64(0))
            )
        return condition

    def none(self) -> llvm.Value:
        return self.context.get_dummy_value()

    def constant(self, numba_type, value) -> llvm.Value:
        return self.context.get_constant(numba_type, value)

    def slot(self, numba_type) -> llvm.Value:
        """A stack slot for a value of `numba_type` (set in both arms of a branch)."""
        return cgutils.alloca_once(self.builder, self.context.get_value_type(numba_type))

    def variable(self, value) -> llvm.Value:
        """A stack slot holding `value` (to pass values out of both arms of a branch)."""
        return cgutils.alloca_once_value(self.builder, value)

    def load_item(self, array_type, array, index) -> llvm.Value:
        """array[index] of a 1-d array."""
        proxy = self.context.make_array(array_type)(self.context, self.builder, array)
        pointer = cgutils.get_item_pointer(self.context, self.builder, array_type, proxy, [index])
        return self.context.unpack_value(self.builder, array_type.dtype, pointer)

    def laid_out(self, array_type, array) -> llvm.Value:
        """Whether a USM array is laid out as host-SIMD kernels assume (host_simd.fits): its
        first element 64-byte aligned, and a last extent of a multiple of 64 bytes."""
        builder = self.builder
        proxy = self.context.make_array(array_type)(self.context, builder, array)
        address = builder.ptrtoint(proxy.data, _I64)
        aligned = builder.icmp_unsigned("==", builder.and_(address, self.int64(63)), self.int64(0))
        if array_type.ndim < 2:
            return aligned
        last = cgutils.unpack_tuple(builder, proxy.shape)[-1]
        row = builder.mul(last, self.int64(self.itemsize(array_type)))
        rows = builder.icmp_unsigned("==", builder.and_(row, self.int64(63)), self.int64(0))
        return builder.and_(aligned, rows)

    def itemsize(self, array_type) -> int:
        """The bytes of one element (booleans have no bitwidth in Numba's types)."""
        return self.context.get_abi_sizeof(self.context.get_data_type(array_type.dtype))

    def int1(self, value: bool) -> llvm.Value:
        return cgutils.true_bit if value else cgutils.false_bit

    def c_contiguous(self, array_type, array) -> llvm.Value:
        """Whether an array's strides are a C-contiguous array's (dimensions of size 1 aside,
        whose stride no index uses)."""
        builder = self.builder
        proxy = self.context.make_array(array_type)(self.context, builder, array)
        shape = cgutils.unpack_tuple(builder, proxy.shape)
        strides = cgutils.unpack_tuple(builder, proxy.strides)
        expected = self.int64(self.itemsize(array_type))
        condition = cgutils.true_bit
        for size, stride in zip(reversed(shape), reversed(strides)):
            fits = builder.or_(
                builder.icmp_signed("==", stride, expected),
                builder.icmp_signed("==", size, self.int64(1)),
            )
            condition = builder.and_(condition, fits)
            expected = builder.mul(expected, size)
        return condition

    def span(self, array_type, array) -> tuple[llvm.Value, llvm.Value]:
        """The addresses [first, past the last) an array's elements lie in."""
        builder = self.builder
        proxy = self.context.make_array(array_type)(self.context, builder, array)
        first = last = builder.ptrtoint(proxy.data, _I64)
        shape = cgutils.unpack_tuple(builder, proxy.shape)
        strides = cgutils.unpack_tuple(builder, proxy.strides)
        for size, stride in zip(shape, strides):
            reach = builder.mul(builder.sub(size, self.int64(1)), stride)
            first = builder.add(first, self.min(reach, self.int64(0)))
            last = builder.add(last, self.max(reach, self.int64(0)))
        return first, builder.add(last, self.int64(self.itemsize(array_type)))

    def overlap(self, a: tuple, b: tuple) -> llvm.Value:
        """Whether two spans share an address."""
        builder = self.builder
        return builder.and_(
            builder.icmp_unsigned("<", a[0], b[1]), builder.icmp_unsigned("<", b[0], a[1])
        )

    def nbytes(self, array_type, array) -> llvm.Value:
        """The bytes of an array's elements (its size times its itemsize)."""
        proxy = self.context.make_array(array_type)(self.context, self.builder, array)
        size = self.product(cgutils.unpack_tuple(self.builder, proxy.shape))
        return self.builder.mul(size, self.int64(self.itemsize(array_type)))

    def store(self, value, fromty, name: str) -> None:
        """Store `value` of type `fromty` into the host variable `name` (cast to its type)."""
        totype = self.lowerer.typeof(name)
        self.lowerer.storevar(self.context.cast(self.builder, value, fromty, totype), name)
