"""The Numba target for SYCL devices: typing and target contexts, data models, address spaces.

Kernels are typed and lowered in contexts of their own, registered under the target name
"dpex_kernels", so nothing here touches the CPU target's registries.
"""

from __future__ import annotations

import itertools
import types as pytypes
from functools import cached_property

import llvmlite.binding as ll
import numpy as np
from llvmlite import ir
from numba.core import cgutils, datamodel, errors, fastmathpass, types, typing
from numba.core.base import BaseContext
from numba.core.callconv import FIRST_USEREXC, MinimalCallConv
from numba.core.datamodel import models
from numba.core.descriptors import TargetDescriptor
from numba.core.options import TargetOptions
from numba.core.target_extension import GPU, target_registry
from numba.core.typing.templates import FunctionTemplate

from ..types.usm_array_type import USMArrayType
from . import arithmetic, bounds, codegen, patches
from .kernel_api import LocalArrayType, lowering_registry, typing_registry
from .kernel_api.atomics import compare_exchange_bits
from .kernel_api.memory import LocalAccessorType
from .kernel_api.spirv import GLOBAL
from .literals import WeakFloat, WeakFloatModel, strengthen, weak_float

TARGET_NAME = "dpex_kernels"


class SYCLDevice(GPU):
    """Numba's marker for code compiled by this package for a SYCL device."""


target_registry[TARGET_NAME] = SYCLDevice
patches.apply()


class AddressSpacePointerModel(models.PrimitiveModel):
    """A CPointer whose LLVM type carries the pointer's address space."""

    def __init__(self, dmm, fe_type):
        pointee = dmm.lookup(fe_type.dtype).get_data_type()
        super().__init__(dmm, fe_type, pointee.as_pointer(fe_type.addrspace or 0))


class AddressSpaceArrayModel(models.StructModel):
    """Numba's array struct with the data pointer in the array type's address space.

    USM arrays are global memory, dk.local arrays Workgroup memory, dk.private arrays (plain
    Numba arrays) Function memory: every access compiles to the right SPIR-V storage class.
    """

    def __init__(self, dmm, fe_type):
        members = [
            ("meminfo", types.MemInfoPointer(fe_type.dtype)),
            ("parent", types.pyobject),
            ("nitems", types.intp),
            ("itemsize", types.intp),
            ("data", types.CPointer(fe_type.dtype, addrspace=_ADDRSPACE[type(fe_type)])),
            ("shape", types.UniTuple(types.intp, fe_type.ndim)),
            ("strides", types.UniTuple(types.intp, fe_type.ndim)),
        ]
        super().__init__(dmm, fe_type, members)


_ADDRSPACE = {
    USMArrayType: GLOBAL,
    LocalArrayType: LocalArrayType.addrspace,
    LocalAccessorType: LocalAccessorType.addrspace,
}


def _data_model_manager() -> datamodel.DataModelManager:
    dmm = datamodel.default_manager.copy()
    dmm.register(types.CPointer, AddressSpacePointerModel)
    dmm.register(USMArrayType, AddressSpaceArrayModel)
    dmm.register(LocalArrayType, AddressSpaceArrayModel)
    dmm.register(LocalAccessorType, AddressSpaceArrayModel)
    dmm.register(WeakFloat, WeakFloatModel)
    return dmm


#: How many call typings SYCLTypingContext remembers at most.
_RESOLVED_LIMIT = 4096


def _plain_template(template) -> bool:
    """A typing template whose answer depends on the argument types alone (not an @overload
    or @intrinsic one, which compiles and keeps its implementation per call)."""
    return getattr(template, "get_impl_key", None) is FunctionTemplate.get_impl_key


def _scalar_cast(func, args, kws) -> bool:
    """A number class called on one scalar (dk.float32(x)): Numba types it by a template it
    makes anew for every call (NumberClassAttribute), so the answer, always the class's
    type, is remembered here rather than by the cache of resolve_function_type."""
    return (
        isinstance(func, types.NumberClass)
        and not kws
        and len(args) == 1
        and isinstance(args[0], (types.Number, types.Boolean))
    )


