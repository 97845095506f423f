"""Parallel implementations of NumPy's (and dpnp's) reductions, `where`, `copy` and `@` for
offloaded code, written with prange and inlined where they are called, so that Numba's parfor
passes make kernels of them; the stand-ins they are called through, and `register`, through
which indexing.py and masks.py add those of indexing with an array (`take`, `put`,
`compress`, ...).

Numba's own parallel versions cover whole-array reductions only (no `axis=`), take Python's
`min`, which skips a NaN, where NumPy's is NaN, and leave `@`, `where`, `copy` and indexing
with an array to host code that allocates NumPy arrays. names.py puts these stand-ins in place
of NumPy's and dpnp's functions and of the array methods of the same names; each overload
decides, when Numba types the call, the result's dtype (NumPy's) and the loops for the array's
dimensions and `axis`.
Results are USM arrays allocated like their first argument (allocation.py). As in Numba's
own, `init_prange()` before a loop's accumulators makes them the loop's own when Numba fuses it
with the loop before it.
"""

from __future__ import annotations

import math

import dpnp
import numba
import numpy as np
from numba.core import errors, ir, types
from numba.core.extending import overload
from numba.core.inline_closurecall import inline_closure_call
from numba.parfors import parfor as numba_parfor

from .allocation import STAND_INS
from .axis_reductions import NEEDS_ELEMENTS as _NEEDS_ELEMENTS
from .axis_reductions import REFUSE_EMPTY as _REFUSE_EMPTY
from .axis_reductions import along_axis as _along_axis

#: dpnp.empty_like's stand-in: each implementation holds it as a closure variable, as it holds
#: every helper it calls (Numba's pre-parfor pass inlines it with the caller's globals).
EMPTY_LIKE = STAND_INS[dpnp.empty_like]

#: NumPy's reductions and functions replaced in offloaded code, by name.
NAMES = [
    "sum",
    "prod",
    "min",
    "max",
    "amin",
    "amax",
    "mean",
    "var",
    "std",
    "argmin",
    "argmax",
    "where",
    "dot",
    "matmul",
    "copy",
]
#: Offload's own operations, which no NumPy or dpnp function of their name stands for
#: (indexing.py and masks.py: `a[indices]`, its store, `x[mask]`, the stores through a mask
#: and the count they share; np.take, np.put, np.compress and np.place differ).
OWN_NAMES = ["take", "put", "selection_starts", "compress", "masked_store", "place"]


def _stand_in(name: str):
    def stand_in(*args, **kwargs):
        raise TypeError(f"the offloaded {name} stand-in runs only in offloaded code")

    stand_in.__name__ = stand_in.__qualname__ = f"offloaded_{name}"
    return stand_in


#: name -> the function offloaded code calls for NumPy's or dpnp's `name` (or the method); a
#: reduction's takes (array, axis), None where no axis is given (names.py).
STAND_INS_BY_NAME = {name: _stand_in(name) for name in NAMES + OWN_NAMES}
STAND_INS_BY_NAME.update(amin=STAND_INS_BY_NAME["min"], amax=STAND_INS_BY_NAME["max"])


def pre_parfor(state) -> bool:
    """The stand-ins' implementations inlined where they are called (inline_stand_ins), then
    Numba's pre-parfor pass with Numba's parallel implementations (those not replaced)."""
    inline_stand_ins(state)
    numba_parfor.PreParforPass(
        state.func_ir,
        state.typemap,
        state.calltypes,
        state.typingctx,
        state.targetctx,
        state.flags.auto_parallel,
        state.parfor_diagnostics.replaced_fns,
    ).run()
    return True


