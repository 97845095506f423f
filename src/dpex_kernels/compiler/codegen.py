"""LLVM modules -> one linked, optimised module -> SPIR-V bytes, with llvmlite's own back end."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
from collections import OrderedDict

import llvmlite.binding as ll
from llvmlite import ir
from numba.core.codegen import Codegen, CodeLibrary

from .._spawn import run_tool
from ..errors import KernelCompileError
from . import patches
from .runtime_workarounds import (
    count_down_exits_on_the_new_count,
    float_atomic_adds_of_no_negation,
    negations_as_fma,
    private_arrays_as_one,
)
from .spirv_repair import (
    AmbiguousLabels,
    emit_in_fresh_processes,
    mixed_integer_widths,
    repair_label_ids,
)

TRIPLE = "spirv64-unknown-unknown"
DATA_LAYOUT = (
    "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
    "-n8:16:32:64-G1"
)

_llvm_lock = threading.Lock()
_initialised = False


def _ensure_llvm() -> None:
    global _initialised
    with _llvm_lock:
        if not _initialised:
            ll.initialize_all_targets()
            ll.initialize_all_asmprinters()
            _initialised = True


class SPIRVCodeLibrary(CodeLibrary):
    """Collects the IR modules of one function and the libraries it calls; links lazily."""

    def __init__(self, codegen, name):
        super().__init__(codegen, name)
        self._modules: list[ir.Module] = []
        self._linking_libraries: list[SPIRVCodeLibrary] = []

    def add_ir_module(self, ir_module):
        self._raise_if_finalized()
        self._modules.append(ir_module)

    def add_linking_library(self, library):
        self._linking_libraries.append(library)

    def finalize(self):
        self._finalized = True

    def get_function(self, name):
        for module in self._modules:
            try:
                return module.get_global(name)
            except KeyError:
                continue
        raise KeyError(name)

    def get_llvm_str(self):
        return "\n".join(str(module) for module in self._modules)

    def get_asm_str(self):
        return self.get_llvm_str()

    def all_modules(self) -> list[ir.Module]:
        """This library's modules and those of every library it links, each once."""
        seen: set[int] = set()
        ordered: list[ir.Module] = []

        def visit(library: SPIRVCodeLibrary) -> None:
            if id(library) in seen:
                return
            seen.add(id(library))
            ordered.extend(library._modules)
            for dependency in library._linking_libraries:
                visit(dependency)

        visit(self)
        return ordered


class SPIRVCodegen(Codegen):
    """Numba's codegen hook: makes spirv64 modules and SPIR-V code libraries."""

    _library_class = SPIRVCodeLibrary

    def __init__(self):
        _ensure_llvm()
        self._data_layout = DATA_LAYOUT
        self._target_data = ll.create_target_data(DATA_LAYOUT)

    def _create_empty_module(self, name):
        module = ir.Module(name)
        module.triple = TRIPLE
        module.data_layout = DATA_LAYOUT
        return module

    def _add_module(self, module):
        pass

    def magic_tuple(self):
        return (TRIPLE, "spirv", "")


# C library names Numba emits for some math functions, and the OpenCL built-ins (Itanium
# mangled, which the SPIR-V back end turns into OpenCL.std instructions) that replace them.
_LIBM_UNARY = [
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cbrt",
    "ceil",
    "cos",
    "cosh",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "floor",
    "lgamma",
    "log",
    "log10",
    "log1p",
    "log2",
    "rint",
    "round",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "tgamma",
    "trunc",
]
_LIBM_BINARY = ["atan2", "copysign", "fmax", "fmin", "fmod", "hypot", "pow", "nextafter"]


def _opencl_name(name: str, arity: int, type_code: str) -> str:
    return f"_Z{len(name)}{name}{type_code * arity}"


def _libm_renames() -> dict[str, str]:
    renames = {}
    for arity, names in ((1, _LIBM_UNARY), (2, _LIBM_BINARY)):
        for name in names:
            renames[name] = _opencl_name(name, arity, "d")
            renames[name + "f"] = _opencl_name(name, arity, "f")
    renames["gamma"] = _opencl_name("tgamma", 1, "d")
    renames["gammaf"] = _opencl_name("tgamma", 1, "f")
    renames["numba_gamma"] = _opencl_name("tgamma", 1, "d")
    renames["numba_gammaf"] = _opencl_name("tgamma", 1, "f")
    renames["ldexp"] = "_Z5ldexpdi"
    renames["ldexpf"] = "_Z5ldexpfi"
    return renames


LIBM_RENAMES = _libm_renames()

# Declarations that may stay external: OpenCL built-ins (mangled), LLVM intrinsics, SPIR-V
# built-in variables, and printf (which the back end turns into OpenCL.std printf).
_ALLOWED_EXTERNAL = re.compile(r"^(_Z\d+|llvm\.|__spirv_|printf$)")


def _rename_libm_calls(module: ll.ModuleRef) -> None:
    for function in module.functions:
        if function.is_declaration and function.name in LIBM_RENAMES:
            function.name = LIBM_RENAMES[function.name]


