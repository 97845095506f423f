"""Count-down loops that stop early, of a few iterations, as straight-line code under a mask
(docs/offload.md, "Loops that stop early").

gpairs' loop over its bins, in each iteration of a loop over points,

    k = rbins.shape[0] - 1          # a constant where the extent is small (extents.py)
    while dsq <= rbins[k]:
        counts[i, k] += w1[i] * w2[j]
        k -= 1
        if k < 0:
            break

stops at a different bin for each pair: a branch the CPU mispredicts for many pairs, and
stores under it that keep `counts[i, :]` in memory across the loop over points. Written out
bin by bin, every store made and the dead iterations' adding nothing,

    alive = dsq <= rbins[15]
    if alive:
        v = w2[j]                   # a load the first iteration made, now made once
    counts[i, 15] += masked(alive, w1[i] * v, -0.0)
    alive = alive & (dsq <= rbins[14])
    counts[i, 14] += masked(alive, w1[i] * v, -0.0)
    ...

the stores have no branch around them, and the runtime keeps a row's counts in registers
across the loop over points: gpairs took medians of 13.7-15.2 ms where it took 43.0-43.6 ms
(numba.njit(parallel=True): 42.4-43.4 ms; benchmarks.offload_programs, 4,096 × 1,024 pairs
and 16 bins on the 2-core Zen 3).

What the rewrite takes, each condition what keeps it exact:
- the loop counts a variable down by one from a constant `c0` below extents.SMALL to a
  `k < 0` exit: c0 + 1 iterations at most, each written out;
- an iteration is a chain of blocks without branches but its exits, which all reach one
  block, as the loop's entry does where it skips the loop; no variable the loop sets is read
  after it;
- its statements are loads, arithmetic without division, tuples and `bool()`, and stores
  that update an element of a floating-point array in place with `+=`, `-=` or `*=`: a dead
  iteration adds -0.0, subtracts 0.0 or multiplies by 1.0, which leaves every value as it
  was (a signalling NaN comes back quiet);
- an index is made of the counter (or the counter less one) and the work-item's indices, or
  of none of them: the former are in bounds where `c0` is below the extents the counter
  indexes and the launch range within those the work-item's indices do, which the rewritten
  body checks first, running the loop as written where they are not; the latter are loads
  that come before the loop's first exit, from arrays it does not store into: the original's
  first iteration made them, so they are made once, where it ran;
- each store's index holds every work-item index of the nest, and so do the region's other
  stores to that array: no other work-item writes the element. Arrays that share memory take
  the kernel compiled without `noalias`, which keeps the loop as written (ranges.py).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from numba.core import ir
from numba.core.ir_utils import add_offset_to_labels, build_definitions, mk_unique_var
from numba.core.types import Array, Float
from numba.np.numpy_support import as_dtype

from ..compiler.functions import func
from ..compiler.kernel_api import get_global_size
from .extents import SMALL
from .ir_values import access, copies, index_items, resolve
from .regions import Region, control_flow, copy_blocks


@func
def masked(alive, value, identity):  # pragma: no cover (compiled in kernels)
    """`value` in a live iteration, the update's identity in a dead one."""
    return value if alive else identity


#: An in-place update's operator -> the value that leaves an element as it was.
_IDENTITIES = {operator.iadd: -0.0, operator.isub: 0.0, operator.imul: 1.0}
#: The arithmetic a dead iteration may run: no division (an integer's by zero raises).
_ARITHMETIC = {
    *_IDENTITIES,
    *(operator.add, operator.sub, operator.mul, operator.neg, operator.not_),
    *(operator.and_, operator.or_, operator.xor),
    *(operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne),
}
#: The levels of a nest whose indices the launch range holds (ranges.RANGE_LEVELS).
_RANGED = 3

#: An extent the rewritten loop needs: (array, axis, "counter" or "level", the counter's
#: first value or the level): the counter's first value below it, or the last index of the
#: level (start + launch size - 1).
Bound = tuple[str, int, str, int]


@dataclass
class _Loop:
    """A loop the rewrite takes: its blocks, the order an iteration runs them in, its counter
    and what writing it out needs."""

    blocks: set[int]
    chain: list[int]
    entry: int  # the block before it
    exit: int  # the block its exits reach
    counter: str
    less_one: str  # the variable that holds the counter less one
    counter_exit: int  # the block whose branch is the `less_one < 0` exit
    first: int  # the counter's value on entry
    inside: dict[str, list]  # variable name -> the values the loop assigns it
    bounds: set[Bound] = field(default_factory=set)
    once: set[str] = field(default_factory=set)  # the loads made once, by target