def inline_stand_ins(state) -> None:
    """Each call of a stand-in replaced by its implementation for the argument types, inlined
    (as Numba's pre-parfor pass inlines its own, but with this module's globals)."""
    stand_ins = {id(f): choose for f, choose in _CHOOSERS.items()}
    work_list = list(state.func_ir.blocks.items())
    nested = set()  # the blocks of inlined implementations: their calls do not name a line
    while work_list:
        label, block = work_list.pop()
        for position, stmt in enumerate(block.body):
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(value, ir.Expr) and value.op == "call"):
                continue
            fnty = state.typemap.get(value.func.name)
            choose = stand_ins.get(id(getattr(fnty, "typing_key", None)))
            if choose is None:
                continue
            argtypes = tuple(state.typemap[a.name] for a in value.args)
            implementation = choose(*argtypes)
            before = set(state.func_ir.blocks)
            inlined, _ = inline_closure_call(
                state.func_ir,
                implementation.__globals__,
                block,
                position,
                implementation,
                state.typingctx,
                state.targetctx,
                argtypes,
                state.typemap,
                state.calltypes,
                work_list,
            )
            for inlined_block in inlined.values():  # the caller's line, for kernels and errors
                for inlined_stmt in inlined_block.body:
                    inlined_stmt.loc = stmt.loc
            if label in nested:
                nested.update(set(state.func_ir.blocks) - before)
            else:
                nested.update(inlined)
                calls = state.metadata.setdefault("dk_offload_calls", {})
                calls[stmt.loc.filename, stmt.loc.line] = fnty.typing_key.__name__.split("_", 1)[1]
            break  # the block was split: its rest is on the work list


# --- dtypes and checks ------------------------------------------------------------------------


def checked_array(value, name: str):
    if not isinstance(value, types.Array):
        raise errors.TypingError(f"{name}() in an offloaded function takes an array; got {value}")
    if not 1 <= value.ndim <= 3:
        raise errors.TypingError(f"{name}() in an offloaded function takes 1-3-d arrays")
    return value


def _numpy_dtype(function, dtype) -> types.Type:
    """The dtype NumPy gives function(array of dtype)."""
    result = np.asarray(function(np.ones(2, dtype=str(dtype)))).dtype
    return numba.from_dtype(result)


def _axis(axis, ndim: int, name: str) -> int | None:
    """The axis a reduction takes (None: all of the array)."""
    if isinstance(axis, types.Omitted):
        axis = axis.value
    if axis is None or isinstance(axis, types.NoneType):
        return None
    if isinstance(axis, types.IntegerLiteral):
        value = axis.literal_value
    elif isinstance(axis, int):
        value = axis
    else:
        raise errors.TypingError(
            f"{name}(): axis= in an offloaded function must be a constant integer; got {axis}"
        )
    if not -ndim <= value < ndim:
        raise errors.TypingError(f"{name}(): axis {value} is out of bounds for {ndim}-d arrays")
    return value % ndim


# --- whole-array reductions: one prange loop, its reduction on the device --------------------


def _flat(array):
    """A compiled function giving the elements of an array in one 1-d view: the array itself
    (1-d), or its reshape (C-ordered)."""
    if array.ndim == 1:
        return _itself
    if array.layout == "C":
        return _flattened
    raise errors.TypingError(
        "a whole-array reduction in an offloaded function takes a 1-d or C-ordered array; "
        "reduce a non-contiguous one with axis= or copy it first (x.copy())"
    )


@numba.njit(cache=False)
def _itself(a):  # pragma: no cover (compiled)
    return a


@numba.njit(cache=False)
def _flattened(a):  # pragma: no cover (compiled)
    return a.reshape(a.size)


def _whole(name: str, array, dtype):
    """name's reduction of every element, as prange loops Numba makes reductions of (each
    implementation one function: it is inlined where it is called)."""
    flat, zero, one = _flat(array), dtype(0), dtype(1)
    if name == "sum":

        def sum_all(a, axis):  # pragma: no cover (compiled)
            v = flat(a)
            numba.parfors.parfor.init_prange()
            acc = zero
            for i in numba.prange(v.shape[0]):
                acc += v[i]
            return acc

        return sum_all
    if name == "prod":

        def product_all(a, axis):  # pragma: no cover (compiled)
            v = flat(a)
            numba.parfors.parfor.init_prange()
            acc = one
            for i in numba.prange(v.shape[0]):
                acc *= v[i]
            return acc

        return product_all
    if name == "mean":

        def mean_all(a, axis):  # pragma: no cover (compiled)
            v = flat(a)
            numba.parfors.parfor.init_prange()
            acc = zero
            for i in numba.prange(v.shape[0]):
                acc += v[i]
            return acc / v.shape[0]

        return mean_all
    if name in ("var", "std"):
        root = name == "std"

        def variance_all(a, axis):  # pragma: no cover (compiled)
            v = flat(a)
            numba.parfors.parfor.init_prange()
            total = zero
            for i in numba.prange(v.shape[0]):
                total += v[i]
            mean = total / v.shape[0]
            numba.parfors.parfor.init_prange()
            acc = zero
            for i in numba.prange(v.shape[0]):
                d = v[i] - mean
                acc += d * d
            result = acc / v.shape[0]
            return math.sqrt(result) if root else result

        return variance_all
    return _extreme_all(name, array, flat)


