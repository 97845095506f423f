"""What the direct front end's typer finds, and the shared tables it types by: the data the
lowerer reads (typer.py makes it)."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field

from numba.core import types

from .source import FunctionSource

NOT_CONSTANT = object()

#: The in-place forms, for augmented assignments.
INPLACE = {
    ast.Add: operator.iadd,
    ast.Sub: operator.isub,
    ast.Mult: operator.imul,
    ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod,
    ast.Pow: operator.ipow,
    ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift,
    ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
    ast.BitAnd: operator.iand,
}
COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


@dataclass(frozen=True)
class Binding:
    """One SSA version of a variable: its type and what defined it."""

    type: types.Type
    #: identifies the definition (two bindings with the same one are the same version)
    definition: object
    #: the value, where Numba's constant inference (find_const) finds one
    constant: object = NOT_CONSTANT
    #: where a binary operation or comparison of two such constants defined it, its value in
    #: Python (what Numba's DeadBranchPrune decides a branch on the variable by)
    comparison: object = NOT_CONSTANT
    #: `constant` or `comparison` rests on a variable assigned more than once, which Numba
    #: sees as a constant only after SSA (its last DeadBranchPrune)
    late: bool = False


Env = dict  # variable name -> Binding; None where the code is unreachable


@dataclass
class Typed:
    """What the typer found, keyed by AST node (and a tag where a node has several facts)."""

    source: FunctionSource
    argtypes: tuple
    return_type: types.Type = types.none
    #: expression node -> its type
    types: dict = field(default_factory=dict)
    #: (node, tag) -> a fact the lowerer reads (signatures, constants, join types)
    facts: dict = field(default_factory=dict)
    #: node -> (line, text) for inspect_types()
    annotations: dict = field(default_factory=dict)


@dataclass
class Loop:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


MAX_LOOP_ROUNDS = 16