def _hashable(key) -> bool:
    """Some types hold unhashable values (a literal slice)."""
    try:
        hash(key)
    except TypeError:
        return False
    return True


#: Globals of these kinds have no typeof; Numba raises (and formats) a ValueError for each
#: before it looks them up in the typing registry, ~150 times in a kernel's compile.
_REGISTRY_KINDS = (pytypes.FunctionType, pytypes.BuiltinFunctionType, pytypes.ModuleType)


def _is_builtin_class(val) -> bool:
    """A class of Python's builtins that Numba types by its registry (exceptions it types as
    exception classes, by typeof)."""
    return (
        isinstance(val, type)
        and val.__module__ == "builtins"
        and not issubclass(val, BaseException)
    )


class SYCLTypingContext(typing.BaseContext):
    """Numba's typing rules plus the kernel API; CPU-only registries are left out."""

    def __init__(self):
        #: call -> (signature, the implementation key to put back, or None)
        self._resolved: dict[tuple, tuple] = {}
        #: (number class, argument types) -> signature of a cast such as dk.float32(x)
        self._casts: dict[tuple, object] = {}
        self._side_effects = False  # a typing with side effects ran inside the current one
        super().__init__()

    def load_additional_registries(self):
        from numba.core.typing import cmathdecl, enumdecl, mathdecl, npydecl

        self.install_registry(cmathdecl.registry)
        self.install_registry(enumdecl.registry)
        self.install_registry(mathdecl.registry)
        self.install_registry(npydecl.registry)
        self.install_registry(typing_registry)

    def resolve_value_type(self, val):
        """Python floats are weak (literals.py); CPU @njit functions get device twins; builtin
        classes (range, int), functions and modules are typed from the registry straight away
        (Numba's typeof would first import numba.typed, 40 ms, and start the CPU target, or
        raise and format an error, only to find nothing)."""
        from numba.core.dispatcher import Dispatcher

        from .functions import DeviceFunction

        if type(val) is float:
            return weak_float
        if _is_builtin_class(val) or (
            isinstance(val, _REGISTRY_KINDS) and not hasattr(val, "_numba_type_")
        ):
            found = self._get_global_type(val)
            if found is not None:
                return found
        if isinstance(val, Dispatcher) and not isinstance(val, DeviceFunction):
            val = DeviceFunction.for_cpu_dispatcher(val)
        return super().resolve_value_type(val)

    def unify_pairs(self, first, second):
        """A weak float unifies to the other side's float type (Numba's rule would widen)."""
        if isinstance(first, WeakFloat):
            unified = first.unify(self, second)
        elif isinstance(second, WeakFloat):
            unified = second.unify(self, first)
        else:
            unified = None
        return unified if unified is not None else super().unify_pairs(first, second)

    def resolve_function_type(self, func, args, kws):
        """Numba's typing of a call, remembered across compiles where the typing has no side
        effect: kernels call the same kernel API functions and operators with the same
        argument types, and typing them again took two thirds of a kernel's typing.

        Failures are never remembered, nor typings through Numba's @overload and @intrinsic
        templates or device functions (they compile per call and keep the implementation the
        lowering looks up in state shared with the CPU target), nor any typing with one of
        those inside it. A remembered typing puts back the implementation key Numba keeps on
        the function type, which a CPU compile in between may have changed (an offloaded
        reduction's `max` lowered the CPU's, tests/test_offload.py).
        """
        key = (func, tuple(args), tuple(sorted(dict(kws).items())))
        if _scalar_cast(func, args, kws):
            found = self._casts.get(key)
            if found is None:
                if len(self._casts) >= _RESOLVED_LIMIT:
                    self._casts.clear()  # kernels made in a loop with ever new literals
                found = self._casts[key] = self._resolve_function_type(func, args, kws)
            return found
        function_type = self._cacheable_type(func) if _hashable(key) else None
        if function_type is None:
            self._side_effects = True
            return self._resolve_function_type(func, args, kws)
        found = self._resolved.get(key)
        if found is not None:
            signature, impl_key = found
            if impl_key is not None:
                function_type._impl_keys[signature.args] = impl_key
            return signature
        outer, self._side_effects = self._side_effects, False
        try:
            signature = self._resolve_function_type(func, args, kws)
        finally:
            inner, self._side_effects = self._side_effects, outer or self._side_effects
        if signature is None or inner:
            return signature
        impl_key = None
        if isinstance(function_type, types.Function):
            impl_key = function_type._impl_keys.get(signature.args)
            overloaded = impl_key is not None and impl_key is not function_type.typing_key
            builtin = self._functions.get(func, ())
            if overloaded or (impl_key is None and not all(map(_plain_template, builtin))):
                self._side_effects = True  # resolved by an @overload or @intrinsic template
                return signature
        if len(self._resolved) >= _RESOLVED_LIMIT:
            self._resolved.clear()  # kernels made in a loop with ever new literals
        self._resolved[key] = (signature, impl_key)
        return signature

    def _cacheable_type(self, func):
        """The function type whose typing of `func` may be remembered (`func` itself for one
        typed by builtin templates only), or None.

        A Function may be (its templates are tried in turn; resolve_function_type checks which
        one answered), a BoundFunction if its template is a plain one; anything typed through
        a call of its own (a device function's Dispatcher, a NumberClass) may not. A Python
        function or an operator's name stands for its global type; builtin templates (`getiter`)
        must have no @overload among them.
        """
        if isinstance(func, types.BoundFunction):
            return func if _plain_template(func.template) else None
        if isinstance(func, types.Function):
            return func
        if isinstance(func, types.Type):
            return None
        global_type = self._lookup_global(func)
        if isinstance(global_type, types.Function):
            return global_type
        builtin = self._functions.get(func, ())
        if global_type is None and builtin and all(map(_plain_template, builtin)):
            return func  # builtin templates only: no implementation key to keep
        return None

    def _resolve_function_type(self, func, args, kws):
        """Typing rules that need a dtype (NumPy ufuncs above all) see a weak float as float64."""
        if not any(isinstance(t, WeakFloat) for t in args):
            return super().resolve_function_type(func, args, kws)
        if isinstance(getattr(func, "typing_key", None), np.ufunc):
            return super().resolve_function_type(func, strengthen(args), kws)
        try:
            found = super().resolve_function_type(func, args, kws)
        except (errors.TypingError, TypeError, NotImplementedError):
            found = None
        if found is None:
            found = super().resolve_function_type(func, strengthen(args), kws)
        return found