def _extreme_all(name: str, array, flat):
    """min, max (NaN where any element is, as NumPy's), argmin and argmax (the first). Numba
    finds a reduction only in a literal `acc = min(acc, x)`, and each implementation is
    inlined whole: one function per operator."""
    smallest = name in ("min", "argmin")
    start = _extreme(array.dtype, smallest)
    nan = array.dtype(np.nan) if isinstance(array.dtype, types.Float) else array.dtype(0)
    refuse_empty = _REFUSE_EMPTY[name]

    def smallest_value(a, axis):  # pragma: no cover (compiled)
        v = flat(a)
        refuse_empty(v.shape[0])
        numba.parfors.parfor.init_prange()
        acc = start
        nans = 0
        for i in numba.prange(v.shape[0]):
            x = v[i]
            acc = min(acc, x)
            nans += x != x
        return nan if nans > 0 else acc

    def largest_value(a, axis):  # pragma: no cover (compiled)
        v = flat(a)
        refuse_empty(v.shape[0])
        numba.parfors.parfor.init_prange()
        acc = start
        nans = 0
        for i in numba.prange(v.shape[0]):
            x = v[i]
            acc = max(acc, x)
            nans += x != x
        return nan if nans > 0 else acc

    def first_smallest(a, axis):  # pragma: no cover (compiled)
        v = flat(a)
        refuse_empty(v.shape[0])
        numba.parfors.parfor.init_prange()
        acc = start
        nans = 0
        for i in numba.prange(v.shape[0]):
            x = v[i]
            acc = min(acc, x)
            nans += x != x
        numba.parfors.parfor.init_prange()
        where = v.shape[0]
        for i in numba.prange(v.shape[0]):
            x = v[i]
            found = x != x if nans > 0 else x == acc
            where = min(where, i if found else v.shape[0])
        return where

    def first_largest(a, axis):  # pragma: no cover (compiled)
        v = flat(a)
        refuse_empty(v.shape[0])
        numba.parfors.parfor.init_prange()
        acc = start
        nans = 0
        for i in numba.prange(v.shape[0]):
            x = v[i]
            acc = max(acc, x)
            nans += x != x
        numba.parfors.parfor.init_prange()
        where = v.shape[0]
        for i in numba.prange(v.shape[0]):
            x = v[i]
            found = x != x if nans > 0 else x == acc
            where = min(where, i if found else v.shape[0])
        return where

    return {
        "min": smallest_value,
        "max": largest_value,
        "argmin": first_smallest,
        "argmax": first_largest,
    }[name]


def _extreme(dtype, smallest: bool):
    if isinstance(dtype, types.Float):
        return dtype(math.inf if smallest else -math.inf)
    info = np.iinfo(str(dtype))
    return dtype(info.max if smallest else info.min)


#: stand-in -> choose(*argument types): its implementation for them.
_CHOOSERS: dict = {}


def register(name: str, choose) -> None:
    """`choose(*argument types) -> implementation` as the typing of the stand-in of `name`
    (its overload compiles the implementation, with prange as range, for the result type)
    and as its parallel implementation (inline_stand_ins inlines it)."""
    stand_in = STAND_INS_BY_NAME[name]
    overload(stand_in)(choose)
    _CHOOSERS[stand_in] = choose


