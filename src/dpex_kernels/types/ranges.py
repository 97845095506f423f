"""Launch ranges: Range and NdRange, validated once so the launch path only reads them."""

from __future__ import annotations

import operator

import numpy as np

from ..errors import InvalidRangeError

#: Launch range dimensions are below this: kernels' ids and sizes are known to be (compiler/
#: kernel_api/index_space.py), so `x[i + 1]` of an id `i` cannot wrap around to a negative
#: index and LLVM drops Numba's wraparound of negative indices (an offloaded 4096² float32
#: stencil: 6.2-6.8 against 4.8-5.1 ms with it). No device runs 2**62 work-items.
MAX_DIMENSION = 2**62


def _dims(values: tuple, what: str) -> tuple[int, ...]:
    if not 1 <= len(values) <= 3:
        raise InvalidRangeError(f"{what} takes 1 to 3 dimensions; got {len(values)}: {values!r}")
    dims = []
    for value in values:
        if isinstance(value, bool):
            raise InvalidRangeError(f"{what} dimensions must be ints; got bool {value!r}")
        try:
            dim = operator.index(value)
        except TypeError:
            raise InvalidRangeError(
                f"{what} dimensions must be ints; got {value!r} of type {type(value).__name__}"
            ) from None
        if dim < 0:
            raise InvalidRangeError(f"{what} dimensions must be >= 0; got {dim}")
        if dim >= MAX_DIMENSION:
            raise InvalidRangeError(
                f"{what} dimension {dim} is not below 2**62 (kernels index with 63-bit ids): "
                "split the work into several launches"
            )
        dims.append(dim)
    return tuple(dims)


class Range(tuple):
    """The index space of a launch: one work-item per index, in 1 to 3 dimensions.

    ``kernel[dk.Range(n0, n1)](...)`` runs ``n0 * n1`` work-items, ``dk.get_global_id(0)``
    over ``n0`` and ``dk.get_global_id(1)`` over ``n1``; the last dimension varies fastest
    between neighbouring work-items (SYCL's order), so ``out[i, j]`` walks a C-ordered array
    contiguously. The runtime chooses the work-groups (``dk.NdRange`` chooses them itself). A
    zero size launches nothing. A ``Range`` is a tuple of its sizes.

    Parameters
    ----------
    *dims : int
        The sizes, 1 to 3 non-negative ints (or one tuple or list of them).

    Attributes
    ----------
    ndim : int
        The number of dimensions.
    size : int
        The number of work-items, the product of the sizes.

    Raises
    ------
    InvalidRangeError
        If there are not 1 to 3 sizes, or one is not a non-negative int that fits in 64 bits.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> r = dk.Range(2, 3)
    >>> r.ndim, r.size, tuple(r)
    (2, 6, (2, 3))
    >>> @dk.kernel
    ... def index(out):
    ...     i, j = dk.get_global_id(0), dk.get_global_id(1)
    ...     out[i, j] = 10 * i + j
    >>> out = dpnp.empty((2, 3), dtype="i8")
    >>> index[r](out).wait()
    >>> dpnp.asnumpy(out)
    array([[ 0,  1,  2],
           [10, 11, 12]])
    """

    __slots__ = ()

    def __new__(cls, *dims: int) -> Range:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return super().__new__(cls, _dims(dims, "Range"))

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self)

    @property
    def size(self) -> int:
        """The number of work-items."""
        total = 1
        for dim in self:
            total *= dim
        return total

    def __repr__(self) -> str:
        return f"Range({', '.join(map(str, self))})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Range) and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(("Range", tuple(self)))


