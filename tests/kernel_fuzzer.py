"""Grammar-based random kernels, each checked against a Python model built from the same grammar.

One generator writes two programs side by side: the kernel (dk source) and its model, a Python
generator function that runs one work-item and yields at every barrier. The model runs every
work-item of a work-group in lock step between barriers, so race-free kernels (the grammar
only writes what one work-item owns, and updates shared locations with commutative atomics)
have one right answer. A group algorithm is a yield too: the model's work-items hand their
values over and each gets its result back (run_model). Some cases are written in SYCL 2020's
forms (Generator.sycl): an item first, group algorithms over work-groups and sub-groups,
dk.AtomicRef with memory orders and scopes, LocalAccessor arguments, read-only inputs and int64
arithmetic that overflows. Kernels compile and run in a child process (an LLVM abort kills only
the child), many per child; the parent restarts a child that dies and reports what it was
running.

Long campaign, by hand:  python -m tests.kernel_fuzzer --seed 1 --minutes 15 --out findings/
One case's sources:      python -m tests.kernel_fuzzer --seed 1 --show 17
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import queue
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
INT_DTYPES = ("int32", "int64", "uint32", "uint64")
FLOAT_DTYPES = ("float32", "float64")
ATOMIC_DTYPES = INT_DTYPES + FLOAT_DTYPES
INPUT_LEN = 32
SHARED_LEN = 8
PRIVATE_SLOTS = 4
INT_CAP = 2**40  # so do integer variables: then sums and products of two stay in int64
FLOAT_CAP = 1e6  # float variables stay below this, so no expression overflows to inf or NaN
UNIT = "  # unit "
BITWISE_FAMILIES = (
    "and",
    "or",
    "xor",
)  # ends each model line of lines that only make sense together (see reduce)


class E(NamedTuple):
    """One expression in both languages: kernel text, model text, uniformity, float bound."""

    k: str
    m: str
    u: bool
    b: float = 0.0


def _same(text: str, uniform: bool, bound: float = 0.0) -> E:
    return E(text, text, uniform, bound)


@dataclass
class Scope:
    """What the generator may use at one point of the kernel."""

    uniform: bool = True  # every work-item of the work-group runs this code
    loops: list[bool] = field(default_factory=list)  # uniformity of each enclosing loop
    loop_vars: list[tuple[str, bool]] = field(default_factory=list)


#: Group operations the grammar uses: dk name -> whether it takes floats.
GROUP_OPS = {
    "plus": True,
    "multiplies": False,
    "minimum": True,
    "maximum": True,
    "bit_and": False,
    "bit_or": False,
    "bit_xor": False,
}
#: Memory orders of dk.AtomicRef methods: those a read-modify-write, a load and a store take.
RMW_ORDERS = ("RELAXED", "ACQUIRE", "RELEASE", "ACQ_REL", "SEQ_CST")
LOAD_ORDERS = ("RELAXED", "ACQUIRE", "SEQ_CST")
STORE_ORDERS = ("RELAXED", "RELEASE", "SEQ_CST")
#: Sub-group sizes of cases with sub-group algorithms (whose results the model computes from
#: the sub-groups' layout: docs/kernel-language.md#sub-group-size). Not 8: one kernel hung at
#: a fixed size of 8 on Intel's CPU runtime (docs/kernel-language.md#known-issues).
SUB_GROUP_SIZES = (4, 16)


class Generator:
    """Writes one random kernel, its model and its launch configuration."""

    def __init__(self, seed: int, sycl: bool = False):
        self.r = random.Random(seed)
        self.seed = seed
        #: SYCL 2020's forms (see the module docstring); every other case draws as before.
        self.sycl = sycl
        self.item_only = False
        self.sub_group_size: int | None = None
        self.klines: list[str] = []
        self.mlines: list[str] = []
        self.counter = 0
        self.units = 0
        self.in_device_function = False

    # --- naming and emission ------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, level: int, k: str, m: str | None = None, unit: int = 0) -> None:
        """One kernel line and its model line; `unit` (from new_unit) marks the model line as
        part of lines that only make sense together."""
        self.klines.append("    " * level + k)
        mark = f"{UNIT}{unit}" if unit else ""
        self.mlines.append("    " * level + (k if m is None else m) + mark)

    def new_unit(self) -> int:
        self.units += 1
        return self.units

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # --- integer expressions ------------------------------------------------------------

    def int_leaf(self, s: Scope, uni: bool) -> E:
        r = self.r
        if self.in_device_function:
            names = [_same(n, True, INT_CAP) for n in self.df_int_names]
        else:
            names = [_same("n_i", True, 50)]
            names += [_same(n, True, 4096) for n in ("grp", "lsz", "gsz", "ngr", "wdim")]
            names += [_same(n, True, INT_CAP) for n in self.uniform_vars]
            names += [_same(n, s.uniform and lu, 4) for n, lu in s.loop_vars]
            if not uni:
                names += [_same(n, False, 4096) for n in ("gid", "lid")]
                names += [_same(n, False, INT_CAP) for n in self.int_vars]
        names = [n for n in names if n.u or not uni]
        pick = r.random()
        if pick < 0.25 or not names:
            value = r.choice(
                [0, 1, 2, 3, 5, 7, 13, -1, -3, 100, 2**31 - 1, -(2**31), 2**32 + 3, 2**62, -(2**62)]
            )
            return _same(f"({value})" if value < 0 else str(value), True, abs(value))
        if pick < 0.4 and not self.in_device_function:
            dtype = r.choice(INT_DTYPES)
            index = self.int_expr(s, 1, uni)
            at = f"({index.k}) % {INPUT_LEN}"
            return E(
                f"np.int64(ia_{dtype}[{at}])",
                f"W(int(ia_{dtype}[({index.m}) % {INPUT_LEN}]))",
                index.u,
                2.0 ** (64 if "64" in dtype else 32),
            )
        if pick < 0.5 and not uni and not self.in_device_function:
            arrays = [(n, d, size) for n, d, size in self.private_arrays if d in INT_DTYPES]
            if arrays:
                name, dtype, size = r.choice(arrays)
                index = self.int_expr(s, 1, uni)
                return E(
                    f"np.int64({name}[({index.k}) % {size}])",
                    f"W(int({name}[({index.m}) % {size}]))",
                    False,
                    INT_CAP if dtype == "int64" else 2.0**31,
                )
        return r.choice(names)

    def int_expr(self, s: Scope, depth: int, uni: bool = False) -> E:
        """An int64 expression that never overflows (Numba's signed arithmetic is nsw)."""
        r = self.r
        if depth <= 0 or self.chance(0.3):
            return self.int_leaf(s, uni)
        kind = r.random()
        if kind < 0.35:
            a, b = self.int_expr(s, depth - 1, uni), self.int_expr(s, depth - 1, uni)
            op = r.choice(["+", "-", "*"])
            bound = a.b * b.b if op == "*" else a.b + b.b
            if bound < 2.0**62:
                return E(f"({a.k} {op} {b.k})", f"({a.m} {op} {b.m})", a.u and b.u, bound)
            kind = 0.4  # a bitwise operation instead: it cannot overflow
        if kind < 0.5:
            a, b = self.int_expr(s, depth - 1, uni), self.int_expr(s, depth - 1, uni)
            op = r.choice(["&", "|", "^"])
            return E(
                f"({a.k} {op} {b.k})",
                f"({a.m} {op} {b.m})",
                a.u and b.u,
                min(2.0**63, 2 * max(a.b, b.b)),
            )
        if kind < 0.6:
            a = self.int_expr(s, depth - 1, uni)
            op, c = r.choice(["//", "%"]), r.choice([1, 2, 3, 7, 16, 1000])
            return E(f"({a.k} {op} {c})", f"({a.m} {op} {c})", a.u, a.b if op == "//" else c)
        if kind < 0.7:
            a, b = self.int_expr(s, depth - 1, uni), self.int_expr(s, depth - 1, uni)
            f = r.choice(["min", "max"])
            return E(f"{f}({a.k}, {b.k})", f"{f}({a.m}, {b.m})", a.u and b.u, max(a.b, b.b))
        if kind < 0.78:
            a = self.int_expr(s, depth - 1, uni)
            if a.b >= 2.0**62:
                return a
            if self.chance(0.5):
                return E(f"abs({a.k})", f"abs({a.m})", a.u, a.b)
            return E(f"(-{a.k})", f"(-{a.m})", a.u, a.b)
        if kind < 0.86:
            c = self.condition(s, uni)
            a, b = self.int_expr(s, depth - 1, uni), self.int_expr(s, depth - 1, uni)
            return E(
                f"({a.k} if {c.k} else {b.k})",
                f"({a.m} if {c.m} else {b.m})",
                a.u and b.u and c.u,
                max(a.b, b.b),
            )
        calls = [d for d in self.device_functions if d[1] == "int"]
        if calls:
            name = r.choice(calls)[0]
            a, b = self.int_arg(s, depth - 1, uni), self.float_arg(s, uni)
            return E(f"{name}({a.k}, {b.k})", f"{name}({a.m}, {b.m})", a.u and b.u, INT_CAP)
        return self.int_leaf(s, uni)

    def int_capped(self, e: E) -> E:
        """`e`, reduced below INT_CAP where its bound is larger."""
        if e.b <= INT_CAP:
            return e
        return E(f"(({e.k}) % {INT_CAP})", f"(({e.m}) % {INT_CAP})", e.u, INT_CAP)

    def int_arg(self, s: Scope, depth: int, uni: bool = False) -> E:
        return self.int_capped(self.int_expr(s, depth, uni))

    def condition(self, s: Scope, uni: bool = False) -> E:
        r = self.r
        kind = r.random()
        if kind < 0.15:
            a, b = self.condition(s, uni), self.condition(s, uni)
            op = r.choice(["and", "or"])
            return E(f"({a.k} {op} {b.k})", f"({a.m} {op} {b.m})", a.u and b.u)
        if kind < 0.22:
            a = self.condition(s, uni)
            return E(f"(not {a.k})", f"(not {a.m})", a.u)
        a = self.int_expr(s, 1, uni)
        if kind < 0.4:
            return E(f"({a.k} % 2 == 0)", f"({a.m} % 2 == 0)", a.u)
        b = self.int_expr(s, 1, uni)
        op = r.choice(["<", "<=", "==", "!=", ">", ">="])
        return E(f"({a.k} {op} {b.k})", f"({a.m} {op} {b.m})", a.u and b.u)

    # --- float expressions --------------------------------------------------------------

    def float_leaf(self, s: Scope, uni: bool) -> E:
        r = self.r
        pick = r.random()
        if self.in_device_function:
            if pick < 0.5:
                return _same("b", True, FLOAT_CAP)
        elif pick < 0.2:
            return _same("s_f", True, 10.0)
        elif pick < 0.4:
            name = r.choice(["fa_float64", "fa_float32"])
            index = self.int_expr(s, 1, uni)
            return E(
                f"np.float64({name}[({index.k}) % {INPUT_LEN}])",
                f"float({name}[({index.m}) % {INPUT_LEN}])",
                index.u,
                10.0,
            )
        elif pick < 0.55 and not uni and self.float_vars:
            return _same(r.choice(self.float_vars), False, FLOAT_CAP)
        elif pick < 0.62 and not uni:
            arrays = [(n, size) for n, d, size in self.private_arrays if d in FLOAT_DTYPES]
            if arrays:
                name, size = r.choice(arrays)
                index = self.int_expr(s, 1, uni)
                return E(
                    f"np.float64({name}[({index.k}) % {size}])",
                    f"float({name}[({index.m}) % {size}])",
                    False,
                    FLOAT_CAP,
                )
        if pick < 0.8:
            value = r.choice([0.5, 1.5, -2.25, 3.0, 1000.0, 0.1])
            return _same(f"({value})" if value < 0 else str(value), True, abs(value))
        a = self.int_expr(s, 1, uni)
        return E(f"np.float64(({a.k}) % 1000)", f"float(({a.m}) % 1000)", a.u, 1000.0)

    def float_expr(self, s: Scope, depth: int, uni: bool = False) -> E:
        r = self.r
        if depth <= 0 or self.chance(0.3):
            return self.float_leaf(s, uni)
        kind = r.random()
        if kind < 0.35:
            a, b = self.float_expr(s, depth - 1, uni), self.float_expr(s, depth - 1, uni)
            op = r.choice(["+", "-", "*"])
            bound = a.b * b.b if op == "*" else a.b + b.b
            if bound > 1e30:
                op, bound = "+", a.b + b.b
            return E(f"({a.k} {op} {b.k})", f"({a.m} {op} {b.m})", a.u and b.u, bound)
        if kind < 0.38:
            a = self.float_expr(s, depth - 1, uni)
            return E(f"(-{a.k})", f"(-{a.m})", a.u, a.b)
        if kind < 0.42:
            a = self.float_expr(s, depth - 1, uni)
            c = r.choice([2.0, 0.5, 3.0, -4.0])
            return E(f"({a.k} / {c})", f"({a.m} / {c})", a.u, a.b / abs(c))
        if kind < 0.65:
            a = self.float_expr(s, depth - 1, uni)
            name, bound = r.choice(
                [
                    ("sin", 1.0),
                    ("cos", 1.0),
                    ("tanh", 1.0),
                    ("erf", 1.0),
                    ("fabs", a.b),
                    ("sqrt", a.b**0.5),
                    ("exp", 1.0),
                    ("log", a.b),
                    ("floor", a.b + 1),
                    ("ceil", a.b + 1),
                    ("atan2", 3.2),
                    ("pow", (a.b + 1) ** 2),
                ]
            )
            if name == "sqrt":
                return E(f"math.sqrt(math.fabs({a.k}))", f"math.sqrt(math.fabs({a.m}))", a.u, bound)
            if name == "exp":
                return E(f"math.exp(-math.fabs({a.k}))", f"math.exp(-math.fabs({a.m}))", a.u, bound)
            if name == "log":
                return E(
                    f"math.log(math.fabs({a.k}) + 1.0)",
                    f"math.log(math.fabs({a.m}) + 1.0)",
                    a.u,
                    bound,
                )
            if name in ("floor", "ceil"):
                return E(f"np.{name}({a.k})", f"float(math.{name}({a.m}))", a.u, bound)
            if name == "atan2":
                b = self.float_expr(s, depth - 1, uni)
                return E(
                    f"math.atan2({a.k}, {b.k})", f"math.atan2({a.m}, {b.m})", a.u and b.u, bound
                )
            if name == "pow":
                c = r.choice([0.5, 2.0, -1.0])
                return E(
                    f"math.pow(math.fabs({a.k}) + 1.0, {c})",
                    f"math.pow(math.fabs({a.m}) + 1.0, {c})",
                    a.u,
                    bound,
                )
            return E(f"math.{name}({a.k})", f"math.{name}({a.m})", a.u, bound)
        if kind < 0.72:
            a, b = self.float_expr(s, depth - 1, uni), self.float_expr(s, depth - 1, uni)
            f = r.choice(["min", "max"])
            return E(f"{f}({a.k}, {b.k})", f"{f}({a.m}, {b.m})", a.u and b.u, max(a.b, b.b))
        if kind < 0.82:
            i, a = self.int_expr(s, depth - 1, uni), self.float_expr(s, depth - 1, uni)
            if a.b * 1000 > 1e30:
                return a
            return E(
                f"(({i.k}) % 1000 * {a.k})", f"(({i.m}) % 1000 * {a.m})", a.u and i.u, a.b * 1000
            )
        if kind < 0.9:
            c = self.condition(s, uni)
            a, b = self.float_expr(s, depth - 1, uni), self.float_expr(s, depth - 1, uni)
            return E(
                f"({a.k} if {c.k} else {b.k})",
                f"({a.m} if {c.m} else {b.m})",
                a.u and b.u and c.u,
                max(a.b, b.b),
            )
        calls = [d for d in self.device_functions if d[1] == "float"]
        if calls:
            name = r.choice(calls)[0]
            # capped as every int argument: a device function's body assumes it (2 * 2**62
            # overflowed there: poison in the kernel, a big int in the model)
            a, b = self.int_arg(s, depth - 1, uni), self.float_arg(s, uni)
            return E(f"{name}({a.k}, {b.k})", f"{name}({a.m}, {b.m})", a.u and b.u, FLOAT_CAP)
        return self.float_leaf(s, uni)

    def capped(self, e: E) -> E:
        """`e`, squashed below FLOAT_CAP where its bound is larger."""
        if e.b <= FLOAT_CAP:
            return e
        return E(
            f"(math.tanh({e.k} * 1e-6) * 1e6)", f"(math.tanh({e.m} * 1e-6) * 1e6)", e.u, FLOAT_CAP
        )

    def float_arg(self, s: Scope, uni: bool) -> E:
        return self.capped(self.float_expr(s, 1, uni))

    # --- device functions ---------------------------------------------------------------

    def device_function(self, index: int) -> None:
        r = self.r
        name = f"df{index}"
        returns = r.choice(["int", "float", "tuple"])
        self.in_device_function = True
        self.df_int_names = ["a"]
        s = Scope()
        self.emit(0, "@dk.func", "")
        self.emit(0, f"def {name}(a, b):")
        c = self.int_arg(s, 2)
        self.emit(1, f"c = {c.k}", f"c = {c.m}")
        self.df_int_names.append("c")

        def value() -> tuple[str, str]:
            i, f = self.int_arg(s, 2), self.capped(self.float_expr(s, 2))
            if returns == "int":
                return i.k, i.m
            if returns == "float":
                return f.k, f.m
            return f"({i.k}, {f.k})", f"({i.m}, {f.m})"

        if self.chance(0.6):
            cond = self.condition(s)
            self.emit(1, f"if {cond.k}:", f"if {cond.m}:")
            k, m = value()
            self.emit(2, f"return {k}", f"return {m}")
        k, m = value()
        self.emit(1, f"return {k}", f"return {m}")
        self.emit(0, "")
        self.in_device_function = False
        self.device_functions.append((name, returns))

    # --- statements ---------------------------------------------------------------------

    def block(self, level: int, s: Scope, count: int, depth: int) -> None:
        for _ in range(count):
            self.statement(level, s, depth)

    def statement(self, level: int, s: Scope, depth: int) -> None:
        r = self.r
        options = [
            "assign",
            "assign",
            "assign_float",
            "augment",
            "tuple",
            "private_atomic",
            "shared_atomic",
            "cas_loop",
        ]
        if depth > 0:
            options += ["if", "if", "for", "for", "while"]
        if s.loops and (s.uniform or not s.loops[-1]):
            options += ["break", "continue"]
        if s.uniform:
            options += ["uniform_assign", "barrier", "sub_group"]
            if self.local_arrays:
                options += ["local_phase", "local_phase"]
        if self.private_arrays:
            options.append("private_store")
        if any(d[1] == "tuple" for d in self.device_functions):
            options.append("call_tuple")
        if self.sycl:
            options.append("overflow")
        if self.sycl and not self.item_only:
            options += ["atomic_ref", "private_atomic_ref"]
            if s.uniform:
                options += ["group_algorithm"] * 3 + ["fence"]
                if self.sub_group_size:
                    options += ["sub_group_algorithm"] * 4
        getattr(self, "st_" + r.choice(options))(level, s, depth)

    def st_assign(self, level, s, depth):
        name, e = self.r.choice(self.int_vars), self.int_arg(s, 3)
        self.emit(level, f"{name} = {e.k}", f"{name} = {e.m}")

    def st_uniform_assign(self, level, s, depth):
        name, e = self.r.choice(self.uniform_vars), self.int_arg(s, 3, uni=True)
        self.emit(level, f"{name} = {e.k}", f"{name} = {e.m}")

    def st_assign_float(self, level, s, depth):
        name, e = self.r.choice(self.float_vars), self.capped(self.float_expr(s, 3))
        self.emit(level, f"{name} = {e.k}", f"{name} = {e.m}")

    def st_augment(self, level, s, depth):
        name, e = self.r.choice(self.int_vars), self.int_arg(s, 2)
        op = self.r.choice(["+", "-", "*"])
        if op == "*":
            e = E(f"(({e.k}) % 1000)", f"(({e.m}) % 1000)", e.u, 1000)
        self.emit(level, f"{name} {op}= {e.k}", f"{name} = {name} {op} {e.m}")
        self.emit(level, f"{name} %= {INT_CAP}", f"{name} = {name} % {INT_CAP}")

    def st_tuple(self, level, s, depth):
        r = self.r
        if self.chance(0.3) and len(self.int_vars) > 1:
            a, b = r.sample(self.int_vars, 2)
            self.emit(level, f"{a}, {b} = {b}, {a}")
            return
        t = self.fresh("t")
        i, j, f = self.int_arg(s, 2), self.int_arg(s, 2), self.capped(self.float_expr(s, 2))
        self.emit(level, f"{t} = ({i.k}, {f.k}, {j.k})", f"{t} = ({i.m}, {f.m}, {j.m})")
        target = r.choice(self.int_vars)
        self.emit(level, f"{target} = {t}[0] // 2 - {t}[2] // 2")
        self.emit(level, f"{r.choice(self.float_vars)} = {t}[1]")

    def st_call_tuple(self, level, s, depth):
        name = self.r.choice([d[0] for d in self.device_functions if d[1] == "tuple"])
        a, b = self.int_arg(s, 2), self.float_arg(s, False)
        target = f"{self.r.choice(self.int_vars)}, {self.r.choice(self.float_vars)}"
        self.emit(level, f"{target} = {name}({a.k}, {b.k})", f"{target} = {name}({a.m}, {b.m})")

    def st_if(self, level, s, depth):
        c = self.condition(s, uni=s.uniform and self.chance(0.5))
        inner = Scope(s.uniform and c.u, s.loops, s.loop_vars)
        self.emit(level, f"if {c.k}:", f"if {c.m}:")
        self.block(level + 1, inner, self.r.randint(1, 3), depth - 1)
        if self.chance(0.5):
            self.emit(level, "else:")
            self.block(level + 1, inner, self.r.randint(1, 3), depth - 1)

    def _loop_scope(self, s: Scope, uniform: bool, var: str) -> Scope:
        return Scope(uniform, [*s.loops, uniform], [*s.loop_vars, (var, uniform)])

    def st_for(self, level, s, depth):
        r = self.r
        var = self.fresh("k")
        bound = self.int_expr(s, 1, uni=s.uniform and self.chance(0.6))
        shape = r.random()
        if shape < 0.3:
            header, uniform = f"range({r.randint(0, 4)})", True
        elif shape < 0.7:
            header, uniform = f"range(({bound.k}) % 4)", bound.u
            mheader = f"range(({bound.m}) % 4)"
        elif shape < 0.85:
            header, uniform = f"range(({bound.k}) % 3, 4)", bound.u
            mheader = f"range(({bound.m}) % 3, 4)"
        else:
            header, uniform = "range(3, -1, -1)", True
        if shape < 0.3 or shape >= 0.85:
            mheader = header
        uniform = uniform and s.uniform
        self.emit(level, f"for {var} in {header}:", f"for {var} in {mheader}:")
        self.block(level + 1, self._loop_scope(s, uniform, var), r.randint(1, 3), depth - 1)

    def st_while(self, level, s, depth):
        var = self.fresh("w")
        bound = self.int_expr(s, 1, uni=s.uniform and self.chance(0.6))
        uniform = bound.u and s.uniform
        self.emit(level, f"{var} = 0")
        self.emit(level, f"while {var} < ({bound.k}) % 4:", f"while {var} < ({bound.m}) % 4:")
        self.emit(level + 1, f"{var} += 1")
        self.block(level + 1, self._loop_scope(s, uniform, var), self.r.randint(1, 3), depth - 1)

    def st_break(self, level, s, depth):
        self._jump(level, s, "break")

    def st_continue(self, level, s, depth):
        self._jump(level, s, "continue")

    def _jump(self, level, s, word):
        c = self.condition(s, uni=s.loops[-1])
        self.emit(level, f"if {c.k}:", f"if {c.m}:")
        self.emit(level + 1, word)

    def st_barrier(self, level, s, depth):
        if self.sycl and not self.item_only and self.chance(0.5):
            scope = self.r.choice(["", ", dk.MemoryScope.WORK_GROUP", ", dk.MemoryScope.DEVICE"])
            self.emit(level, f"dk.group_barrier(wg{scope})", "yield")
            return
        flags = self.r.choice(
            [
                "",
                "dk.LOCAL_MEM_FENCE",
                "dk.GLOBAL_MEM_FENCE",
                "dk.LOCAL_MEM_FENCE | dk.GLOBAL_MEM_FENCE",
            ]
        )
        self.emit(level, f"dk.barrier({flags})", "yield")

    def st_sub_group(self, level, s, depth):
        kind = self.r.random()
        if kind < 0.3:
            e = self.int_expr(s, 2, uni=True)
            # A sub-group's reduction is one value per sub-group, as the compiler's check of
            # group functions in converged control flow sees it (kernel_api/convergence.py).
            name = self.r.choice(self.int_vars if self.sycl else self.uniform_vars)
            self.emit(
                level,
                f"{name} = dk.sub_group.reduce_add(({e.k}) % 1000) // dk.sub_group.get_size()",
                f"{name} = ({e.m}) % 1000",
            )
        elif kind < 0.45:
            e = self.float_expr(s, 2, uni=True)
            name = self.r.choice(self.float_vars)
            self.emit(
                level,
                f"{name} = dk.sub_group.reduce_add({e.k}) / dk.sub_group.get_size()",
                f"{name} = {e.m}",
            )
        elif kind < 0.6:
            e = self.capped(self.float_expr(s, 2, uni=True))
            name = self.r.choice(self.float_vars)
            self.emit(level, f"{name} = dk.sub_group.broadcast({e.k}, 0)", f"{name} = {e.m}")
        elif kind < 0.9:
            if self.chance(0.5):
                e, name = self.int_arg(s, 2), self.r.choice(self.int_vars)
            else:
                e, name = self.capped(self.float_expr(s, 2)), self.r.choice(self.float_vars)
            self.emit(
                level,
                f"{name} = dk.sub_group.shuffle({e.k}, dk.sub_group.get_local_id())",
                f"{name} = {e.m}",
            )
        else:
            self.emit(level, "dk.sub_group.barrier()", "pass")

    def st_private_store(self, level, s, depth):
        name, dtype, size = self.r.choice(self.private_arrays)
        index = self.int_expr(s, 2)
        value = self.int_arg(s, 2) if dtype in INT_DTYPES else self.capped(self.float_expr(s, 2))
        self.emit(
            level,
            f"{name}[({index.k}) % {size}] = {value.k}",
            f"ST({name}, ({index.m}) % {size}, {value.m})",
        )

    def _atomic_value(self, s: Scope, dtype: str, exact: bool) -> E:
        """An atomic operand; `exact` keeps float sums exact (small integers) so order is moot."""
        if dtype in INT_DTYPES and not exact:
            return self.int_expr(s, 2)
        if dtype in INT_DTYPES:  # CAS loops add in the array's type: keep it from overflowing
            i = self.int_expr(s, 1)
            return E(f"(({i.k}) % 64)", f"(({i.m}) % 64)", i.u, 64.0)
        if exact:
            i = self.int_expr(s, 1)
            return E(f"np.float64(({i.k}) % 64)", f"float(({i.m}) % 64)", i.u, 64.0)
        return self.capped(self.float_expr(s, 2))

    def st_private_atomic(self, level, s, depth):
        r = self.r
        dtype = r.choice(self.private_atomic_dtypes)
        array, slot = f"pa_{dtype}", f"(gid, {r.randrange(PRIVATE_SLOTS)})"
        op = r.choice(["add", "sub", "min", "max", "exchange", "compare_exchange"])
        if op == "compare_exchange":
            if self.chance(0.5):
                expected = E(f"{array}[gid, {slot[6:-1]}]", f"{array}[gid, {slot[6:-1]}]", False)
            else:
                expected = self._atomic_value(s, dtype, False)
            desired = self._atomic_value(s, dtype, False)
            call_k = f"dk.atomic.compare_exchange({array}, {slot}, {expected.k}, {desired.k})"
            call_m = f"A_compare_exchange({array}, {slot}, {expected.m}, {desired.m})"
        else:
            value = self._atomic_value(s, dtype, False)
            call_k = f"dk.atomic.{op}({array}, {slot}, {value.k})"
            call_m = f"A_{op}({array}, {slot}, {value.m})"
        if dtype in INT_DTYPES:
            name = r.choice(self.int_vars)
            e = self.int_capped(E(f"np.int64({call_k})", f"W(int({call_m}))", False, 2.0**63))
            self.emit(level, f"{name} = {e.k}", f"{name} = {e.m}")
        else:
            name = r.choice(self.float_vars)
            squashed = self.capped(E(f"np.float64({call_k})", f"float({call_m})", False, 1e30))
            self.emit(level, f"{name} = {squashed.k}", f"{name} = {squashed.m}")

    def st_shared_atomic(self, level, s, depth):
        dtype, family = self.r.choice(self.shared_arrays)
        if family in BITWISE_FAMILIES:  # dk.atomic has none: dk.AtomicRef does
            return self._atomic_ref_on(level, s, dtype, family)
        op = self.r.choice(["add", "sub"]) if family == "addsub" else family
        index = self.int_expr(s, 2)
        value = self._atomic_value(s, dtype, exact=family == "addsub" and dtype in FLOAT_DTYPES)
        self.emit(
            level,
            f"dk.atomic.{op}(ga_{dtype}, ({index.k}) % {SHARED_LEN}, {value.k})",
            f"A_{op}(ga_{dtype}, ({index.m}) % {SHARED_LEN}, {value.m})",
        )

    def st_cas_loop(self, level, s, depth):
        """An atomic add written as a compare-and-swap loop (the classic lock-free update)."""
        choices = [d for d, family in self.shared_arrays if family == "addsub"]
        if not choices:
            return self.st_shared_atomic(level, s, depth)
        dtype = self.r.choice(choices)
        array = f"ga_{dtype}"
        index, value = self.int_expr(s, 2), self._atomic_value(s, dtype, exact=True)
        at, old, seen = self.fresh("ci"), self.fresh("co"), self.fresh("cs")
        unit = self.new_unit()  # the model's one line stands for the kernel's seven
        self.emit(
            level,
            f"{at} = ({index.k}) % {SHARED_LEN}",
            f"A_add({array}, ({index.m}) % {SHARED_LEN}, {value.m})",
            unit,
        )
        klines = [
            f"{old} = {array}[{at}]",
            "while True:",
            f"    {seen} = dk.atomic.compare_exchange({array}, {at}, {old}, "
            f"{old} + np.{dtype}({value.k}))",
            f"    if {seen} == {old}:",
            "        break",
            f"    {old} = {seen}",
        ]
        for line in klines:  # the model's lines stay paired with the kernel's
            self.emit(level, line, "pass", unit)

    def st_local_phase(self, level, s, depth):
        """Write own slot, barrier, [atomics, barrier], read any slot, barrier: race-free."""
        r = self.r
        name, dtype = r.choice(self.local_arrays)
        size = self.local_total
        is_int = dtype in INT_DTYPES
        value = self.int_expr(s, 2) if is_int else self.capped(self.float_expr(s, 2))
        unit = self.new_unit()  # a read of an unwritten slot, or a race, without any line
        self.emit(level, f"{name}[lid] = {value.k}", f"ST({name}, lid, {value.m})", unit)
        self.emit(level, "dk.barrier(dk.LOCAL_MEM_FENCE)", "yield", unit)
        if self.chance(0.5):
            family = r.choice(["addsub", "min", "max"])
            for _ in range(r.randint(1, 3)):
                op = r.choice(["add", "sub"]) if family == "addsub" else family
                index = self.int_expr(s, 2)
                v = self._atomic_value(s, dtype, exact=family == "addsub" and dtype in FLOAT_DTYPES)
                call = f"dk.atomic.{op}({name}, ({index.k}) % {size}, {v.k})"
                if self.sycl and self.chance(0.5):
                    ref = f"{name}, ({index.k}) % {size}{self._order_and_scope('local')}"
                    call = f"dk.AtomicRef({ref}).fetch_{op}({v.k})"
                self.emit(level, call, f"A_{op}({name}, ({index.m}) % {size}, {v.m})", unit)
            self.emit(level, "dk.barrier(dk.LOCAL_MEM_FENCE)", "yield", unit)
        index = self.int_expr(s, 2)
        if is_int:
            target = r.choice(self.int_vars)
            e = self.int_capped(
                E(
                    f"np.int64({name}[({index.k}) % {size}])",
                    f"W(int({name}[({index.m}) % {size}]))",
                    False,
                    2.0**63,
                )
            )
            self.emit(level, f"{target} = {e.k}", f"{target} = {e.m}", unit)
        else:
            target = r.choice(self.float_vars)
            self.emit(
                level,
                f"{target} = np.float64({name}[({index.k}) % {size}])",
                f"{target} = float({name}[({index.m}) % {size}])",
                unit,
            )
        self.emit(level, "dk.barrier(dk.LOCAL_MEM_FENCE)", "yield", unit)

    # --- SYCL 2020's forms (Generator.sycl) ----------------------------------------------

    def _order_and_scope(self, space: str) -> str:
        """An AtomicRef's memory order and scope keywords (some left to their defaults): a
        scope that covers every work-item touching an element of `space`."""
        scopes = {
            "global": ["DEVICE", "SYSTEM"],
            "local": ["WORK_GROUP", "DEVICE", "SYSTEM"],
            "private": ["SUB_GROUP", "WORK_GROUP", "DEVICE", "SYSTEM"],
        }[space]
        text = ""
        if self.chance(0.7):
            text += f", memory_order=dk.MemoryOrder.{self.r.choice(RMW_ORDERS)}"
        if self.chance(0.7):
            text += f", memory_scope=dk.MemoryScope.{self.r.choice(scopes)}"
        return text

    def _method_order(self, orders: tuple[str, ...]) -> str:
        """An order given to the method itself, or none (the reference's own)."""
        if self.chance(0.3):
            return f"memory_order=dk.MemoryOrder.{self.r.choice(orders)}"
        return ""

    def st_atomic_ref(self, level, s, depth):
        dtype, family = self.r.choice(self.shared_arrays)
        self._atomic_ref_on(level, s, dtype, family)

    def _atomic_ref_on(self, level, s, dtype: str, family: str) -> None:
        """A dk.AtomicRef update of a shared global array, its old value unused (the order of
        the work-items' updates is the device's)."""
        op = self.r.choice(["add", "sub"]) if family == "addsub" else family
        index = self.int_expr(s, 2)
        value = self._atomic_value(s, dtype, exact=family == "addsub" and dtype in FLOAT_DTYPES)
        ref = f"ga_{dtype}, ({index.k}) % {SHARED_LEN}{self._order_and_scope('global')}"
        order = self._method_order(RMW_ORDERS)
        self.emit(
            level,
            f"dk.AtomicRef({ref}).fetch_{op}({value.k}{', ' + order if order else ''})",
            f"A_{op}(ga_{dtype}, ({index.m}) % {SHARED_LEN}, {value.m})",
        )

    def st_private_atomic_ref(self, level, s, depth):
        """Every AtomicRef method on the work-item's own slots, the old values used."""
        r = self.r
        dtype = r.choice(self.private_atomic_dtypes)
        array, slot = f"pa_{dtype}", f"(gid, {r.randrange(PRIVATE_SLOTS)})"
        methods = ["fetch_add", "fetch_sub", "fetch_min", "fetch_max", "exchange"]
        methods += ["compare_exchange", "load", "store"]
        if dtype in INT_DTYPES:
            methods += ["fetch_and", "fetch_or", "fetch_xor"]
        method = r.choice(methods)
        ref = f"dk.AtomicRef({array}, {slot}{self._order_and_scope('private')})"
        if method == "store":
            value = self._atomic_value(s, dtype, False)
            order = self._method_order(STORE_ORDERS)
            self.emit(
                level,
                f"{ref}.store({value.k}{', ' + order if order else ''})",
                f"ST({array}, {slot}, {value.m})",
            )
            return
        if method == "load":
            order = self._method_order(LOAD_ORDERS)
            call_k, call_m = f"{ref}.load({order})", f"A_load({array}, {slot})"
        elif method == "compare_exchange":
            expected = self._atomic_value(s, dtype, False)
            if self.chance(0.5):
                expected = _same(f"{array}[{slot[1:-1]}]", False)
            desired = self._atomic_value(s, dtype, False)
            call_k = f"{ref}.compare_exchange({expected.k}, {desired.k})"
            call_m = f"A_compare_exchange({array}, {slot}, {expected.m}, {desired.m})"
        else:
            value = self._atomic_value(s, dtype, False)
            order = self._method_order(RMW_ORDERS)
            call_k = f"{ref}.{method}({value.k}{', ' + order if order else ''})"
            call_m = f"A_{method.removeprefix('fetch_')}({array}, {slot}, {value.m})"
        if dtype in INT_DTYPES:
            name = r.choice(self.int_vars)
            e = self.int_capped(E(f"np.int64({call_k})", f"W(int({call_m}))", False, 2.0**63))
        else:
            name = r.choice(self.float_vars)
            e = self.capped(E(f"np.float64({call_k})", f"float({call_m})", False, 1e30))
        self.emit(level, f"{name} = {e.k}", f"{name} = {e.m}")

    def st_overflow(self, level, s, depth):
        """int64 (or uint64) arithmetic that wraps around, as NumPy's does."""
        name = self.r.choice(self.int_vars)
        a, b, c = self.int_arg(s, 2), self.int_arg(s, 2), self.int_arg(s, 1)
        if self.chance(0.5):
            self.emit(
                level,
                f"{name} = ({a.k} * {b.k} * 4099 + {c.k}) % {INT_CAP}",
                f"{name} = W(W(W({a.m} * {b.m}) * 4099) + {c.m}) % {INT_CAP}",
            )
            return
        u = [f"np.uint64({x.k})" for x in (a, b, c)]
        self.emit(
            level,
            f"{name} = np.int64(({u[0]} * {u[1]} + {u[2]}) % np.uint64({INT_CAP}))",
            f"{name} = U(U(U({a.m}) * U({b.m})) + U({c.m})) % {INT_CAP}",
        )

    def st_fence(self, level, s, depth):
        order = self.r.choice(RMW_ORDERS)
        scope = self.r.choice(["WORK_GROUP", "DEVICE", "SYSTEM", "SUB_GROUP", "WORK_ITEM"])
        self.emit(level, f"dk.atomic_fence(dk.MemoryOrder.{order}, dk.MemoryScope.{scope})", "pass")

    def _group_operand(self, s: Scope, op: str, integer: bool) -> E:
        """A group algorithm's operand: an int small enough that a group's product stays in
        int64, or a float holding a small integer, so that any order of sums is exact."""
        if integer:
            e = self.int_arg(s, 2)
            if op == "multiplies":
                return E(f"(({e.k}) % 7 + 1)", f"(({e.m}) % 7 + 1)", e.u, 8.0)
            return e
        e = self.int_expr(s, 1)
        return E(f"np.float64(({e.k}) % 1024)", f"float(({e.m}) % 1024)", e.u, 1024.0)

    def _group_call(self, s: Scope, group: str, scope: str, kinds: list[str]):
        """(kernel call, model request, whether the result is an int, kind) of one group
        algorithm over `group` ("wg" or "sg")."""
        r = self.r
        kind = r.choice(kinds)
        if kind == "vote":
            which = r.choice(["any", "all", "none"])
            c = self.condition(s)
            call = f"(1 if dk.{which}_of_group({group}, {c.k}) else 0)"
            return call, f"('{scope}', 'vote', '{which}', {c.m})", True, kind
        op = r.choice(sorted(GROUP_OPS))
        integer = not GROUP_OPS[op] or self.chance(0.6)
        x = self._group_operand(s, op, integer)
        if kind == "broadcast":
            if scope == "sg":
                return (
                    f"dk.group_broadcast({group}, {x.k}, 0)",
                    f"('sg', 'broadcast', {x.m}, 0)",
                    integer,
                    kind,
                )
            src = self.int_expr(s, 1, uni=True)
            call = f"dk.group_broadcast({group}, {x.k}, ({src.k}) % lsz)"
            return call, f"('wg', 'broadcast', {x.m}, ({src.m}) % lsz)", integer, kind
        if kind == "select":
            k = r.randint(0, 5)
            lane = f"({group}.get_local_id() + {k}) % {group}.get_local_range()"
            return (
                f"dk.select_from_group({group}, {x.k}, {lane})",
                f"('sg', 'select', {x.m}, {k})",
                integer,
                kind,
            )
        name = {"reduce": "reduce", "inclusive": "inclusive_scan", "exclusive": "exclusive_scan"}[
            kind
        ]
        init = None
        if self.chance(0.3) or (
            not integer and kind == "exclusive" and op in ("minimum", "maximum")
        ):
            init = r.choice([1, 2, -1] if op == "multiplies" else [0, 1, 5, -3])
            init = init if integer else float(init) / 2
        operation = f"dk.{op}"
        if init is None:
            args = f"{x.k}, {operation}"
        elif kind == "inclusive":
            args = f"{x.k}, {operation}, {init}"
        else:
            args = f"{x.k}, {init}, {operation}"
        call = f"dk.{name}_over_group({group}, {args})"
        return call, f"('{scope}', '{kind}', '{op}', {x.m}, {init})", integer, kind

    def st_group_algorithm(self, level, s, depth):
        """A work-group algorithm (every work-item gets to it: the scope is uniform)."""
        call, request, integer, kind = self._group_call(
            s, "wg", "wg", ["reduce", "reduce", "inclusive", "exclusive", "broadcast", "vote"]
        )
        one_value = kind in ("reduce", "broadcast", "vote")  # the same for the whole group
        self._assign_collective(level, call, request, integer, one_value)

    def st_sub_group_algorithm(self, level, s, depth):
        """A sub-group algorithm, or a shift whose lanes past the sub-group keep their value."""
        kinds = ["reduce", "inclusive", "exclusive", "broadcast", "vote", "select", "shift"]
        if self.r.random() < 1 / len(kinds):
            return self._sub_group_shift(level, s)
        call, request, integer, _kind = self._group_call(s, "sg", "sg", kinds[:-1])
        self._assign_collective(level, call, request, integer, one_value=False)

    def _assign_collective(self, level, call: str, request: str, integer: bool, one_value: bool):
        if not integer:
            name = self.r.choice(self.float_vars)
            self.emit(level, f"{name} = {call}", f"{name} = (yield {request})")
            return
        # One value per work-group may go where the grammar keeps work-group-uniform values.
        pool = self.uniform_vars if one_value and self.chance(0.5) else self.int_vars
        name = self.r.choice(pool)
        self.emit(
            level,
            f"{name} = np.int64({call}) % {INT_CAP}",
            f"{name} = W(int((yield {request}))) % {INT_CAP}",
        )

    def _sub_group_shift(self, level, s):
        delta = self.r.randint(1, 3)
        left = self.chance(0.5)
        x = self.int_arg(s, 2)
        t, name = self.fresh("sh"), self.r.choice(self.int_vars)
        unit = self.new_unit()
        function = "shift_group_left" if left else "shift_group_right"
        inside = (
            f"sg.get_local_id() + {delta} < sg.get_local_range()"
            if left
            else f"sg.get_local_id() >= {delta}"
        )
        self.emit(
            level,
            f"{t} = dk.{function}(sg, {x.k}, {delta})",
            f"{t} = yield ('sg', 'shift', {x.m}, {delta if left else -delta})",
            unit,
        )
        self.emit(level, f"if {inside}:", f"if {t} is not None:", unit)
        self.emit(level + 1, f"{name} = {t} % {INT_CAP}", f"{name} = {t} % {INT_CAP}", unit)

    # --- the whole program --------------------------------------------------------------

    def program(self) -> dict:
        r = self.r
        ndim = 1 if self.chance(0.7) else 2
        if ndim == 1:
            local = (r.choice([1, 2, 4, 8, 16]),)
            global_ = (local[0] * r.choice([1, 2, 4]),)
        else:
            local = (r.choice([1, 2, 4]), r.choice([1, 2, 4]))
            global_ = tuple(size * r.choice([1, 2]) for size in local)
        self.local_total = local[0] * (local[1] if ndim == 2 else 1)
        self.device_functions: list[tuple[str, str]] = []
        self.int_vars = [f"v{i}" for i in range(r.randint(2, 4))]
        self.uniform_vars = [f"u{i}" for i in range(r.randint(1, 2))]
        self.float_vars = [f"f{i}" for i in range(r.randint(1, 3))]
        self.shared_arrays = [
            (d, r.choice(["addsub", "addsub", "min", "max"]))
            for d in r.sample(ATOMIC_DTYPES, r.randint(1, 3))
        ]
        self.private_atomic_dtypes = r.sample(ATOMIC_DTYPES, r.randint(1, 2))
        self.local_arrays = [(f"lm{i}", r.choice(ATOMIC_DTYPES)) for i in range(r.randint(0, 2))]
        self.private_arrays = [
            (f"p{i}", r.choice(["int64", "int32", "float64", "float32"]), r.choice([2, 4, 8]))
            for i in range(r.randint(0, 2))
        ]
        for index in range(r.randint(0, 2)):
            self.device_function(index)
        inputs = [f"ia_{d}" for d in INT_DTYPES] + [f"fa_{d}" for d in FLOAT_DTYPES]
        params = list(inputs)
        params += [f"ga_{d}" for d, _ in self.shared_arrays]
        params += [f"pa_{d}" for d in self.private_atomic_dtypes]
        params += ["out_i", "out_f", "out_f32", "n_i", "s_f"]
        self.accessors: dict[str, str] = {}
        readonly: list[str] = []
        if self.sycl:
            self.shared_arrays = [
                (d, r.choice(BITWISE_FAMILIES) if d in INT_DTYPES and self.chance(0.3) else f)
                for d, f in self.shared_arrays
            ]
            self.accessors = {n: d for n, d in self.local_arrays if self.chance(0.6)}
            params += list(self.accessors)
            readonly = [name for name in inputs if self.chance(0.5)]
            # Item methods alone (no group, sub-group or AtomicRef): what the direct front end
            # compiles, checked against Numba's front end as every case it compiles is.
            self.item_only = self.chance(0.3)
            if not self.item_only and self.chance(0.5):
                self.sub_group_size = r.choice(SUB_GROUP_SIZES)
        item = "it, " if self.sycl else ""
        self.emit(
            0, f"def kern({item}{', '.join(params)}):", f"def model(ctx, {', '.join(params)}):"
        )
        self.prologue(ndim)
        s = Scope()
        self.block(1, s, r.randint(3, 8), depth=3)
        for slot, name in enumerate(self.int_vars + self.uniform_vars):
            self.emit(1, f"out_i[gid, {slot}] = {name}", f"ST(out_i, (gid, {slot}), {name})")
        for slot, name in enumerate(self.float_vars):
            self.emit(1, f"out_f[gid, {slot}] = {name}", f"ST(out_f, (gid, {slot}), {name})")
            self.emit(1, f"out_f32[gid, {slot}] = {name}", f"ST(out_f32, (gid, {slot}), {name})")
        self.emit(1, "return", "yield")
        size = 1
        for n in global_:
            size *= n
        return {
            "seed": self.seed,
            "kernel": "\n".join(self.klines) + "\n",
            "model": "\n".join(self.mlines) + "\n",
            "global": global_,
            "local": local,
            "debug": self.chance(0.15),
            "opt_level": r.choice([0, 1, 2, 3, 3]),
            "arrays": {
                **{f"ia_{d}": [d, [INPUT_LEN]] for d in INT_DTYPES},
                **{f"fa_{d}": [d, [INPUT_LEN]] for d in FLOAT_DTYPES},
                **{f"ga_{d}": [d, [SHARED_LEN]] for d, _ in self.shared_arrays},
                **{f"pa_{d}": [d, [size, PRIVATE_SLOTS]] for d in self.private_atomic_dtypes},
                "out_i": ["int64", [size, len(self.int_vars) + len(self.uniform_vars)]],
                "out_f": ["float64", [size, len(self.float_vars)]],
                "out_f32": ["float32", [size, len(self.float_vars)]],
            },
            "params": params,
            "sycl": self.sycl,
            "accessors": {
                name: [dtype, self.local_total] for name, dtype in self.accessors.items()
            },
            "readonly": readonly,
            "sub_group_size": self.sub_group_size,
        }

    def prologue(self, ndim: int) -> None:
        if self.sycl:
            ids = self._item_ids(ndim)
        elif ndim == 1:
            ids = {
                "gid": "dk.get_global_id(0)",
                "lid": "dk.get_local_id(0)",
                "grp": "dk.get_group_id(0)",
                "lsz": "dk.get_local_size(0)",
                "gsz": "dk.get_global_size(0)",
                "ngr": "dk.get_num_groups(0)",
            }
        else:
            ids = {
                "gid": "dk.get_global_id(0) * dk.get_global_size(1) + dk.get_global_id(1)",
                "lid": "dk.get_local_id(0) * dk.get_local_size(1) + dk.get_local_id(1)",
                "grp": "dk.get_group_id(0) * dk.get_num_groups(1) + dk.get_group_id(1)",
                "lsz": "dk.get_local_size(0) * dk.get_local_size(1)",
                "gsz": "dk.get_global_size(0) * dk.get_global_size(1)",
                "ngr": "dk.get_num_groups(0) * dk.get_num_groups(1)",
            }
        ids["wdim"] = "dk.get_work_dim()"
        for name, text in ids.items():
            self.emit(1, f"{name} = {text}", f"{name} = ctx.{name}")
        for name, dtype in self.local_arrays:
            kernel_line = f"{name} = dk.local.array({self.local_total}, dk.{dtype})"
            if name in self.accessors:
                kernel_line = f"# {name}: a dk.LocalAccessor argument"
            self.emit(
                1, kernel_line, f"{name} = ctx.local({name!r}, {self.local_total}, {dtype!r})"
            )
        for name, dtype, size in self.private_arrays:  # never left uninitialised
            unit = self.new_unit()
            self.emit(
                1,
                f"{name} = dk.private.array({size}, dk.{dtype})",
                f"{name} = np.zeros({size}, {dtype!r})",
                unit,
            )
            self.emit(1, f"for q in range({size}):", unit=unit)
            self.emit(2, f"{name}[q] = q + gid", f"ST({name}, q, q + gid)", unit)
        s = Scope()
        pools = (self.uniform_vars, self.int_vars, self.float_vars)
        names = [list(pool) for pool in pools]
        for pool in pools:  # each variable may use those defined before it
            pool.clear()
        for pool, defined in zip(pools, names):
            for name in defined:
                if pool is self.float_vars:
                    e = self.capped(self.float_expr(s, 1))
                else:
                    e = self.int_arg(s, 1, uni=pool is self.uniform_vars)
                self.emit(1, f"{name} = {e.k}", f"{name} = {e.m}")
                pool.append(name)

    def _item_ids(self, ndim: int) -> dict[str, str]:
        """The prologue's ids read from the item, its group, or the free functions."""
        if self.item_only:
            return self._item_only_ids(ndim)
        self.emit(1, "wg = it.get_group()", "pass")
        self.emit(1, "sg = it.get_sub_group()", "pass")
        if ndim == 1:
            choices = {
                "gid": ["it.get_global_linear_id()", "it.get_global_id(0)", "it.get_id(0)"],
                "lid": [
                    "it.get_local_linear_id()",
                    "wg.get_local_linear_id()",
                    "dk.get_local_id(0)",
                ],
                "grp": ["wg.get_group_linear_id()", "wg.get_group_id(0)"],
                "lsz": ["it.get_local_linear_range()", "wg.get_local_range(0)"],
                "gsz": ["it.get_global_linear_range()", "it.get_range(0)"],
                "ngr": ["wg.get_group_linear_range()", "it.get_group_range(0)"],
            }
        else:
            choices = {
                "gid": [
                    "it.get_global_linear_id()",
                    "it.get_global_id(0) * it.get_global_range(1) + it.get_global_id(1)",
                ],
                "lid": [
                    "it.get_local_linear_id()",
                    "wg.get_local_id(0) * wg.get_local_range(1) + wg.get_local_id(1)",
                ],
                "grp": [
                    "wg.get_group_linear_id()",
                    "wg.get_group_id(0) * wg.get_group_range(1) + wg.get_group_id(1)",
                ],
                "lsz": ["it.get_local_linear_range()", "wg.get_local_linear_range()"],
                "gsz": ["it.get_global_linear_range()", "it.get_range(0) * it.get_range(1)"],
                "ngr": ["wg.get_group_linear_range()"],
            }
        return {name: self.r.choice(options) for name, options in choices.items()}

    def _item_only_ids(self, ndim: int) -> dict[str, str]:
        """The prologue's ids read from the item's own methods (and the free functions)."""
        if ndim == 1:
            choices = {
                "gid": ["it.get_global_linear_id()", "it.get_global_id(0)", "it.get_id(0)"],
                "lid": ["it.get_local_linear_id()", "it.get_local_id(0)"],
                "grp": ["dk.get_group_id(0)"],
                "lsz": ["it.get_local_linear_range()", "it.get_local_range(0)"],
                "gsz": ["it.get_global_linear_range()", "it.get_range(0)"],
                "ngr": ["it.get_group_range(0)"],
            }
        else:
            choices = {
                "gid": [
                    "it.get_global_linear_id()",
                    "it.get_id(0) * it.get_range(1) + it.get_id(1)",
                ],
                "lid": [
                    "it.get_local_linear_id()",
                    "it.get_local_id(0) * it.get_local_range(1) + it.get_local_id(1)",
                ],
                "grp": ["dk.get_group_id(0) * it.get_group_range(1) + dk.get_group_id(1)"],
                "lsz": ["it.get_local_linear_range()"],
                "gsz": ["it.get_global_linear_range()", "it.get_range(0) * it.get_range(1)"],
                "ngr": ["it.get_group_range(0) * it.get_group_range(1)"],
            }
        return {name: self.r.choice(options) for name, options in choices.items()}


SYCL_SHARE = 0.4  # of the cases, written in SYCL 2020's forms


def is_sycl_case(seed: int) -> bool:
    """Whether case `seed` is written in SYCL 2020's forms: drawn from a stream of its own, so
    the other cases are what they were before these forms existed."""
    return random.Random(seed * 7919 + 1).random() < SYCL_SHARE


def generate(seed: int) -> dict:
    """The program (kernel, model, launch, arrays) of one case seed.

    One case in four without sub-group calls (whose results depend on the sub-group size) is
    also compiled as a host-SIMD kernel (compiler/host_simd.py: the host's cost model,
    sub-groups of one work-item), which is launched where the compiler does not refuse it.
    Another one in four without sub-group calls asks for sub-groups of one work-item
    (`@dk.kernel(sub_group_size=1)`), which the OpenCL CPU runtime runs one after another, not
    as vector lanes. (Kernels with sub-group calls keep the runtime's size: at a fixed size of 8
    one of them hung on that runtime, docs/kernel-language.md.) Decided from the seed, so the
    generator's draws, and every other case, stay as they were.
    """
    case = Generator(seed, sycl=is_sycl_case(seed)).program()
    if case["sycl"]:  # its sub-group size is the generator's (the model needs it)
        case["host_simd"] = False
        return case
    sub_groups = "dk.sub_group" in case["kernel"]
    case["host_simd"] = seed % 4 == 0 and not sub_groups
    case["sub_group_size"] = 1 if seed % 4 == 1 and not sub_groups else None
    return case


def case_seed(campaign_seed: int, index: int) -> int:
    return campaign_seed * 1_000_003 + index


# --- the model's run-time (in the child) ------------------------------------------------


def _model_namespace() -> dict:
    import numpy as np

    def wrap(value: int, dtype) -> int:
        bits = dtype.itemsize * 8
        value = int(value) & ((1 << bits) - 1)
        if dtype.kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value

    def conv(value, dtype):
        return wrap(value, dtype) if dtype.kind in "iu" else dtype.type(value)

    def old(arr, idx):
        value = arr[idx]
        return int(value) if arr.dtype.kind in "iu" else value

    def store(arr, idx, value):
        arr[idx] = conv(value, arr.dtype)

    def rmw(update):
        def apply(arr, idx, value):
            before = old(arr, idx)
            arr[idx] = conv(update(before, conv(value, arr.dtype)), arr.dtype)
            return before

        return apply

    def compare_exchange(arr, idx, expected, desired):
        before, expected = old(arr, idx), conv(expected, arr.dtype)
        if arr.dtype.kind == "f":
            bits = f"u{arr.dtype.itemsize}"
            same = np.array(before, arr.dtype).view(bits) == np.array(expected, arr.dtype).view(
                bits
            )
        else:
            same = before == expected
        if same:
            arr[idx] = conv(desired, arr.dtype)
        return before

    int64, uint64 = np.dtype("int64"), np.dtype("uint64")
    return {
        "np": np,
        "math": math,
        "W": lambda value: wrap(value, int64),
        "U": lambda value: wrap(value, uint64),
        "ST": store,
        "A_add": rmw(lambda a, b: a + b),
        "A_sub": rmw(lambda a, b: a - b),
        "A_min": rmw(lambda a, b: b if b < a else a),
        "A_max": rmw(lambda a, b: b if b > a else a),
        "A_and": rmw(lambda a, b: a & b),
        "A_or": rmw(lambda a, b: a | b),
        "A_xor": rmw(lambda a, b: a ^ b),
        "A_exchange": rmw(lambda a, b: b),
        "A_load": lambda arr, idx: old(arr, idx),
        "A_compare_exchange": compare_exchange,
    }


#: The group operations of the model: (combine, identity for ints, identity for floats).
_GROUP_OPERATIONS = {
    "plus": (lambda a, b: a + b, 0, 0.0),
    "multiplies": (lambda a, b: a * b, 1, 1.0),
    "minimum": (min, 2**63 - 1, math.inf),
    "maximum": (max, -(2**63), -math.inf),
    "bit_and": (lambda a, b: a & b, -1, None),
    "bit_or": (lambda a, b: a | b, 0, None),
    "bit_xor": (lambda a, b: a ^ b, 0, None),
}


def _collective(requests: list) -> list:
    """What each member of one group gets from a group algorithm, members in order (local
    linear id, or lane), from what each asked: (scope, kind, ...) as the grammar writes."""
    kind = requests[0][1]
    if any(r[:2] != requests[0][:2] for r in requests):
        raise ModelError(f"work-items of one group called different group algorithms: {requests}")
    if kind == "vote":
        which, truths = requests[0][2], [bool(r[3]) for r in requests]
        answer = {"any": any(truths), "all": all(truths), "none": not any(truths)}[which]
        return [answer] * len(requests)
    if kind in ("broadcast", "select", "shift"):
        values, size = [r[2] for r in requests], len(requests)
        if kind == "broadcast":
            return [values[requests[0][3]]] * size
        if kind == "select":
            return [values[(lane + r[3]) % size] for lane, r in enumerate(requests)]
        return [
            values[lane + r[3]] if 0 <= lane + r[3] < size else None
            for lane, r in enumerate(requests)
        ]
    op, init = requests[0][2], requests[0][4]
    combine, int_identity, float_identity = _GROUP_OPERATIONS[op]
    values = [r[3] for r in requests]
    floats = isinstance(values[0], float)
    total = float_identity if floats else int_identity
    results = []
    for value in values:
        before, total = total, combine(total, value)
        results.append({"reduce": None, "inclusive": total, "exclusive": before}[kind])
    if kind == "reduce":
        results = [total] * len(values)
    if init is not None:
        results = [combine(init, r) for r in results]
    return results


class ModelError(Exception):
    """The model itself went wrong: a fuzzer bug, not a compiler one."""


def _flat(index, sizes) -> int:
    """A row-major flat index, as the kernel's prologue computes gid, lid and grp."""
    flat = 0
    for i, n in zip(index, sizes):
        flat = flat * n + i
    return flat


def _sub_group_of(lid: tuple, local: tuple, size: int) -> tuple[int, int]:
    """(sub-group index, lane) of the work-item at `lid`: sub-groups of `size` lanes cut from
    each row of the work-group along its last dimension (docs/kernel-language.md)."""
    row, along = _flat(lid, local) // local[-1], lid[-1]
    per_row = -(-local[-1] // size)
    return row * per_row + along // size, along % size


def run_model(case: dict, arrays: dict, scalars: dict) -> None:
    """Run every work-item of the model, work-group by work-group, in lock step at barriers
    (a bare yield) and at group algorithms (a yield of a request, answered by _collective)."""
    import itertools
    from types import SimpleNamespace

    import numpy as np

    namespace = _model_namespace()
    exec(compile(case["model"], "<fuzz model>", "exec"), namespace)
    model = namespace["model"]
    global_, local = case["global"], case["local"]
    ndim = len(global_)
    groups = [g // loc for g, loc in zip(global_, local)]
    args = [arrays[p] if p in arrays else scalars.get(p) for p in case["params"]]
    for group in itertools.product(*(range(n) for n in groups)):
        shared: dict = {}

        def local_array(name, size, dtype, shared=shared):
            return shared.setdefault(name, np.zeros(size, dtype))

        items, sub_groups = [], {}
        for index, lid in enumerate(itertools.product(*(range(n) for n in local))):
            g = [group[d] * local[d] + lid[d] for d in range(ndim)]
            ctx = SimpleNamespace(
                gid=_flat(g, global_),
                lid=_flat(lid, local),
                grp=_flat(group, groups),
                lsz=math.prod(local),
                gsz=math.prod(global_),
                ngr=math.prod(groups),
                wdim=ndim,
                local=local_array,
            )
            items.append(model(ctx, *args))
            if case.get("sub_group_size"):
                sub_group, lane = _sub_group_of(lid, local, case["sub_group_size"])
                sub_groups.setdefault(sub_group, {})[lane] = index
        members = {
            "wg": [list(range(len(items)))],
            "sg": [[lanes[k] for k in sorted(lanes)] for lanes in sub_groups.values()],
        }
        replies: list = [None] * len(items)
        while True:
            asked = []
            for item, reply in zip(items, replies):
                try:
                    asked.append(item.send(reply))
                except StopIteration:
                    asked.append(StopIteration)
            if all(a is StopIteration for a in asked):
                break
            if any(a is StopIteration for a in asked) or len({a is None for a in asked}) > 1:
                raise ModelError("work-items of one group reached different barriers")
            replies = [None] * len(items)
            if asked[0] is None:  # a barrier
                continue
            for group_members in members[asked[0][0]]:
                answers = _collective([asked[i] for i in group_members])
                for i, answer in zip(group_members, answers):
                    replies[i] = answer


# --- the child --------------------------------------------------------------------------


def _inputs(case: dict) -> tuple[dict, dict]:
    import numpy as np

    rng = np.random.default_rng(case["seed"])
    arrays = {}
    for name, (dtype, shape) in case["arrays"].items():
        dt = np.dtype(dtype)
        if name.startswith("out"):
            arrays[name] = np.zeros(shape, dt)
        elif dt.kind in "iu" and name.startswith("ia"):
            info = np.iinfo(dt)
            arrays[name] = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
        elif dt.kind in "iu":
            arrays[name] = rng.integers(-100 if dt.kind == "i" else 0, 100, size=shape).astype(dt)
        elif name.startswith("fa"):
            arrays[name] = rng.uniform(-10, 10, size=shape).astype(dt)
        else:
            arrays[name] = rng.integers(-100, 100, size=shape).astype(dt)
    scalars = {"n_i": int(rng.integers(-50, 50)), "s_f": float(rng.uniform(-10, 10))}
    return arrays, scalars


_INTERNAL = re.compile(
    r"internal|Traceback|AttributeError|KeyError|AssertionError|NotImplementedError|IndexError|"
    r"LoweringError|TypeError: |ValueError: |Failed in .* mode pipeline"
)


def _host_simd_kernel(function, sig, options: dict):
    """The kernel compiled as a streaming host-SIMD kernel, or None where the compiler refuses
    it as such (compiler/host_simd.py: a Refusal is not a failure)."""
    from dpex_kernels.compiler.backend.host_simd import STREAM, Refusal
    from dpex_kernels.dispatcher.jit_kernel import JitKernel

    kernel = JitKernel(function, host_simd=STREAM, **options)
    try:
        kernel.compile(sig)
    except Refusal:
        return None
    return kernel


def _compile_failure(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if "invalid SPIR-V" in text:
        return "invalid-spirv"
    if type(exc).__name__ != "KernelCompileError" or _INTERNAL.search(text):
        return "internal"
    return "rejected"


def _compare(got: dict, expected: dict) -> str | None:
    import numpy as np

    for name, want in expected.items():
        have = got[name]
        if want.dtype.kind == "f":
            bad = ~np.isclose(have, want, rtol=1e-6, atol=1e-6, equal_nan=True)
        else:
            bad = have != want
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            return (
                f"{name}: {int(bad.sum())} of {bad.size} differ; first at {where}: "
                f"kernel {have[where]!r}, model {want[where]!r}"
            )
    return None


def _define(case: dict) -> dict:
    """Run the case's kernel source; its file name is registered with linecache, as IPython
    does for its cells, so the direct front end (compiler/direct) can read the source."""
    import linecache

    import dpex_kernels as dk

    filename = f"<fuzz kernel {case['seed']}>"
    text = case["kernel"]
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"dk": dk, "np": __import__("numpy"), "math": __import__("math")}
    exec(compile(text, filename, "exec"), namespace)
    return namespace


def _compiled(case: dict, namespace: dict, sig):
    """The case's kernel compiled for `sig` with its options."""
    import dpex_kernels as dk

    options = {"debug": case["debug"], "opt_level": case["opt_level"]}
    kernel = None
    if case.get("host_simd"):
        kernel = _host_simd_kernel(namespace["kern"], sig, options)
    if kernel is None:
        sized = {"sub_group_size": case.get("sub_group_size")}
        kernel = dk.kernel(namespace["kern"], **options, **sized)
        kernel.compile(sig)
    return kernel


def _device_arguments(case: dict, arrays: dict, scalars: dict) -> tuple[dict, list]:
    """(device copies of `arrays`, the launch's arguments): the case's read-only inputs with
    flags.writable off, its LocalAccessor arguments made for its work-group size."""
    import dpnp

    import dpex_kernels as dk

    device_arrays = {n: dpnp.asarray(a) for n, a in arrays.items()}
    for name in case.get("readonly", ()):
        device_arrays[name].flags.writable = False
    accessors = {n: dk.LocalAccessor(size, d) for n, (d, size) in case.get("accessors", {}).items()}
    values = {**scalars, **accessors, **device_arrays}
    return device_arrays, [values[p] for p in case["params"]]


def _signature(case: dict, args: list):
    import dpex_kernels as dk

    return dk.void(
        *(
            dk.local_accessor(a.dtype, a.ndim) if isinstance(a, dk.LocalAccessor) else dk.typeof(a)
            for a in args
        )
    )


def _launched(case: dict, kernel, arrays: dict, scalars: dict) -> dict:
    """The arrays after one launch of `kernel` on copies of `arrays`."""
    import dpnp

    import dpex_kernels as dk

    device_arrays, args = _device_arguments(case, arrays, scalars)
    launch = dk.NdRange(dk.Range(*case["global"]), dk.Range(*case["local"]))
    kernel[launch](*args).wait()
    return {n: dpnp.asnumpy(a) for n, a in device_arrays.items()}


def run_case(case: dict) -> dict:
    """Compile and run one case here, then its model; what happened, as a result record.

    A kernel the direct front end compiled is compiled by Numba's front end as well, and the
    two must agree (outcome "front-ends-differ" where they do not)."""

    arrays, scalars = _inputs(case)
    front_end = ""
    try:
        namespace = _define(case)
        sig = _signature(case, _device_arguments(case, arrays, scalars)[1])
        kernel = _compiled(case, namespace, sig)
        front_end = kernel.definitions[sig].artifacts.front_end
    except Exception as exc:
        return {"outcome": _compile_failure(exc), "detail": f"{type(exc).__name__}: {exc}"}
    try:
        got = _launched(case, kernel, arrays, scalars)
    except Exception as exc:
        return {"outcome": "launch", "detail": f"{type(exc).__name__}: {exc}"}
    try:
        run_model(case, arrays, scalars)
    except Exception as exc:
        return {"outcome": "model-error", "detail": f"{type(exc).__name__}: {exc}"}
    problem = _compare(got, arrays)
    if problem:
        return {"outcome": "mismatch", "detail": problem, "front_end": front_end}
    if front_end == "direct":
        problem = _against_numba(case, namespace, sig, got, _inputs(case))
        if problem:
            return {"outcome": "front-ends-differ", "detail": problem}
    return {"outcome": "ok", "front_end": front_end}


def _against_numba(case: dict, namespace: dict, sig, got: dict, inputs: tuple) -> str | None:
    """What differs between the direct front end's results and Numba's front end's."""
    previous = os.environ.get("DPEX_KERNELS_FRONT_END")
    os.environ["DPEX_KERNELS_FRONT_END"] = "numba"
    try:
        kernel = _compiled(case, namespace, sig)
        numba_got = _launched(case, kernel, *inputs)
    except Exception as exc:
        return f"Numba's front end fails where the direct one compiles: {type(exc).__name__}: {exc}"
    finally:
        if previous is None:
            del os.environ["DPEX_KERNELS_FRONT_END"]
        else:
            os.environ["DPEX_KERNELS_FRONT_END"] = previous
    return _compare(got, numba_got)


def child_main() -> None:
    """Read cases (JSON lines) from stdin; announce each, run it, write its result."""
    import dpex_kernels  # noqa: F401  (first: it sets up the OpenCL runtime)

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        case = json.loads(line)
        print(json.dumps({"start": case["index"]}), flush=True)
        result = run_case(case)
        result["index"] = case["index"]
        print(json.dumps(result), flush=True)


# --- the parent -------------------------------------------------------------------------


class Child:
    """One worker process; its stdout lines arrive through a queue so reads can time out."""

    def __init__(self):
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
        env = dict(os.environ, DPEX_KERNELS_VALIDATE_SPIRV="1")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.kernel_fuzzer", "--child"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def read(self, timeout: float) -> dict | None:
        """The next record, or None when the child died or said nothing for `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:  # the child closed its output: it is exiting
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=30)
                return None
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                if time.monotonic() > deadline:
                    return None

    def send(self, case: dict) -> bool:
        try:
            self.process.stdin.write(json.dumps(case) + "\n")
            self.process.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait()
        self.stderr.close()
        return code


_LLVM_MESSAGE = r"LLVM ERROR|Assertion .* failed|UNREACHABLE|error:|Segmentation fault"


def signature(outcome: str, detail: str) -> str:
    """What tells one failure from another: its class and its message without numbers."""
    lines = [ln for ln in detail.splitlines() if ln.strip()]
    if outcome == "mismatch":
        key = (lines or [""])[0].split(":")[0]  # the array that differs
    elif outcome in ("abort", "hang"):
        at = next((n for n, ln in enumerate(lines) if re.search(_LLVM_MESSAGE, ln)), None)
        key = lines[-1] if lines else ""
        if at is not None:
            key = lines[at]
            if "UNREACHABLE" in key and at > 0:  # the reason is the line before
                key = f"{lines[at - 1]} ({key.split(' at ')[0]})"
            key = re.sub(r"/\S*/", "", key)  # paths of the build machine
        if lines and lines[0].startswith("exit"):  # the signal number tells aborts apart
            key = re.sub(r"0x[0-9a-f]+|\d+", "N", key)
            return f"{outcome}: {lines[0]}: {key.strip()[:200]}"
    else:  # a compile or launch error: its own words, not the header naming the kernel
        header = r"^\w+: cannot compile kernel '[^']*'(?: \([^)]*\))? for a SYCL device:\s*"
        first = re.sub(header, "", (lines or [""])[0])
        if not first.strip() and len(lines) > 1:  # the header stood on a line of its own
            first = lines[1]
        key = re.sub(r"^(kernel '[^']*': )+", "", first.strip())
    key = re.sub(r"0x[0-9a-f]+|\d+", "N", key)
    return f"{outcome}: {key.strip()[:200]}"


class Runner:
    """Runs cases in a child process, starting a fresh child after one dies or hangs."""

    def __init__(self, timeout: float = 90.0):
        self.timeout = timeout
        self.child: Child | None = None
        self.restarts = 0

    def run(self, case: dict) -> dict:
        """The child's result record, or an "abort"/"hang" record made here."""
        if self.child is None:
            self.child = Child()
            if self.child.read(self.timeout) is None:
                raise RuntimeError(f"the fuzz child did not start:\n{self.child.stderr_tail()}")
        child, result = self.child, None
        if child.send(case) and child.read(self.timeout) is not None:  # its "start" line
            result = child.read(self.timeout)
        if result is None:
            alive = child.process.poll() is None
            tail = child.stderr_tail()
            code = child.stop()
            self.child, self.restarts = None, self.restarts + 1
            if alive:
                return {"outcome": "hang", "detail": f"no result in {self.timeout:.0f} s"}
            return {"outcome": "abort", "detail": f"exit {code}\n{tail}"}
        return result

    def close(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None


#: Findings that are known and open, by signature prefix: counted, reported, not failures.
#: Remove an entry when its fix lands (the bounded test then says it no longer shows).
KNOWN: dict[str, str] = {}


@dataclass
class Report:
    """What a campaign did and found."""

    generated: int = 0
    compiled: int = 0
    ran: int = 0
    restarts: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)
    findings: dict = field(default_factory=dict)  # new signature -> case seeds
    known: dict = field(default_factory=dict)  # KNOWN signature -> case seeds
    details: dict = field(default_factory=dict)  # signature -> first detail
    #: which front end compiled the kernels that ran ("direct", "numba (direct: <why not>)")
    front_ends: Counter = field(default_factory=Counter)

    def add(self, case: dict, result: dict, known: dict) -> str | None:
        """Count one result; its signature when it failed."""
        outcome = result["outcome"]
        self.generated += 1
        self.outcomes[outcome] += 1
        if result.get("front_end"):
            self.front_ends[re.sub(r"\d+", "N", result["front_end"])[:120]] += 1
        self.compiled += outcome in ("ok", "mismatch", "launch", "model-error", "hang")
        self.ran += outcome in ("ok", "mismatch", "model-error")
        if outcome == "ok":
            return None
        sig = signature(outcome, result.get("detail") or "")
        where = self.known if any(sig.startswith(k) for k in known) else self.findings
        where.setdefault(sig, []).append(case["seed"])
        self.details.setdefault(sig, result.get("detail"))
        return sig

    def summary(self) -> str:
        lines = [
            f"kernels generated {self.generated}, compiled {self.compiled}, ran {self.ran} "
            f"in {self.seconds:.0f} s ({self.restarts} child restarts)",
            "outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())),
            "front ends: " + "; ".join(f"{v} x {k}" for k, v in self.front_ends.most_common(6)),
        ]
        for title, found in (("new findings", self.findings), ("known findings", self.known)):
            lines.append(f"{title}: {len(found)}")
            for sig, seeds in found.items():
                lines.append(f"  {len(seeds):4d} x {sig}   (case seeds {seeds[:5]})")
        return "\n".join(lines)


def campaign(
    seed: int,
    count: int | None = None,
    minutes: float | None = None,
    timeout: float = 90.0,
    out: Path | None = None,
    log=None,
    known: dict = KNOWN,
) -> Report:
    """Generate and run cases until `count` are done or `minutes` have passed."""
    report, runner = Report(), Runner(timeout)
    started = time.monotonic()
    index = 0
    try:
        while (count is None or index < count) and (
            minutes is None or time.monotonic() - started < minutes * 60
        ):
            case = dict(generate(case_seed(seed, index)), index=index)
            index += 1
            result = runner.run(case)
            sig = report.add(case, result, known)
            if sig is not None:
                if out is not None:
                    _save(out, case, result)
                if log:
                    log(f"case {case['index']} (seed {case['seed']}): {sig}")
    finally:
        runner.close()
    report.restarts, report.seconds = runner.restarts, time.monotonic() - started
    return report


def _too_slow(signum, frame):
    raise TimeoutError("the model ran too long")


def reduce(case: dict, timeout: float = 90.0, log=None) -> dict:
    """A smaller case with the same failure signature: drop paired kernel/model lines."""
    want = signature(case["result"]["outcome"], case["result"].get("detail") or "")
    runner = Runner(timeout)

    def same_failure(candidate: dict) -> bool:
        arrays, scalars = _inputs(candidate)
        # A candidate the model cannot run (a name left undefined, a loop without its
        # increment) is not a smaller case of the same failure.
        signal.signal(signal.SIGALRM, _too_slow)
        signal.alarm(10)
        try:
            compile(candidate["kernel"], "<candidate>", "exec")
            run_model(candidate, arrays, scalars)
        except Exception:
            return False
        finally:
            signal.alarm(0)
        result = runner.run(candidate)
        return signature(result["outcome"], result.get("detail") or "") == want

    klines, mlines = case["kernel"].splitlines(), case["model"].splitlines()
    changed = True
    try:
        while changed:
            changed = False
            for at in range(len(klines) - 1, -1, -1):
                if at >= len(klines) or not klines[at].strip():
                    continue
                # A whole statement first (a compound one with its body), then the line alone.
                for end in sorted({_statement_end(klines, at), at + 1}, reverse=True):
                    start, end = _whole_units(mlines, at, end)
                    trial_k, trial_m = klines[:start] + klines[end:], mlines[:start] + mlines[end:]
                    trial = dict(
                        case, kernel="\n".join(trial_k) + "\n", model="\n".join(trial_m) + "\n"
                    )
                    if same_failure(trial):
                        klines, mlines, changed = trial_k, trial_m, True
                        if log:
                            log(f"{len(klines)} lines")
                        break
    finally:
        runner.close()
    return dict(case, kernel="\n".join(klines) + "\n", model="\n".join(mlines) + "\n")


def unit_of(mline: str) -> str | None:
    """The unit a model line belongs to (Generator.emit), or None."""
    return mline.rsplit(UNIT, 1)[1] if UNIT in mline else None


def _whole_units(mlines: list[str], at: int, end: int) -> tuple[int, int]:
    """Lines `at:end` widened to cover each unit they touch (Generator.emit): without part of
    one, the case is another (a CAS loop's model line kept, an array read uninitialised)."""
    units = {unit_of(m) for m in mlines[at:end]} - {None}
    lines = [i for i, m in enumerate(mlines) if unit_of(m) in units]
    return min([at, *lines]), max([end, *(i + 1 for i in lines)])


def _statement_end(lines: list[str], at: int) -> int:
    """The index after the statement starting at `lines[at]`, its indented body included."""
    indent = len(lines[at]) - len(lines[at].lstrip())
    end = at + 1
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
    ):
        end += 1
    return end


def _save(out: Path, case: dict, result: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"case_{case['seed']}"
    stem.with_suffix(".json").write_text(json.dumps({**case, "result": result}, indent=1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds per kernel")
    parser.add_argument("--out", type=Path, default=None, help="folder for failing cases")
    parser.add_argument("--show", type=int, default=None, help="print case N's sources")
    parser.add_argument("--run", type=int, default=None, help="run case N here (may abort)")
    parser.add_argument("--reduce", type=Path, default=None, help="shrink a saved case")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_main()
        return 0
    if args.reduce is not None:
        case = reduce(json.loads(args.reduce.read_text()), args.timeout, log=print)
        args.reduce.with_suffix(".min.json").write_text(json.dumps(case, indent=1))
        print(case["kernel"], "\n# --- model ---\n", case["model"], sep="")
        return 0
    if args.show is not None or args.run is not None:
        case = generate(case_seed(args.seed, args.show if args.run is None else args.run))
        print(case["kernel"], "\n# --- model ---\n", case["model"], sep="")
        print({k: case[k] for k in ("global", "local", "debug", "opt_level", "sub_group_size")})
        if args.run is not None:
            print(run_case(case))
        return 0
    if args.minutes is None and args.count is None:
        args.minutes = 1.0
    report = campaign(
        args.seed,
        args.count,
        args.minutes,
        args.timeout,
        args.out,
        log=lambda text: print(text, flush=True),
    )
    print(report.summary())
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
