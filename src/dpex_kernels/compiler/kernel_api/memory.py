"""Local and private arrays: dk.local.array and dk.private.array, and the local array type."""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba.core import types as nbtypes
from numba.core.typing.templates import CallableTemplate
from numba.np import numpy_support

from ...types.spec import LocalAccessorSpec
from ...types.usm_array_type import scalar_type
from .registry import host_stub, lowering_registry, typing_registry
from .spirv import LOCAL, PRIVATE


class LocalArrayType(nbtypes.Array):
    """An array in work-group local memory (dk.local.array)."""

    addrspace = LOCAL

    def __init__(self, dtype, ndim, layout="C", readonly=False, aligned=True):
        name = f"local_array({dtype}, {ndim}d, {layout})"
        super().__init__(dtype, ndim, layout, readonly=readonly, name=name, aligned=aligned)

    def __repr__(self) -> str:
        return self.name

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        """Views of a local array stay in local memory."""
        return LocalArrayType(
            self.dtype if dtype is None else dtype,
            self.ndim if ndim is None else ndim,
            self.layout if layout is None else layout,
            readonly=(not self.mutable) if readonly is None else readonly,
            aligned=self.aligned,
        )


class LocalAccessorType(LocalArrayType):
    """A dk.LocalAccessor parameter: a C-ordered local array whose shape a launch gives."""

    def __init__(self, dtype, ndim, layout="C", readonly=False, aligned=True):
        super().__init__(dtype, ndim, "C", readonly=readonly, aligned=aligned)
        self.name = f"local_accessor({dtype}, {ndim}d)"

    @property
    def spec(self) -> LocalAccessorSpec:
        """The numba-free description the launch matches against (types/params.py)."""
        return LocalAccessorSpec(str(self.dtype), self.ndim)


def local_accessor(dtype: object, ndim: int) -> LocalAccessorType:
    """Describe a ``dk.LocalAccessor`` parameter, for the signatures of eager kernels.

    The accessor's shape is not part of the type: each launch gives it, so one compiled kernel
    serves every work-group size and local-memory size.

    Parameters
    ----------
    dtype : numpy dtype, str or dk scalar type
        The element type: an integer or float type.
    ndim : int
        The accessor's number of dimensions, 1 to 3.

    Returns
    -------
    LocalAccessorType
        The Numba type a signature lists for the parameter.

    Raises
    ------
    TypeError
        If `dtype` is not an integer or float type.
    ValueError
        If `ndim` is not 1, 2 or 3.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> sig = dk.void(dk.usm_array(dk.float32, 1), dk.local_accessor(dk.float32, 1))
    >>> @dk.kernel(sig)
    ... def reverse_in_groups(a, scratch):
    ...     i = dk.get_local_id(0)
    ...     n = dk.get_local_size(0)
    ...     scratch[i] = a[dk.get_global_id(0)]
    ...     dk.barrier(dk.LOCAL_MEM_FENCE)
    ...     a[dk.get_global_id(0)] = scratch[n - 1 - i]
    >>> a = dpnp.arange(8, dtype="f4")
    >>> reverse_in_groups[dk.NdRange(8, 4)](a, dk.LocalAccessor(4, "f4")).wait()
    >>> dpnp.asnumpy(a)
    array([3., 2., 1., 0., 7., 6., 5., 4.], dtype=float32)
    """
    numba_dtype = scalar_type(dtype)
    if not isinstance(numba_dtype, (nbtypes.Integer, nbtypes.Float)):  # as dk.LocalAccessor's
        raise TypeError(f"a LocalAccessor's dtype is an integer or float type; got {dtype!r}")
    if isinstance(ndim, bool) or not isinstance(ndim, int) or not 1 <= ndim <= 3:
        raise ValueError(f"a LocalAccessor has 1 to 3 dimensions; got ndim={ndim!r}")
    return LocalAccessorType(numba_dtype, ndim)


def _literal_shape(shape_type) -> tuple[int, ...] | None:
    if isinstance(shape_type, nbtypes.IntegerLiteral):
        return (shape_type.literal_value,)
    if isinstance(shape_type, nbtypes.BaseTuple) and all(
        isinstance(t, nbtypes.IntegerLiteral) for t in shape_type
    ):
        return tuple(t.literal_value for t in shape_type)
    return None


def _dtype_of(dtype_type):
    if isinstance(dtype_type, nbtypes.DTypeSpec):
        return dtype_type.dtype
    if isinstance(dtype_type, nbtypes.StringLiteral):
        try:
            return numpy_support.from_dtype(np.dtype(dtype_type.literal_value))
        except (TypeError, ValueError, NotImplementedError):
            return None
    return None


def _array_allocator(name: str, public: str, make_type, place):
    stub = host_stub(
        name,
        f"In a kernel: {public}(shape, dtype); shape a constant; both may be keywords.",
        public,
    )

    @typing_registry.register_global(stub)
    class _Template(CallableTemplate):
        prefer_literal = True  # dtype strings ("f4") are read as literals

        def generic(self):
            def typer(shape, dtype):
                extents, element = _literal_shape(shape), _dtype_of(dtype)
                if extents is None or element is None or any(n <= 0 for n in extents):
                    return None
                return make_type(element, len(extents))

            return typer

    @lowering_registry.lower(stub, nbtypes.Any, nbtypes.Any)
    def _lower(context, builder, sig, args):
        """The struct numba.np.arrayobj.populate_array fills in, as one constant with the data
        pointer put in: the pointer is all of it not known before run time."""
        array_type = sig.return_type
        shape = _literal_shape(sig.args[0])
        element = context.get_data_type(array_type.dtype)
        data = place(builder, ir.ArrayType(element, math.prod(shape)))
        data = builder.bitcast(data, element.as_pointer(data.type.addrspace))
        itemsize = context.get_abi_sizeof(element)
        strides, step = [], itemsize
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
        intp = context.get_value_type(nbtypes.intp)
        extents = ir.ArrayType(intp, len(shape))
        known = {
            "nitems": intp(math.prod(shape)),
            "itemsize": intp(itemsize),
            "shape": ir.Constant(extents, [intp(n) for n in shape]),
            "strides": ir.Constant(extents, [intp(n) for n in strides]),
        }
        model = context.data_model_manager[array_type]
        struct = model.get_value_type()
        fields = [ir.Constant(t, None) for t in struct.elements]  # meminfo, parent: null
        for name, value in known.items():
            fields[model.get_field_position(name)] = value
        constant = ir.Constant(struct, fields)
        return builder.insert_value(constant, data, model.get_field_position("data"))

    return stub


def _place_local(builder, array_type):
    module = builder.module
    variable = ir.GlobalVariable(
        module, array_type, module.get_unique_name("dpex.local"), addrspace=LOCAL
    )
    variable.linkage = "internal"
    variable.initializer = ir.Constant(array_type, ir.Undefined)
    return variable


def _place_private(builder, array_type):
    with builder.goto_entry_block():
        return builder.alloca(array_type)


local_array = _array_allocator(
    "local_array",
    "dk.local.array",
    LocalArrayType,
    _place_local,
)
private_array = _array_allocator(
    "private_array",
    "dk.private.array",
    lambda dtype, ndim: nbtypes.Array(dtype, ndim, "C"),
    _place_private,
)
assert PRIVATE == 0  # private arrays are Numba's own arrays: address space 0 is private
