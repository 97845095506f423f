"""The Numba target for SYCL devices: typing and target contexts, data models, address spaces.

Kernels are typed and lowered in contexts of their own, registered under the target name
"dpex_kernels", so nothing here touches the CPU target's registries.
"""

from __future__ import annotations

from functools import cached_property

import llvmlite.binding as ll
import numpy as np
from llvmlite import ir
from numba.core import cgutils, datamodel, errors, fastmathpass, types, typing
from numba.core.base import BaseContext
from numba.core.callconv import MinimalCallConv
from numba.core.datamodel import models
from numba.core.descriptors import TargetDescriptor
from numba.core.options import TargetOptions
from numba.core.target_extension import GPU, target_registry

from ..types import inference  # noqa: F401  (teaches Numba's typeof about USM arrays)
from ..types.usm_array_type import USMArrayType
from . import codegen
from .kernel_api import LocalArrayType, lowering_registry, typing_registry
from .kernel_api.spirv import GLOBAL
from .literals import WeakFloat, WeakFloatModel, strengthen, weak_float

TARGET_NAME = "dpex_kernels"


class SYCLDevice(GPU):
    """Numba's marker for code compiled by this package for a SYCL device."""


target_registry[TARGET_NAME] = SYCLDevice


def _pointer_add(builder, ptr, offset, return_type=None):
    """cgutils.pointer_add that keeps the pointer's address space (Numba's drops it)."""
    if isinstance(offset, int):
        offset = cgutils.intp_t(offset)
    base = builder.bitcast(ptr, ir.IntType(8).as_pointer(ptr.type.addrspace))
    addr = builder.gep(base, [offset])
    return builder.bitcast(addr, return_type or ptr.type)


# Identical to Numba's for address space 0, so CPU code is unaffected; array views inside
# kernels (whose data lives in the global address space) need the address space kept.
cgutils.pointer_add = _pointer_add


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


_ADDRSPACE = {USMArrayType: GLOBAL, LocalArrayType: LocalArrayType.addrspace}


def _data_model_manager() -> datamodel.DataModelManager:
    dmm = datamodel.default_manager.copy()
    dmm.register(types.CPointer, AddressSpacePointerModel)
    dmm.register(USMArrayType, AddressSpaceArrayModel)
    dmm.register(LocalArrayType, AddressSpaceArrayModel)
    dmm.register(WeakFloat, WeakFloatModel)
    return dmm


class SYCLTypingContext(typing.BaseContext):
    """Numba's typing rules plus the kernel API; CPU-only registries are left out."""

    def load_additional_registries(self):
        from numba.core.typing import cmathdecl, enumdecl, mathdecl, npydecl

        self.install_registry(cmathdecl.registry)
        self.install_registry(enumdecl.registry)
        self.install_registry(mathdecl.registry)
        self.install_registry(npydecl.registry)
        self.install_registry(typing_registry)

    def resolve_value_type(self, val):
        """Python floats are weak (literals.py); CPU @njit functions get device twins."""
        from numba.core.dispatcher import Dispatcher

        from .functions import DeviceFunction

        if type(val) is float:
            return weak_float
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


class SYCLCallConv(MinimalCallConv):
    """Numba's minimal calling convention, refusing what a device cannot do in plain words.

    A raise with constant arguments returns its exception's code: the work-item stops there
    (and debug=True reports it after the launch).
    """

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

    def init(self):
        self._internal_codegen = codegen.SPIRVCodegen()
        self._target_data = ll.create_target_data(codegen.DATA_LAYOUT)
        self.data_model_manager = _data_model_manager()

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

    def codegen(self):
        return self._internal_codegen

    def post_lowering(self, mod, library):
        """fastmath=True: fast-math flags on every float operation, as Numba's CPU target."""
        if self.fastmath:
            fastmathpass.rewrite_module(mod, self.fastmath)

    @property
    def target_data(self):
        return self._target_data

    def create_module(self, name):
        return self._internal_codegen._create_empty_module(name)

    @cached_property
    def call_conv(self):
        return SYCLCallConv(self)

    def get_ufunc_info(self, ufunc_key):
        from numba.np import ufunc_db

        return ufunc_db.get_ufunc_info(ufunc_key)

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