def _reject_host_calls(module: ll.ModuleRef, kernel_name: str) -> None:
    """A call to a host-only symbol would fail the device build with an empty error."""
    missing = sorted(
        f.name for f in module.functions if f.is_declaration and not _ALLOWED_EXTERNAL.match(f.name)
    )
    if missing:
        raise KernelCompileError(
            f"kernel '{kernel_name}' calls host-only function(s) {', '.join(missing)}, which do "
            f"not exist on a SYCL device; use math.* functions or dk device functions instead"
        )


def link_modules(modules: list[str]) -> ll.ModuleRef:
    """Parse and link LLVM IR texts into one module."""
    _ensure_llvm()
    return link_into(ll.parse_assembly(modules[0]), modules[1:])


def link_into(linked: ll.ModuleRef, modules: list[str]) -> ll.ModuleRef:
    """Parse LLVM IR texts and link them into the parsed module `linked`; returns it."""
    for module in modules:
        linked.link_in(ll.parse_assembly(module))
    linked.triple = TRIPLE
    linked.data_layout = DATA_LAYOUT
    return linked


def _target_machine(opt_level: int):
    target = ll.Target.from_triple(TRIPLE)
    return target.create_target_machine(opt=min(opt_level, 3))


def optimise(
    module: ll.ModuleRef,
    kernel_names: list[str],
    opt_level: int,
    machine=None,
    unroll: bool = True,
    interleave: bool = True,
    inline_all: bool = True,
) -> None:
    """Internalise all but the kernels, then run LLVM's pipeline at `opt_level` (never below 1)
    with the cost model of `machine` (the SPIR-V target's, unless given: host_simd.py), loop
    unrolling unless `unroll` is false, and vectorised loops interleaving several vectors an
    iteration unless `interleave` is false.

    With `inline_all` every function is inlined into the kernels, then LLVM's function
    pipeline runs on what is left: what the runtime's own optimiser needs from us (the matmul,
    sum, histogram, scan, k-means and bandwidth kernels ran as fast as after the module
    pipeline, which took 40 % longer: its interprocedural passes have nothing to do once all
    is inlined). Without it, LLVM's module pipeline (host-SIMD kernels are tuned for it).

    Optimisation is mandatory here: unoptimised Numba IR passes aggregates by value, which the
    SPIR-V back end either mistranslates or aborts on (COMPILER-FINDINGS.md).
    """
    keep = set(kernel_names)
    for function in module.functions:
        if not function.is_declaration and function.name not in keep:
            function.linkage = "internal"
    for variable in module.global_variables:
        if not variable.is_declaration:
            variable.linkage = "internal"
    _rename_libm_calls(module)
    machine = machine or _target_machine(opt_level)
    options = ll.create_pipeline_tuning_options(speed_level=max(1, min(opt_level, 3)))
    options.loop_unrolling = unroll
    options.loop_interleaving = interleave
    builder = ll.create_pass_builder(machine, options)
    with patches.llvm_options(), _llvm_lock:
        if inline_all:
            for function in module.functions:
                if not function.is_declaration and function.name not in keep:
                    function.add_function_attribute("alwaysinline")
            inliner = ll.create_new_module_pass_manager()
            inliner.add_always_inliner_pass()
            inliner.add_global_dead_code_eliminate_pass()
            inliner.run(module, builder)
            for function in module.functions:  # the kernels, and anything not inlined
                if not function.is_declaration:
                    builder.getFunctionPassManager().run(function, builder)
            inliner.run(module, builder)  # again: the declarations nothing calls any more
        else:
            builder.getModulePassManager().run(module, builder)
    module.verify()


_SUPPORTED_WIDTHS = {1, 8, 16, 32, 64}
_INTEGER_TYPE = re.compile(r'(?<![\w%@.$"])i(\d+)\b')


def _reject_unsupported_integers(text: str, kernel_name: str) -> None:
    """Integer widths SPIR-V lacks would abort the process inside the back end."""
    widths = {int(w) for w in _INTEGER_TYPE.findall(text)} - _SUPPORTED_WIDTHS
    if widths:
        raise KernelCompileError(
            f"kernel '{kernel_name}' needs integers of {sorted(widths)} bits, which SPIR-V "
            f"devices do not support; simplify the integer arithmetic or use int64"
        )


# A constant address: `getelementptr <flags> (i8, ptr addrspace(N) @global, i64 <offset>)`.
_CONSTANT_GEP = re.compile(
    r"getelementptr ((?:inbounds |nuw |nusw )*)\((i8, ptr(?: addrspace\(\d+\))? "
    r"@[-\w.$]+, i64 -?\d+)\)"
)
_INSTRUCTION = re.compile(r"^(\s+)(?!.*= phi )\S")


