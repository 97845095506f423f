"""An array as the direct front end's lowering keeps it: its fields as separate values."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils

from ..entry import contiguous_strides

_INTP = ir.IntType(64)
#: array attributes that are one field of Numba's array struct
_ARRAY_FIELDS = {"shape": "shape", "strides": "strides", "size": "nitems", "itemsize": "itemsize"}


class ArrayParts:
    """An array as the fields of Numba's array struct, kept apart: element access reads the
    fields it needs, and only a call into one of Numba's implementations gets the struct.
    A contiguous parameter's strides are computed, in the entry block, when first needed."""

    def __init__(self, ty, data, shape: list, strides: list | None, itemsize, nitems=None):
        self.type = ty
        self.data, self.shape, self._strides = data, shape, strides
        self.itemsize, self._nitems = itemsize, nitems

    @classmethod
    def of_struct(cls, builder, ty, value, model) -> ArrayParts:
        """The fields of a struct value; read off the constant where the value is a constant
        struct with its data pointer put in (a local or private array, memory.py)."""
        position = {name: model.get_field_position(name) for name in _STRUCT_FIELDS}
        if (
            isinstance(value, ir.InsertValue)
            and isinstance(value.aggregate, ir.Constant)
            and isinstance(value.aggregate.constant, list)
            and list(value.indices) == [position["data"]]
        ):
            known = value.aggregate.constant
            shape, strides = known[position["shape"]], known[position["strides"]]
            return cls(
                ty,
                value.value,
                list(shape.constant),
                list(strides.constant),
                known[position["itemsize"]],
                known[position["nitems"]],
            )
        fields = {name: builder.extract_value(value, at) for name, at in position.items()}
        return cls(
            ty,
            fields["data"],
            [builder.extract_value(fields["shape"], k) for k in range(ty.ndim)],
            [builder.extract_value(fields["strides"], k) for k in range(ty.ndim)],
            fields["itemsize"],
            fields["nitems"],
        )

    def field(self, builder, name: str):
        """One field of the struct: a value, or a list of them for shape and strides."""
        if name == "strides":
            if self._strides is None:  # in the entry block, which every use is after
                with builder.goto_entry_block():
                    itemsize = self.itemsize.constant
                    self._strides = contiguous_strides(
                        builder, self.shape, itemsize, self.type.layout
                    )
            return self._strides
        if name == "nitems" and self._nitems is None:
            # as numba.np.arrayobj.populate_array computes it, here (not kept: a value made
            # in one branch does not reach the other)
            nitems = ir.Constant(_INTP, 1)
            for length in self.shape:
                nitems = builder.mul(nitems, length, flags=["nsw"])
            return nitems
        return self._nitems if name == "nitems" else getattr(self, name)

    def struct(self, context, builder) -> ir.Value:
        """Numba's array struct of these fields (what populate_array fills in)."""
        model = context.data_model_manager[self.type]
        value = ir.Constant(model.get_value_type(), None)
        for name in ("data", "itemsize", "nitems"):
            value = builder.insert_value(
                value, self.field(builder, name), model.get_field_position(name)
            )
        for name in ("shape", "strides"):
            packed = cgutils.pack_array(builder, self.field(builder, name), _INTP)
            value = builder.insert_value(value, packed, model.get_field_position(name))
        return value


_STRUCT_FIELDS = ("data", "itemsize", "nitems", "shape", "strides")
