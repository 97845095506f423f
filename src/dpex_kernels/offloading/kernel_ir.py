"""A region's kernel: a template (codegen.py) whose sentinel is replaced by the loop body's
Numba IR, compiled by the kernel compiler like any dk kernel.

The template holds what the strategy adds around the body (the work-item's indices, a loop
over a chunk, a reduction's accumulators and epilogue); the body is the parfor's own IR, so
errors in it point at the user's lines. Numba builds its CPU gufuncs the same way
(parfor_lowering._create_gufunc_for_parfor_body); this is our own version of the splice.
"""

from __future__ import annotations

import ast
import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import replace

from numba.core import compiler, ir
from numba.core.ir_utils import (
    add_offset_to_labels,
    build_definitions,
    find_max_label,
    fixup_var_define_in_scope,
    get_name_var_table,
    mk_unique_var,
    rename_labels,
    replace_var_names,
    transfer_scope,
)

import dpex_kernels

from ..compiler.backend import host_simd
from ..compiler.device_pipeline import generated_ir
from ..dispatcher.jit_kernel import JitKernel
from ..errors import KernelCompileError
from . import codegen
from .regions import copy_blocks

#: Where failing region kernels are recorded while a host function compiles (dispatcher.py).
_RECORDING = threading.local()


def splice(template: ir.FunctionIR, body: dict[int, ir.Block], reserved: set[str]) -> None:
    """Put the loop body's blocks where the template's sentinel is.

    The template's own variables are renamed afresh (its bytecode's names would clash with
    the body's), except `reserved` ones: its parameters and the names it shares with the body
    (loop indices, reduction accumulators).
    """
    renames = {
        name: mk_unique_var(name)
        for name in get_name_var_table(template.blocks)
        if name not in reserved and name != codegen.SENTINEL
    }
    replace_var_names(template.blocks, renames)
    body = add_offset_to_labels(body, find_max_label(template.blocks) + 1)
    resume = find_max_label(body) + 1
    for label, block in list(template.blocks.items()):
        for position, inst in enumerate(block.body):
            if isinstance(inst, ir.Assign) and inst.target.name == codegen.SENTINEL:
                before = ir.Block(block.scope, inst.loc)
                before.body = [*block.body[:position], ir.Jump(min(body), inst.loc)]
                block.body = block.body[position + 1 :]
                for body_label, body_block in body.items():
                    if not body_block.body or not body_block.body[-1].is_terminator:
                        body_block.append(ir.Jump(resume, inst.loc))  # the body's end
                    template.blocks[body_label] = transfer_scope(body_block, block.scope)
                template.blocks[resume] = block
                template.blocks[label] = before
                template.blocks = rename_labels(template.blocks)
                fixup_var_define_in_scope(template.blocks)
                template._definitions = build_definitions(template.blocks)
                return
    raise AssertionError("kernel template without its sentinel")


_NAMES = re.compile(r"\$?[A-Za-z_][\w.$]*")


def digest(body: dict[int, ir.Block]) -> str:
    """A digest of a loop body's IR with its variable names numbered by first appearance:
    the same loop gives the same digest in every process (the disk cache's key)."""
    text = "\n".join(str(inst) for label in sorted(body) for inst in body[label].body)
    numbering: dict[str, str] = {}
    text = _NAMES.sub(lambda m: numbering.setdefault(m.group(0), f"v{len(numbering)}"), text)
    return hashlib.sha256(text.encode()).hexdigest()


class RegionKernel(JitKernel):
    """A lazy dk kernel whose Numba IR is a template with a loop body spliced in.

    `template` is the template's syntax tree (codegen.function), `body` the loop body's
    blocks (copied again for each compile), `reserved` the names the template shares with
    the body. A compile failure is a KernelCompileError naming the region (`describe`).
    """

    def __init__(
        self,
        template,
        body: dict[int, ir.Block],
        reserved: set[str],
        *,
        filename: str,
        describe: str,
        namespace: dict | None = None,
        cache: bool = False,
        debug: bool = False,
        host_simd_mode: str = "",
        plain_fallback: bool = False,
        sub_group_size: int | None = None,
        noalias: bool = False,
    ):
        body = copy_blocks(body)
        # the body's digest in the docstring: the disk cache keys kernels on their bytecode
        docstring = codegen.do(ast.Constant(f"loop body {digest(body)}"))
        template.body.insert(0, codegen.at_line(docstring, template.lineno))
        globals_ = {codegen.API: dpex_kernels, **(namespace or {})}
        function = codegen.compile_function(template, filename, globals_)
        generated_ir(function, self._make_ir)
        self._body = body
        self._reserved = reserved
        super().__init__(
            function,
            cache=cache,
            debug=debug,
            host_simd=host_simd_mode,
            sub_group_size=sub_group_size,
            noalias=noalias,
        )
        self.describe = describe
        #: Whether a host-SIMD kernel the compiler refuses is built plain instead (the
        #: Refusal kept here), or the Refusal raised.
        self.plain_fallback = plain_fallback
        self.refusal: host_simd.Refusal | None = None
        #: signature -> the KernelCompileError of its compile, for signatures that failed.
        self.failures: dict = {}

    def _make_ir(self) -> ir.FunctionIR:
        """The template's IR with a copy of the body at each of its sentinels."""
        func_ir = compiler.run_frontend(self.py_func)
        splice(func_ir, copy_blocks(self._body), self._reserved)
        while any(
            isinstance(inst, ir.Assign) and inst.target.name == codegen.SENTINEL
            for block in func_ir.blocks.values()
            for inst in block.body
        ):
            splice(func_ir, copy_blocks(self._body), self._reserved)
        return func_ir

    def compile(self, sig):
        """Compile for a signature; a failure names the region and is recorded."""
        with self._lock:
            if sig in self.definitions:
                return self.definitions[sig]
            error = self.failures.get(sig)
            if error is None:
                try:
                    return super().compile(sig)
                except host_simd.Refusal as exc:
                    self.refusal = exc
                    if not self.plain_fallback:
                        raise
                    self.options = replace(self.options, host_simd="")  # the same IR, plain
                    return super().compile(sig)
                except (KernelCompileError, TypeError) as exc:
                    error = KernelCompileError(
                        f"{self.describe} cannot run on a SYCL device: {exc}"
                    )
                    error.__cause__ = exc
                    self.failures[sig] = error
            recorded = getattr(_RECORDING, "failures", None)
            if recorded is not None:
                recorded.append((self, error))
            raise error


class recording_failures:
    """Context manager: the (kernel, KernelCompileError) of every region kernel failing to
    compile in the block, in order."""

    def __enter__(self) -> list:
        self._previous = getattr(_RECORDING, "failures", None)
        _RECORDING.failures = []
        return _RECORDING.failures

    def __exit__(self, *exc) -> None:
        _RECORDING.failures = self._previous


def template_function(name: str, params: list[str], body: list, line: int) -> Callable[[], object]:
    """A kernel template's syntax tree (see codegen.function)."""
    return codegen.function(name, params, body, line)
