"""Numba's nopython pipeline for device code: passes skipped, replaced and added.

Kernels (the Numba front end) and device functions compile through compile_device_code; the
direct front end takes only device_flags.
"""

from __future__ import annotations

import copy
import functools
import weakref
from collections import OrderedDict

from numba.core import compiler, ir, lowering, typed_passes, untyped_passes
from numba.core import errors as numba_errors
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.ir_utils import build_definitions, mk_unique_var
from numba.core.target_extension import (
    target_override,
)
from numba.stencils.stencil import StencilFunc

from .kernel_api.atomic_ref import METHODS as ATOMIC_REF_METHODS
from .kernel_api.convergence import ConvergedGroupCalls
from .kernel_api.items import DIMENSION_METHODS
from .kernel_api.registry import constant_argument, is_kernel_api
from .patches import collector_paused
from .target import TARGET_NAME, sycl_target


def device_flags(*, fastmath: bool = False, debug: bool = False, inline: bool = False):
    """Numba compiler flags for device code: no Python objects, no NRT, NumPy errors."""
    flags = compiler.Flags()
    sycl_target.options.parse_as_flags(flags, {})
    flags.fastmath = bool(fastmath)
    flags.boundscheck = bool(debug)
    flags.forceinline = bool(inline)
    return flags


#: Passes of Numba's nopython pipeline that device code has no use for: the post-inference
#: rewrites turn array expressions and constant-array calls into code that allocates arrays
#: (which device code cannot: both fail to compile either way) and cost 5% of a compile; parfor
#: diagnostics report on parfors, which device code has none of.
_SKIPPED_PASSES = (typed_passes.NopythonRewrites, typed_passes.DumpParforDiagnostics)


class _DeviceLower(lowering.Lower):
    """Numba's lowering, except that a binary operator without constant operands is lowered
    with the signature typing gave it, as calls are.

    Numba's lower_binop types the operator a second time for the same argument types (a
    third of a work-group kernel's lowering went there); operators with a constant operand
    keep Numba's path, which first looks for a lowering specialised to the constant
    (`x ** 2`, `1 == 1`).
    """

    def lower_binop(self, resty, expr, op):
        if (expr.static_lhs, expr.static_rhs) != (ir.UNDEFINED, ir.UNDEFINED):
            return super().lower_binop(resty, expr, op)
        signature = self.fndesc.calltypes[expr]
        fnty = self.context.typing_context.resolve_value_type(op)
        try:
            impl = self.context.get_function(fnty, signature)
        except (KeyError, NotImplementedError):  # not typed through fnty: Numba's way
            return super().lower_binop(resty, expr, op)
        operands = [
            self.context.cast(self.builder, self.loadvar(v.name), self.typeof(v.name), formal)
            for v, formal in zip((expr.lhs, expr.rhs), signature.args)
        ]
        result = impl(self.builder, operands)
        return self.context.cast(self.builder, result, signature.return_type, resty)


@register_pass(mutates_CFG=True, analysis_only=False)
class _DeviceNativeLowering(typed_passes.NativeLowering):
    """Numba's lowering pass with _DeviceLower."""

    _name = "dpex_native_lowering"

    @property
    def lowering_class(self):
        return _DeviceLower


def _may_inline(func_ir: ir.FunctionIR) -> bool:
    """Whether Numba's closure inlining could change this function: it inlines closures and
    comprehensions (make_function), lists built into arrays (build_list), `reduce` and
    stencil calls; with none of them it only re-runs Numba's IR analyses."""
    for block in func_ir.blocks.values():
        for inst in block.find_insts(ir.Assign):
            value = inst.value
            if isinstance(value, ir.Expr) and value.op in ("make_function", "build_list"):
                return True
            # by identity: a global may be an array, which `in` would compare element-wise
            if isinstance(value, (ir.Global, ir.FreeVar)) and (
                value.value is functools
                or value.value is functools.reduce
                or isinstance(value.value, StencilFunc)
            ):
                return True
    return False


@register_pass(mutates_CFG=True, analysis_only=False)
class _DeviceInlineClosureLikes(untyped_passes.InlineClosureLikes):
    """Numba's closure inlining where there is something to inline (10% of a compile)."""

    _name = "dpex_inline_closure_likes"

    def run_pass(self, state):
        return _may_inline(state.func_ir) and super().run_pass(state)


@register_pass(mutates_CFG=False, analysis_only=False)
class _KernelApiConstants(FunctionPass):
    """Every constant argument of a kernel API call as a literal (registry.constant_argument):
    `dk.get_global_id(_ZERO)` with `_ZERO = np.int64(0)` a global types as
    `dk.get_global_id(0)`, which the index functions need to see a constant dimension; so do
    the arguments of item and AtomicRef methods (`item.get_id(_ZERO)`, `ref.load(ORDER)`)."""

    _name = "dpex_kernel_api_constants"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        changed = False
        for block in func_ir.blocks.values():
            body = []
            for inst in block.body:
                value = getattr(inst, "value", None)
                if isinstance(value, ir.Expr) and value.op == "call":
                    changed |= _freeze_arguments(func_ir, block.scope, value, body)
                body.append(inst)
            block.body = body
        if changed:
            func_ir._definitions = build_definitions(func_ir.blocks)
        return changed