def unrolled(region: Region) -> dict[int, ir.Block] | None:
    """The region's body with its count-down loops that stop early written out, behind a
    check of the extents they need that runs the body as written where it fails; None where
    the body has no such loop (see the module docstring)."""
    if _next_loop(region, region.body) is None:
        return None  # most bodies: no copy made
    body = copy_blocks(region.body)
    bounds: set[Bound] = set()
    while (loop := _next_loop(region, body)) is not None:
        _write_out(region, body, loop)
        bounds |= loop.bounds
    if not bounds:
        return None
    body = add_offset_to_labels(body, 1)
    original = add_offset_to_labels(copy_blocks(region.body), max(body) + 1)
    first = body[min(body)]
    check = ir.Block(first.scope, first.loc)
    fits = _fits(region, check, sorted(bounds, key=str))
    check.append(ir.Branch(fits, min(body), min(original), first.loc))
    return {0: check, **body, **original}


def _fits(region: Region, block: ir.Block, bounds: list[Bound]) -> ir.Var:
    """Statements appended to `block` that check each bound; the variable that holds whether
    all hold."""
    scope, loc = block.scope, block.loc

    def new(name: str, value) -> ir.Var:
        var = ir.Var(scope, mk_unique_var(name), loc)
        block.append(ir.Assign(value, var, loc))
        return var

    size = new("$dk_size", ir.Global("get_global_size", get_global_size, loc))
    fits = new("$dk_fits", ir.Const(True, loc))
    for array, axis, kind, value in bounds:
        shape = new("$dk_shape", ir.Expr.getattr(ir.Var(scope, array, loc), "shape", loc))
        extent = new("$dk_extent", ir.Expr.static_getitem(shape, axis, None, loc))
        if kind == "counter":
            top = new("$dk_top", ir.Const(value, loc))
            below = new("$dk_below", ir.Expr.binop(operator.lt, top, extent, loc))
        else:
            level = new("$dk_level", ir.Const(value, loc))
            count = new("$dk_count", ir.Expr.call(size, [level], (), loc))
            start = new("$dk_start", ir.Const(region.levels[value].start, loc))
            top = new("$dk_top", ir.Expr.binop(operator.add, start, count, loc))
            below = new("$dk_below", ir.Expr.binop(operator.le, top, extent, loc))
        fits = new("$dk_fits", ir.Expr.binop(operator.and_, fits, below, loc))
    return fits


def _next_loop(region: Region, body: dict[int, ir.Block]) -> _Loop | None:
    """The first loop of `body` that can be written out."""
    flow = control_flow(body)
    everywhere = build_definitions(body)
    for found in flow.loops().values():
        chain = _chain(body, found.header, found.body)
        entries = [p for p, _ in flow.predecessors(found.header) if p not in found.body]
        if chain is None or len(entries) != 1:
            continue
        exit_ = _exit(body, entries[0], chain, found.body)
        loop = _counted(body, everywhere, chain, entries[0], exit_) if exit_ is not None else None
        if loop is not None and _planned(region, body, everywhere, loop):
            return loop
    return None


def _chain(body: dict[int, ir.Block], header: int, blocks: set[int]) -> list[int] | None:
    """The loop's blocks in the order an iteration runs them, where each has one successor in
    the loop (its others leave it); None for a loop with branches inside it."""
    chain, label = [], header
    while label not in chain:
        chain.append(label)
        inside = [t for t in body[label].terminator.get_targets() if t in blocks]
        if len(inside) != 1:
            return None
        label = inside[0]
    return chain if label == header and set(chain) == blocks else None


def _exit(body, entry: int, chain: list[int], blocks: set[int]) -> int | None:
    """The one block that the loop's exits, and its entry where it skips the loop, reach
    through blocks that only jump on; None where there is none."""
    ends = set()
    for label in [entry, *chain]:
        for target in body[label].terminator.get_targets():
            while target not in blocks and _only_jumps(body[target]):
                target = body[target].terminator.target
            if target not in blocks:
                ends.add(target)
    return ends.pop() if len(ends) == 1 else None


def _only_jumps(block: ir.Block) -> bool:
    return len(block.body) == 1 and isinstance(block.body[0], ir.Jump)