def _reduction(name: str, function) -> None:
    def choose(a, axis):
        array = checked_array(a, name)
        ordered = name in _NEEDS_ELEMENTS
        if isinstance(array.dtype, types.Complex) or (
            ordered and isinstance(array.dtype, types.Boolean)
        ):
            raise errors.TypingError(f"{name}() in an offloaded function takes real numbers")
        dtype = types.intp if name.startswith("arg") else _numpy_dtype(function, array.dtype)
        chosen = _axis(axis, array.ndim, name)
        if chosen is None or array.ndim == 1:
            return _whole(name, array, dtype)
        return _along_axis(name, array, chosen, dtype)

    register(name, choose)


#: The reductions, which take (array, axis).
REDUCTIONS = ("sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax")
for _name in REDUCTIONS:
    _reduction(_name, getattr(np, _name))


# --- where, copy, matmul ---------------------------------------------------------------------


def _where(condition, x, y):
    cond = checked_array(condition, "where")
    values = [t for t in (x, y) if isinstance(t, types.Array)]
    if any(v.ndim != cond.ndim for v in values):
        raise errors.TypingError(
            "where() in an offloaded function takes arrays of the condition's shape or scalars"
        )
    dtype = numba.from_dtype(
        np.result_type(
            *(
                np.dtype(str(t.dtype if isinstance(t, types.Array) else types.unliteral(t)))
                for t in (x, y)
            )
        )
    )

    empty_like, at = EMPTY_LIKE, element_at

    def impl(condition, x, y):  # pragma: no cover (compiled)
        out = empty_like(condition, dtype=dtype)
        for idx in numba.pndindex(condition.shape):
            out[idx] = at(x, idx) if condition[idx] else at(y, idx)
        return out

    return impl


def element_at(value, idx):
    """An array's element at idx, or a scalar itself (typed: element_at's overload)."""


@overload(element_at)
def element_at_overload(value, idx):
    if isinstance(value, types.Array):
        return lambda value, idx: value[idx]
    return lambda value, idx: value


def _copy(a):
    checked_array(a, "copy")
    empty_like = EMPTY_LIKE

    def impl(a):  # pragma: no cover (compiled)
        out = empty_like(a)
        for idx in numba.pndindex(a.shape):
            out[idx] = a[idx]
        return out

    return impl


def _product(name: str):
    def choose(a, b):
        left, right = checked_array(a, name), checked_array(b, name)
        if left.ndim > 2 or right.ndim > 2:
            raise errors.TypingError(f"{name}() in an offloaded function takes 1-d or 2-d arrays")
        dtype = numba.from_dtype(np.result_type(str(left.dtype), str(right.dtype)))
        zero, empty_like = dtype(0), EMPTY_LIKE
        if left.ndim == 1 and right.ndim == 1:

            def vector(a, b):  # pragma: no cover (compiled)
                numba.parfors.parfor.init_prange()
                acc = zero
                for k in numba.prange(a.shape[0]):
                    acc += a[k] * b[k]
                return acc

            return vector
        if right.ndim == 1:

            def matrix_vector(a, b):  # pragma: no cover (compiled)
                out = empty_like(a, dtype=dtype, shape=(a.shape[0],))
                for i in numba.prange(a.shape[0]):
                    acc = zero
                    for k in range(a.shape[1]):
                        acc += a[i, k] * b[k]
                    out[i] = acc
                return out

            return matrix_vector
        if left.ndim == 1:

            def vector_matrix(a, b):  # pragma: no cover (compiled)
                out = empty_like(b, dtype=dtype, shape=(b.shape[1],))
                for j in numba.prange(b.shape[1]):
                    acc = zero
                    for k in range(b.shape[0]):
                        acc += a[k] * b[k, j]
                    out[j] = acc
                return out

            return vector_matrix

        def matrix(a, b):  # pragma: no cover (compiled)
            out = empty_like(a, dtype=dtype, shape=(a.shape[0], b.shape[1]))
            for i in numba.prange(a.shape[0]):
                for j in numba.prange(b.shape[1]):
                    acc = zero
                    for k in range(a.shape[1]):
                        acc += a[i, k] * b[k, j]
                    out[i, j] = acc
            return out

        return matrix

    register(name, choose)


register("where", _where)
register("copy", _copy)
_product("dot")
_product("matmul")