def _constant_addresses_as_instructions(text: str) -> str:
    """Compute every constant byte-offset address inside a function (an element of a local
    array at a constant index) by its own getelementptr instruction.

    LLVM 22's SPIR-V back end gives such a constant the element type of one of its uses
    (cmpxchg's {value, i1} result, an i32 load) and scales the byte offset by that type's
    size: atomics and loads of local arrays at constant indices read and wrote past the
    element, even past the array (tests/test_fuzz_regressions.py). Returns `text` itself when
    there is nothing to rewrite.
    """
    if "getelementptr" not in text:
        return text
    lines, count = [], 0
    for line in text.splitlines():
        indent = _INSTRUCTION.match(line)
        if indent is not None and "getelementptr" in line:
            while (found := _CONSTANT_GEP.search(line)) is not None:
                count += 1
                name = f'%"dpex.address.{count}"'
                lines.append(
                    f"{indent.group(1)}{name} = getelementptr {found.group(1)}{found.group(2)}"
                )
                line = line[: found.start()] + name + line[found.end() :]
        lines.append(line)
    return "\n".join(lines) + "\n" if count else text


_SPIRV_VAL = shutil.which("spirv-val")
_EMIT_ATTEMPTS = 8


def _validating() -> bool:
    """DPEX_KERNELS_VALIDATE_SPIRV=1 runs spirv-val on every module (tests and CI set it)."""
    return _SPIRV_VAL is not None and os.environ.get("DPEX_KERNELS_VALIDATE_SPIRV") == "1"


def _valid(spirv: bytes) -> bool:
    """spirv-val's verdict when validation is on (about 15 ms a module); else True."""
    if not _validating():
        return True
    with tempfile.NamedTemporaryFile(suffix=".spv") as handle:
        handle.write(spirv)
        handle.flush()
        return run_tool([_SPIRV_VAL, handle.name]).returncode == 0


#: SPIR-V already emitted in this process, by (module text, options): the back end's output
#: for one module varies between emissions (the entry block's name and the ids after it,
#: in about 4 emissions in 10), and a kernel defined again must get the same bytes, or its
#: device build is not reused (device.py keys builds by the SPIR-V).
_emitted: OrderedDict[tuple, bytes] = OrderedDict()
_EMITTED_LIMIT = 256


def emit_spirv(
    module: ll.ModuleRef, kernel_name: str, opt_level: int, text: str | None = None
) -> bytes:
    """SPIR-V bytes for an optimised module (`text`: its text, where the caller has it),
    the same bytes for the same module all through the process; refuses modules that call
    host functions.

    LLVM 22's SPIR-V back end now and then numbers basic blocks over other ids; every module
    goes through spirv_repair, and an emission whose labels collide with each other (which no
    repair can untangle) is emitted again. With DPEX_KERNELS_VALIDATE_SPIRV=1 and spirv-val
    installed the result is validated too, and emitted again should anything else be wrong.
    """
    _reject_host_calls(module, kernel_name)
    text = str(module) if text is None else text
    _reject_unsupported_integers(text, kernel_name)
    key = (hashlib.sha256(text.encode()).digest(), opt_level, _validating())
    with _llvm_lock:
        spirv = _emitted.get(key)
        if spirv is not None:
            _emitted.move_to_end(key)
            return spirv
    spirv = _emit(module, kernel_name, opt_level, text)
    with _llvm_lock:
        _emitted[key] = spirv
        if len(_emitted) > _EMITTED_LIMIT:
            _emitted.popitem(last=False)
    return spirv


#: Rewrites of the optimised module's text before emission, in order; each returns its input
#: itself when it has nothing to rewrite.
_REWRITES = (
    _constant_addresses_as_instructions,
    count_down_exits_on_the_new_count,
    float_atomic_adds_of_no_negation,
    negations_as_fma,
    private_arrays_as_one,
)


def _emit(module: ll.ModuleRef, kernel_name: str, opt_level: int, text: str) -> bytes:
    rewritten = text
    for rewrite in _REWRITES:
        rewritten = rewrite(rewritten)
    validating = _validating()
    reduce_strength = patches.strength_reduction(rewritten)
    for attempt in range(_EMIT_ATTEMPTS):
        # The first emission is from the module itself when nothing was rewritten; any other
        # from a fresh parse (the back end keeps process-wide state: hence the lock).
        with patches.emission_options(reduce_strength), _llvm_lock:
            if attempt == 0 and rewritten is text:
                source = module
            else:
                source = ll.parse_assembly(rewritten)
                source.verify()  # a rewrite's mistake is an error here, not an abort below
            spirv = _target_machine(opt_level).emit_object(source)
        try:
            spirv = repair_label_ids(spirv)
        except AmbiguousLabels:
            continue  # labels collided with each other: only a new emission helps
        if reduce_strength and mixed_integer_widths(spirv):
            reduce_strength = False  # the back end's strength reduction mixed the widths
            continue
        if not validating or _valid(spirv):
            return spirv
    flags = [*patches.PROCESS_FLAGS, *patches.emission_flags(reduce_strength)]
    spirv = emit_in_fresh_processes(rewritten, TRIPLE, min(opt_level, 3), flags)
    if spirv is not None and (not validating or _valid(spirv)):
        return spirv
    raise KernelCompileError(
        f"kernel '{kernel_name}': LLVM's SPIR-V back end produced invalid SPIR-V "
        f"{_EMIT_ATTEMPTS} times in a row"
    )
