"""Device functions: Numba compiles for the SYCL target, callable only from device code.

A DeviceFunction plays the part Numba expects of a dispatcher (numba-cuda's model): typing a
call compiles the callee for the argument types, registers its lowering with the target
context, and the caller's code library links the callee's.
"""

from __future__ import annotations

import copy
import functools
import threading
import weakref
from collections import OrderedDict

import cloudpickle
from numba.core import compiler, ir, lowering, sigutils, typed_passes, types, untyped_passes, utils
from numba.core import errors as numba_errors
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.ir_utils import build_definitions, mk_unique_var
from numba.core.target_extension import (
    dispatcher_registry,
    jit_registry,
    target_override,
)
from numba.core.typeconv import Conversion
from numba.core.typing.templates import AbstractTemplate, fold_arguments
from numba.core.typing.typeof import typeof_impl
from numba.stencils.stencil import StencilFunc

from .diagnostics import compile_failure, current_loc, is_user_error
from .kernel_api.registry import constant_argument, is_kernel_api, simulated
from .patches import collector_paused
from .target import TARGET_NAME, SYCLDevice, sycl_target


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
    `dk.get_global_id(0)`, which the index functions need to see a constant dimension."""

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
    if not is_kernel_api(_constant(func_ir, call.func)):
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


def _constant(func_ir, var: ir.Var) -> object:
    """Numba's constant inference of a variable (globals, closure variables, attributes of
    modules and classes), or None where it finds none."""
    try:
        return func_ir.infer_constant(var)
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


class _OverloadKey:
    """The hashable key under which one compiled overload's lowering is registered."""

    __slots__ = ("argtypes", "name")

    def __init__(self, name: str, argtypes: tuple):
        self.name, self.argtypes = name, argtypes

    def __repr__(self) -> str:
        return f"{self.name}{self.argtypes}"


class DeviceFunction:
    """What @dk.func returns: compiled per argument types when a kernel calls it."""

    targetdescr = sycl_target
    _cpu_twins: dict[int, DeviceFunction] = {}
    _unpickled_signatures: tuple = ()  # declared, compiled on first use (see __reduce__)

    def __init__(
        self,
        py_func,
        signatures=None,
        *,
        fastmath: bool = False,
        debug: bool = False,
        user_code: bool = True,
    ):
        self.py_func = py_func
        #: False for Numba's own @overload implementations: their failures are the caller's
        #: (np.empty in a kernel), so they reach the caller's compile as Numba raised them.
        self.user_code = user_code
        self.__name__ = getattr(py_func, "__name__", "device_function")
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self.overloads: dict[tuple, object] = {}
        self._keys: dict[tuple, _OverloadKey] = {}
        self.targetoptions = {"fastmath": fastmath, "debug": debug}
        self._lock = threading.RLock()
        self._in_progress: set[tuple] = set()
        self._can_compile = True
        for sig in signatures or ():
            self.compile(sig)
        if signatures:
            self._can_compile = False

    def __repr__(self) -> str:
        return f"<dk.func {self.__name__}>"

    def __call__(self, *args, **kwargs):
        run = simulated("dk.func")  # inside a simulated kernel: its Python function
        if run is not None:
            return run(self, *args, **kwargs)
        raise TypeError(
            f"device function '{self.__name__}' can only be called from a @dk.kernel or "
            f"another @dk.func; to run it on the host, call its .py_func"
        )

    @classmethod
    def for_cpu_dispatcher(cls, dispatcher) -> DeviceFunction:
        """The device twin of a CPU @njit function that a kernel calls."""
        twin = cls._cpu_twins.get(id(dispatcher))
        if twin is None or twin.py_func is not dispatcher.py_func:
            twin = cls(dispatcher.py_func)
            cls._cpu_twins[id(dispatcher)] = twin
        return twin

    def compile(self, sig):
        """Compile for a signature (or a tuple of argument types); returns Numba's result."""
        argtypes, return_type = sigutils.normalize_signature(sig)
        return self._compile(tuple(argtypes), return_type)

    def _compile(self, argtypes: tuple, return_type=None):
        with self._lock:
            existing = self.overloads.get(argtypes)
            if existing is not None:
                return existing
            if argtypes in self._in_progress:
                raise numba_errors.TypingError(
                    f"device function '{self.__name__}' calls itself (recursion), which SYCL "
                    f"devices cannot run: rewrite it as a loop"
                )
            self._in_progress.add(argtypes)
            stale_loc = current_loc()
            try:
                cres = compile_device_code(
                    self.py_func, argtypes, return_type=return_type, **self.targetoptions
                )
            except Exception as exc:
                if not self.user_code:
                    raise
                failure = compile_failure(
                    self.py_func, exc, what="device function", stale_loc=stale_loc
                )
                raise failure from (None if is_user_error(exc) else exc)
            finally:
                self._in_progress.discard(argtypes)
            key = _OverloadKey(self.__name__, argtypes)
            cres.target_context.insert_user_function(key, cres.fndesc, [cres.library])
            self._keys[argtypes] = key
            self.overloads[argtypes] = cres
            return cres

    @property
    def is_compiling(self) -> bool:
        """Numba's recursion detection, off: _compile refuses recursion (devices cannot)."""
        return False

    @property
    def nopython_signatures(self):
        self._compile_unpickled()
        return [cres.signature for cres in self.overloads.values()]

    @property
    def signatures(self):
        self._compile_unpickled()
        return list(self.overloads)

    def get_call_template(self, args, kws):
        """Numba's hook while typing a caller: compile for `args`, then offer what exists."""
        self._compile_unpickled()
        pysig = utils.pysignature(self.py_func)
        args = tuple(
            fold_arguments(
                pysig,
                args,
                kws,
                lambda index, param, value: value,
                lambda index, param, default: types.Omitted(default),
                lambda index, param, values: types.StarArgTuple(values),
            )
        )
        if self._can_compile:
            self._compile(args)
        template = type(
            f"CallTemplate({self.__name__})",
            (_LosslessCallTemplate,),
            {"key": self.__name__, "cases": self.nopython_signatures},
        )
        return template, pysig, args, {}

    def get_overload(self, args):
        """The key under which the compiled overload's lowering was registered."""
        return self._keys[tuple(args)]

    def __reduce__(self):
        """Pickles as source and options (its compiled state is per process and unpicklable).

        An eager function keeps its declared signatures. Unpickled, nothing compiles until a
        kernel needs it (a kernel that was compiled already launches without), so loading a
        kernel on a Dask worker costs no Numba compile. The device functions it calls travel
        with its source.
        """
        signatures = None
        if not self._can_compile:
            signatures = [*self._unpickled_signatures]
            signatures += [cres.signature for cres in self.overloads.values()]
        return _unpickle_device_function, (
            cloudpickle.dumps(self.py_func),
            signatures,
            self.targetoptions,
        )

    def _compile_unpickled(self) -> None:
        """Compile the declared signatures an unpickled eager function has not compiled yet."""
        if self._unpickled_signatures:
            with self._lock:
                pending, self._unpickled_signatures = self._unpickled_signatures, ()
                for sig in pending:
                    self.compile(sig)


