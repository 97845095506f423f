"""Rewrites of optimised LLVM IR that keep Intel's OpenCL CPU runtime from miscompiling it.

Each rewrite is exact (same results bit for bit) and returns its input unchanged, the same
object, when there is nothing to rewrite; codegen applies them just before SPIR-V emission,
after LLVM's optimisation, which would fold them back.
"""

from __future__ import annotations

import re

_FLOAT_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}
_VALUE = r'%(?:"[^"]*"|[-\w.$]+)'
_FNEG = re.compile(
    rf"^(\s+)({_VALUE}) = fneg (?:(?:fast|nnan|ninf|nsz|arcp|contract|afn|reassoc) )*"
    rf"(half|float|double|<(\d+) x (half|float|double)>) ({_VALUE})(,.*)?$"
)


def _constant(scalar: str, lanes: str | None, value: str) -> str:
    if lanes is None:
        return value
    return "<" + ", ".join([f"{scalar} {value}"] * int(lanes)) + ">"


def negations_as_fma(text: str) -> str:
    """Every `fneg x` of a module that synchronises work-items, as `fma(x, -1.0, -0.0)`.

    The Intel OpenCL CPU runtime gives every work-item of a work-group one work-item's value
    of a negation that is live across a barrier (OpFNegate; `x * -1.0`, `-0.0 - x` and a
    sign-bit xor too: its optimiser makes each an fneg again). It leaves fma alone, and
    fma(x, -1.0, -0.0) is -x exactly, signed zeros and infinities included
    (tests/fuzz_findings/fneg_across_barrier.py). Only modules with a convergent call (a
    barrier, a sub-group or group operation) are rewritten; others keep the cheaper fneg.
    """
    if " fneg " not in text or "convergent" not in text:
        return text
    lines, declared = [], set()
    for line in text.splitlines():
        found = _FNEG.match(line)
        if found is None:
            lines.append(line)
            continue
        indent, result, type_, lanes, element, operand, metadata = found.groups()
        scalar = element or type_
        suffix = _FLOAT_SUFFIX[scalar] if lanes is None else f"v{lanes}{_FLOAT_SUFFIX[scalar]}"
        declared.add((f"llvm.fma.{suffix}", type_))
        minus_one, minus_zero = _constant(scalar, lanes, "-1.0"), _constant(scalar, lanes, "-0.0")
        lines.append(
            f"{indent}{result} = call {type_} @llvm.fma.{suffix}({type_} {operand}, "
            f"{type_} {minus_one}, {type_} {minus_zero}){metadata or ''}"
        )
    if not declared:
        return text
    for name, type_ in sorted(declared):
        if not re.search(rf"^declare .*@{re.escape(name)}\(", text, re.MULTILINE):
            lines.append(f"declare {type_} @{name}({type_}, {type_}, {type_})")
    return "\n".join(lines) + "\n"