def _counted(body, everywhere: dict, chain: list[int], entry: int, exit_: int) -> _Loop | None:
    """The loop with its counter: a variable set before it to a constant below
    extents.SMALL, and in it to itself less one, with a `less_one < 0` exit; None without
    one."""
    inside = _definitions(body, chain)
    for label in chain:
        branch = body[label].terminator
        if not isinstance(branch, ir.Branch) or branch.truebr in chain:
            continue
        compare = _only(inside, _unwrapped(everywhere, branch.cond))
        if not _is_binop(compare, operator.lt) or _constant(everywhere, compare.rhs) != 0:
            continue
        decrement = _only(inside, compare.lhs)
        if not _is_binop(decrement, operator.sub, operator.isub):
            continue
        counter, less_one = decrement.lhs.name, compare.lhs.name
        sets = [getattr(value, "name", None) for value in inside.get(counter, [])]
        if _constant(everywhere, decrement.rhs) != 1 or sets != [less_one]:
            continue
        order = [s.target.name for b in chain for s in body[b].find_insts(ir.Assign)]
        if order.index(counter) < order.index(less_one):
            continue  # the counter set to the last iteration's value
        first = _entry_value(everywhere, body[entry], counter)
        if first is not None and 0 <= first < SMALL:
            return _Loop(set(chain), chain, entry, exit_, counter, less_one, label, first, inside)
    return None


def _definitions(body: dict[int, ir.Block], labels: list[int]) -> dict[str, list]:
    """Variable name -> the values the blocks `labels` assign it."""
    found: dict[str, list] = {}
    for label in labels:
        for stmt in body[label].find_insts(ir.Assign):
            found.setdefault(stmt.target.name, []).append(stmt.value)
    return found


def _only(definitions: dict, var: ir.Var):
    """The one value `var` is assigned, or None."""
    values = definitions.get(var.name) or []
    return values[0] if len(values) == 1 else None


def _unwrapped(definitions: dict, var: ir.Var) -> ir.Var:
    """The argument of `bool(x)` (Numba's branch on a comparison), else `var`."""
    call = _only(definitions, var)
    is_call = isinstance(call, ir.Expr) and call.op == "call" and len(call.args) == 1
    if is_call and resolve(definitions, call.func) is bool:
        return call.args[0]
    return var


def _is_binop(value, *functions) -> bool:
    return (
        isinstance(value, ir.Expr)
        and value.op in ("binop", "inplace_binop")
        and value.fn in functions
    )


def _constant(definitions: dict, var: ir.Var) -> int | None:
    """The integer `var` holds where constants and their sums, differences and products
    make it, else None."""
    value = resolve(definitions, var)
    if type(value) is int:
        return value
    expr = _only(definitions, var)
    if _is_binop(expr, operator.add, operator.sub, operator.mul):
        lhs, rhs = _constant(definitions, expr.lhs), _constant(definitions, expr.rhs)
        if lhs is not None and rhs is not None:
            return expr.fn(lhs, rhs)
    return None


def _entry_value(definitions: dict, entry: ir.Block, counter: str) -> int | None:
    """The constant the block before the loop last sets the counter to, or None."""
    sets = [stmt.value for stmt in entry.find_insts(ir.Assign) if stmt.target.name == counter]
    if not sets:
        return None
    if isinstance(sets[-1], ir.Const):
        return sets[-1].value if type(sets[-1].value) is int else None
    return _constant(definitions, sets[-1]) if isinstance(sets[-1], ir.Var) else None


def _planned(region: Region, body: dict[int, ir.Block], everywhere: dict, loop: _Loop) -> bool:
    """Whether writing the loop out keeps its results (the module docstring's conditions);
    where it does, the extents it needs and the loads it makes once are in `loop`."""
    inside = loop.inside
    if _read_after(body, loop, set(inside)):
        return False
    stored = {
        stmt.target.name
        for label in loop.chain
        for stmt in body[label].body
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem))
    }
    lanes = [copies(body, level.index) for level in region.levels[:_RANGED]]
    counters = {loop.counter, loop.less_one}
    exited = False
    for label in loop.chain:
        for stmt in body[label].body[:-1]:
            if not _allowed(stmt, inside):
                return False
            found = access(stmt)
            if found is None:
                continue
            items = _index_items(found[1], inside)
            bounds = _bounds(region, found[0].name, items, counters, lanes, loop.first)
            if bounds is not None:
                loop.bounds |= bounds
                stores = isinstance(stmt, (ir.SetItem, ir.StaticSetItem))
                if stores and not _own_update(region, body, everywhere, stmt, inside, lanes):
                    return False
            elif not _made_once(stmt, found[1], items, inside, stored, exited):
                return False
            else:  # the load, and the tuple of its index where the loop builds it
                tuple_ = [found[1].name] if found[1] is not None else []
                loop.once |= {stmt.target.name, *tuple_} & set(inside)
        if label == loop.counter_exit:
            exited |= loop.first == 0  # the first iteration ends there only where c0 is 0
        else:
            exited |= isinstance(body[label].terminator, ir.Branch)
    return True