def _freeze_arguments(func_ir, scope, call: ir.Expr, body: list) -> bool:
    """Replace the constant arguments of `call`, a kernel API call, by literals assigned just
    before it (into `body`); whether any was."""
    if not (is_kernel_api(_constant(func_ir, call.func)) or _kernel_api_method(func_ir, call)):
        return False

    def frozen(var: ir.Var) -> ir.Var:
        literal = constant_argument(_constant(func_ir, var))
        if literal is None:
            return var
        new = ir.Var(scope, mk_unique_var("$kernel_api_constant"), var.loc)
        body.append(ir.Assign(ir.Const(literal, var.loc), new, var.loc))
        return new

    args = [frozen(arg) for arg in call.args]
    kws = [(name, frozen(var)) for name, var in call.kws]
    changed = args != call.args or kws != list(call.kws)
    call.args, call.kws = args, kws
    return changed


def _kernel_api_method(func_ir, call: ir.Expr) -> bool:
    """Whether `call` calls a method that takes constants: a dimension (`item.get_id(d)`) or
    a memory order (`ref.load(memory_order=o)`)."""
    definition = func_ir._definitions.get(_through_phis(func_ir, call.func).name, [])
    return (
        len(definition) == 1
        and isinstance(definition[0], ir.Expr)
        and definition[0].op == "getattr"
        and definition[0].attr in DIMENSION_METHODS | ATOMIC_REF_METHODS
    )


def _through_phis(func_ir, var: ir.Var, depth: int = 0) -> ir.Var:
    """`var`, or the one variable it is a copy of on every path: a conditional expression
    among a call's arguments (`f(x, a if c else b)`) splits the statement into blocks, and
    the callee and the arguments before it reach the call through copies (`$phi` variables,
    phis once in SSA form)."""
    found = func_ir._definitions.get(var.name, [])
    copied = []
    for definition in found:
        if isinstance(definition, ir.Var):
            copied.append(definition)
        elif isinstance(definition, ir.Expr) and definition.op == "phi":
            copied.extend(definition.incoming_values)
        else:
            return var  # defined by a value of its own
    if not copied or depth > 16 or not all(isinstance(v, ir.Var) for v in copied):
        return var
    sources = {_through_phis(func_ir, v, depth + 1).name: v for v in copied}
    if len(sources) != 1:
        return var
    return _through_phis(func_ir, next(iter(sources.values())), depth + 1)


def _constant(func_ir, var: ir.Var) -> object:
    """Numba's constant inference of a variable (globals, closure variables, attributes of
    modules and classes), through phis (_through_phis), or None where it finds none."""
    try:
        return func_ir.infer_constant(_through_phis(func_ir, var))
    except numba_errors.ConstantInferenceError:
        return None


#: Numba's passes that device code runs in a version of its own.
_REPLACED_PASSES = {
    typed_passes.NativeLowering: _DeviceNativeLowering,
    untyped_passes.InlineClosureLikes: _DeviceInlineClosureLikes,
}


class _DeviceCompiler(compiler.CompilerBase):
    """Numba's nopython pipeline less _SKIPPED_PASSES and with _REPLACED_PASSES, built once
    (building and checking it took 3% of a compile)."""

    _pipelines: dict[tuple, PassManager] = {}

    def define_pipelines(self):
        flags = self.state.flags
        from_ir = self.state.func_ir is not None  # generated IR: no bytecode to translate
        key = (flags.auto_parallel.enabled, flags.no_rewrites, flags.enable_ssa, from_ir)
        built = self._pipelines.get(key)
        if built is None:
            default = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            built = PassManager(default.pipeline_name)
            for pass_class, description in default.passes:
                if pass_class is typed_passes.NopythonTypeInference:
                    built.add_pass(_KernelApiConstants, "kernel API constants as literals")
                pass_class = _REPLACED_PASSES.get(pass_class, pass_class)
                if pass_class not in _SKIPPED_PASSES:
                    built.add_pass(pass_class, description)
                if pass_class is typed_passes.NopythonTypeInference:
                    built.add_pass(ConvergedGroupCalls, "group functions in converged control flow")
            built.finalize()
            self._pipelines[key] = built
        pipeline = copy.copy(built)  # the passes and their analysis shared, the timings not
        pipeline.exec_times = OrderedDict()
        return [pipeline]


#: Functions whose Numba IR is generated rather than translated from their bytecode (the
#: kernels of offloaded loops: a template with a loop body spliced in), and what makes it.
_GENERATED_IR: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def generated_ir(function, make_ir) -> None:
    """Compile `function` from the Numba FunctionIR `make_ir()` returns, not its bytecode."""
    _GENERATED_IR[function] = make_ir


def has_generated_ir(function) -> bool:
    """Whether `function` compiles from generated IR (generated_ir)."""
    return function in _GENERATED_IR


def compile_device_code(py_func, argtypes, *, fastmath=False, debug=False, return_type=None):
    """Numba's front end and lowering for one Python function on the SYCL target."""
    make_ir = _GENERATED_IR.get(py_func)
    with collector_paused(), global_compiler_lock, target_override(TARGET_NAME):
        if make_ir is not None:
            return compiler.compile_ir(
                sycl_target.typing_context,
                sycl_target.target_context,
                make_ir(),
                tuple(argtypes),
                return_type,
                device_flags(fastmath=fastmath, debug=debug),
                locals={},
                pipeline_class=_DeviceCompiler,
            )
        return compiler.compile_extra(
            sycl_target.typing_context,
            sycl_target.target_context,
            py_func,
            tuple(argtypes),
            return_type,
            device_flags(fastmath=fastmath, debug=debug),
            locals={},
            pipeline_class=_DeviceCompiler,
        )
