"""The outliner: an offloaded function's syntax tree -> a host function and its region kernels.

A *region* is what runs on the device: a `numba.prange` nest (1-3 perfectly nested levels), a
prange loop with reductions into scalars, or an element-wise array expression over USM arrays
(`c = a + b * 2`, `c[:] = ...`, `c += ...`, `return a * b`). Each becomes a `RegionKernel`
(kernels.py) and, in the host function, the statements that compute its range and launch it
(a kernel launch from compiled code, docs/compiled-launch.md); everything else stays host code.
`dpnp.empty/zeros/ones/full` calls become allocations on the arguments' device (host.py).
"""

from __future__ import annotations

import ast
import builtins
import copy
import math
from dataclasses import dataclass, field

import dpnp
import numba
import numpy as np
from numba.core import types

import dpex_kernels

from .._runtime import canonical_device, default_device, device_by_canonical_name
from ..compiler.backend.host_simd import REDUCE, STREAM
from ..compiler.kernel_api.index_space import index_add
from ..errors import KernelCompileError
from ..types.usm_array_type import scalar_type
from . import host
from .kernels import (
    API,
    INDEX_ADD,
    MATH,
    REDUCTION_CHUNK,
    REDUCTION_MAX_GROUPS,
    REDUCTION_PER_ITEM,
    REDUCTION_WORK_GROUP,
    STREAM_CHUNK,
    RegionKernel,
    StreamingLaunch,
    at_line,
    combine,
    final_kernel,
    group_reduction,
    identity,
    reduction_dtypes,
    statements,
)

#: More chunks than a streaming launch ever has (2^40 chunks of 1024 iterations).
_CHUNK_IDS = 2**40
_ALLOCATIONS = {dpnp.empty: "empty", dpnp.zeros: "zeros", dpnp.ones: "ones", dpnp.full: "full"}
_ELEMENTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_REDUCTION_OPS = {ast.Add: "+", ast.Mult: "*"}
#: Whole-array reductions: x.sum() and the like (methods), np/dpnp.sum(x) and the like.
_REDUCTION_METHODS = {"sum": "+", "prod": "*", "min": "min", "max": "max"}
_REDUCTION_FUNCTIONS = {
    getattr(module, name): op
    for module in (np, dpnp)
    for name, op in [*_REDUCTION_METHODS.items(), ("amin", "min"), ("amax", "max")]
    if hasattr(module, name)
}


def _functions() -> dict:
    """Element-wise functions an array expression may call: object -> (kernel name, ufunc)."""
    table = {}
    unary = ["sqrt", "exp", "log", "log10", "log2", "sin", "cos", "tan", "sinh", "cosh"]
    unary += ["tanh", "floor", "ceil", "expm1", "log1p"]
    renamed = {"arcsin": "asin", "arccos": "acos", "arctan": "atan"}
    for name in unary + list(renamed):
        kernel_name = f"{MATH}.{renamed.get(name, name)}"
        for module in (np, dpnp, math):
            found = getattr(module, renamed.get(name, name) if module is math else name, None)
            if found is not None:
                table[found] = (kernel_name, getattr(np, name))
    for found in (builtins.abs, np.abs, np.absolute, dpnp.abs, dpnp.absolute):
        table[found] = ("abs", np.abs)
    for name, kernel_name in (("minimum", "min"), ("maximum", "max")):
        for module in (np, dpnp):
            table[getattr(module, name)] = (kernel_name, getattr(np, name))
    return table


_FUNCTIONS = _functions()


@dataclass
class Region:
    """One thing the host function launches: where it is, what it is, its kernels."""

    line: int
    kind: str
    kernels: list = field(default_factory=list)
    #: Kernels shared with other regions (a reduction's final pass): only the signatures
    #: whose first argument, the buffer, is one of this region's own kernels' arguments.
    shared: list = field(default_factory=list)
    #: The kernel's argument types where the host code of its launch is plain Python (integer
    #: bounds of the arguments, the arguments themselves passed): see Outline.direct.
    launch_types: list | None = None
    #: A 1-D loop's streaming kernel (kernels.StreamingLaunch), compiled on first use.
    streaming: list = field(default_factory=list)

    def definitions(self):
        """(kernel, signature, CompiledKernel) of everything this region launches."""
        own = [
            (k, sig, c) for k in self.kernels + self.streaming for sig, c in k.definitions.items()
        ]
        arguments = {t for _, sig, _ in own for t in sig.args}
        shared = [
            (k, sig, c)
            for k in self.shared
            for sig, c in k.definitions.items()
            if sig.args[0] in arguments
        ]
        return own + shared


@dataclass
class Outline:
    """The host function's tree, what its namespace needs, and its regions."""

    tree: ast.FunctionDef
    namespace: dict
    regions: list
    #: The function is only prange nests with plain bounds (and a docstring, a bare return):
    #: `tree` then runs as Python, launching each kernel through its dispatcher, and needs no
    #: Numba compile of a host function (the kernels compile for `Region.launch_types`).
    direct: bool = False


# --- names ---------------------------------------------------------------------------------------


class _Events(ast.NodeVisitor):
    """Name loads and stores in evaluation order: (name, is_store, node)."""

    def __init__(self):
        self.events: list = []

    def visit_Name(self, node):
        self.events.append((node.id, isinstance(node.ctx, ast.Store), node))

    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AugAssign(self, node):
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.events.append((node.target.id, False, node.target))
        self.visit(node.target)

    def visit_For(self, node):
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    def visit_FunctionDef(self, node):
        pass


def _events(nodes) -> list:
    visitor = _Events()
    for node in nodes:
        visitor.visit(node)
    return visitor.events


def _loads(nodes) -> set:
    return {name for name, store, _ in _events(nodes) if not store}


def _store_counts(nodes) -> dict:
    counts: dict = {}
    for name, store, _ in _events(nodes):
        if store:
            counts[name] = counts.get(name, 0) + 1
    return counts


# --- the outliner --------------------------------------------------------------------------------