_ERROR_RECORD = ir.IntType(32).as_pointer(GLOBAL)
_exception_codes = itertools.count(FIRST_USEREXC)
#: status code -> (exception class, args, (function, file, line)) of every device function
#: compiled in this process: codes are unique process-wide, so a code a device function
#: returns through its callers still names the right exception.
EXCEPTIONS: dict[int, tuple] = {}


class _CallHelper:
    """Numba's per-function exception table, with codes unique across the process."""

    def __init__(self):
        self.exceptions = {}

    def _add_exception(self, exc, exc_args, locinfo):
        code = next(_exception_codes)
        self.exceptions[code] = EXCEPTIONS[code] = (exc, exc_args, locinfo)
        return code


def _in_kernel(builder) -> bool:
    return builder.function.calling_convention == "spir_kernel"


class SYCLCallConv(MinimalCallConv):
    """Numba's minimal calling convention plus an error record; refuses what devices cannot do.

    A kernel the direct front end lowers is a spir_kernel itself: there every return, a raise
    included, returns nothing.

    Every device function takes, after the return slot, a pointer to the launch's error record
    (errors.py; null when the launch has none), where a failed bounds check writes its index
    and bound. A raise with constant arguments returns its exception's code: the work-item
    stops there (and debug=True reports it after the launch).
    """

    def _make_call_helper(self, builder):
        return _CallHelper()

    def get_function_type(self, restype, argtypes):
        fnty = super().get_function_type(restype, argtypes)
        return ir.FunctionType(fnty.return_type, [fnty.args[0], _ERROR_RECORD, *fnty.args[1:]])

    def decorate_function(self, fn, args, fe_argtypes, noalias=False):
        super().decorate_function(fn, args, fe_argtypes, noalias)
        fn.args[1].name = ".error_record"

    def get_arguments(self, func):
        return func.args[2:]

    def error_record(self, builder) -> ir.Value:
        """The error record of the function being built (null in a kernel entry)."""
        if _in_kernel(builder):
            return ir.Constant(_ERROR_RECORD, None)
        return builder.function.args[1]

    def return_value(self, builder, retval):
        """In a spir_kernel itself (the direct front end lowers kernels into one) every return
        returns nothing; elsewhere Numba's status and value."""
        if _in_kernel(builder):
            builder.ret_void()
        else:
            super().return_value(builder, retval)

    def return_status_propagate(self, builder, status):
        if _in_kernel(builder):
            builder.ret_void()
        else:
            super().return_status_propagate(builder, status)

    def _return_errcode_raw(self, builder, code):
        """A raise in a spir_kernel ends the work-item, as in a function of this convention
        called by an entry without an error record, which drops the status."""
        if _in_kernel(builder):
            builder.ret_void()
        else:
            super()._return_errcode_raw(builder, code)

    def call_function(self, builder, callee, resty, argtys, args, error_record=None):
        """Call a device function; a kernel entry passes its record, others forward theirs."""
        retty = callee.args[0].type.pointee
        retvaltmp = cgutils.alloca_once(builder, retty)
        builder.store(cgutils.get_null_value(retty), retvaltmp)
        record = self.error_record(builder) if error_record is None else error_record
        packed = self._get_arg_packer(argtys).as_arguments(builder, args)
        code = builder.call(callee, [retvaltmp, record, *packed])
        status = self._get_return_status(builder, code)
        out = self.context.get_returned_value(builder, resty, builder.load(retvaltmp))
        return status, out

    def add_exception(self, builder, exc, exc_args) -> int:
        """Register an exception raised at the current source line; return its code."""
        loc = errors.loc_info.get("loc")
        locinfo = None if loc is None else (builder.function.name, loc.filename, loc.line)
        return self._get_call_helper(builder)._add_exception(exc, exc_args, locinfo)

    def return_code(self, builder, code: int) -> None:
        self._return_errcode_raw(builder, code)

    def store_status(self, builder, record, status) -> None:
        """In a kernel entry: the first failing work-item's status code goes to the record."""
        with builder.if_then(status.is_error, likely=False):
            code = status.code
            if code.type.width > 32:
                code = builder.trunc(code, ir.IntType(32))
            compare_exchange_bits(builder, record, ir.Constant(code.type, 0), code)

    def return_dynamic_user_exc(self, builder, exc, exc_args, nb_types, loc=None, func_name=None):
        raise errors.UnsupportedError(
            "exceptions raised in kernels take constant arguments only "
            f"(raise {exc.__name__}('text')), not run-time values",
            loc,
        )

    def set_try_status(self, builder):
        raise errors.UnsupportedError(
            "try/except cannot run on a SYCL device: check the condition with if instead"
        )

    def check_try_status(self, builder):
        self.set_try_status(builder)


