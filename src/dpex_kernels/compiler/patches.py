"""Every change this package makes to process-wide state (Numba's, LLVM's, the garbage
collector's), in one place.

Numba has no per-target hook for these; each change below says why it is needed and keeps
every other target (Numba's CPU `@njit` above all) on Numba's own code path. `apply()` runs
once, when the compiler is first imported, and refuses Numba or llvmlite
versions other than the pinned ones, whose internals these rely on.
tests/test_hardening_patches.py checks that CPU code is unchanged.

`collector_paused()` holds Python's cyclic garbage collector off while Numba compiles.

`dufunc_typed_on_device()` (called by offload's typing) makes a `@numba.vectorize` function's
array result a USM array while @dk.offload types a function with USM inputs.

While @dk.offload types a function, a USM array read through a boolean mask of its own rank
(2 or more) types as NumPy's 1-d result (`_getitem_generic`).

`argument_typeof_fast_path()` (installed by dispatcher/njit.py) speeds up how Numba's
dispatcher types USM arrays passed to `@njit` functions, and types everything else as before.

Not here, because they change no behaviour of Numba's, only teach it this package's types:
Numba's typeof and CPU unboxing of dpnp arrays (usm_array), of dk kernels and of dk.NdRange,
which let @numba.njit host code launch kernels (dispatcher/njit.py), the typeof of device
functions (compiler/functions.py), of @dk.offload functions (offloading/dispatcher.py) and of
dpctl.SyclQueue arguments of offloaded functions (offloading/allocation.py).
"""

from __future__ import annotations

import contextlib
import gc
import threading
import types as types_module
from collections.abc import Callable, Sequence

import llvmlite
import llvmlite.binding as ll
import numba
from numba.core import cgutils, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher
from numba.core.typing import arraydecl
from numba.core.typing.templates import signature

from ..types.usm_array_type import mask_read_type

PINNED = {"numba": (numba.__version__, "0.68."), "llvmlite": (llvmlite.__version__, "0.50.")}

_numba_pointer_add = cgutils.pointer_add
_numba_do_boundscheck = cgutils.do_boundscheck
_applied = False
_lock = threading.Lock()


def _pointer_add(builder, ptr, offset, return_type=None):
    """Numba's pointer_add casts through an address-space-0 i8*: wrong for device memory.

    Array views in kernels live in the global or local address space; on those the byte
    offset is applied in the pointer's own space. Address-space-0 pointers (all of CPU code)
    take Numba's own function.
    """
    if ptr.type.addrspace == 0:
        return _numba_pointer_add(builder, ptr, offset, return_type)
    from llvmlite import ir

    if isinstance(offset, int):
        offset = cgutils.intp_t(offset)
    base = builder.bitcast(ptr, ir.IntType(8).as_pointer(ptr.type.addrspace))
    return builder.bitcast(builder.gep(base, [offset]), return_type or ptr.type)


def _do_boundscheck(context, builder, ind, dimlen, axis=None):
    """Numba's debug bounds check raises a message-less IndexError and drops the index.

    On the SYCL target the check goes to the context's `check_index` (compiler/bounds.py),
    which reports the array, the index, the bound and the line; other targets keep Numba's.
    """
    check_index = getattr(context, "check_index", None)
    if check_index is None:
        return _numba_do_boundscheck(context, builder, ind, dimlen, axis)
    return check_index(builder, ind, dimlen, axis)


@contextlib.contextmanager
def llvm_options(options: Sequence[tuple[str, str]]):
    """LLVM command-line options for one optimisation or emission of device code: each pair
    is (option set inside, option that restores LLVM's default after). Which options a module
    gets is the back end's choice (compiler/backend/workarounds.py).

    LLVM options are process-wide, so they are set only under Numba's global compiler lock,
    which Numba's CPU compiler holds while it optimises: no CPU function is ever optimised or
    emitted with them.
    """
    with global_compiler_lock:
        for option, _ in options:
            ll.set_option("dpex_kernels", option)
        try:
            yield
        finally:
            for _, default in options:
                ll.set_option("dpex_kernels", default)


def set_llvm_flags(flags: Sequence[str]) -> None:
    """Set LLVM options in a process of its own that emits SPIR-V (compiler/backend/emit.py)."""
    for flag in flags:
        ll.set_option("dpex_kernels", flag)


# Native float atomics (atomicrmw fadd/fsub/fmin/fmax), which codegen writes only for devices
# that have them; without the extensions the SPIR-V back end aborts on such an instruction.
# The option only lets that back end translate them: nothing else is affected.
_SPIRV_EXTENSIONS = "+SPV_EXT_shader_atomic_float_add,+SPV_EXT_shader_atomic_float_min_max"
# The blocks LLVM inlines from a kernel's function are named after Numba's mangled name of it,
# which grows with every parameter (workaround `long-local-names-parsed`).
_LOCAL_NAME_LIMIT = "-non-global-value-max-name-size=1048576"
#: process-wide LLVM options every SPIR-V emission needs (a fresh emitting process too)
PROCESS_FLAGS = (f"-spirv-ext={_SPIRV_EXTENSIONS}", _LOCAL_NAME_LIMIT)


