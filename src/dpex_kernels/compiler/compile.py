"""Python kernel + argument types -> KernelArtifacts (LLVM IR, SPIR-V): the compiler's front door.

Every failure leaves here as KernelCompileError naming the kernel, its source line and what
to do instead; nothing a user writes reaches the SPIR-V back end in a shape that aborts.
"""

from __future__ import annotations

import inspect
import re
import threading
import time

from numba.core import types

from ..errors import KernelCompileError
from ..types.usm_array_type import USMArrayType
from . import codegen, direct, host_simd
from .diagnostics import compile_failure, current_loc, is_user_error, user_error
from .functions import compile_device_code
from .kernel_api.atomics import float_atomic_definitions, float_atomic_paths
from .kernel_api.barriers import FENCE_FLAGS, fence_flags_error
from .kernel_api.index_space import dimensions_used, index_definitions
from .lowering import build_kernel_entry, kernel_symbol, param_of
from .target import EXCEPTIONS, sycl_target


class KernelArtifacts:
    """Everything one compile produced; the device build and the launch read only this.

    Numba runs once; LLVM optimisation and SPIR-V emission run once per launch dimension
    count (1-3), on demand, because index calls need the count as a constant. Float atomics
    are native for the capabilities in `native_float_atomics` (the device's, float_atomics.py)
    and compare-and-swap loops for the rest.
    """

    def __init__(
        self,
        *,
        name,
        symbol,
        argtypes,
        linked_ir,
        type_annotation,
        error_flag,
        exceptions,
        opt_level,
        timings,
        native_float_atomics=frozenset(),
        host_simd="",
        sub_group_size=0,
    ):
        self.name = name
        self.symbol = symbol
        self.argtypes = tuple(argtypes)
        self.linked_ir = linked_ir
        #: Numba's typed annotation: a str, or Numba's TypeAnnotation until first read
        #: (printing it takes as long as optimising a small kernel).
        self._type_annotation = type_annotation
        self.error_flag = error_flag
        #: status code -> (exception class, args) for kernels compiled with debug=True.
        self.exceptions = exceptions
        self.opt_level = opt_level
        self.timings = timings
        self.native_float_atomics = frozenset(native_float_atomics)
        #: "" or the kind of host-SIMD kernel this is ("stream", "reduce": host_simd.py).
        self.host_simd = host_simd
        #: the sub-group size the kernel requires (@dk.kernel(sub_group_size=...)), or 0
        self.sub_group_size = sub_group_size
        #: which front end typed and lowered the kernel: "direct", or "numba" and why
        #: (compiler/direct); "" for artifacts loaded from a cache or bundle
        self.front_end = ""
        self.default_ndim = dimensions_used(linked_ir)
        self._variants: dict[int, tuple[str, bytes]] = {}
        self._lock = threading.Lock()

    def variant(self, ndim: int, linked=None) -> tuple[str, bytes]:
        """(optimised LLVM IR, SPIR-V) for launches of `ndim` dimensions. `linked`, the parsed
        module of linked_ir (which this consumes), saves parsing the text again."""
        found = self._variants.get(ndim)
        if found is None:
            with self._lock:
                found = self._variants.get(ndim)
                if found is None:
                    found = self._variants[ndim] = _specialise(self, ndim, linked)
        return found

    def has_variant(self, ndim: int) -> bool:
        """Whether the variant for `ndim`-dimensional launches is already built."""
        return ndim in self._variants

    @property
    def llvm_ir(self) -> str:
        return self.variant(self.default_ndim)[0]

    @property
    def type_annotation(self) -> str:
        if not isinstance(self._type_annotation, str):
            self._type_annotation = str(self._type_annotation or "")
        return self._type_annotation

    @property
    def float_atomics(self) -> dict[str, str]:
        """How each float atomic is compiled: {"float32.local.add": "native" or "cas"}."""
        return float_atomic_paths(self.linked_ir, self.native_float_atomics)

    @property
    def spirv(self) -> bytes:
        return self.variant(self.default_ndim)[1]

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"]
        state["_type_annotation"] = self.type_annotation
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _specialise(artifacts: KernelArtifacts, ndim: int, linked=None) -> tuple[str, bytes]:
    started = time.perf_counter()
    atomics = float_atomic_definitions(artifacts.linked_ir, artifacts.native_float_atomics)
    definitions = [index_definitions(ndim), atomics]
    machine = None
    if artifacts.host_simd:
        machine = host_simd.host_target_machine()
        params = tuple(param_of(t) for t in artifacts.argtypes)
        source = host_simd.assume_aligned(artifacts.linked_ir, artifacts.symbol, params)
        module = codegen.link_modules([source, *definitions])
        if artifacts.host_simd == host_simd.REDUCE:
            codegen.optimise(
                module, [artifacts.symbol], artifacts.opt_level, unroll=False, inline_all=False
            )
            text = host_simd.reassociable_reductions(str(module))
            module = codegen.link_modules([text])
    elif linked is None:
        module = codegen.link_modules([artifacts.linked_ir, *definitions])
    else:
        module = codegen.link_into(linked, definitions)
    # A streaming loop's vectors one at a time (host_simd.py: the loop's remainder is then
    # under 16 iterations); a reduction's interleaved, as independent accumulators.
    interleave = artifacts.host_simd != host_simd.STREAM
    codegen.optimise(
        module,
        [artifacts.symbol],
        artifacts.opt_level,
        machine,
        interleave=interleave,
        inline_all=not artifacts.host_simd,
    )
    llvm_ir = str(module)
    _check_barrier_flags(artifacts.name, llvm_ir)
    if artifacts.host_simd:
        llvm_ir = host_simd.finish(llvm_ir, artifacts.symbol, artifacts.name, artifacts.host_simd)
        module = codegen.link_modules([llvm_ir])
    elif artifacts.sub_group_size:
        size = artifacts.sub_group_size
        if size == 1 and "sub_group" in llvm_ir:  # every sub-group built-in's name has it
            raise KernelCompileError(
                f"kernel '{artifacts.name}': sub_group_size=1 leaves no sub-group operations "
                f"(dk.sub_group.*): the OpenCL CPU runtime builds none in sub-groups of one "
                f"work-item; use a size of 4 or more, or take them out"
            )
        llvm_ir = host_simd.required_sub_group_size(llvm_ir, artifacts.symbol, size)
        module = codegen.link_modules([llvm_ir])
    try:
        spirv = codegen.emit_spirv(module, artifacts.symbol, artifacts.opt_level, llvm_ir)
    except KernelCompileError as exc:
        raise KernelCompileError(f"kernel '{artifacts.name}': {exc}") from None
    artifacts.timings[f"llvm+spirv[{ndim}d]"] = time.perf_counter() - started
    return llvm_ir, spirv


