"""Every workaround in the back end, as a record: what it works around, where it applies, the
test that shows it, and what would retire it.

The back end asks this table which workarounds apply to the target it emits for: rewrites of
the optimised IR (stage "rewrite", in this table's order), LLVM options while optimising
(stage "optimise") and the emission policy (stage "emit"). Workarounds that live outside the
back end (in the kernel API's lowering, in Numba patches, in the device build) are recorded
here too, so this file is the one index; docs/compiler.md lists the same records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import llvmlite.binding as ll

from ...artifacts.target import Target
from . import rewrites

#: What a workaround works around, as the records name it.
LLVM_SPIRV = "LLVM 22's SPIR-V back end (llvmlite 0.50)"
INTEL_CPU = "Intel's OpenCL CPU runtime (intel-opencl-rt 2026.1)"
DPCTL = "dpctl 0.22"
NUMBA = "Numba 0.68"


def _llvm_22(target: Target) -> bool:
    return ll.llvm_version_info[0] == 22


def _intel_cpu(target: Target) -> bool:
    return target.is_intel_opencl_cpu


def _every(target: Target) -> bool:
    return True


@dataclass(frozen=True)
class Workaround:
    """One workaround: the fault, where it applies, the evidence, and its retirement."""

    name: str
    #: The stage or module that applies it.
    where: str
    #: What is worked around (LLVM_SPIRV, INTEL_CPU, ...).
    fault_of: str
    #: The fault and the remedy, in a sentence or two.
    what: str
    #: The tests and fuzz cases that fail without it.
    evidence: tuple[str, ...]
    #: What would make it unnecessary.
    retire_when: str
    #: Whether it applies to code for a target.
    applies: Callable[[Target], bool] = _every
    #: For stage "rewrite": the rewrite of the optimised IR's text.
    rewrite: Callable[[str], str] | None = None
    #: For stage "optimise": LLVM options (set, default) while optimising.
    llvm_options: tuple[tuple[str, str], ...] = ()


WORKAROUNDS: tuple[Workaround, ...] = (
    Workaround(
        "optimise-before-emitting",
        "backend: optimise",
        LLVM_SPIRV,
        "Unoptimised Numba IR passes first-class aggregates (the array struct); the back end "
        "mistranslates them (1-d) or aborts the process (2-d, 'Assertion isReg()'). Every "
        "module is optimised at O1 or more, even with opt_level=0.",
        ("tests/test_compile_options.py::test_every_opt_level_compiles_and_computes_the_same",),
        "a back end that lowers aggregate arguments and returns",
        _llvm_22,
    ),
    Workaround(
        "no-exit-value-replacement",
        "backend: optimise",
        LLVM_SPIRV,
        "Exit-value replacement turns loop sums into closed forms over i65 and wider integers, "
        "which the back end aborts the process on: -replexitval=never.",
        ("tests/test_backend.py::test_a_loop_sum_compiles_without_wide_integers",),
        "a back end that legalises integers wider than 64 bits",
        _llvm_22,
        llvm_options=(("-replexitval=never", "-replexitval=cheap"),),
    ),
    Workaround(
        "no-linear-function-test-replacement",
        "backend: optimise",
        LLVM_SPIRV,
        "LFTR narrows a loop counter to its trip count's width (i2 for n % 4 trips), which "
        "SPIR-V lacks, so a valid kernel was refused: -disable-lftr.",
        ("tests/fuzz_findings/narrow_induction_variable.py",),
        "a back end that legalises odd integer widths",
        _llvm_22,
        llvm_options=(("-disable-lftr", "-disable-lftr=false"),),
    ),
    Workaround(
        "libm-names-as-opencl-builtins",
        "backend: specialise (llvm.rename_libm_calls)",
        NUMBA,
        "Numba calls C library names (sqrtf, tanhf, erf, ...) that stay SPIR-V imports only "
        "some runtimes resolve; they are renamed to the OpenCL built-ins (Itanium mangled).",
        ("tests/test_kernel_language.py",),
        "Numba emitting LLVM intrinsics for every math function",
    ),
    Workaround(
        "integer-widths-refused",
        "backend: check",
        LLVM_SPIRV,
        "A module with integers of widths SPIR-V lacks would abort the process inside the back "
        "end; it is refused with a KernelCompileError instead.",
        ("tests/test_backend.py::test_an_odd_integer_width_is_refused_not_aborted",),
        "a back end that legalises odd integer widths",
        _llvm_22,
    ),
    Workaround(
        "no-sub-group-operations-in-sub-groups-of-one",
        "backend: check",
        INTEL_CPU,
        "The runtime builds no sub-group operation in sub-groups of one work-item; such a "
        "kernel is refused with a KernelCompileError naming the fix.",
        (
            "tests/test_compile_options.py::"
            "test_sub_groups_of_one_work_item_with_sub_group_operations_are_a_compile_error",
        ),
        "a runtime that builds them",
        _intel_cpu,
    ),
    Workaround(
        "sub-group-multiplies-by-shuffles",
        "backend: specialise (kernel_api/groups.py group_definitions)",
        INTEL_CPU,
        "OpGroupNonUniformIMul and FMul (a sub-group reduce or scan of dk.multiplies) give "
        "each lane its own operand; the product is gathered lane by lane with shuffles.",
        ("tests/test_groups.py::test_sub_group_algorithms_match_numpy",),
        "a runtime where the native instructions multiply (then the placeholder calls them)",
        _intel_cpu,
    ),
    Workaround(
        "sub-group-ids-derived",
        "backend: specialise (kernel_api/groups.py group_definitions)",
        INTEL_CPU,
        "The device compiler aborts the process (X86 instruction selection) on a kernel with "
        "sub_group_size=4 that shuffles a 64-bit value from a lane computed from "
        "get_sub_group_size() or get_sub_group_id(); in kernels that shuffle, both are derived "
        "from the linear local id and the maximum sub-group size instead (only there: derived "
        "values hide the sub-group's lanes from the runtime's vectoriser, and a sum reading "
        "by sub-groups ran 4.5x slower).",
        ("tests/test_groups.py::test_sub_group_size_4_shuffles_of_64_bit_values",),
        "a runtime whose compiler builds that kernel (then the placeholder calls the built-in)",
        _intel_cpu,
    ),
    Workaround(
        "constant-addresses-as-instructions",
        "backend: rewrite",
        LLVM_SPIRV,
        "A constant getelementptr into a local array is typed by one of its uses and its byte "
        "offset scaled by that type's size: each constant address becomes an instruction.",
        (
            "tests/test_fuzz_regressions.py::test_an_atomic_on_a_local_array_at_a_constant_index",
            "tests/fuzz_cases/local_int_load_constant_index.json",
        ),
        "a back end that types constant expressions by their source element type",
        _llvm_22,
        rewrite=rewrites.constant_addresses_as_instructions,
    ),
    Workaround(
        "count-down-exits-on-the-new-count",
        "backend: rewrite",
        INTEL_CPU,
        "An atomic in a count-down loop nested in another ran many more times than the loop "
        "iterates when the exit test read the counter before its decrement; it reads the "
        "decremented value.",
        (
            "tests/fuzz_findings/atomic_in_count_down_loop.py",
            "tests/fuzz_cases/atomic_in_count_down_loop.json",
        ),
        "a runtime where tests/fuzz_findings/atomic_in_count_down_loop.py passes without it",
        _intel_cpu,
        rewrite=rewrites.count_down_exits_on_the_new_count,
    ),
    Workaround(
        "float-atomic-adds-of-no-negation",
        "backend: rewrite",
        INTEL_CPU,
        "A native float atomic add of a negation computed before a barrier added wrong values; "
        "fsub and fadd of fneg become fadd of (0.0 - v).",
        ("tests/test_float_atomics.py", "tests/fuzz_cases/local_float_atomic_lost_store.json"),
        "a runtime where the float atomics tests pass without it",
        _intel_cpu,
        rewrite=rewrites.float_atomic_adds_of_no_negation,
    ),
    Workaround(
        "negations-as-fma",
        "backend: rewrite",
        INTEL_CPU,
        "A negation live across a barrier got one work-item's value in every work-item; in "
        "modules with a convergent call every fneg becomes fma(x, -1.0, -0.0).",
        (
            "tests/fuzz_findings/fneg_across_barrier.py",
            "tests/test_runtime_workarounds.py::"
            "test_a_negation_live_across_a_barrier_keeps_each_work_items_value",
        ),
        "a runtime where tests/fuzz_findings/fneg_across_barrier.py passes without it",
        _intel_cpu,
        rewrite=rewrites.negations_as_fma,
    ),
    Workaround(
        "private-arrays-as-one",
        "backend: rewrite",
        INTEL_CPU,
        "A pointer that may point into either of two private arrays was addressed as if into "
        "one of them; arrays whose pointers meet in a select or phi become one array.",
        (
            "tests/test_runtime_workarounds.py::"
            "test_a_pointer_into_either_of_two_private_arrays_reads_the_right_one",
            "tests/fuzz_cases/private_arrays_selected_pointer.json",
        ),
        "a runtime where those tests pass without it",
        _intel_cpu,
        rewrite=rewrites.private_arrays_as_one,
    ),
    Workaround(
        "stores-through-chosen-private-pointers-volatile",
        "backend: rewrite",
        INTEL_CPU,
        "Vectorised (sub-groups of 4, 8, 16), a store through a select of two addresses in a "
        "private array (`p[3 if i > 0 else 0] = v`) after a load of it at a computed index was "
        "lost in every work-item; such stores are volatile.",
        (
            "tests/test_runtime_workarounds.py::"
            "test_a_store_at_a_chosen_element_of_a_private_array_lands",
            "tests/fuzz_cases/private_store_through_select.json",
        ),
        "a runtime where that test passes without it",
        _intel_cpu,
        rewrite=rewrites.stores_through_chosen_private_pointers_volatile,
    ),
    Workaround(
        "loads-volatile-in-sub-groups-of-4",
        "backend: rewrite",
        INTEL_CPU,
        "The runtime's vectoriser miscompiles loads in kernels with sub_group_size=4 (AVX2 "
        "host): its compiler segfaulted on a load at an index computed from a loaded value, "
        "and a load at `(i & 31) ^ 3` read far outside its array; both crashed the process. "
        "In such kernels every load of global or local memory is volatile.",
        (
            "tests/test_runtime_workarounds.py::test_loads_in_sub_groups_of_4_work_items",
            "tests/fuzz_cases/sub_groups_of_4_indirect_load.json",
            "tests/fuzz_cases/sub_groups_of_4_xor_index.json",
        ),
        "a runtime where that test passes without it",
        _intel_cpu,
        rewrite=rewrites.loads_volatile_in_sub_groups_of_4,
    ),
    Workaround(
        "integer-min-max-abs-as-select",
        "backend: rewrite",
        INTEL_CPU,
        "The runtime's vectoriser (sub-groups of 8, AVX2 host) widened a min, max or abs of a "
        "loaded value that every work-item shares wrongly: a load at `a[min(a[g], 7)]` (or "
        "`a[abs(a[n]) % 32]` in a larger kernel) read far outside its array and crashed the "
        "process. Integer min, max and abs of a loaded value become a compare and a select "
        "(not all mins and maxes: the runtime aborted on some such selects).",
        (
            "tests/test_runtime_workarounds.py::test_a_shared_min_as_an_index_loads_in_bounds",
            "tests/fuzz_cases/uniform_min_as_load_index.json",
            "tests/fuzz_cases/uniform_abs_as_load_index.json",
            "tests/fuzz_cases/sub_group_scan_of_min_max.json",
        ),
        "a runtime where that test passes without it",
        _intel_cpu,
        rewrite=rewrites.integer_min_max_abs_as_select,
    ),
    Workaround(
        "phis-after-compare-exchange-loops-through-memory",
        "backend: rewrite",
        INTEL_CPU,
        "The runtime's vectoriser (sub-groups of 8 and 16) chose one value for a whole "
        "sub-group at a phi that joins compare-exchange loops in both arms of an `if` whose "
        "condition differs between work-items: each sub-group stored its first work-item's "
        "value. Such phis go through a private slot with volatile stores and loads.",
        (
            "tests/test_runtime_workarounds.py::test_values_set_beside_compare_exchange_loops",
            "tests/fuzz_cases/compare_exchange_loops_in_both_arms.json",
        ),
        "a runtime where that test passes without it",
        _intel_cpu,
        rewrite=rewrites.phis_after_compare_exchange_loops_through_memory,
    ),
    Workaround(
        "label-ids-repaired",
        "backend: emit (spirv_repair.repair_label_ids)",
        LLVM_SPIRV,
        "Between 1 and 9 emissions in 10 number OpLabels over type ids; every module's labels "
        "get fresh ids, an emission whose labels collide with each other is emitted again, in "
        "fresh processes if every emission here collides.",
        (
            "tests/test_spirv_valid.py::test_label_repair_gives_every_label_its_own_id",
            "tests/test_spirv_valid.py::"
            "test_labels_that_collide_in_every_emission_here_are_emitted_in_a_fresh_process",
        ),
        "a back end whose label numbering is fixed (then the repair finds nothing to do)",
        _llvm_22,
    ),
    Workaround(
        "same-bytes-per-module",
        "backend: emit (emit._emitted)",
        LLVM_SPIRV,
        "Emissions of one module differ in ids (about 4 in 10); SPIR-V is remembered per "
        "module text so that a kernel defined again reuses its device build.",
        ("tests/test_compile_reuse.py",),
        "a deterministic back end",
        _llvm_22,
    ),
    Workaround(
        "mixed-integer-widths",
        "backend: emit (spirv_repair.mixed_integer_widths)",
        LLVM_SPIRV,
        "With loop strength reduction the back end wrote OpIMul of a 32-bit result with the "
        "64-bit global id; such an emission is redone without strength reduction.",
        (
            "tests/test_spirv_valid.py::"
            "test_strength_reduction_that_mixes_widths_is_emitted_without_it",
            "tests/fuzz_cases/strength_reduction_mixed_widths.json",
        ),
        "a back end whose strength reduction keeps operand widths",
        _llvm_22,
    ),
    Workaround(
        "narrow-counters-without-strength-reduction",
        "backend: emit (emit._narrowed_counters)",
        LLVM_SPIRV,
        "Strength reduction counted `(k * a) % 4` in a 2-bit integer, which the back end "
        "widened to 8 bits without the mask: a loop ran `k * a` times. An emission with a "
        "counter narrower than any of the module's own is redone without strength reduction.",
        (
            "tests/test_spirv_valid.py::"
            "test_strength_reduction_that_narrows_a_loop_counter_is_emitted_without_it",
            "tests/fuzz_cases/strength_reduction_narrow_counter.json",
        ),
        "a back end that masks the integers it widens",
        _llvm_22,
    ),
    Workaround(
        "strength-reduction-for-atomic-loops-only",
        "backend: emit (emit.strength_reduction)",
        INTEL_CPU,
        "Loop strength reduction's byte offsets keep the runtime from vectorising across "
        "work-items (a dot 4-6x slower); it runs only for loops of integer atomics, where it "
        "is faster (a performance workaround: results are the same).",
        ("tests/test_spirv_valid.py::test_strength_reduction_only_for_loops_of_atomics",),
        "a runtime that vectorises loops over byte offsets",
        _intel_cpu,
    ),
    Workaround(
        "compare-exchange-as-builtin",
        "kernel_api/atomics.py (compare_exchange_bits)",
        LLVM_SPIRV,
        "LLVM's cmpxchg returns a {value, success} pair that the optimiser moves into phis of "
        "CAS loops, and the back end aborts on such a phi; __spirv_AtomicCompareExchange "
        "returns a scalar.",
        ("tests/fuzz_findings/int_cas_loop_abort.py",),
        "a back end that lowers aggregate phis",
        _llvm_22,
    ),
    Workaround(
        "float-atomic-extensions",
        "patches.PROCESS_FLAGS",
        LLVM_SPIRV,
        "The back end aborts on atomicrmw fadd/fmin/fmax unless the SPIR-V float atomic "
        "extensions are enabled (a process-wide option; devices without them get CAS loops).",
        ("tests/test_float_atomics.py",),
        "a back end that enables the extensions a module needs",
        _llvm_22,
    ),
    Workaround(
        "long-local-names-parsed",
        "patches.PROCESS_FLAGS",
        NUMBA,
        "Blocks inlined from a kernel's function are named after Numba's mangled name of it, "
        "which grows with every parameter; past LLVM's 1024 characters for a local name the "
        "back end's parse of the optimised module failed (an internal error). The limit is "
        "raised to 1 MiB process-wide.",
        ("tests/fuzz_cases/long_inlined_block_names.json",),
        "Numba mangled names of bounded length, or an LLVM without the limit",
    ),
    Workaround(
        "leaked-program-references",
        "program_binaries.release_leaked_references",
        DPCTL,
        "create_program_from_spirv and get_sycl_kernel keep OpenCL references nobody releases "
        "(1.9 MB per build stayed resident); they are released where the counts show them.",
        ("tests/test_memory.py",),
        "a dpctl that releases them (the reference counts then say so, and nothing is done)",
    ),
    Workaround(
        "pointer-add-keeps-address-spaces",
        "patches._pointer_add",
        NUMBA,
        "cgutils.pointer_add casts through an address-space-0 i8*, which breaks strided "
        "indexing of global and local arrays; device pointers keep their address space.",
        ("tests/test_hardening_patches.py",),
        "Numba's pointer_add keeping the pointer's address space",
    ),
    Workaround(
        "bounds-checks-name-the-array",
        "patches._do_boundscheck",
        NUMBA,
        "Numba's debug bounds check raises a message-less IndexError; on this target it "
        "reports the array, the index, the bound and the line.",
        ("tests/test_hardening_patches.py",),
        "a Numba target hook for bounds checks",
    ),
)


def rewrites_for(target: Target) -> list[Callable[[str], str]]:
    """The IR rewrites that apply to code for `target`, in order."""
    return [w.rewrite for w in WORKAROUNDS if w.rewrite is not None and w.applies(target)]


def optimisation_options(target: Target) -> tuple[tuple[str, str], ...]:
    """The LLVM options that apply while optimising code for `target`."""
    return tuple(option for w in WORKAROUNDS if w.applies(target) for option in w.llvm_options)


def by_name(name: str) -> Workaround:
    return next(w for w in WORKAROUNDS if w.name == name)