from numba.np.ufunc.dufunc import DUFunc  # noqa: E402

_numba_dufunc_type_me = DUFunc._type_me


def _dufunc_type_me(self, argtys, kwtys):
    """A `@numba.vectorize` function's result on USM arrays is a USM array in offloaded code.

    Numba types a DUFunc's array result as `types.Array` outright, not through the inputs'
    `__array_ufunc__` as it types NumPy's ufuncs, so `erf(x) * x` of a USM array `x` mixed a
    host array in. Only while offload types a function (usm_array_type.elementwise_on_device)
    and only for USM inputs is the result changed: every other typing is Numba's. Retired when
    Numba's DUFunc typing consults `__array_ufunc__` (numba/np/ufunc/dufunc.py, 0.68)."""
    sig = _numba_dufunc_type_me(self, argtys, kwtys)
    from ..types.usm_array_type import device_result_type

    result = device_result_type(sig.return_type, argtys)
    return sig if result is None else sig.replace(return_type=result)


def dufunc_typed_on_device(dufunc: DUFunc, typingctx) -> None:
    """Re-install the typing of a DUFunc made before apply() (its typing bound Numba's
    _type_me when it was made), once."""
    apply()
    if getattr(dufunc, "_dk_typed_on_device", False):
        return
    for template in typingctx.resolve_value_type(dufunc).templates:
        if getattr(template, "key", None) is dufunc:
            template.generic = types_module.MethodType(_dufunc_type_me, dufunc)
    dufunc._dk_typed_on_device = True


_numba_getitem_generic = arraydecl.GetItemBuffer.generic


def _getitem_generic(self, args, kws):
    """Numba types `a[mask]`, a boolean mask of a's own rank n >= 2, as an array of rank
    2n - 1, which it then cannot lower; NumPy's result is the 1-d array of the selected elements.

    While @dk.offload types a function, a USM array read through such a mask types as NumPy's
    result (types/usm_array_type.mask_read_type), which offloading/masks.py computes as a
    selection; every other read keeps Numba's typing.
    """
    if not kws and len(args) == 2:
        result = mask_read_type(*args)
        if result is not None:
            return signature(result, *args)
    return _numba_getitem_generic(self, args, kws)


def _check_versions() -> None:
    for name, (found, pinned) in PINNED.items():
        if not found.startswith(pinned):
            raise ImportError(
                f"dpex_kernels' compiler relies on {name} {pinned}x internals; found {name} "
                f"{found}: install the versions in dpex_kernels' requirements"
            )


def apply() -> None:
    """Install the changes above, once per process."""
    global _applied
    with _lock:
        if _applied:
            return
        _check_versions()
        cgutils.pointer_add = _pointer_add
        cgutils.do_boundscheck = _do_boundscheck
        DUFunc._type_me = _dufunc_type_me  # DUFuncs made from now on (their typing binds it)
        arraydecl.GetItemBuffer.generic = _getitem_generic
        for flag in PROCESS_FLAGS:
            ll.set_option("dpex_kernels", flag)
        _applied = True


_pauses = 0  # collector_paused() blocks running now, in any thread
_resume = False  # whether the collector was on when the first of them began


@contextlib.contextmanager
def collector_paused():
    """No cyclic garbage collection while Numba compiles: its IR is short-lived cycles by the
    hundred thousand, and with dpnp and scikit-learn imported each full collection walks
    millions of objects that live as long as the process. The ten kernels of
    benchmarks/work_group_worker.py first-use, four processes each: 1.50-1.74 s with the
    collector running (three full collections), 1.28-1.51 s paused. What a compile left behind
    goes at the next collection after it; a collector the user turned off stays off."""
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


_numba_typeof_pyval = Dispatcher.typeof_pyval


def argument_typeof_fast_path(fast: dict[type, Callable[[object], types.Type | None]]) -> None:
    """Type arguments of the classes in `fast` by their function before Numba's typeof.

    Numba's C dispatcher has no fingerprint for objects other than NumPy's and Python's, so it
    types each dpnp array of each @njit call through Dispatcher.typeof_pyval, typeof and a
    singledispatch: ~1.8 µs per array per call. The functions in `fast` read the type from the
    array's C struct and return None when they do not know it (Numba's path then decides).
    """

    def typeof_pyval(self, val):
        typeof_fast = fast.get(type(val))
        found = typeof_fast(val) if typeof_fast is not None else None
        if found is None:
            return _numba_typeof_pyval(self, val)
        self._types_active_call.add(found)  # as Numba's: alive while the call lasts
        return found

    Dispatcher.typeof_pyval = typeof_pyval