def check_kernel_argtypes(py_func, argtypes) -> None:
    """Kernel parameters are usm_array types and scalars; say so before Numba sees others."""
    names = list(inspect.signature(py_func).parameters)
    for position, argtype in enumerate(argtypes):
        if isinstance(argtype, (USMArrayType, types.Number, types.Boolean)):
            continue
        name = names[position] if position < len(names) else f"#{position}"
        prefix = (
            f"kernel '{py_func.__qualname__}': parameter '{name}' (position {position}) has "
            f"type {argtype}"
        )
        if isinstance(argtype, types.Array):
            raise TypeError(
                f"{prefix}, a Numba array type; kernels take USM arrays: declare it as "
                f"dk.usm_array({argtype.dtype}, {argtype.ndim}, layout='{argtype.layout}') "
                f"(with usm_type= and device= where they are not the defaults)"
            )
        raise TypeError(f"{prefix}; kernel parameters are dk.usm_array(...) types and scalars")


_BARRIER_CALL = re.compile(
    r"call spir_func void @(_Z7barrierj|_Z17sub_group_barrierj)\(i32 ([^)]*)\)"
)
_BARRIER_NAMES = {"_Z7barrierj": "dk.barrier", "_Z17sub_group_barrierj": "dk.sub_group.barrier"}


def _check_barrier_flags(kernel_name: str, llvm_ir: str) -> None:
    """Flags computed in the kernel (a | b) are constants once optimised: check those too."""
    for mangled, flags in _BARRIER_CALL.findall(llvm_ir):
        if not flags.isdigit() or int(flags) not in FENCE_FLAGS:
            raise KernelCompileError(
                f"kernel '{kernel_name}': {fence_flags_error(_BARRIER_NAMES[mangled], flags)}"
            )


_RETURNED_CODE = re.compile(r"\bret i32 (\d+)\b")


def _debug_exceptions(linked_ir: str) -> dict:
    """status code -> (exception class, args) of every raise in the kernel and its callees."""
    codes = {int(code) for code in _RETURNED_CODE.findall(linked_ir)}
    return {code: EXCEPTIONS[code][:2] for code in sorted(codes) if code in EXCEPTIONS}


