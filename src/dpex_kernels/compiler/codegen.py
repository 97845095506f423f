"""Numba's codegen hook for the SYCL target: spirv64 modules collected in code libraries.

Numba's lowering writes into these; the compiler links a kernel's libraries into one module
(frontend/) and the back end (backend/) turns that into SPIR-V.
"""

from __future__ import annotations

import llvmlite.binding as ll
from llvmlite import ir
from numba.core.codegen import Codegen, CodeLibrary

from .backend.llvm import DATA_LAYOUT, TRIPLE, ensure_llvm


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
        ensure_llvm()
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
