"""What every lowering strategy's kernel template shares: the kernel's name, a loop level's
index from a position, and the tuples the loop body reads rebuilt from their items."""

from __future__ import annotations

import ast

from . import codegen
from .codegen import assign, op
from .regions import Region


def kernel_name(region: Region, what: str) -> str:
    return f"{region.function}_{what}_line{region.line}"


def level_index(level, position: codegen.Expr, k: int) -> codegen.Expr:
    """The index of a loop level at `position` (0, 1, ...): start + position * step."""
    step = level.step if isinstance(level.step, int) else f"_dk_st{k}"
    start = level.start if isinstance(level.start, int) else f"_dk_lo{k}"
    scaled = position if step == 1 else op(position, "*", step)
    return scaled if start == 0 else op(start, "+", scaled)


def rebuild_tuples(region: Region) -> list:
    """Template statements rebuilding the tuples the body uses from their items."""
    return [
        assign(name, ast.Tuple([codegen.expr(i) for i in items], ast.Load()))
        for name, items in region.tuples.items()
    ]