class NdRange:
    """A launch's index space cut into work-groups of a size you choose.

    Work-items of one work-group can share ``dk.local.array`` memory and wait for each other
    at ``dk.barrier``; ``dk.get_local_id``, ``dk.get_group_id`` and the nd-item of SYCL 2020
    kernels address them. An ``NdRange`` is immutable.

    Parameters
    ----------
    global_range : Range, int or tuple of int
        The whole index space, 1 to 3 sizes.
    local_range : Range, int or tuple of int
        The work-group's sizes, as many as `global_range` has, each at least 1 and dividing
        its global size. Their product may not exceed the kernel's
        ``attrs.max_work_group_size`` (checked at launch).

    Attributes
    ----------
    global_range : Range
        The whole index space.
    local_range : Range
        One work-group's sizes.
    ndim : int
        The number of dimensions.

    Raises
    ------
    InvalidRangeError
        If either range is malformed, they differ in dimensions, or a local size is 0 or does
        not divide its global size.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def group_of(out):
    ...     out[dk.get_global_id(0)] = dk.get_group_id(0)
    >>> out = dpnp.empty(6, dtype="i8")
    >>> group_of[dk.NdRange(6, 2)](out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 1, 1, 2, 2])
    >>> dk.NdRange(6, 4)
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.InvalidRangeError: NdRange local size 4 does not divide global size 6 ...
    """

    __slots__ = ("global_range", "local_range")

    def __init__(self, global_range: Range | tuple | int, local_range: Range | tuple | int):
        global_range = _as_range(global_range, "NdRange global_range")
        local_range = _as_range(local_range, "NdRange local_range")
        if len(global_range) != len(local_range):
            raise InvalidRangeError(
                f"NdRange global_range {tuple(global_range)} and local_range "
                f"{tuple(local_range)} must have the same number of dimensions"
            )
        for axis, (g, ell) in enumerate(zip(global_range, local_range)):
            if ell == 0:
                raise InvalidRangeError(f"NdRange local_range dimension {axis} must be >= 1")
            if g % ell:
                raise InvalidRangeError(
                    f"NdRange local size {ell} does not divide global size {g} in dimension "
                    f"{axis}; pad the global range to a multiple of {ell}"
                )
        object.__setattr__(self, "global_range", global_range)
        object.__setattr__(self, "local_range", local_range)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("NdRange is immutable")

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.global_range)

    def __repr__(self) -> str:
        return f"NdRange({self.global_range!r}, {self.local_range!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NdRange)
            and self.global_range == other.global_range
            and self.local_range == other.local_range
        )

    def __hash__(self) -> int:
        return hash(("NdRange", tuple(self.global_range), tuple(self.local_range)))

    def __reduce__(self):
        return NdRange, (self.global_range, self.local_range)


#: A Range is ragged when its fastest (last) dimension has no divisor in GOOD_DIVISORS and it
#: has at least RAGGED_MIN_ITEMS work-items in all. The OpenCL CPU runtime cuts such a range
#: into work-groups of one of its small divisors: a vecadd over 2^24 - 74 (2 x a prime) took
#: 40 ms against 5.1 in work-groups of 128 and a smaller last one, a prime 10^6 + 3 4.0 ms
#: against 0.12. Its own choice was as fast or faster (0.91-1.02x) wherever the size had a
#: divisor of 32 or more, and 1.09-2.0x slower for largest divisors of 12-31 (device time,
#: docs/launcher.md, "Ranges with no good divisor"). RAGGED_MIN_ITEMS leaves at least 64
#: work-groups of 128 to share out among the cores.
GOOD_DIVISORS = np.arange(32, 1025)
RAGGED_MIN_ITEMS = 8192


def is_ragged(global_size: tuple[int, ...]) -> bool:
    """Whether a Range of `global_size` is ragged (above): launched in work-groups of the
    kernel's preferred size where the device takes a smaller last one."""
    fastest, total = global_size[-1], 1
    for n in global_size:
        total *= n
    if fastest < GOOD_DIVISORS[-1] or total < RAGGED_MIN_ITEMS:
        return False
    return not (fastest % GOOD_DIVISORS == 0).any()


def _is_int(value: object) -> bool:
    """Python and NumPy integers (anything with __index__), but never bool."""
    return hasattr(type(value), "__index__") and not isinstance(value, (bool, np.bool_))


def _as_range(value: object, what: str) -> Range:
    if isinstance(value, Range):
        return value
    if isinstance(value, (tuple, list)):
        return Range(*value) if value else Range(*_dims((), what))
    if _is_int(value):
        return Range(*_dims((value,), what))
    raise InvalidRangeError(f"{what} must be a Range, an int or a tuple of 1-3 ints; got {value!r}")


def as_launch_range(value: object) -> Range | NdRange:
    """What `kernel[value]` accepts, normalised; InvalidRangeError for anything else."""
    if isinstance(value, (Range, NdRange)):
        return value
    if isinstance(value, bool):
        raise InvalidRangeError(f"a launch range cannot be a bool; got {value!r}")
    if isinstance(value, tuple) or _is_int(value):
        return _as_range(value, "launch range")
    raise InvalidRangeError(
        f"a launch range must be dk.Range, dk.NdRange, an int or a tuple of 1-3 ints; "
        f"got {value!r} of type {type(value).__name__}"
    )