class Outliner:
    """Builds the Outline of one function for one tuple of argument types."""

    def __init__(
        self,
        py_func,
        tree: ast.FunctionDef,
        argtypes: tuple,
        host_lines: frozenset,
        cache: bool,
    ):
        self.py_func = py_func
        self.cache = cache
        self.name = py_func.__name__
        self.filename = py_func.__code__.co_filename
        self.tree = copy.deepcopy(tree)  # rewritten in place: the function's own stays as it is
        self.host_lines = host_lines
        self.params = [a.arg for a in tree.args.posonlyargs + tree.args.args]
        self.argtypes = dict(zip(self.params, argtypes))
        closure = dict(
            zip(py_func.__code__.co_freevars, (c.cell_contents for c in py_func.__closure__ or ()))
        )
        self.globals = {**py_func.__globals__, **closure, "_dk_prange": numba.prange}
        self.kernel_namespace = {
            **self.globals,
            API: dpex_kernels,
            MATH: math,
            INDEX_ADD: index_add,
        }
        self.namespace = {
            API: dpex_kernels,
            "_dk_NdRange": dpex_kernels.NdRange,
            "_dk_trip": host.trip_count,
            "_dk_never": _never,
            "_dk_groups_for": _groups_for,
            "_dk_broadcast": np.broadcast_shapes,
            "_dk_fits": _fits,
            "_dk_laid_out": host.laid_out_for_simd,
        }
        self.regions: list[Region] = []
        self.all_stores = _store_counts(tree.body)
        self.locals = set(self.params) | set(self.all_stores)
        self.source = next(
            (p for p in self.params if isinstance(self.argtypes[p], types.Array)), None
        )
        if self.source is not None:
            self.device = self.argtypes[self.source].device
        else:
            self.device = default_device().filter_string
        self.arrays, self.views = self._array_names()
        self.plain_names = self._plain_names()
        self._counter = 0

    def outline(self) -> Outline:
        body = self._block(self.tree.body, top=True)
        tree = ast.FunctionDef(
            name=self.tree.name,
            args=self.tree.args,
            body=body or [ast.Pass()],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        ast.copy_location(tree, self.tree)
        direct = all(r.launch_types is not None for r in self.regions) and all(
            self._direct_statement(stmt, last=stmt is self.tree.body[-1]) for stmt in self.tree.body
        )
        if not direct:
            # Compiled host code launches only the plain kernels: Numba would type (and so
            # compile) every streaming kernel with the host function.
            tree = _PlainLaunches().visit(tree)
            for region in self.regions:
                region.streaming.clear()
        return Outline(tree, self.namespace, self.regions, direct)

    def _direct_statement(self, stmt, last: bool) -> bool:
        """Whether a top-level statement is a region, a plain integer assignment, a docstring
        or a final bare return."""
        if isinstance(stmt, ast.For):
            return self._is_region(stmt)
        if _docstring(stmt):
            return True
        if isinstance(stmt, ast.Assign):
            return _loads(stmt.targets) == set() and _store_counts(stmt.targets).keys() <= set(
                self.plain_names
            )
        if isinstance(stmt, ast.Return):
            bare = stmt.value is None or (
                isinstance(stmt.value, ast.Constant) and stmt.value.value is None
            )
            return last and bare
        return False

    def _plain_int(self, node) -> bool:
        """Whether a loop bound is integer arithmetic on constants, integer arguments and the
        arguments' shapes: Python computes it as Numba would, with no typing to do."""
        if isinstance(node, ast.BinOp):
            plain_op = isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv))
            return plain_op and self._plain_int(node.left) and self._plain_int(node.right)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, ast.USub) and self._plain_int(node.operand)
        if _int_constant(node) is not None:
            return True
        argtype = self._fixed_type(node)
        if argtype is not None:
            return isinstance(argtype, types.Integer) and argtype.signed
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            argtype, k = self._fixed_type(node.value.value), _int_constant(node.slice)
            return (
                node.value.attr == "shape"
                and isinstance(argtype, types.Array)
                and k is not None
                and -argtype.ndim <= k < argtype.ndim
            )
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            argtype = self._fixed_type(node.args[0])
            return (
                self._resolve(node.func) is len
                and isinstance(argtype, types.Array)
                and argtype.ndim > 0
            )
        return False

    def _fixed_type(self, node):
        """The type of an argument the function never assigns, or of a plain integer name,
        named by `node`; or None."""
        if not isinstance(node, ast.Name):
            return None
        if node.id in self.params and node.id not in self.all_stores:
            return self.argtypes[node.id]
        return types.int64 if node.id in self.plain_names else None

    def _plain_names(self) -> set:
        """Names the function's first statements set once to plain integers (`n = len(a)`,
        `n0, n1 = x.shape`): int64s in Python and in Numba alike."""
        self.plain_names: set = set()
        for stmt in self.tree.body:
            if _docstring(stmt):
                continue
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                break
            target, value = stmt.targets[0], stmt.value
            names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [None])
            if not all(isinstance(n, ast.Name) and self.all_stores[n.id] == 1 for n in names):
                break
            if isinstance(target, ast.Name):
                plain = self._plain_int(value)
            else:
                shape_of = self._fixed_type(getattr(value, "value", None))
                plain = (
                    isinstance(value, ast.Attribute)
                    and value.attr == "shape"
                    and isinstance(shape_of, types.Array)
                    and shape_of.ndim == len(names)
                )
            if not plain:
                break
            self.plain_names.update(n.id for n in names)
        return self.plain_names

    # --- helpers ---------------------------------------------------------------------------

    def _fresh(self, stem: str) -> str:
        self._counter += 1
        return f"_dk_{stem}{self._counter}"

    def _add(self, value, stem: str) -> str:
        name = self._fresh(stem)
        self.namespace[name] = value
        return name

    def _resolve(self, node):
        """The object an expression of globals and attributes names, or None."""
        if isinstance(node, ast.Name):
            return None if node.id in self.locals else self.globals.get(node.id, _builtin(node.id))
        if isinstance(node, ast.Attribute):
            value = self._resolve(node.value)
            return None if value is None else getattr(value, node.attr, None)
        return None

    def _is_prange(self, node) -> bool:
        return isinstance(node, ast.Call) and self._resolve(node.func) is numba.prange

    def _error(self, line: int, problem: str) -> KernelCompileError:
        return KernelCompileError(
            f"@dk.offload function '{self.name}' ({self.filename}:{line}): {problem}"
        )

    def _constant(self, node, what: str):
        if _loads([node]) & self.locals:
            raise self._error(
                node.lineno, f"{what} must be a constant, not computed in the function"
            )
        return eval(compile(ast.Expression(node), self.filename, "eval"), self.globals)  # noqa: S307

    def _kernel(self, region: Region, stem: str, params: list, build, host_simd: str = "") -> str:
        name = f"{self.name}_{stem}_line{region.line}"
        taken = {k.__name__ for r in self.regions for k in r.kernels + r.streaming}
        while name in taken:
            name += "_"
        kernel = RegionKernel(
            name,
            params,
            build,
            self.kernel_namespace,
            self.filename,
            self.cache,
            host_simd,
            fallback=host_simd == REDUCE,
        )
        kernel.describe = (
            f"@dk.offload function '{self.name}': the {region.kind} at line {region.line}"
        )
        region.kernels.append(kernel)
        return self._add(kernel, "kernel")

    # --- which names are arrays -------------------------------------------------------------

    def _array_names(self) -> tuple[set, set]:
        arrays = {p for p in self.params if isinstance(self.argtypes[p], types.Array)}
        views: set = set()
        assigns = [
            n
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
        ]
        changed = True
        while changed:
            changed = False
            for node in assigns:
                target, value = node.targets[0].id, node.value
                view = (
                    isinstance(value, ast.Subscript)
                    and isinstance(value.value, ast.Name)
                    and value.value.id in arrays
                    and self._is_view(value)
                )
                array = (
                    view
                    or (isinstance(value, ast.Name) and value.id in arrays)
                    or (isinstance(value, ast.Call) and self._resolve(value.func) in _ALLOCATIONS)
                    or bool(self._elementwise(value, arrays))
                )
                if view and target not in views:
                    views.add(target)
                if array and target not in arrays:
                    arrays.add(target)
                    changed = True
        return arrays, views

    def _is_view(self, node: ast.Subscript) -> bool:
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(i, (ast.Slice, ast.Constant)) and not _is_int(i) for i in index):
            return True
        argtype = self.argtypes.get(node.value.id)
        return isinstance(argtype, types.Array) and len(index) < argtype.ndim

    def _elementwise(self, node, arrays, into_array: bool = False) -> list | None:
        """The operand names of an element-wise expression with an array operand, else None.

        `into_array`: the value is stored into a whole array (`c[:] = e`, `c += e`), so a
        scalar expression (`c[:] = 0`, `c /= math.sqrt(s)`) is one too.
        """
        operands: list = []

        def walk(n) -> bool:
            if isinstance(n, ast.BinOp):
                return isinstance(n.op, _ELEMENTWISE_OPS) and walk(n.left) and walk(n.right)
            if isinstance(n, ast.UnaryOp):
                return isinstance(n.op, (ast.USub, ast.UAdd)) and walk(n.operand)
            if isinstance(n, ast.Constant):
                return isinstance(n.value, (int, float, complex)) and not isinstance(n.value, bool)
            if isinstance(n, ast.Name):
                if n.id in self.locals:
                    operands.append(n.id)
                    return True
                return isinstance(self.globals.get(n.id), (int, float, np.number))
            if isinstance(n, ast.Call):
                return (
                    self._resolve(n.func) in _FUNCTIONS
                    and not n.keywords
                    and all(walk(a) for a in n.args)
                )
            return False

        if (isinstance(node, (ast.Name, ast.Constant)) and not into_array) or not walk(node):
            return None
        names = list(dict.fromkeys(operands))
        return names if into_array or any(n in arrays for n in names) else None

    # --- blocks and statements ---------------------------------------------------------------

    def _block(self, stmts: list, top: bool = False) -> list:
        out = []
        for position, stmt in enumerate(stmts):
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)):
                stmt = _Hoist(self, out).visit(stmt)
            region = self._region(stmt)
            if region is None:
                out.append(self._host_statement(stmt))
                continue
            launched, waits = region
            out.extend(launched)
            following = stmts[position + 1] if position + 1 < len(stmts) else None
            if waits and not self._no_wait(following, top):
                out.extend(statements("_dk_ev.wait()", stmt.lineno))
        return out

    def _no_wait(self, following, top: bool) -> bool:
        """Whether host code after a launch cannot touch its data before dpnp orders it."""
        if following is None:
            return top
        if isinstance(following, ast.Return):
            value = following.value
            simple = value is None or isinstance(value, (ast.Name, ast.Constant))
            if isinstance(value, ast.Tuple):
                simple = all(isinstance(e, (ast.Name, ast.Constant)) for e in value.elts)
            return simple
        return self._is_region(following)

    def _is_region(self, stmt) -> bool:
        if isinstance(stmt, ast.For):
            return self._is_prange(stmt.iter) and stmt.lineno not in self.host_lines
        return self._expression_parts(stmt) is not None

    def _host_statement(self, stmt):
        stmt = _Allocations(self).visit(stmt)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(stmt, name, self._block(block))
        if isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                handler.body = self._block(handler.body)
        return stmt

    def _region(self, stmt):
        """(statements launching the region, whether a wait may be needed) or None."""
        if isinstance(stmt, ast.For):
            if self._is_prange(stmt.iter) and stmt.lineno not in self.host_lines:
                return self._loop(stmt)
            return None
        parts = self._expression_parts(stmt)
        return None if parts is None else (self._expression(stmt, *parts), True)

    # --- prange nests ------------------------------------------------------------------------

    def _bounds(self, loop: ast.For):
        call = loop.iter
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise self._error(loop.lineno, "prange() takes 1 to 3 positional arguments")
        args = list(call.args)
        if len(args) == 1:
            args.insert(0, ast.Constant(0))
        if len(args) == 2:
            args.append(ast.Constant(1))
        return args

    def _nest(self, loop: ast.For) -> list:
        levels = [loop]
        while len(levels) < 3:
            body = levels[-1].body
            if (
                len(body) != 1
                or not isinstance(body[0], ast.For)
                or not self._is_prange(body[0].iter)
            ):
                break
            inner = body[0]
            outer_indices = {level.target.id for level in levels}
            if inner.orelse or not isinstance(inner.target, ast.Name):
                break
            if _loads(inner.iter.args) & outer_indices:
                break
            levels.append(inner)
        for level in levels:
            if level.orelse:
                raise self._error(level.lineno, "a prange loop cannot have an else: block")
            if not isinstance(level.target, ast.Name):
                raise self._error(level.lineno, "a prange loop's index must be a plain name")
        return levels

    def _loop(self, loop: ast.For, kind: str | None = None):
        levels = self._nest(loop)
        body = levels[-1].body
        line = loop.lineno
        _check_flow(body, self._error)
        indices = [level.target.id for level in levels]
        inside = _store_counts([loop])
        host_locals = set(self.params) | {
            n for n, count in self.all_stores.items() if count > inside.get(n, 0)
        }
        reductions = self._reductions(body, host_locals - set(indices), line)
        private = {n for n, store, _ in _events(body) if store} - set(reductions)
        free = sorted((_loads(body) & host_locals) - private - set(indices) - set(reductions))
        views = [n for n in free if n in self.views]
        if views:
            raise self._error(
                line,
                f"the prange loop uses {', '.join(map(repr, views))}, a view made inside the "
                f"function; pass the view in as an argument, or index the whole array in the loop",
            )
        depth = len(levels)
        kind = kind or (
            f"prange loop with a reduction ({', '.join(f'{n} {o}' for n, o in reductions.items())})"
            if reductions
            else f"{depth}-D prange nest"
            if depth > 1
            else "prange loop"
        )
        region = Region(line, kind)
        self.regions.append(region)
        r = len(self.regions)
        launch, bounds = [], []
        plain = not reductions and all(self._fixed_type(ast.Name(n)) is not None for n in free)
        for k, level in enumerate(levels):
            lo, hi, st = self._bounds(level)
            bounds.append(_Bounds(k, r, _int_constant(lo), _int_constant(st)))
            step = bounds[-1].step
            plain = plain and all(self._plain_int(a) for a in (lo, hi, st))
            # int(): a bound is an int64 (Numba's intp, Python's int) whichever code runs it
            lo, hi, st = (
                ast.unparse(a)
                if _int_constant(a) is not None or not self._plain_int(a)
                else f"int({ast.unparse(a)})"
                for a in (_Allocations(self).visit(a) for a in (lo, hi, st))
            )
            names = f"_dk_lo{r}_{k}, _dk_hi{r}_{k}, _dk_st{r}_{k}"
            if step is not None and step > 0:  # range's count, inline: no call to compile in
                count = f"max(0, (_dk_hi{r}_{k} - _dk_lo{r}_{k} + {step - 1}) // {step})"
            else:
                count = f"_dk_trip({names})"
            launch += statements(
                f"{names} = {lo}, {hi}, {st}\n_dk_n{r}_{k} = {count}", level.lineno
            )
        kernel_body = [_PrangeToRange(self).visit(copy.deepcopy(s)) for s in body]
        if reductions:
            return (
                self._reduction(region, indices, bounds, kernel_body, free, reductions, launch),
                False,
            )
        prologue = "\n".join(
            f"{index} = {b.index(f'{API}.get_global_id({b.k})')}"
            for index, b in zip(indices, bounds)
        )
        params = free + [p for b in bounds for p in b.params(sizes=False)]
        tree = ast.parse(f"def _dk_region({', '.join(params)}):\n    pass").body[0]
        tree.body = statements(prologue, line) + kernel_body

        def build(argtypes, tree=tree):
            return copy.deepcopy(tree), {}

        kernel = self._kernel(region, "loop", params, build)
        if plain:
            scalars = [types.int64] * (len(params) - len(free))
            region.launch_types = [self._fixed_type(ast.Name(n)) for n in free] + scalars
        sizes = ", ".join(f"_dk_n{r}_{k}" for k in range(depth))
        launch_range = sizes if depth == 1 else f"({sizes})"
        args = ", ".join(free + [a for b in bounds for a in b.args(sizes=False)])
        plain_launch = statements(f"_dk_ev = {kernel}[{launch_range}]({args})", line)
        streaming = self._streaming(region, indices, bounds, kernel_body, free, plain)
        if streaming is None:
            return launch + plain_launch, True
        choose, streaming_launch = streaming
        decision = ast.If(test=ast.parse(choose).body[0].value, body=streaming_launch)
        decision.orelse = plain_launch
        decision.dk_streaming = True  # outline() keeps only the plain launch in @njit code
        return launch + [at_line(decision, line)], True

    def _streaming(self, region, indices, bounds, kernel_body, free, plain):
        """(the condition, the launch) of a nest's streaming kernel, or None where it cannot
        have one: not a CPU device, an innermost level whose start is not a constant below
        STREAM_CHUNK or whose step is not 1, or argument types not known before the host
        function is typed.

        Work-item (outer indices..., c) runs the innermost iterations in [c, c + 1) *
        STREAM_CHUNK: chunks start at multiples of the chunk, so with rows of a multiple of
        64 bytes (the launch checks) every vector store is aligned, but those of the first
        chunk where the loop starts past 0 (`prange(1, n - 1)`), which is a loop of its own
        from the start. LLVM must see that an index is never negative, or it keeps Numba's
        negative-index wraparound and vectorises nothing: a chunk's id is masked below
        _CHUNK_IDS (a no-op: the launch has fewer chunks), and the other chunks' first index
        is `max(base, 16 * ceil(start / 16))`, at least the start and a multiple of 16.
        """
        inner = bounds[-1]
        if not (plain and inner.step == 1 and inner.start is not None):
            return None
        if not 0 <= inner.start < STREAM_CHUNK or not device_by_canonical_name(self.device).is_cpu:
            return None
        arrays = [n for n in free if isinstance(self._fixed_type(ast.Name(n)), types.Array)]
        if not arrays:
            return None
        r, d, start = len(self.regions), len(bounds) - 1, inner.start
        params = [*free, *(p for b in bounds[:-1] for p in b.params(sizes=False)), f"_dk_n{d}"]
        outer = "".join(
            f"    {index} = {b.index(f'{API}.get_global_id({b.k})')}\n"
            for index, b in zip(indices, bounds[:-1])
        )
        source = (
            f"def _dk_region({', '.join(params)}):\n{outer}"
            f"    _dk_base = ({API}.get_global_id({d}) & {_CHUNK_IDS - 1}) * {STREAM_CHUNK}\n"
            f"    _dk_stop = min(_dk_base + {STREAM_CHUNK}, {start} + _dk_n{d})\n"
        )
        j = indices[-1]
        if start > 0:
            chunk = (
                f"    if _dk_base == 0:\n"
                f"        for {j} in range({start}, _dk_stop):\n"
                f"            pass\n"
                f"    else:\n"
                f"        _dk_first = max(_dk_base, {-(-start // 16) * 16})\n"
                f"        for _dk_k in range(_dk_stop - _dk_first):\n"
                f"            {j} = {INDEX_ADD}(_dk_first, _dk_k)\n"
            )
        else:
            chunk = (
                f"    for _dk_k in range(_dk_stop - _dk_base):\n"
                f"        {j} = {INDEX_ADD}(_dk_base, _dk_k)\n"
            )
        tree = at_line(ast.parse(source + chunk).body[0], region.line)
        if start > 0:
            tree.body[-1].body[0].body = copy.deepcopy(kernel_body)
            tree.body[-1].orelse[-1].body += copy.deepcopy(kernel_body)
        else:
            tree.body[-1].body += copy.deepcopy(kernel_body)

        def build(argtypes, tree=tree):
            return copy.deepcopy(tree), {}

        name = self._kernel(region, "stream", params, build, host_simd=STREAM)
        kernel = region.kernels.pop()
        region.streaming.append(kernel)
        launch_types = region.launch_types[: len(free)] + [types.int64] * (len(params) - len(free))
        choice = self._add(StreamingLaunch(kernel, launch_types), "stream")
        count = f"_dk_n{r}_{d}"
        chunks = f"({start} + {count} + {STREAM_CHUNK - 1}) // {STREAM_CHUNK}"
        sizes = [f"_dk_n{r}_{b.k}" for b in bounds[:-1]] + [chunks]
        launch_range = sizes[0] if d == 0 else f"({', '.join(sizes)})"
        args = [*free, *(a for b in bounds[:-1] for a in b.args(sizes=False)), count]
        launch = statements(f"_dk_ev = {name}[{launch_range}]({', '.join(args)})", region.line)
        return f"{choice}({count}, {', '.join(arrays)})", launch

    def _reductions(self, body, candidates: set, line: int) -> dict:
        """name -> operator of each scalar the loop body reduces into."""
        found: dict = {}
        first: dict = {}
        for name, store, _ in _events(body):
            first.setdefault(name, store)
        for name in sorted(candidates):
            if name not in first or first[name]:
                continue  # not used in the loop, or private to each iteration
            updates = [n for n in _walk_statements(body) if name in _store_counts([n])]
            if not updates:
                continue  # only read: a parameter of the kernel
            ops = set()
            for update in updates:
                op = _reduction_op(update, name)
                if op is None:
                    raise self._error(
                        update.lineno,
                        f"the prange loop at line {line} updates '{name}' in a way that is not a "
                        f"supported reduction ({ast.unparse(update).strip()}); a loop reduces into "
                        f"a scalar with '{name} += x', '{name} *= x', '{name} = min({name}, x)' "
                        f"or '{name} = max({name}, x)'",
                    )
                ops.add(op)
            uses = sum(1 for n, store, _ in _events(body) if n == name and not store)
            if len(ops) != 1 or uses != len(updates):
                raise self._error(
                    line,
                    f"the prange loop reduces into '{name}' with {' and '.join(sorted(ops))} or "
                    f"reads it besides the update: a reduction variable is updated with one "
                    f"operator and read nowhere else in the loop",
                )
            found[name] = ops.pop()
        return found

    def _reduction(self, region, indices, bounds, kernel_body, free, reductions, launch):
        """Partial results per work-group on the device, a final pass, the value on the host.

        Work-item g of G handles linear iterations g, g + G, ... below the last multiple of
        G: the same trip count for all, so the runtime vectorises across work-items. The
        iterations past it, if any, are a second kernel's, one each. In the first kernel they
        were a guarded extra round that the CPU runtime runs masked in every work-item even
        when no lane takes it: a 2^24-element dot product over 2 rounds took 6.6 ms with it and
        4.0 ms without.
        """
        r = len(self.regions)
        line = region.line
        names = list(reductions)
        wg = REDUCTION_WORK_GROUP
        # The accumulators' types: Numba unifies them over one pass of the loop body, typed
        # here but never run. Straight-line code (no loop around it, its range loops made
        # one pass), so that the allocation below is typed once with the unified type, not
        # with each type Numba tries on the way round a loop.
        indices_at_start = "\n".join(f"{index} = _dk_lo{r}_{k}" for k, index in enumerate(indices))
        phantom = statements(indices_at_start, line)
        for stmt in copy.deepcopy(kernel_body):
            phantom += _OnePass(self).visit_statement(stmt)
        launch.append(ast.If(test=ast.parse("_dk_never()").body[0].value, body=phantom, orelse=[]))
        launch += statements(
            f"_dk_total{r} = {' * '.join(f'_dk_n{r}_{b.k}' for b in bounds)}\n"
            f"_dk_groups{r} = _dk_groups_for(_dk_total{r})",
            line,
        )
        source = self.source or "None"
        allocs = [
            self._add(
                host.allocator("scratch", None, "shared", self.device, _accumulator_type), "alloc"
            )
            for _ in names
        ]
        keep = self._add(host.scratch_keeper("shared", self.device), "keep")

        def allocate(size: str) -> list:
            """Each accumulator's buffer of partial results, of `size` and one for the total."""
            return statements(
                "\n".join(
                    f"_dk_buf{r}_{j} = {alloc}({size} + 1, None, {source}, {name})"
                    for j, (alloc, name) in enumerate(zip(allocs, names))
                ),
                line,
            )

        plain = allocate(f"2 * _dk_groups{r}")
        buffers = [f"_dk_buf{j}" for j in range(len(names))]
        params = buffers + free + [p for b in bounds for p in b.params(sizes=True)]
        decompose = []
        for b in reversed(bounds):
            if b.k == 0:
                decompose.append(f"{indices[0]} = {b.index('_dk_q')}")
            else:
                decompose.append(f"{indices[b.k]} = {b.index(f'(_dk_q % _dk_n{b.k})')}")
                decompose.append(f"_dk_q = _dk_q // _dk_n{b.k}")
        if len(bounds) == 1:
            decompose = [f"{indices[0]} = {bounds[0].index('_dk_lin')}"]
        prologue = "\n".join(
            [f"{name} = _DK_IDENT{j}" for j, name in enumerate(names)]
            + [
                f"_dk_total = {' * '.join(f'_dk_n{b.k}' for b in bounds)}",
                f"_dk_first = {API}.get_global_id(0)",
                f"_dk_stride = {API}.get_global_size(0)",
            ]
        )
        step = statements("_dk_q = _dk_lin\n" + "\n".join(decompose), line)

        def region_kernel(stem: str, loop: str, slot: str, extra_params: list[str]) -> str:
            """A kernel of the reduction: the prologue, `loop` with the body in place of its
            last statement's `pass`, the work-group's partial results stored at `slot`."""
            around = statements(loop, line)
            around[-1].body[-1:] = copy.deepcopy(step) + copy.deepcopy(kernel_body)
            stub = ast.parse(f"def _dk_region({', '.join(params + extra_params)}):\n    pass")
            tree = stub.body[0]
            tree.body = statements(prologue, line) + around

            def build(argtypes, tree=tree):
                extra, epilogue = {}, []
                for j, dtype in enumerate(reduction_dtypes(argtypes, len(names))):
                    op, local = reductions[names[j]], f"_dk_local{j}"
                    extra[f"_DK_IDENT{j}"] = identity(op, dtype)
                    extra[f"_DK_DTYPE{j}"] = dtype
                    out = f"_dk_buf{j}[{slot}]"
                    epilogue.append(
                        group_reduction(op, local, f"_DK_DTYPE{j}", dtype, names[j], out)
                    )
                tree = copy.deepcopy(tree)
                tree.body += statements("\n".join(epilogue), line)
                return tree, extra

            return self._kernel(region, stem, params + extra_params, build)

        group = f"{API}.get_group_id(0)"
        rounds = region_kernel(
            "reduce",
            "for _dk_round in range(_dk_total // _dk_stride):\n"
            "    _dk_lin = _dk_first + _dk_round * _dk_stride\n"
            "    pass",
            group,
            [],
        )
        tail = region_kernel(
            "tail",
            "_dk_lin = _dk_start + _dk_first\nif _dk_lin < _dk_total:\n    pass",
            f"_dk_groups + {group}",
            ["_dk_start", "_dk_groups"],
        )
        args = [f"_dk_buf{r}_{j}" for j in range(len(names))] + free
        args += [a for b in bounds for a in b.args(sizes=True)]
        # Where the rounds stop (the last multiple of the launch's size) is decided here once.
        tail_args = args + [f"_dk_total{r} - _dk_rest{r}", f"_dk_groups{r}"]
        plain += statements(
            f"_dk_ev = {rounds}[_dk_NdRange(_dk_groups{r} * {wg}, {wg})]({', '.join(args)})\n"
            f"_dk_rest{r} = _dk_total{r} % (_dk_groups{r} * {wg})\n"
            f"_dk_parts{r} = _dk_groups{r} + (_dk_rest{r} + {wg - 1}) // {wg}\n"
            f"if _dk_rest{r} > 0:\n"
            f"    _dk_ev = {tail}[_dk_NdRange((_dk_parts{r} - _dk_groups{r}) * {wg}, {wg})]"
            f"({', '.join(tail_args)})",
            line,
        )
        simd = self._simd_reduction(region, indices, bounds, kernel_body, params, free, reductions)
        if simd is None:
            launch += plain
        else:
            kernel, condition = simd
            launch += statements(
                f"if {condition}:\n"
                f"    _dk_parts{r} = (_dk_total{r} + {REDUCTION_CHUNK - 1}) // {REDUCTION_CHUNK}\n"
                f"    pass\n"
                f"    {kernel}[_dk_parts{r}]({', '.join(args)}).wait()\n"
                f"else:\n"
                f"    pass",
                line,
            )
            launch[-1].body[1:2] = allocate(f"_dk_parts{r}")
            launch[-1].orelse = plain
        for j, name in enumerate(names):
            final = final_kernel(reductions[name], self.cache)
            region.shared.append(final)
            final_name = self._add(final, "final")
            launch += statements(
                f"_dk_ev = {final_name}[_dk_NdRange({wg}, {wg})](_dk_buf{r}_{j}, _dk_parts{r})",
                line,
            )
        launch += statements("_dk_ev.wait()", line)
        for j, name in enumerate(names):
            value = combine(reductions[name], name, f"_dk_buf{r}_{j}[_dk_parts{r}]")
            launch += statements(f"{name} = {value}\n{keep}(_dk_buf{r}_{j}, {source})", line)
        return launch

    def _simd_reduction(self, region, indices, bounds, kernel_body, params, free, reductions):
        """(the kernel, the launch condition) of a reduction's host-SIMD kernel, or None where
        it cannot have one: not a CPU device, more than one level, not prange(n), or a loop
        body with loops of its own (which would be reordered too: host_simd.py).

        Work-item g reduces iterations [g, g + 1) * REDUCTION_CHUNK into vector registers
        and stores its partial results at g; the final pass adds them up.
        """
        if len(bounds) != 1 or bounds[0].start != 0 or bounds[0].step != 1:
            return None
        if any(isinstance(n, (ast.For, ast.While)) for s in kernel_body for n in ast.walk(s)):
            return None
        if not free or not device_by_canonical_name(self.device).is_cpu:
            return None
        names = list(reductions)
        source = (
            f"def _dk_region({', '.join(params)}):\n"
            + "".join(f"    {name} = _DK_IDENT{j}\n" for j, name in enumerate(names))
            + f"    _dk_id = {API}.get_global_id(0)\n"
            f"    _dk_base = (_dk_id & {_CHUNK_IDS - 1}) * {REDUCTION_CHUNK}\n"
            f"    _dk_stop = min(_dk_base + {REDUCTION_CHUNK}, _dk_n0)\n"
            f"    for _dk_k in range(_dk_stop - _dk_base):\n"
            f"        {indices[0]} = {INDEX_ADD}(_dk_base, _dk_k)\n"
        )
        tree = at_line(ast.parse(source).body[0], region.line)
        tree.body[-1].body += copy.deepcopy(kernel_body)
        tree.body += statements(
            "\n".join(f"_dk_buf{j}[_dk_id] = {name}" for j, name in enumerate(names)),
            region.line,
        )

        def build(argtypes, tree=tree):
            extra = {}
            for j, dtype in enumerate(reduction_dtypes(argtypes, len(names))):
                extra[f"_DK_IDENT{j}"] = identity(reductions[names[j]], dtype)
            return copy.deepcopy(tree), extra

        kernel = self._kernel(region, "simd", params, build, host_simd=REDUCE)
        simd = self._add(host.built_as_simd(region.kernels[-1]), "simd")
        r = len(self.regions)
        layout = " and ".join(f"_dk_laid_out({a})" for a in free)
        # No stores to stream: a chunk of iterations is enough (host.worth_host_simd).
        condition = f"{simd}() and _dk_n{r}_0 >= {REDUCTION_CHUNK} and {layout}"
        return kernel, condition

    # --- whole-array reductions --------------------------------------------------------------

    def _array_reduction(self, node) -> tuple | None:
        """`e.sum()`, `dpnp.sum(e)` and the like over arguments: (operator, expression, its
        operands, its arrays, NumPy's result dtype), or None where host code computes it."""
        if not isinstance(node, ast.Call) or node.keywords:
            return None
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in _REDUCTION_METHODS
            and not node.args
        ):
            op, expr = _REDUCTION_METHODS[node.func.attr], node.func.value
        elif len(node.args) == 1 and self._resolve(node.func) in _REDUCTION_FUNCTIONS:
            op, expr = _REDUCTION_FUNCTIONS[self._resolve(node.func)], node.args[0]
        else:
            return None
        named = isinstance(expr, ast.Name)
        operands = [expr.id] if named else self._elementwise(expr, self.arrays)
        if not operands or any(self._fixed_type(ast.Name(n)) is None for n in operands):
            return None  # what compiled host code computes: types known only as it is typed
        operand_types = {n: self._fixed_type(ast.Name(n)) for n in operands}
        arrays = [n for n, t in operand_types.items() if isinstance(t, types.Array)]
        if not arrays or not 1 <= operand_types[arrays[0]].ndim <= 3:
            return None
        element = _DtypeOf(expr, operands, self)(list(operand_types.values()))
        dtype = np.dtype(str(element))
        if op in ("+", "*"):
            dtype = np.sum(np.ones(1, dtype)).dtype  # NumPy's accumulator: int32 sums to int64
        elif not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
            return None
        return op, expr, operands, arrays, dtype

    def _reduce_array(self, line: int, op: str, expr, operands, arrays, dtype, out: list) -> str:
        """Launch a whole-array reduction before the statement using it; its result's name."""
        name = self._fresh("reduced")
        self.all_stores[name] = 2  # set here, updated in the loop: a reduction of the function
        self.locals.add(name)
        shape_of = arrays[0]
        ndim = self.argtypes[shape_of].ndim
        out += self._same_shape(arrays, shape_of, line)
        if op in ("min", "max"):
            message = f"zero-size array to reduction operation {op}imum which has no identity"
            out += statements(f"if {shape_of}.size == 0:\n    raise ValueError({message!r})", line)
        ident = self._add(identity(op, dtype), "identity")
        out += statements(f"{name} = {ident}", line)
        indices = [self._fresh("r") for _ in range(ndim)]
        index = self._fresh("index")
        index_of = dict.fromkeys(arrays, index)
        value = ast.unparse(_ElementOf(self, index_of).visit(copy.deepcopy(expr)))
        element = self._fresh("element")
        update = [f"{element} = {value}"]
        update.append(
            f"{name} = {op}({name}, {element})"
            if op in ("min", "max")
            else f"{name} {op}= {element}"
        )
        nans = None
        if op in ("min", "max") and np.issubdtype(dtype, np.floating):
            # NumPy's min and max are NaN where any element is; Python's min and max (each
            # work-item's) skip a NaN after the first element: the NaNs are counted beside.
            nans = self._fresh("nans")
            self.all_stores[nans] = 2
            self.locals.add(nans)
            out += statements(f"{nans} = 0", line)
            update.append(f"{nans} += {element} != {element}")
        source = "".join(
            f"{'    ' * k}for {i} in _dk_prange({shape_of}.shape[{k}]):\n"
            for k, i in enumerate(indices)
        )
        body = "    " * ndim
        source += f"{body}{index} = ({', '.join(indices)},)\n"
        source += "\n".join(body + u for u in update)
        loop = statements(source, line)[0]
        self.locals.update(indices)
        launch, _ = self._loop(loop, kind=f"array reduction ({op})")
        out += launch
        if nans is not None:
            nan = self._add(dtype.type(np.nan), "nan")
            out += statements(f"if {nans} > 0:\n    {name} = {nan}", line)
        return name

    def _same_shape(self, arrays: list, shape_of: str, line: int) -> list:
        """Host statements raising ValueError where an operand's shape is not `shape_of`'s."""
        checks = []
        for name in arrays:
            if name != shape_of:
                message = (
                    f"array reduction at line {line}: {name!r} and {shape_of!r} differ in shape; "
                    f"an offloaded reduction of an expression takes arrays of one shape "
                    f"(no broadcasting)"
                )
                checks += statements(
                    f"if {name}.shape != {shape_of}.shape:\n    raise ValueError({message!r})", line
                )
        return checks

    # --- array expressions ---------------------------------------------------------------------

    def _expression_parts(self, stmt):
        """(output name or None, expression, operands, in-place operator) of an array statement."""
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            operands = self._elementwise(stmt.value, self.arrays)
            if isinstance(target, ast.Name) and operands is not None:
                return target.id, stmt.value, operands, None, False
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and target.value.id in self.arrays
                and _whole(target.slice)
            ):
                operands = self._elementwise(stmt.value, self.arrays, into_array=True)
                if operands is not None:
                    return target.value.id, stmt.value, operands, None, True
        if (
            isinstance(stmt, ast.AugAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id in self.arrays
            and isinstance(stmt.op, _ELEMENTWISE_OPS)
        ):
            operands = self._elementwise(stmt.value, self.arrays, into_array=True)
            if operands is not None:
                return stmt.target.id, stmt.value, operands, stmt.op, True
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            operands = self._elementwise(stmt.value, self.arrays)
            if operands is not None:
                return None, stmt.value, operands, None, False
        return None

    def _expression(self, stmt, out, expr, operands, op, existing):
        line = stmt.lineno
        region = Region(line, "array expression")
        self.regions.append(region)
        arrays = [n for n in operands if n in self.arrays]
        r = len(self.regions)
        # NumPy's broadcasting: the shape of all the arrays (the output's too, where it exists:
        # `c[:] = e` and `c += e` store into c's shape), and whether every array already has
        # it in its trailing dimensions (the kernel then indexes them all alike).
        shapes = ", ".join(f"{n}.shape" for n in ([out] if existing else []) + arrays)
        fits = " and ".join(f"_dk_fits({n}.shape, _dk_shape{r})" for n in arrays) or "True"
        launch = statements(f"_dk_shape{r} = _dk_broadcast({shapes})\n_dk_exact{r} = {fits}", line)
        if existing:
            message = (
                f"array expression at line {line}: the operands do not broadcast to "
                f"the shape of {out!r}, which they are stored into"
            )
            launch += statements(
                f"if _dk_shape{r} != {out}.shape:\n    raise ValueError({message!r})", line
            )
            result = out
        else:
            result = out or self._fresh("result")
            examples = _DtypeOf(expr, operands, self)
            alloc = self._add(
                host.allocator("empty", None, "device", self.device, examples), "alloc"
            )
            launch += statements(
                f"{result} = {alloc}(_dk_shape{r}, None, {arrays[0]}, ({', '.join(operands)},))",
                line,
            )
        params = ["_dk_out", *operands, "_dk_exact"]

        def build(argtypes):
            ndim = argtypes[0].ndim
            ids = [f"_dk_i{d}" for d in range(ndim)]
            full = ids[0] if ndim == 1 else f"({', '.join(ids)})"
            exact, general = {}, {}
            for name, argtype in zip(operands, argtypes[1:]):
                if name in arrays:
                    own = ids[ndim - argtype.ndim :]
                    clamped = [f"min({i}, {name}.shape[{d}] - 1)" for d, i in enumerate(own)]
                    exact[name], general[name] = _index_source(own), _index_source(clamped)
            values = []
            for index_of in (exact, general):
                value = ast.unparse(_ElementOf(self, index_of).visit(copy.deepcopy(expr)))
                if op is not None:
                    value = f"_dk_out[{full}] {_OP_SOURCE[type(op)]} ({value})"
                values.append(value)
            source = "\n".join(
                [f"def _dk_region({', '.join(params)}):"]
                + [f"    {i} = {API}.get_global_id({d})" for d, i in enumerate(ids)]
                + ["    if _dk_exact:", f"        _dk_out[{full}] = {values[0]}"]
                + ["    else:", f"        _dk_out[{full}] = {values[1]}"]
            )
            return statements(source, line)[0], {}

        kernel = self._kernel(region, "expr", params, build)
        args = ", ".join([result, *operands, f"_dk_exact{r}"])
        launch += statements(f"_dk_ev = {kernel}[{result}.shape]({args})", line)
        if isinstance(stmt, ast.Return):
            launch += statements(f"return {result}", line)
        return launch


# --- small pieces --------------------------------------------------------------------------------


@dataclass
class _Bounds:
    """One level of a prange nest: its kernel parameters, and its index from a position.

    A start and a step written as int constants are the kernel's constants, not parameters:
    `prange(1, n - 1)` indexes `1 + id`, so the runtime sees neighbouring work-items read
    neighbours, and the compiler that `i - 1` is never negative.
    """

    k: int
    region: int
    start: int | None  # the constant start, or None: a parameter
    step: int | None  # the constant step, or None: a parameter

    def _names(self, sizes: bool, prefix: str) -> list[str]:
        names = [] if self.start is not None else [f"_dk_lo{prefix}{self.k}"]
        names += [] if self.step is not None else [f"_dk_st{prefix}{self.k}"]
        return names + ([f"_dk_n{prefix}{self.k}"] if sizes else [])

    def params(self, sizes: bool) -> list[str]:
        return self._names(sizes, "")

    def args(self, sizes: bool) -> list[str]:
        return self._names(sizes, f"{self.region}_")

    def index(self, position: str) -> str:
        step = f"_dk_st{self.k}" if self.step is None else str(self.step)
        scaled = position if self.step == 1 else f"{position} * {step}"
        start = f"_dk_lo{self.k}" if self.start is None else str(self.start)
        return scaled if self.start == 0 else f"{start} + {scaled}"


def _docstring(stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _int_constant(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


_OP_SOURCE = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}

_MISSING = object()


def _builtin(name: str):
    value = getattr(builtins, name, _MISSING)
    return None if value is _MISSING else value


def _is_int(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int)


def _whole(index) -> bool:
    """Whether a subscript is `[:]`, `[...]` or `[:, :]`: the whole array."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(
        (isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None)
        or (isinstance(p, ast.Constant) and p.value is Ellipsis)
        for p in parts
    )


def _walk_statements(body):
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                yield node


def _reduction_op(stmt, name: str) -> str | None:
    """The operator of a reduction update of `name` (`s += x`, `s = min(s, x)`...), or None."""

    def others(nodes) -> bool:
        return name not in _loads(nodes)

    if isinstance(stmt, ast.AugAssign):
        op = _REDUCTION_OPS.get(type(stmt.op))
        return op if op is not None and others([stmt.value]) else None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    value = stmt.value
    is_name = lambda n: isinstance(n, ast.Name) and n.id == name  # noqa: E731
    if isinstance(value, ast.BinOp) and type(value.op) in _REDUCTION_OPS:
        if is_name(value.left) and others([value.right]):
            return _REDUCTION_OPS[type(value.op)]
        if is_name(value.right) and others([value.left]):
            return _REDUCTION_OPS[type(value.op)]
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("min", "max")
        and len(value.args) == 2
        and not value.keywords
    ):
        first, second = value.args
        if (is_name(first) and others([second])) or (is_name(second) and others([first])):
            return value.func.id
    return None


def _check_flow(body, error) -> None:
    """break/continue/return at the loop body's own level cannot be outlined."""

    def visit(node, in_loop: bool):
        if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef)):
            return
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)):
            raise error(node.lineno, "a prange loop body cannot return or yield")
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            word = "break" if isinstance(node, ast.Break) else "continue"
            raise error(
                node.lineno,
                f"a prange loop body cannot '{word}' out of its iteration; use an if instead",
            )
        inner = in_loop or isinstance(node, (ast.For, ast.While))
        for child in ast.iter_child_nodes(node):
            visit(child, inner and child not in getattr(node, "orelse", ()))

    for stmt in body:
        visit(stmt, False)


