"""The kernels an offloaded function launches: lazy dk kernels whose source is generated.

Each region of the host function (a prange nest, an array expression, a reduction) becomes a
`RegionKernel`: a lazy `JitKernel` compiled, when the host function is typed, for the argument
types Numba inferred there. Its Python source is built per signature (an array expression's
index count is its output's ndim; a reduction's local array has its accumulator's dtype), with
the loop body's own statements and line numbers, so errors point at the user's source.
"""

from __future__ import annotations

import ast
import contextlib
import math
import threading
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from numba.core import types

import dpex_kernels

from ..compiler.backend import host_simd
from ..compiler.frontend.direct import source as direct_source
from ..compiler.kernel_api.index_space import index_add
from ..compiler.kernel_api.spirv import TYPE_CODES
from ..dispatcher.jit_kernel import JitKernel
from ..errors import KernelCompileError
from . import host

#: Work-items per work-group of a reduction, and the most work-groups one launches.
REDUCTION_WORK_GROUP = 256
REDUCTION_MAX_GROUPS = 16384
#: Iterations each work-item of a reduction handles at least, before more work-groups start.
REDUCTION_PER_ITEM = 4
#: Consecutive iterations each work-item of a streaming loop runs (compiler/host_simd.py).
STREAM_CHUNK = 1024
#: Consecutive iterations each work-item of a host-SIMD reduction reduces.
REDUCTION_CHUNK = 2048

#: The names generated code uses; user code cannot clash with the _dk_ prefix.
API = "_dk_api"
#: kernel_api.index_add, for the chunk + iteration indices of generated loops.
INDEX_ADD = "_dk_index_add"
MATH = "_dk_math"


def function_from(tree: ast.FunctionDef, filename: str, namespace: dict) -> Callable:
    """The Python function of a generated `def`, compiled against `namespace` (and its tree
    noted for the direct front end, which has no file to read it from)."""
    module = ast.fix_missing_locations(ast.Module(body=[tree], type_ignores=[]))
    code = compile(module, filename, "exec")
    scope: dict = {}
    exec(code, namespace, scope)  # noqa: S102 (our own generated code)
    function = scope[tree.name]
    direct_source.generated(function, tree)
    return function


def at_line(tree: ast.AST, line: int) -> ast.AST:
    """`tree` (generated code) with every node placed at `line`."""
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0
    return tree


def statements(source: str, line: int) -> list[ast.stmt]:
    """Generated statements, placed at the region's line."""
    return at_line(ast.parse(source), line).body


def identity(op: str, dtype) -> object:
    """The neutral element of a reduction operator for a Numba scalar type."""
    np_dtype = np.dtype(str(dtype))
    if op == "+":
        return np_dtype.type(0)
    if op == "*":
        return np_dtype.type(1)
    if np.issubdtype(np_dtype, np.floating):
        return np_dtype.type(math.inf if op == "min" else -math.inf)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return np_dtype.type(info.max if op == "min" else info.min)
    raise KernelCompileError(
        f"a {op} reduction needs a numeric accumulator (int or float); got {dtype}"
    )


def combine(op: str, left: str, right: str) -> str:
    """Python source combining two partial results with a reduction operator."""
    return f"{op}({left}, {right})" if op in ("min", "max") else f"({left} {op} {right})"


def group_reduction(op: str, local: str, dtype_name: str, dtype, value: str, out: str) -> str:
    """A work-group's values of Numba type `dtype` (a global `dtype_name` in the kernel's
    namespace) reduced; work-item 0 stores the result to `out`.

    Sums of the types sub-groups add (int32/64, uint32/64, float32/64) add within each
    sub-group first (`dk.sub_group.reduce_add`, in registers), then work-item 0 adds one value
    per sub-group: one barrier, where the tree in local memory takes one per halving (nine for
    256 work-items), which the CPU runtime runs as that many loops over the work-group. The
    rest take the tree.
    """
    wg = REDUCTION_WORK_GROUP
    if op == "+" and str(dtype) in TYPE_CODES:
        return f"""
_dk_lid = {API}.get_local_id(0)
{local}_part = {API}.sub_group.reduce_add({value})
_dk_width = {API}.sub_group.get_size()
{local} = {API}.local.array({wg}, {dtype_name})
if {API}.sub_group.get_local_id() == 0:
    {local}[_dk_lid // _dk_width] = {local}_part
{API}.barrier({API}.LOCAL_MEM_FENCE)
if _dk_lid == 0:
    {local}_part = {local}[0]
    for _dk_s in range(1, ({wg} + _dk_width - 1) // _dk_width):
        {local}_part = {local}_part + {local}[_dk_s]
    {out} = {local}_part
"""
    return f"""
_dk_lid = {API}.get_local_id(0)
{local} = {API}.local.array({wg}, {dtype_name})
{local}[_dk_lid] = {value}
{API}.barrier({API}.LOCAL_MEM_FENCE)
_dk_width = {wg // 2}
while _dk_width > 0:
    if _dk_lid < _dk_width:
        {local}[_dk_lid] = {combine(op, f"{local}[_dk_lid]", f"{local}[_dk_lid + _dk_width]")}
    {API}.barrier({API}.LOCAL_MEM_FENCE)
    _dk_width //= 2
if _dk_lid == 0:
    {out} = {local}[0]
"""