def compile_kernel(
    py_func,
    argtypes,
    *,
    fastmath: bool = False,
    opt_level: int = 3,
    debug: bool = False,
    float_atomics: frozenset[str] = frozenset(),
    host_simd: str = "",
    sub_group_size: int = 0,
) -> KernelArtifacts:
    """Compile `py_func` for `argtypes` into a spir_kernel and its SPIR-V, with native float
    atomics for the capabilities in `float_atomics` (float_atomics.native_float_atomics),
    with `host_simd` ("stream", "reduce") vectorised for the host's CPU (host_simd.py), and
    requiring sub-groups of `sub_group_size` work-items unless 0."""
    check_kernel_argtypes(py_func, argtypes)
    symbol = kernel_symbol(py_func.__name__)
    options = dict(
        py_func=py_func,
        symbol=symbol,
        argtypes=argtypes,
        opt_level=opt_level,
        debug=debug,
        float_atomics=float_atomics,
        simd_kind=host_simd,
        sub_group_size=sub_group_size,
    )
    front_end = "numba"
    if direct.enabled() and not debug and not host_simd:
        started = time.perf_counter()
        try:
            compiled = direct.compile_direct(py_func, argtypes, symbol, fastmath=fastmath)
            timings = {"direct": time.perf_counter() - started}
            artifacts = _link(compiled.module, compiled.type_annotation, timings, **options)
        except Exception as exc:  # Numba's front end compiles it, and reports what is wrong
            front_end = f"numba (direct: {type(exc).__name__}: {exc})"
        else:
            artifacts.front_end = "direct"
            return artifacts
    started = time.perf_counter()
    library, annotation = _numba_kernel(py_func, argtypes, symbol, fastmath, debug)
    timings = {"numba": time.perf_counter() - started}
    try:
        linked = codegen.link_modules([str(m) for m in library.all_modules()])
        artifacts = _link(linked, annotation, timings, **options)
    except KernelCompileError:
        raise
    except Exception as exc:  # past the front end, every failure is the compiler's own
        raise compile_failure(py_func, exc, internal=True) from exc
    artifacts.front_end = front_end
    return artifacts


def _numba_kernel(py_func, argtypes, symbol, fastmath, debug) -> tuple:
    """(code library holding the spir_kernel `symbol`, type annotation) from Numba's front end:
    the kernel's function compiled, and an entry that calls it."""
    stale_loc = current_loc()
    try:
        cres = compile_device_code(py_func, argtypes, fastmath=fastmath, debug=debug)
    except Exception as exc:
        failure = compile_failure(py_func, exc, stale_loc=stale_loc)
        raise failure from (None if is_user_error(exc) else exc)
    if cres.signature.return_type not in (types.none, types.void):
        raise user_error(
            py_func,
            f"the kernel returns a value of type {cres.signature.return_type}; kernels return "
            f"nothing: write results into an output array argument",
        )
    try:
        context = sycl_target.target_context
        library = context.codegen().create_library(symbol)
        library.add_linking_library(cres.library)
        build_kernel_entry(context, cres.fndesc, symbol, library, error_flag=debug)
    except Exception as exc:  # past Numba, every failure is the compiler's own
        raise compile_failure(py_func, exc, internal=True) from exc
    return library, getattr(cres, "type_annotation", None)


def _link(
    linked,
    annotation,
    timings,
    *,
    py_func,
    symbol,
    argtypes,
    opt_level,
    debug,
    float_atomics,
    simd_kind,
    sub_group_size,
) -> KernelArtifacts:
    """The artifacts of the kernel's linked module; its default variant built."""
    linked_ir = str(linked)
    artifacts = KernelArtifacts(
        name=py_func.__name__,
        symbol=symbol,
        argtypes=argtypes,
        linked_ir=linked_ir,
        type_annotation=annotation,
        error_flag=debug,
        exceptions=_debug_exceptions(linked_ir) if debug else {},
        opt_level=opt_level,
        timings=timings,
        native_float_atomics=float_atomics,
        host_simd=simd_kind,
        sub_group_size=sub_group_size,
    )
    try:
        artifacts.variant(artifacts.default_ndim, linked)
    except host_simd.Refusal:
        raise
    except KernelCompileError as exc:
        raise user_error(py_func, str(exc)) from None
    return artifacts
