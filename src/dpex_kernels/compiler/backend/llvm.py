"""LLVM in the back end: parsing and linking modules, the SPIR-V target machine, optimisation.

Numba's codegen hook (compiler/codegen.py) makes the modules; everything that runs LLVM on
them for a device is here and in the other back-end stages.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import llvmlite.binding as ll

from .. import patches

TRIPLE = "spirv64-unknown-unknown"
DATA_LAYOUT = (
    "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
    "-n8:16:32:64-G1"
)

#: LLVM's back end keeps process-wide state: optimisation and emission run under this lock.
lock = threading.Lock()
_initialised = False


def ensure_llvm() -> None:
    """Initialise LLVM's targets and printers once per process."""
    global _initialised
    with lock:
        if not _initialised:
            ll.initialize_all_targets()
            ll.initialize_all_asmprinters()
            _initialised = True


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


def rename_libm_calls(module: ll.ModuleRef) -> None:
    """C library names Numba calls, as the OpenCL built-ins that devices have."""
    for function in module.functions:
        if function.is_declaration and function.name in LIBM_RENAMES:
            function.name = LIBM_RENAMES[function.name]


def link_modules(modules: list[str]) -> ll.ModuleRef:
    """Parse and link LLVM IR texts into one module."""
    ensure_llvm()
    return link_into(ll.parse_assembly(modules[0]), modules[1:])


def link_into(linked: ll.ModuleRef, modules: list[str]) -> ll.ModuleRef:
    """Parse LLVM IR texts and link them into the parsed module `linked`; returns it."""
    for module in modules:
        linked.link_in(ll.parse_assembly(module))
    linked.triple = TRIPLE
    linked.data_layout = DATA_LAYOUT
    return linked


def target_machine(opt_level: int):
    """The SPIR-V target machine (its cost model drives LLVM's loop passes)."""
    target = ll.Target.from_triple(TRIPLE)
    return target.create_target_machine(opt=min(opt_level, 3))


def optimise(
    module: ll.ModuleRef,
    kernel_names: list[str],
    opt_level: int,
    llvm_options: Sequence[tuple[str, str]],
    machine=None,
    unroll: bool = True,
    interleave: bool = True,
    inline_all: bool = True,
) -> None:
    """Internalise all but the kernels, then run LLVM's pipeline at `opt_level` (never below 1),
    with the LLVM options `llvm_options` ((option, default) pairs: workarounds.py), with the
    cost model of `machine` (the SPIR-V target's, unless given: host_simd.py), loop
    unrolling unless `unroll` is false, and vectorised loops interleaving several vectors an
    iteration unless `interleave` is false.

    With `inline_all` every function is inlined into the kernels, then LLVM's function
    pipeline runs on what is left: what the runtime's own optimiser needs from us (the matmul,
    sum, histogram, scan, k-means and bandwidth kernels ran as fast as after the module
    pipeline, which took 40 % longer: its interprocedural passes have nothing to do once all
    is inlined). Without it, LLVM's module pipeline (host-SIMD kernels are tuned for it).

    Optimisation is mandatory (workarounds.py: "optimise-before-emitting").
    """
    keep = set(kernel_names)
    for function in module.functions:
        if not function.is_declaration and function.name not in keep:
            function.linkage = "internal"
    for variable in module.global_variables:
        if not variable.is_declaration:
            variable.linkage = "internal"
    machine = machine or target_machine(opt_level)
    options = ll.create_pipeline_tuning_options(speed_level=max(1, min(opt_level, 3)))
    options.loop_unrolling = unroll
    options.loop_interleaving = interleave
    builder = ll.create_pass_builder(machine, options)
    with patches.llvm_options(llvm_options), lock:
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
