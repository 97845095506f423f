"""The Numba compiler of an offloaded function: Numba's parallel pipeline, with its parfors
lowered as kernels.

Numba's `parallel=True` passes find the parallelism (prange nests, array expressions, NumPy
reductions) and make Parfor nodes of it; this pipeline runs them with five changes, each a
pass of its own:
- before typing, dpnp's names become NumPy's and offload's (names.py), and the small extents
  of arguments a compile is for constants (extents.py);
- typing makes element-wise results of USM arrays USM arrays (types.usm_array_type), a store
  copies first the views of its array that its value reads (aliasing.py), `c[:] = e` has a
  slice for each dimension of `e` (slice_assignments.py), and `a[indices]`,
  `a[indices] = value`, `x[mask]` and `a[mask] = b` are a gather, a scatter, a selection and
  a store through a mask (indexing.py, masks.py);
- Numba's parallel implementations of NumPy functions are offload's where they differ
  (parallel.py: reductions with `axis=`, `@`), and the arrays parfors allocate are USM arrays
  on their inputs' queue (device_allocations.py);
- lowering launches each parfor as kernels (lowering.py) instead of a CPU gufunc.
"""

from __future__ import annotations

import warnings

from numba.core import compiler, errors, ir, typed_passes, untyped_passes
from numba.core.compiler_machinery import PassManager, register_pass
from numba.np.ufunc.dufunc import DUFunc

from ..compiler import patches
from ..types.usm_array_type import elementwise_on_device
from . import device_allocations, parallel
from .aliasing import ReadsBeforeStores
from .broadcasting import RuntimeBroadcasts
from .extents import ConstantExtents
from .indexing import IndexArrays
from .loops import PrangeLoops
from .lowering import OffloadLower, Options
from .names import DpnpNames
from .shapes import ShapeChecks
from .slice_assignments import ContiguousViews, SliceAssignments


@register_pass(mutates_CFG=True, analysis_only=False)
class _TypeInference(typed_passes.NopythonTypeInference):
    """Numba's type inference, element-wise results of USM arrays typed as USM arrays."""

    _name = "dpex_offload_type_inference"

    def run_pass(self, state):
        for block in state.func_ir.blocks.values():
            for stmt in block.find_insts(ir.Assign):
                value = stmt.value
                if isinstance(value, (ir.Global, ir.FreeVar)) and isinstance(value.value, DUFunc):
                    patches.dufunc_typed_on_device(stmt.value.value, state.typingctx)
        with elementwise_on_device():
            return super().run_pass(state)


@register_pass(mutates_CFG=True, analysis_only=False)
class _PreParfor(typed_passes.PreParforPass):
    """Numba's pre-parfor pass with offload's parallel implementations (parallel.py)."""

    _name = "dpex_offload_pre_parfor"

    def run_pass(self, state):
        return parallel.pre_parfor(state)


#: The start of Numba's warning that a `parallel=True` compile found no parallel loop (after
#: its highlighting's escape codes and a newline).
_NOTHING_PARALLEL = r"[\s\S]*The keyword argument 'parallel=True' was specified"


@register_pass(mutates_CFG=True, analysis_only=False)
class _ParforPass(typed_passes.ParforPass):
    """Numba's parfor pass, without its warning that `parallel=True` found nothing to run in
    parallel: users of offload never wrote `parallel=True`, and a function without parallel
    loops (one that only allocates, say) is not a mistake."""

    _name = "dpex_offload_parfor_pass"

    def run_pass(self, state):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", _NOTHING_PARALLEL, errors.NumbaPerformanceWarning)
            return super().run_pass(state)


@register_pass(mutates_CFG=True, analysis_only=False)
class _Lowering(typed_passes.NativeLowering):
    """Numba's lowering pass, parfors launched as kernels."""

    _name = "dpex_offload_lowering"

    @property
    def lowering_class(self):
        return OffloadLower


_REPLACED = {
    typed_passes.NopythonTypeInference: _TypeInference,
    typed_passes.PreParforPass: _PreParfor,
    typed_passes.ParforPass: _ParforPass,
    typed_passes.NativeParforLowering: _Lowering,
}


class OffloadCompiler(compiler.CompilerBase):
    """Numba's nopython pipeline for `parallel=True` with the changes above. A dispatcher's
    subclass holds its `options`, which the lowering reads from the compile's metadata, and
    the small extents it compiles as constants (extents.py)."""

    options = Options()
    extents: tuple = ()

    def define_pipelines(self):
        self.state.metadata["dk_offload"] = self.options
        self.state.metadata["dk_offload_extents"] = self.extents
        default = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline = PassManager("dpex_offload")
        for pass_class, description in default.passes:
            pipeline.add_pass(_REPLACED.get(pass_class, pass_class), description)
            if pass_class is untyped_passes.InlineClosureLikes:
                pipeline.add_pass(DpnpNames, "dpnp's names as NumPy's and offload's")
                pipeline.add_pass(PrangeLoops, "prange loops as the parfor passes take them")
                pipeline.add_pass(ConstantExtents, "small extents of arguments as constants")
            if pass_class is typed_passes.NopythonRewrites:
                pipeline.add_pass(ReadsBeforeStores, "views a store reads of its array copied")
                pipeline.add_pass(RuntimeBroadcasts, "run-time size-1 dimensions broadcast")
                pipeline.add_pass(SliceAssignments, "c[:] = e with a slice per dimension of e")
                pipeline.add_pass(IndexArrays, "a[indices], x[mask] and stores as kernels")
            if pass_class is typed_passes.ParforPreLoweringPass:
                pipeline.add_pass(
                    device_allocations.DeviceAllocations, "parfors' arrays allocated as USM arrays"
                )
                pipeline.add_pass(ShapeChecks, "shape assertions as NumPy's ValueError")
                pipeline.add_pass(ContiguousViews, "views of padded indices C-contiguous")
        pipeline.finalize()
        return [pipeline]
