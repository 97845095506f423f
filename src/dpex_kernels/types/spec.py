"""Numba-free descriptions of kernel parameters, and the one matcher both launch paths share.

A parameter is either an ArraySpec (a USM array) or a scalar dtype name ("int64", "float32").
The JIT dispatcher and the AOT runtime both call `explain_mismatch` so users see one error text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LAYOUTS = ("C", "F", "A")
USM_TYPES = ("device", "shared", "host")
MAX_NDIM = 8
FIELDS = ("dtype", "ndim", "layout", "usm_type", "device")

#: NumPy names of the scalar types a kernel parameter may have.
SCALAR_NAMES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)


@dataclass(frozen=True)
class ArraySpec:
    """A USM array parameter or argument: what dispatch compares, nothing else."""

    dtype: str
    ndim: int
    layout: str
    usm_type: str
    device: str
    #: For arguments: the layouts the strides satisfy ("CF" for a contiguous 1-d array).
    contiguity: str = ""
    #: A parameter the kernel may not write, or an argument whose flags.writable is false.
    readonly: bool = False

    def describe(self) -> str:
        """The same text as str(usm_array(...)), so messages read alike everywhere."""
        text = (
            f"usm_array({self.dtype}, {self.ndim}d, {self.layout}, {self.usm_type}, {self.device})"
        )
        return "readonly " + text if self.readonly else text

    def mismatch(self, arg: ArraySpec) -> str | None:
        """The first field in which the argument `arg` does not fit this parameter, or None.
        Writability is no field here: a read-only argument fits a writable parameter that the
        kernel does not write (the launch checks that, dispatcher/launch.py)."""
        if self.dtype != arg.dtype:
            return "dtype"
        if self.ndim != arg.ndim:
            return "ndim"
        if self.layout != "A" and self.layout not in arg.contiguity:
            return "layout"
        if self.usm_type != arg.usm_type:
            return "usm_type"
        if self.device != arg.device:
            return "device"
        return None


def contiguity(shape: tuple[int, ...], strides: tuple[int, ...] | None, itemsize: int) -> str:
    """The layouts ("C", "F", both or neither) that byte `strides` satisfy for `shape`."""
    if strides is None or any(n == 0 for n in shape):
        return "CF"
    result = ""
    for letter, axes in (("C", reversed(range(len(shape)))), ("F", range(len(shape)))):
        expected = itemsize
        ok = True
        for axis in axes:
            if shape[axis] != 1 and strides[axis] != expected:
                ok = False
                break
            expected *= shape[axis]
        if ok:
            result += letter
    return result


def layout_of(contig: str) -> str:
    """typeof's rule: "C" if C-contiguous, else "F" if F-contiguous, else "A"."""
    return "C" if "C" in contig else "F" if "F" in contig else "A"


_INT_RANGES = {
    name: (int(np.iinfo(name).min), int(np.iinfo(name).max))
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
}


def scalar_matches(param: str, value: object) -> bool:
    """The scalar rules (docs/dispatch.md): may `value` go where a `param` scalar is declared?"""
    if isinstance(value, np.generic):  # before the Python checks: np.float64 is a float
        if value.dtype.name not in SCALAR_NAMES:
            return False
        source, target = value.dtype, np.dtype(param)
        if source.kind in "iu" and source.itemsize == 8 and target.kind in "fc":
            return False  # NumPy calls int64 -> float64 safe, but it loses digits past 2**53
        return bool(np.can_cast(source, target, casting="safe"))
    if isinstance(value, bool):
        return param == "bool"
    if isinstance(value, int):
        if param in _INT_RANGES:
            low, high = _INT_RANGES[param]
            return low <= value <= high
        return param in ("float32", "float64")
    if isinstance(value, float):
        return param in ("float32", "float64")
    if isinstance(value, complex):
        return param in ("complex64", "complex128")
    return False


def scalar_name_of(value: object) -> str | None:
    """The scalar type a lazy kernel gives `value` (int→int64, float→float64), or None."""
    if isinstance(value, np.generic):
        return value.dtype.name if value.dtype.name in SCALAR_NAMES else None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    return None


def describe_argument(value: object, spec: ArraySpec | None) -> str:
    """How an argument reads in an error message."""
    if spec is not None:
        return spec.describe()
    if isinstance(value, (bool, int, float, complex)):
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__


def first_difference(
    params: tuple[ArraySpec | str, ...], args: tuple, arg_specs: tuple[ArraySpec | None, ...]
) -> tuple[int, str] | None:
    """(position, field) of the first argument that does not fit `params`, or None if all fit."""
    for position, (param, value, spec) in enumerate(zip(params, args, arg_specs)):
        if isinstance(param, ArraySpec):
            if spec is None:
                return position, "kind (array expected)"
            field = param.mismatch(spec)
            if field is not None:
                return position, field
        elif spec is not None:
            return position, "kind (scalar expected)"
        elif not scalar_matches(param, value):
            return position, "dtype"
    return None


def explain_mismatch(
    kernel_name: str,
    param_names: tuple[str, ...],
    signatures: list[tuple[tuple[ArraySpec | str, ...], str]],
    args: tuple,
    arg_specs: tuple[ArraySpec | None, ...],
) -> str:
    """The KernelSignatureError text: what was given and, per signature, the first difference.

    `signatures` pairs each declared parameter tuple with its display text.
    """
    given = ", ".join(describe_argument(a, s) for a, s in zip(args, arg_specs))
    lines = [f"kernel '{kernel_name}' has no signature for arguments ({given})."]
    for params, text in signatures:
        found = first_difference(params, args, arg_specs)
        if found is None:  # pragma: no cover - callers only explain real mismatches
            continue
        position, field = found
        param = params[position]
        expected = param.describe() if isinstance(param, ArraySpec) else param
        lines.append(
            f"  {text}: argument {position} '{param_names[position]}' differs in {field}: "
            f"expected {expected}, got {describe_argument(args[position], arg_specs[position])}"
        )
    lines.append("Pass arguments that match a declared signature, or declare another one.")
    return "\n".join(lines)