class SYCLTargetContext(BaseContext):
    """Lowering for SYCL devices: SPIR-V data layout, global-pointer arrays, minimal call conv."""

    # True sends x ** y into infinite recursion on this target (COMPILER-FINDINGS.md).
    implement_powi_as_math_call = False
    strict_alignment = True
    allow_dynamic_globals = False

    def __init__(self, typingctx, target=TARGET_NAME):
        super().__init__(typingctx, target)

    def add_dynamic_addr(self, builder, intaddr, info):
        """Host addresses (a ctypes or cffi function, an object of this process) mean nothing
        on a device: a user error naming what the code reached for (Numba asserts instead)."""
        raise errors.UnsupportedError(
            f"{info or 'an object of this process'} is at an address of the host process, "
            f"which a SYCL device cannot reach (a ctypes or cffi function cannot run in a "
            f"kernel): compute the value in the kernel, or pass it in as an argument"
        )

    def init(self):
        self._internal_codegen = codegen.SPIRVCodegen()
        self._target_data = ll.create_target_data(codegen.DATA_LAYOUT)
        self.data_model_manager = _data_model_manager()
        self._abi_facts: dict[tuple[str, str], int] = {}

    def load_additional_registries(self):
        from numba.cpython import (  # noqa: F401  (importing registers their lowering)
            builtins,
            cmathimpl,
            enumimpl,
            iterators,
            mathimpl,
            numbers,
            rangeobj,
            slicing,
            tupleobj,
        )
        from numba.np import arrayobj, npdatetime, npyimpl  # noqa: F401

        self.install_registry(mathimpl.registry)
        self.install_registry(cmathimpl.registry)
        self.install_registry(npyimpl.registry)
        self.install_registry(lowering_registry)
        self.install_registry(arithmetic.lowering_registry)

    def codegen(self):
        return self._internal_codegen

    def post_lowering(self, mod, library):
        """fastmath=True: fast-math flags on every float operation, as Numba's CPU target."""
        if self.fastmath:
            fastmathpass.rewrite_module(mod, self.fastmath)

    @property
    def target_data(self):
        return self._target_data

    def get_abi_sizeof(self, ty):
        """Numba's, remembered per type: llvmlite parses a module for each answer (2% of a
        kernel's compile went to asking for the same few sizes again)."""
        return self._abi_fact(ty, "size", super().get_abi_sizeof)

    def get_abi_alignment(self, ty):
        """Numba's, remembered per type (as get_abi_sizeof)."""
        return self._abi_fact(ty, "alignment", super().get_abi_alignment)

    def _abi_fact(self, ty, fact: str, compute) -> int:
        name = str(ty)
        if "%" in name:  # a named struct, or one holding one: its body may change
            return compute(ty)
        found = self._abi_facts.get((name, fact))
        if found is None:
            found = self._abi_facts[(name, fact)] = compute(ty)
        return found

    def create_module(self, name):
        return self._internal_codegen._create_empty_module(name)

    @cached_property
    def call_conv(self):
        return SYCLCallConv(self)

    def get_ufunc_info(self, ufunc_key):
        """Numba's ufunc loops, with integer add, subtract and multiply wrapping (arithmetic.py)."""
        from numba.np import ufunc_db

        return arithmetic.wrapping_ufunc_loops(ufunc_key, ufunc_db.get_ufunc_info(ufunc_key))

    def get_constant_generic(self, builder, ty, val):
        """A device function named in a kernel is called statically: its value is never used.

        Numba's CPU target, once initialised, registers a constant lowering for dispatchers
        that embeds their address, which device code cannot hold.
        """
        if isinstance(ty, types.Dispatcher):
            return self.get_dummy_value()
        return super().get_constant_generic(builder, ty, val)

    def check_index(self, builder, index, size, axis=None) -> None:
        """Numba's bounds check on this target (patches.py routes cgutils.do_boundscheck here)."""
        bounds.check_index(self, builder, index, size, axis)

    def addrspacecast(self, builder, value, addrspace):
        """Cast a pointer to another address space (no-op when it is already there)."""
        if value.type.addrspace == addrspace:
            return value
        return builder.addrspacecast(value, value.type.pointee.as_pointer(addrspace))


class SYCLTargetOptions(TargetOptions):
    """Forces what every device compile needs, whatever the caller passed."""

    def finalize(self, flags, options):
        flags.no_compile = True
        flags.no_cpython_wrapper = True
        flags.no_cfunc_wrapper = True
        flags.nrt = False
        flags.enable_pyobject = False
        flags.enable_looplift = False
        flags.enable_pyobject_looplift = False
        flags.error_model = "numpy"
        flags.inherit_if_not_set("fastmath")
        flags.inherit_if_not_set("boundscheck", default=False)


class SYCLTarget(TargetDescriptor):
    """Lazily builds the two contexts, once per process."""

    options = SYCLTargetOptions

    @cached_property
    def typing_context(self):
        return SYCLTypingContext()

    @cached_property
    def target_context(self):
        return SYCLTargetContext(self.typing_context)


sycl_target = SYCLTarget(TARGET_NAME)
