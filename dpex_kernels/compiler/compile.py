"""Python kernel + argument types -> KernelArtifacts (LLVM IR, SPIR-V): the compiler's front door.

Every failure leaves here as KernelCompileError naming the kernel, its source line and what
to do instead; nothing a user writes reaches the SPIR-V back end in a shape that aborts.
"""

from __future__ import annotations

import inspect
import re
import threading
import time

from numba.core import errors as numba_errors
from numba.core import types

from ..errors import KernelCompileError
from . import codegen
from .functions import compile_device_code
from .kernel_api.index_space import dimensions_used, index_definitions
from .lowering import build_kernel_entry, kernel_symbol
from .target import EXCEPTIONS, sycl_target


class KernelArtifacts:
    """Everything one compile produced; the device build and the launch read only this.

    Numba runs once; LLVM optimisation and SPIR-V emission run once per launch dimension
    count (1-3), on demand, because index calls need the count as a constant.
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
    ):
        self.name = name
        self.symbol = symbol
        self.argtypes = tuple(argtypes)
        self.linked_ir = linked_ir
        self.type_annotation = type_annotation
        self.error_flag = error_flag
        #: status code -> (exception class, args) for kernels compiled with debug=True.
        self.exceptions = exceptions
        self.opt_level = opt_level
        self.timings = timings
        self.default_ndim = dimensions_used(linked_ir)
        self._variants: dict[int, tuple[str, bytes]] = {}
        self._lock = threading.Lock()

    def variant(self, ndim: int) -> tuple[str, bytes]:
        """(optimised LLVM IR, SPIR-V) for launches of `ndim` dimensions."""
        found = self._variants.get(ndim)
        if found is None:
            with self._lock:
                found = self._variants.get(ndim)
                if found is None:
                    found = self._variants[ndim] = _specialise(self, ndim)
        return found

    def has_variant(self, ndim: int) -> bool:
        """Whether the variant for `ndim`-dimensional launches is already built."""
        return ndim in self._variants

    @property
    def llvm_ir(self) -> str:
        return self.variant(self.default_ndim)[0]

    @property
    def spirv(self) -> bytes:
        return self.variant(self.default_ndim)[1]

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _specialise(artifacts: KernelArtifacts, ndim: int) -> tuple[str, bytes]:
    started = time.perf_counter()
    module = codegen.link_modules([artifacts.linked_ir, index_definitions(ndim)])
    codegen.optimise(module, [artifacts.symbol], artifacts.opt_level)
    llvm_ir = str(module)
    try:
        spirv = codegen.emit_spirv(module, artifacts.symbol, artifacts.opt_level)
    except KernelCompileError as exc:
        raise KernelCompileError(f"kernel '{artifacts.name}': {exc}") from None
    artifacts.timings[f"llvm+spirv[{ndim}d]"] = time.perf_counter() - started
    return llvm_ir, spirv


_HINTS = (
    (
        r"print",
        "print() in kernels takes scalars and string constants; to see an array, write "
        "it to an output array and print that on the host",
    ),
    (
        r"np\.(empty|zeros|ones|array|full)|allocat|NRT|meminfo",
        "kernels cannot allocate arrays; pass an output array, or use dk.local.array / "
        "dk.private.array",
    ),
    (
        r"pyobject|object mode|reflected|Untyped global|Unknown attribute",
        "only typed, device-compatible code runs in kernels: no Python objects, lists, dicts or "
        "untyped globals",
    ),
    (
        r"[Dd]ynamic|exception|raise",
        "raise only with constant arguments (raise ValueError('text'))",
    ),
    (r"return", "kernels return nothing: write results into an output array argument"),
)


def _source_location(py_func) -> str:
    try:
        filename = inspect.getsourcefile(py_func) or py_func.__code__.co_filename
        return f"{filename}:{py_func.__code__.co_firstlineno}"
    except (TypeError, AttributeError):
        return "<unknown source>"


def compile_error(py_func, problem: str) -> KernelCompileError:
    """A KernelCompileError that names the kernel, its source and a hint matching `problem`."""
    name = getattr(py_func, "__qualname__", repr(py_func))
    hint = next((h for pattern, h in _HINTS if re.search(pattern, problem)), None)
    text = (
        f"cannot compile kernel '{name}' ({_source_location(py_func)}) for a SYCL device:\n"
        f"{problem.strip()}"
    )
    if hint:
        text += f"\nHint: {hint}."
    return KernelCompileError(text)


_RETURNED_CODE = re.compile(r"\bret i32 (\d+)\b")


def _debug_exceptions(linked_ir: str) -> dict:
    """status code -> (exception class, args) of every raise in the kernel and its callees."""
    codes = {int(code) for code in _RETURNED_CODE.findall(linked_ir)}
    return {code: EXCEPTIONS[code][:2] for code in sorted(codes) if code in EXCEPTIONS}


def compile_kernel(
    py_func, argtypes, *, fastmath: bool = False, opt_level: int = 3, debug: bool = False
) -> KernelArtifacts:
    """Compile `py_func` for `argtypes` into a spir_kernel and its SPIR-V."""
    timings = {}
    started = time.perf_counter()
    try:
        cres = compile_device_code(py_func, argtypes, fastmath=fastmath, debug=debug)
    except KernelCompileError:
        raise
    except numba_errors.NumbaError as exc:
        raise compile_error(py_func, str(exc)) from None
    except Exception as exc:  # Numba lowering raises plain errors for unsupported constructs
        raise compile_error(py_func, f"{type(exc).__name__}: {exc}") from None
    if cres.signature.return_type not in (types.none, types.void):
        raise compile_error(
            py_func, f"the kernel returns a value of type {cres.signature.return_type}"
        )
    timings["numba"] = time.perf_counter() - started

    context = sycl_target.target_context
    symbol = kernel_symbol(py_func.__name__)
    library = context.codegen().create_library(symbol)
    library.add_linking_library(cres.library)
    build_kernel_entry(context, cres.fndesc, symbol, library, error_flag=debug)
    linked = codegen.link_modules([str(m) for m in library.all_modules()])
    artifacts = KernelArtifacts(
        name=py_func.__name__,
        symbol=symbol,
        argtypes=argtypes,
        linked_ir=str(linked),
        type_annotation=_annotation(cres),
        error_flag=debug,
        exceptions=_debug_exceptions(str(linked)) if debug else {},
        opt_level=opt_level,
        timings=timings,
    )
    try:
        artifacts.variant(artifacts.default_ndim)
    except KernelCompileError as exc:
        raise compile_error(py_func, str(exc)) from None
    return artifacts


def _annotation(cres) -> str:
    annotation = getattr(cres, "type_annotation", None)
    return "" if annotation is None else str(annotation)
