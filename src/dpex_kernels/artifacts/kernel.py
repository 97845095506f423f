"""KernelArtifact: what one compile produced, however it was made (compiled, cached, bundled).

The device build, the launch, inspection, the cache and AOT bundles all read this one class;
it records every fact the compiler knew, so nothing downstream reads them back out of the
code. Numba-free: a bundle's kernels are KernelArtifacts too.

Numba runs once per signature; the back end runs once per launch dimension count (1-3) the
kernel is launched with, because index calls need the count as a constant. A fresh or cached
artifact keeps its linked LLVM IR and the back end (`builder`) to make more variants on
demand; a bundled one has the variants its file holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

from ..types.spec import ArraySpec
from .options import CompileOptions
from .target import Target

NDIMS = (1, 2, 3)


class CodeFacts(NamedTuple):
    """What one variant's code asks of the device (read from its SPIR-V by the back end)."""

    #: Device aspects the code needs ("fp64", "fp16").
    aspects: tuple[str, ...]
    #: Bytes of work-group local memory its local arrays take.
    local_memory: int
    #: The kernel arguments (positions in types/params.py's slots) whose memory the code may
    #: write: a read-only array may be passed only where its data pointer is not among them.
    written_arguments: tuple[int, ...] = ()


#: The back end: (artifact, ndim, parsed linked module or None) -> (llvm_ir, spirv, facts).
Builder = Callable[["KernelArtifact", int, object], tuple[str, bytes, CodeFacts]]


class KernelArtifact:
    """One kernel compiled for one signature and target, with everything known about it."""

    def __init__(
        self,
        *,
        name: str,
        symbol: str,
        params: tuple[ArraySpec | str, ...],
        options: CompileOptions,
        target: Target,
        default_ndim: int,
        exceptions: dict,
        float_atomics: dict[str, str],
        front_end: str,
        linked_ir: str | None = None,
        type_annotation: object = "",
        timings: dict | None = None,
        builder: Builder | None = None,
    ):
        self.name = name
        self.symbol = symbol
        #: The numba-free parameter descriptions (types/params.py): ArraySpec or scalar name.
        self.params = tuple(params)
        self.options = options
        self.target = target
        #: The launch dimension count the kernel's constant index calls imply.
        self.default_ndim = default_ndim
        #: status code -> (exception class, args) of every raise, for debug=True kernels.
        self.exceptions = exceptions
        #: How each float atomic is compiled: {"float32.local.add": "native" or "cas"}.
        self.float_atomics = dict(float_atomics)
        #: Which front end typed and lowered the kernel: "direct", or "numba" and why.
        self.front_end = front_end
        #: The linked module, before specialisation; None for bundled code.
        self.linked_ir = linked_ir
        #: Numba's typed annotation: a str, or an object printed when first read (printing
        #: takes as long as optimising a small kernel).
        self._type_annotation = type_annotation
        self.timings = {} if timings is None else timings
        self.builder = builder
        self._variants: dict[int, tuple[str, bytes]] = {}
        self._facts: dict[int, CodeFacts] = {}
        self._lock = threading.Lock()

    @property
    def error_flag(self) -> bool:
        """Whether launches pass the kernel an error record (debug=True)."""
        return self.options.debug

    @property
    def host_simd(self) -> str:
        return self.options.host_simd

    def variant(self, ndim: int, linked: object = None) -> tuple[str, bytes]:
        """(optimised LLVM IR, SPIR-V) for launches of `ndim` dimensions, built on first use.
        `linked`, the parsed module of linked_ir (which this consumes), saves parsing it."""
        found = self._variants.get(ndim)
        if found is None:
            with self._lock:
                found = self._variants.get(ndim)
                if found is None:
                    if self.builder is None:
                        raise KeyError(f"kernel '{self.name}' holds no {ndim}-d variant")
                    llvm_ir, spirv, facts = self.builder(self, ndim, linked)
                    found = self.add_variant(ndim, llvm_ir, spirv, facts)
        return found

    def add_variant(self, ndim: int, llvm_ir: str, spirv: bytes, facts: CodeFacts) -> tuple:
        """Record a variant made elsewhere (the back end, or a file being read)."""
        self._facts[ndim] = facts
        found = self._variants[ndim] = (llvm_ir, spirv)
        return found

    def has_variant(self, ndim: int) -> bool:
        """Whether the variant for `ndim`-dimensional launches is already built."""
        return ndim in self._variants

    def facts(self, ndim: int) -> CodeFacts:
        """What the `ndim` variant asks of the device (built first if need be)."""
        self.variant(ndim)
        return self._facts[ndim]

    @property
    def llvm_ir(self) -> str:
        return self.variant(self.default_ndim)[0]

    @property
    def spirv(self) -> bytes:
        return self.variant(self.default_ndim)[1]

    @property
    def type_annotation(self) -> str:
        if not isinstance(self._type_annotation, str):
            self._type_annotation = str(self._type_annotation or "")
        return self._type_annotation

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_lock"]
        state["_type_annotation"] = self.type_annotation
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<KernelArtifact {self.name} for {self.target.device}>"