def _allowed(stmt: ir.Stmt, inside: dict) -> bool:
    """Whether a dead iteration may run the statement: loads, stores (checked apart),
    arithmetic without division, tuples, `bool()`."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return True
    if not isinstance(stmt, ir.Assign):
        return False
    value = stmt.value
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
        return True
    if not isinstance(value, ir.Expr):
        return False
    if value.op in ("getitem", "static_getitem", "build_tuple"):
        return True
    if value.op in ("binop", "inplace_binop", "unary"):
        return value.fn in _ARITHMETIC
    if value.op == "call":
        return not value.kws and resolve(inside, value.func) is bool
    return False


def _read_after(body: dict[int, ir.Block], loop: _Loop, assigned: set[str]) -> bool:
    """Whether a block outside the loop reads a variable the loop sets."""
    return any(
        var.name in assigned
        for label, block in body.items()
        if label not in loop.blocks
        for stmt in block.body
        for var in _reads(stmt)
    )


def _reads(stmt: ir.Stmt) -> list[ir.Var]:
    if not isinstance(stmt, ir.Assign):
        return stmt.list_vars()
    value = stmt.value
    return [value] if isinstance(value, ir.Var) else getattr(value, "list_vars", list)()


def _index_items(index: ir.Var | None, definitions: dict) -> list[ir.Var] | None:
    """The variables an index is made of; None for a constant index."""
    return None if index is None else index_items(definitions, index)


def _bounds(region, array: str, items, counters: set[str], lanes, first: int) -> set | None:
    """The extents an access of the counter and the work-item's indices needs (see Bound);
    None for an access that is not one."""
    param = region.params.get(array)
    if items is None or not isinstance(getattr(param, "type", None), Array):
        return None
    if param.type.ndim != len(items) or not any(item.name in counters for item in items):
        return None
    bounds = set()
    for axis, item in enumerate(items):
        levels = [k for k, lane in enumerate(lanes) if item.name in lane]
        if item.name in counters:
            bounds.add((array, axis, "counter", first))
        elif levels and _plain_level(region.levels[levels[0]]):
            bounds.add((array, axis, "level", levels[0]))
        else:
            return None
    return bounds


def _plain_level(level) -> bool:
    """Whether a level's indices are start, start + 1, ... with a constant start."""
    return isinstance(level.start, int) and level.start >= 0 and level.step == 1


def _made_once(stmt, index, items, inside: dict, stored: set[str], exited: bool) -> bool:
    """Whether a load can be made once where the loop is entered: before its first exit, of
    values set before the loop (in a tuple the loop may build), from an array it does not
    store into."""
    loads = isinstance(stmt, ir.Assign) and stmt.value.op in ("getitem", "static_getitem")
    return (
        loads
        and not exited
        and stmt.value.value.name not in stored
        and all(len(inside.get(var.name, [])) <= 1 for var in (stmt.target, index) if var)
        and all(item.name not in inside for item in items or [])
    )


def _own_update(region: Region, body, everywhere: dict, stmt, inside: dict, lanes: list) -> bool:
    """Whether a store updates in place (+=, -=, *=) an element of a floating-point array
    that only its work-item writes."""
    array = stmt.target.name
    if not isinstance(region.params[array].type.dtype, Float):
        return False
    update = _only(inside, stmt.value)
    if not (_is_binop(update, *_IDENTITIES) and update.op == "inplace_binop"):
        return False
    load = _only(inside, update.lhs)
    loaded = access(ir.Assign(load, update.lhs, stmt.loc)) if isinstance(load, ir.Expr) else None
    if loaded is None or _names(loaded) != _names(access(stmt)):
        return False
    return all(
        _owned(found[1], everywhere, lanes)
        for block in body.values()
        for other in block.body
        if isinstance(other, (ir.SetItem, ir.StaticSetItem))
        and (found := access(other))[0].name == array
    )


def _names(found: tuple) -> tuple:
    array, index = found
    return array.name, index.name if index is not None else None