class RegionKernel(JitKernel):
    """A lazy kernel whose source `build(argtypes) -> (def, extra globals)` makes per signature."""

    def __init__(
        self,
        name: str,
        params: list[str],
        build,
        namespace: dict,
        filename: str,
        cache: bool,
        host_simd: str = "",
        fallback: bool = False,
    ):
        stub = ast.parse(f"def {name}({', '.join(params)}):\n    pass").body[0]
        super().__init__(function_from(stub, filename, {}), cache=cache, host_simd=host_simd)
        #: Whether a host-SIMD kernel the compiler refuses is built plain instead (with the
        #: Refusal kept here), or the Refusal raised.
        self.fallback = fallback
        self.refusal: host_simd.Refusal | None = None
        self._build = build
        self._namespace = namespace
        self._filename = filename
        #: signature -> the KernelCompileError of its compile, for signatures that failed.
        self.failures: dict = {}
        self.describe = name  # replaced by the region with "the loop at line N" and the like

    def compile(self, sig):
        """Compile the source generated for this signature; a failure names the region."""
        with self._lock:
            if sig in self.definitions:
                return self.definitions[sig]
            error = self.failures.get(sig)
            if error is None:
                try:
                    tree, extra = self._build(tuple(sig.args))
                    tree.name = self.__name__
                    namespace = {**self._namespace, **extra}
                    self.py_func = function_from(tree, self._filename, namespace)
                    return super().compile(sig)
                except host_simd.Refusal as exc:
                    self.refusal = exc
                    if not self.fallback:
                        raise
                    self.options = replace(self.options, host_simd="")  # the same source, plain
                    return super().compile(sig)
                except (KernelCompileError, TypeError) as exc:
                    problem = f"{self.describe} cannot run on a SYCL device: {exc}"
                    error = KernelCompileError(problem)
                    error.__cause__ = exc
                    self.failures[sig] = error
            recorded = getattr(_RECORDING, "failures", None)
            if recorded is not None:
                recorded.append((self, error))
            raise error


_RECORDING = threading.local()


class StreamingLaunch:
    """Whether a launch of a prange nest takes its streaming kernel (one work-item a chunk of
    STREAM_CHUNK innermost iterations, host SIMD with streaming stores) or the plain one.

    It does on a CPU device when the loop is worth it (`host.worth_host_simd`: past the
    last-level cache, a store that skips the caches saves reading each line before writing it);
    when every array is laid out as the kernel assumes (`host_simd.fits`); and when the kernel
    compiled, which it does on the first such launch (a loop LLVM cannot vectorise is refused,
    and the plain kernel runs from then on: `refusal` says why).
    """

    def __init__(self, kernel: RegionKernel, launch_types: list):
        self.kernel = kernel
        self.signature = types.void(*launch_types)
        self.refusal: KernelCompileError | None = None
        self._usable: bool | None = None

    def __call__(self, count: int, *arrays) -> bool:
        if not host.worth_host_simd(count, STREAM_CHUNK, sum(a.nbytes for a in arrays)):
            return False
        if not all(host_simd.fits(host.first_address(a), a.shape, a.itemsize) for a in arrays):
            return False
        if self._usable is None:
            try:
                self.kernel.compile(self.signature)
                self._usable = True
            except KernelCompileError as exc:
                self.refusal = exc
                self._usable = False
        return self._usable


@contextlib.contextmanager
def recording_failures():
    """The (kernel, KernelCompileError) of every region kernel failing to compile in the block."""
    failures: list = []
    previous = getattr(_RECORDING, "failures", None)
    _RECORDING.failures = failures
    try:
        yield failures
    finally:
        _RECORDING.failures = previous


def reduction_dtypes(argtypes, count: int) -> list:
    """The accumulator types of a reduction kernel: its first `count` (buffer) parameters."""
    return [t.dtype for t in argtypes[:count] if isinstance(t, types.Array)]


_FINAL_KERNELS: dict = {}


def final_kernel(op: str, cache: bool) -> RegionKernel:
    """The second pass of every `op` reduction: one work-group reduces the partial results."""
    found = _FINAL_KERNELS.get((op, cache))
    if found is not None:
        return found
    wg = REDUCTION_WORK_GROUP

    def build(argtypes):
        (dtype,) = reduction_dtypes(argtypes, 1)
        source = f"""
def _dk_final_{_OP_NAMES[op]}(_dk_buffer, _dk_groups):
    _dk_acc = _DK_IDENT
    _dk_k = {API}.get_local_id(0)
    while _dk_k < _dk_groups:
        _dk_acc = {combine(op, "_dk_acc", "_dk_buffer[_dk_k]")}
        _dk_k += {wg}
{_indent(group_reduction(op, "_dk_local", "_DK_DTYPE", dtype, "_dk_acc", "_dk_buffer[_dk_groups]"))}
"""
        tree = at_line(ast.parse(source), 1).body[0]
        return tree, {"_DK_IDENT": identity(op, dtype), "_DK_DTYPE": dtype}

    kernel = RegionKernel(
        f"_dk_final_{_OP_NAMES[op]}",
        ["_dk_buffer", "_dk_groups"],
        build,
        {API: dpex_kernels, INDEX_ADD: index_add},
        "<dpex_kernels.offloading>",
        cache,
    )
    kernel.describe = f"the final pass of a '{op}' reduction"
    _FINAL_KERNELS[op, cache] = kernel
    return kernel


_OP_NAMES = {"+": "sum", "*": "product", "min": "min", "max": "max"}


def _indent(source: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in source.splitlines())