def _accumulator_type(witness):
    """The dtype of a reduction buffer: the accumulator's own type."""
    return scalar_type(str(types.unliteral(witness)))


def _default_float(device: str) -> str:
    return "float64" if device_by_canonical_name(device).has_aspect_fp64 else "float32"


@numba.njit(cache=False)
def _never():  # pragma: no cover (compiled)
    """False, unknown to the typing: code under `if _never():` is typed but never runs."""
    return False


@numba.njit(cache=False)
def _fits(shape, full):  # pragma: no cover (compiled)
    """Whether an array of `shape` is `full` in its trailing dimensions: nothing to broadcast."""
    lead = len(full) - len(shape)
    for d in range(len(shape)):  # noqa: SIM110 (a loop Numba compiles, not a generator)
        if shape[d] != full[lead + d]:
            return False
    return True


def _index_source(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"({', '.join(parts)})"


@numba.njit(cache=False)
def _groups_for(total):  # pragma: no cover (compiled)
    """Work-groups of a reduction: REDUCTION_PER_ITEM iterations a work-item, up to the most."""
    per_group = REDUCTION_WORK_GROUP * REDUCTION_PER_ITEM
    groups = (total + per_group - 1) // per_group
    return max(1, min(groups, REDUCTION_MAX_GROUPS))


class _PlainLaunches(ast.NodeTransformer):
    """Each choice between a streaming and a plain launch, as the plain launch alone."""

    def visit_If(self, node):
        self.generic_visit(node)
        return node.orelse if getattr(node, "dk_streaming", False) else node


class _Hoist(ast.NodeTransformer):
    """Whole-array reductions in a statement: launched before it, their results' names in it.

    Only parts the statement always evaluates, once: not inside `x if c else y`, `and`/`or`,
    lambdas or comprehensions, whose parts Python may evaluate never or many times.
    """

    def __init__(self, outliner: Outliner, out: list):
        self.outliner = outliner
        self.out = out

    def visit_Call(self, node):
        self.generic_visit(node)
        found = self.outliner._array_reduction(node)
        if found is None:
            return node
        name = self.outliner._reduce_array(node.lineno, *found, self.out)
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def _keep(self, node):
        return node

    visit_IfExp = visit_BoolOp = visit_Lambda = _keep
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _keep


class _OnePass(ast.NodeTransformer):
    """Loops over ranges as one pass of their body, `while` as `if`: typed like the loop
    (never run), with no cycle for Numba's type inference to go round."""

    def __init__(self, outliner: Outliner):
        self.outliner = outliner

    def visit_statement(self, stmt) -> list:
        result = self.visit(stmt)
        return result if isinstance(result, list) else [result]

    def visit_For(self, node):
        self.generic_visit(node)
        call = node.iter
        is_range = isinstance(call, ast.Call) and self.outliner._resolve(call.func) is range
        if not is_range or node.orelse or not call.args:
            return node
        start = call.args[0] if len(call.args) > 1 else ast.Constant(0)
        return [ast.copy_location(ast.Assign([node.target], start), node), *node.body]

    def visit_While(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.If(node.test, node.body, node.orelse), node)

    def visit_Break(self, node):
        return ast.copy_location(ast.Pass(), node)

    visit_Continue = visit_Break


class _PrangeToRange(ast.NodeTransformer):
    """prange inside a kernel body is a sequential loop of each work-item."""

    def __init__(self, outliner: Outliner):
        self.outliner = outliner

    def visit_Call(self, node):
        self.generic_visit(node)
        if self.outliner._is_prange(node):
            node.func = ast.copy_location(ast.Name("range", ast.Load()), node.func)
        return node


class _ElementOf(ast.NodeTransformer):
    """An array expression's value at one index: arrays indexed, functions the kernel's own."""

    def __init__(self, outliner: Outliner, index_of: dict):
        self.outliner = outliner
        self.index_of = index_of  # array name -> the source of its index

    def visit_Name(self, node):
        if node.id in self.index_of:
            index = ast.parse(self.index_of[node.id], mode="eval").body
            return ast.Subscript(node, index, ast.Load())
        return node

    def visit_Call(self, node):
        kernel_name, _ = _FUNCTIONS[self.outliner._resolve(node.func)]
        node.args = [self.visit(a) for a in node.args]
        node.func = ast.parse(kernel_name, mode="eval").body
        return node


class _DtypeOf:
    """An array expression's result dtype, decided by NumPy on stand-ins of its operands."""

    def __init__(self, expr, operands: list, outliner: Outliner):
        self.operands = operands
        self.functions = {}
        tree = copy.deepcopy(expr)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = f"_dk_f{len(self.functions)}"
                self.functions[name] = _FUNCTIONS[outliner._resolve(node.func)][1]
                node.func = ast.Name(name, ast.Load())
        self.code = compile(ast.fix_missing_locations(ast.Expression(tree)), "<expr>", "eval")
        self.globals = outliner.globals

    def __call__(self, witness):
        examples = {n: host.numpy_example(t) for n, t in zip(self.operands, witness)}
        with np.errstate(all="ignore"):
            value = eval(self.code, {**self.globals, **self.functions}, examples)  # noqa: S307
        return scalar_type(np.asarray(value).dtype)


class _Allocations(ast.NodeTransformer):
    """dpnp.empty/zeros/ones/full in host code -> allocations on the arguments' device."""

    def __init__(self, outliner: Outliner):
        self.outliner = outliner

    def visit_Call(self, node):
        self.generic_visit(node)
        kind = _ALLOCATIONS.get(self.outliner._resolve(node.func))
        if kind is None:
            return node
        o = self.outliner
        names = (
            ["shape", "fill_value", "dtype", "order"]
            if kind == "full"
            else ["shape", "dtype", "order"]
        )
        if len(node.args) > len(names):
            raise o._error(
                node.lineno, f"dpnp.{kind}() takes at most {len(names)} positional arguments"
            )
        given = dict(zip(names, node.args))
        for keyword in node.keywords:
            if keyword.arg not in (*names, "device", "usm_type", "sycl_queue"):
                raise o._error(
                    node.lineno,
                    f"dpnp.{kind}(): keyword '{keyword.arg}' is not supported in offloaded "
                    f"functions (shape, dtype, order='C', device, usm_type, sycl_queue are)",
                )
            given[keyword.arg] = keyword.value
        if "shape" not in given or (kind == "full" and "fill_value" not in given):
            raise o._error(node.lineno, f"dpnp.{kind}() needs its shape (and fill value)")
        if "order" in given and o._constant(given["order"], "order=") != "C":
            raise o._error(
                node.lineno, f"dpnp.{kind}(): offloaded functions allocate order='C' only"
            )
        usm_type = o._constant(given["usm_type"], "usm_type=") if "usm_type" in given else "device"
        source, device = o.source, o.device
        placement = given.get("sycl_queue", given.get("device"))
        if placement is not None:
            if (
                isinstance(placement, ast.Attribute)
                and isinstance(placement.value, ast.Name)
                and placement.value.id in o.arrays
                and placement.attr in ("device", "sycl_device", "sycl_queue")
            ):
                source = placement.value.id
            else:
                source, device = None, canonical_device(o._constant(placement, "device="))
        dtype = given.get("dtype")
        if dtype is not None:
            of_argument = (
                isinstance(dtype, ast.Attribute)
                and dtype.attr == "dtype"
                and isinstance(dtype.value, ast.Name)
                and isinstance(o.argtypes.get(dtype.value.id), types.Array)
            )
            if of_argument:
                dtype = o.argtypes[dtype.value.id].dtype
            else:
                dtype = o._constant(
                    dtype, "dtype= (a dtype string or type, or an argument's .dtype)"
                )
        fill = {"zeros": ast.Constant(0), "ones": ast.Constant(1)}.get(
            kind, given.get("fill_value")
        )
        witness = fill if fill is not None else ast.Constant(0)
        if dtype is None:
            if kind == "full":
                allocator = host.allocator("full", None, usm_type, device, _accumulator_type)
            else:
                dtype = _default_float(device)
        if dtype is not None:
            dtype = str(scalar_type(dtype, "dtype="))
            allocator = host.allocator(
                "empty" if kind == "empty" else "full", dtype, usm_type, device
            )
        name = o._add(allocator, "alloc")
        call = ast.Call(
            ast.Name(name, ast.Load()),
            [
                given["shape"],
                fill or ast.Constant(None),
                ast.Name(source, ast.Load()) if source else ast.Constant(None),
                witness,
            ],
            [],
        )
        return ast.copy_location(call, node)