def _owned(index: ir.Var | None, definitions: dict, lanes: list[set[str]]) -> bool:
    """Whether an index holds every work-item index of the nest (one of its copies)."""
    items = _index_items(index, definitions)
    names = {item.name for item in items} if items else set()
    return bool(lanes) and all(names & lane for lane in lanes)


def _write_out(region: Region, body: dict[int, ir.Block], loop: _Loop) -> None:
    """Put the loop's iterations, written out under a mask, in place of its first block (the
    loads made once in a block of their own before it), and drop its other blocks."""
    header = body[loop.chain[0]]
    scope, loc = header.scope, header.loc
    out: list[ir.Stmt] = []

    def new(name: str, value) -> ir.Var:
        var = ir.Var(scope, mk_unique_var(name), loc)
        out.append(ir.Assign(value, var, loc))
        return var

    alive = new("$dk_alive", ir.Const(True, loc))
    entry = body[loop.entry]
    if isinstance(entry.terminator, ir.Branch):
        entered = _entered(entry, loop.chain[0])
        out[-1] = ir.Assign(entered, alive, loc)
    masked_function = new("$dk_masked", ir.Global("masked", masked, loc))
    identities = _identities(region, [s for label in loop.chain for s in body[label].body])
    once = ir.Block(scope, loc)
    for iteration in range(loop.first + 1):
        blocks = copy_blocks({label: body[label] for label in loop.chain})
        for label in loop.chain:
            statements = blocks[label].body
            for stmt in statements[:-1]:
                if isinstance(stmt, ir.Assign) and stmt.target.name in loop.once:
                    if iteration == 0:
                        once.append(stmt)
                    continue
                if isinstance(stmt, ir.Assign) and stmt.target.name in identities:
                    identity = ir.Const(identities[stmt.target.name], loc)
                    args = [alive, stmt.value.rhs, new("$dk_identity", identity)]
                    call = ir.Expr.call(masked_function, args, (), loc)
                    stmt.value.rhs = new("$dk_addend", call)
                out.append(stmt)
            branch = statements[-1]
            if label == loop.counter_exit:
                if iteration == loop.first:
                    break
            elif isinstance(branch, ir.Branch):
                stays = branch.cond
                if branch.falsebr in loop.blocks:
                    stays = new("$dk_stays", ir.Expr.unary(operator.not_, branch.cond, loc))
                out.append(ir.Assign(ir.Expr.binop(operator.and_, alive, stays, loc), alive, loc))
    out.append(ir.Jump(loop.exit, loc))
    header.body = out
    for label in loop.chain[1:]:
        del body[label]
    _enter(body, loop, once)
    for label in control_flow(body).dead_nodes():
        body.pop(label, None)


def _entered(entry: ir.Block, header: int) -> ir.Var:
    """A variable of the entry block that holds whether its branch enters the loop."""
    branch = entry.terminator
    if branch.truebr == header:
        return branch.cond
    var = ir.Var(entry.scope, mk_unique_var("$dk_entered"), entry.loc)
    entry.insert_before_terminator(
        ir.Assign(ir.Expr.unary(operator.not_, branch.cond, entry.loc), var, entry.loc)
    )
    return var


def _enter(body: dict[int, ir.Block], loop: _Loop, once: ir.Block) -> None:
    """The entry block made to run the loads made once where it entered the loop, and the
    written-out loop always."""
    entry = body[loop.entry]
    header = loop.chain[0]
    branch = entry.terminator
    if not isinstance(branch, ir.Branch):
        entry.body[-1:-1] = once.body
        return
    if not once.body:
        entry.body[-1] = ir.Jump(header, branch.loc)
        return
    label = max(body) + 1
    once.append(ir.Jump(header, branch.loc))
    body[label] = once
    into, past = (label, header) if branch.truebr == header else (header, label)
    entry.body[-1] = ir.Branch(branch.cond, into, past, branch.loc)


def _identities(region: Region, statements: list[ir.Stmt]) -> dict:
    """The in-place updates that the loop's stores write back (by the variable that holds
    the update) -> the update's identity, in the array's dtype."""
    updates = {
        stmt.target.name: stmt.value.fn
        for stmt in statements
        if isinstance(stmt, ir.Assign) and _is_binop(stmt.value, *_IDENTITIES)
    }
    return {
        store.value.name: as_dtype(region.params[store.target.name].type.dtype).type(
            _IDENTITIES[updates[store.value.name]]
        )
        for store in statements
        if isinstance(store, (ir.SetItem, ir.StaticSetItem)) and store.value.name in updates
    }
