"""Lowering strategy: an element-wise nest over C-contiguous arrays of its own shape as a 1-D
range of all its elements (docs/offload.md, "Flat nests").

A nest of 2 or 3 levels whose body only reads and writes its arrays at `[i, j]` (all its
indices, in order) touches the same element of each array that the flat index `i * n1 + j`
touches of the arrays' flat views, when they are C-contiguous and of the nest's shape. The
OpenCL CPU runtime vectorises a kernel along its innermost dimension, so a 2-D range of a few
columns ran in masked, mostly empty vectors: `out[:, :] = a * 2.0 + 1.0` of 2^22 float64 in 3
columns took 14.4 ms over a 2-D range and 1.9 ms over the flat one (16 columns: 2.9 and 1.6
ms). The flat kernel is compiled on the first launch whose arrays fit (`fits`), as the streaming
kernel is; other launches take the nest's kernel.
"""

from __future__ import annotations

from numba.core import cgutils, ir, types
from numba.np.arrayobj import populate_array

from . import codegen
from .codegen import api, assign, call
from .ir_values import access
from .kernel_ir import RegionKernel
from .launching import Host
from .regions import Region, copy_blocks

#: The flat kernel's index variable.
FLAT_INDEX = "_dk_flat"


def _index_tuples(region: Region) -> set[str] | None:
    """The body's variables holding the tuple of all the nest's indices, in order, where the
    indices are used for nothing else and the arrays only through such tuples; else None."""
    indices = [level.index for level in region.levels]
    arrays = {name for name, p in region.params.items() if isinstance(p.type, types.Array)}
    tuples, uses = set(), []
    for block in region.body.values():
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            is_tuple = isinstance(value, ir.Expr) and value.op == "build_tuple"
            if is_tuple and [v.name for v in value.items] == indices:
                tuples.add(stmt.target.name)
                continue
            uses.append(stmt)
    if not tuples:
        return None
    for stmt in uses:
        names = {v.name for v in stmt.list_vars()}
        if names & set(indices):
            return None
        touched = names & (arrays | tuples)
        if not touched:
            continue
        array, index = access(stmt) or (None, None)
        ok = array is not None and array.name in arrays and index is not None
        ok = ok and index.name in tuples
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            ok &= stmt.value.name not in arrays | tuples
        if not ok:
            return None
    return tuples


def takes(region: Region) -> bool:
    """Whether a nest without reductions can run flat: 2 or 3 levels from 0 in steps of 1,
    arrays of its rank used only at its indices (see `_index_tuples`)."""
    levels = region.levels
    if region.reductions or not 2 <= len(levels) <= 3:
        return False
    if any(level.start != 0 or level.step != 1 for level in levels):
        return False
    if any(
        isinstance(p.type, types.Array) and p.type.ndim != len(levels)
        for p in region.params.values()
    ):
        return False
    return _index_tuples(region) is not None


def kernel(region: Region, name: str, cache: bool) -> RegionKernel:
    """The flat kernel of a nest `takes` took: its index tuples are the flat index."""
    tuples = _index_tuples(region)
    body = copy_blocks(region.body)
    for block in body.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and stmt.target.name in tuples:
                stmt.value = ir.Var(block.scope, FLAT_INDEX, stmt.loc)
    template = codegen.function(
        name,
        list(region.params),
        [assign(FLAT_INDEX, call(api("get_global_id"), 0)), codegen.sentinel()],
        region.line,
    )
    return RegionKernel(
        template,
        body,
        {*region.params, FLAT_INDEX},
        filename=region.filename,
        describe=region.describe,
        cache=cache,
        debug=region.raises,
    )


def flat_types(argtypes: list) -> list:
    """The flat kernel's argument types: each array one-dimensional and C-contiguous."""
    return [t.copy(ndim=1, layout="C") if isinstance(t, types.Array) else t for t in argtypes]


def fits(host: Host, argtypes: list, values: list, counts: list):
    """In host code: whether every array is C-contiguous and of the nest's shape."""
    builder = host.builder
    condition = cgutils.true_bit
    for argtype, value in zip(argtypes, values):
        if not isinstance(argtype, types.Array):
            continue
        proxy = host.context.make_array(argtype)(host.context, builder, value)
        for size, count in zip(cgutils.unpack_tuple(builder, proxy.shape), counts):
            condition = builder.and_(condition, builder.icmp_signed("==", size, count))
        if argtype.layout != "C":
            condition = builder.and_(condition, host.c_contiguous(argtype, value))
    return condition


def flat_values(host: Host, argtypes: list, values: list, total) -> list:
    """In host code: the arguments with each array as its flat view of `total` elements."""
    context, builder = host.context, host.builder
    flat = []
    for argtype, value in zip(argtypes, values):
        if not isinstance(argtype, types.Array):
            flat.append(value)
            continue
        proxy = context.make_array(argtype)(context, builder, value)
        view_type = argtype.copy(ndim=1, layout="C")
        view = context.make_array(view_type)(context, builder)
        populate_array(
            view,
            data=proxy.data,
            shape=cgutils.pack_array(builder, [total]),
            strides=cgutils.pack_array(builder, [proxy.itemsize]),
            itemsize=proxy.itemsize,
            meminfo=proxy.meminfo,
            parent=proxy.parent,
        )
        flat.append(view._getvalue())
    return flat