def _unpickle_device_function(py_func: bytes, signatures, options: dict) -> DeviceFunction:
    function = DeviceFunction(cloudpickle.loads(py_func), None, **options)
    if signatures is not None:
        function._can_compile = False
        function._unpickled_signatures = tuple(signatures)
    return function


def _lossless(context, actual, formal) -> bool:
    """Whether a value of type `actual` converts to `formal` without loss.

    A signature compiled for a literal (`f(1)`) has that value folded in: it takes only it.
    """
    if isinstance(formal, types.Literal):
        return actual == formal
    if isinstance(actual, types.IntegerLiteral) and isinstance(formal, types.Integer):
        return formal.minval <= actual.literal_value <= formal.maxval
    conversion = context.can_convert(actual, formal)
    return conversion is not None and conversion <= Conversion.safe


class _LosslessCallTemplate(AbstractTemplate):
    """A call to a device function: the cheapest signature taking every argument losslessly.

    Numba's own resolution would also convert unsafely (an int64 into an int32 parameter
    silently narrows); here that is a compile error naming the function and both types.
    """

    cases: list = []

    def generic(self, args, kws):
        context = self.context
        fitting = [
            sig
            for sig in self.cases
            if len(sig.args) == len(args)
            and all(_lossless(context, a, f) for a, f in zip(args, sig.args))
        ]
        if fitting:
            return min(fitting, key=lambda sig: _conversion_cost(context, args, sig.args))
        declared = ", ".join(str(sig) for sig in self.cases) or "none"
        given = ", ".join(str(a) for a in args)
        raise numba_errors.TypingError(
            f"device function '{self.key}' takes ({given}) with none of its signatures "
            f"without loss (declared: {declared}); convert the argument explicitly (e.g. "
            f"int32(x)) or declare a signature for these types"
        )


def _conversion_cost(context, args, formals) -> int:
    return sum(
        0 if isinstance(a, types.Literal) else int(context.can_convert(a, f))
        for a, f in zip(args, formals)
    )


@typeof_impl.register(DeviceFunction)
def _typeof_device_function(value, context):
    return types.Dispatcher(value)


def _jit_for_overloads(*args, **options):
    """What Numba's @overload machinery calls to compile an implementation for this target."""
    if args and callable(args[0]):
        return DeviceFunction(args[0], user_code=False)
    return lambda py_func: DeviceFunction(py_func, user_code=False)


dispatcher_registry[SYCLDevice] = DeviceFunction
jit_registry[SYCLDevice] = _jit_for_overloads


def func(function_or_signatures=None, /, *, fastmath: bool = False, debug: bool = False):
    """@dk.func (lazy) or @dk.func(sig | [sigs]): a device function for kernels to call.

    A signature is a Numba signature (dk.int64(dk.int64)) or its string ("int64(int64)").
    """
    from numba.core.typing.templates import Signature

    if callable(function_or_signatures) and not isinstance(function_or_signatures, Signature):
        return DeviceFunction(function_or_signatures, fastmath=fastmath, debug=debug)
    signatures = function_or_signatures
    if isinstance(signatures, (str, Signature)):
        signatures = [signatures]

    def decorate(py_func) -> DeviceFunction:
        return DeviceFunction(py_func, signatures, fastmath=fastmath, debug=debug)

    return decorate
