"""Group algorithms in converged control flow: a group algorithm or dk.group_barrier that only
some work-items of the group reach is refused at compile time, naming its line.

SYCL requires every work-item of a group to call a group function together; one that only
some of them reach hangs or gives undefined results on a device. Where that depends on a value
the compiler sees varying between work-items, it is a KernelCompileError: a group algorithm
over a work-group inside a branch or loop whose condition varies within the work-group, or one
over a sub-group whose condition varies within the sub-group.

What varies is found on Numba's typed IR: the work-item's ids (global, local, linear, its lane
in the sub-group, `leader()`), the old values of atomics, scans and shuffles vary between
work-items; a sub-group's index and size and its reductions and broadcasts vary between the
sub-groups of a work-group; everything computed from a varying value varies (array elements
read at a varying index included), and so does a value that merges paths a varying condition
chose. Parameters, constants, group ids and ranges, and work-group reductions, broadcasts and
votes do not. What the compiler cannot see (a value that depends on what other work-items
stored in memory, a group function inside a device function) is the simulator's to report
(`kernel.simulate`).
"""

from __future__ import annotations

from numba.core import errors, ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.compiler_machinery import AnalysisPass, register_pass

from .atomic_ref import AtomicRefType, group_barrier
from .groups import (
    all_of_group,
    any_of_group,
    exclusive_scan_over_group,
    group_broadcast,
    inclusive_scan_over_group,
    none_of_group,
    permute_group_by_xor,
    reduce_over_group,
    select_from_group,
    shift_group_left,
    shift_group_right,
)
from .items import GroupType, ItemType, SubGroupType
from .registry import is_kernel_api

#: How much a value varies: not within a work-group, between its sub-groups, between work-items.
UNIFORM, PER_SUB_GROUP, PER_WORK_ITEM = 0, 1, 2

#: Item, group and sub-group methods whose results vary (the rest: UNIFORM).
_METHODS = {
    ItemType: dict.fromkeys(
        (
            "get_id",
            "get_global_id",
            "get_local_id",
            "get_linear_id",
            "get_global_linear_id",
            "get_local_linear_id",
        ),
        PER_WORK_ITEM,
    ),
    GroupType: dict.fromkeys(("get_local_id", "get_local_linear_id", "leader"), PER_WORK_ITEM),
    SubGroupType: {
        "get_local_id": PER_WORK_ITEM,
        "leader": PER_WORK_ITEM,
        "get_group_id": PER_SUB_GROUP,
        "get_local_range": PER_SUB_GROUP,
    },
}
#: Free functions (the stubs' names) whose results vary.
_FUNCTIONS = {
    "get_global_id": PER_WORK_ITEM,
    "get_local_id": PER_WORK_ITEM,
    "sub_group_get_local_id": PER_WORK_ITEM,
    "sub_group_shuffle": PER_WORK_ITEM,
    "sub_group_get_size": PER_SUB_GROUP,
    "sub_group_reduce_add": PER_SUB_GROUP,
    "sub_group_broadcast": PER_SUB_GROUP,
    **dict.fromkeys(
        (
            "atomic_add",
            "atomic_sub",
            "atomic_min",
            "atomic_max",
            "atomic_exchange",
            "atomic_compare_exchange",
        ),
        PER_WORK_ITEM,
    ),
}
#: Group functions: the same value for the whole group (reduce, broadcast, votes), or one per
#: work-item (scans, shuffles).
_GROUP_WIDE = (reduce_over_group, group_broadcast, any_of_group, all_of_group, none_of_group)
_PER_WORK_ITEM = (
    inclusive_scan_over_group,
    exclusive_scan_over_group,
    shift_group_left,
    shift_group_right,
    permute_group_by_xor,
    select_from_group,
)
GROUP_FUNCTIONS = (*_GROUP_WIDE, *_PER_WORK_ITEM, group_barrier)


def _callee(typemap: dict, call: ir.Expr) -> tuple[object, object]:
    """(the kernel API stub or method name called, the receiver's type or None)."""
    fnty = typemap.get(call.func.name)
    if isinstance(fnty, types.BoundFunction):
        return fnty.typing_key.rsplit(".", 1)[-1], fnty.this
    if isinstance(fnty, types.Function) and is_kernel_api(fnty.typing_key):
        return fnty.typing_key, None
    return None, None


def _group_type(calltypes: dict, call: ir.Expr):
    signature = calltypes.get(call)
    return signature.args[0] if signature is not None and signature.args else None


def _call_variation(typemap: dict, calltypes: dict, call: ir.Expr) -> int | None:
    """How much a call's result varies by what is called, or None: as its arguments do."""
    callee, receiver = _callee(typemap, call)
    if isinstance(receiver, AtomicRefType):
        return PER_WORK_ITEM
    if type(receiver) in _METHODS:
        return _METHODS[type(receiver)].get(callee, UNIFORM)
    if receiver is not None or callee is None:
        return None
    if callee in _PER_WORK_ITEM:
        return PER_WORK_ITEM
    if callee in _GROUP_WIDE:
        sub_group = isinstance(_group_type(calltypes, call), SubGroupType)
        return PER_SUB_GROUP if sub_group else UNIFORM
    return _FUNCTIONS.get(callee.__name__)


class _Variation:
    """The variation of each variable and each block's control flow in one function."""

    def __init__(self, func_ir: ir.FunctionIR, typemap: dict, calltypes: dict):
        self.func_ir, self.typemap, self.calltypes = func_ir, typemap, calltypes
        self.values: dict[str, int] = {}
        #: block label -> how much whether a work-item runs the block varies, and the
        #: branch that decides it.
        self.blocks: dict[int, tuple[int, ir.Branch | None]] = {}
        self.dependences = _control_dependences(func_ir.blocks)

    def of(self, value) -> int:
        if isinstance(value, ir.Var):
            return self.values.get(value.name, UNIFORM)
        if isinstance(value, ir.Expr):
            found = max((self.of(v) for v in value.list_vars()), default=UNIFORM)
            if value.op == "call":  # what is called decides, if it is one of ours
                own = _call_variation(self.typemap, self.calltypes, value)
                return found if own is None else own
            if value.op == "phi":  # merging paths that a varying condition chose
                blocks = [self.blocks.get(b, (UNIFORM, None))[0] for b in value.incoming_blocks]
                return max([found, *blocks])
            return found
        return UNIFORM

    def solve(self) -> None:
        """Propagate until nothing changes: values, then the branches they decide."""
        changed = True
        while changed:
            changed = False
            for label, block in self.func_ir.blocks.items():
                where = self.blocks.get(label, (UNIFORM, None))[0]
                for inst in block.body:
                    if isinstance(inst, ir.Assign):
                        level = max(self.of(inst.value), where)
                        if level > self.values.get(inst.target.name, UNIFORM):
                            self.values[inst.target.name] = level
                            changed = True
            for label in self.func_ir.blocks:
                found = self._block(label)
                if found[0] > self.blocks.get(label, (UNIFORM, None))[0]:
                    self.blocks[label] = found
                    changed = True

    def _block(self, label: int) -> tuple[int, ir.Branch | None]:
        level, decided_by = UNIFORM, None
        for branch_label in self.dependences.get(label, ()):
            branch = self.func_ir.blocks[branch_label].terminator
            here = max(self.of(branch.cond), self.blocks.get(branch_label, (UNIFORM, None))[0])
            if here > level:
                level = here
                own = self.of(branch.cond) >= here
                decided_by = branch if own else self.blocks[branch_label][1]
        return level, decided_by


def _control_dependences(blocks: dict) -> dict[int, set[int]]:
    """Block label -> the labels of the blocks whose conditional branch decides whether it runs:
    B depends on branch A when B post-dominates a successor of A but not A itself."""
    cfg = compute_cfg_from_blocks(blocks)
    post = cfg.post_dominators()
    found: dict[int, set[int]] = {}
    for label, block in blocks.items():
        terminator = block.terminator
        if not isinstance(terminator, ir.Branch):
            continue
        for successor in (terminator.truebr, terminator.falsebr):
            for dependent in post.get(successor, ()):
                if dependent == label or dependent not in post.get(label, ()):
                    found.setdefault(dependent, set()).add(label)
    return found


def _public(callee) -> str:
    return f"dk.{callee.__name__}"


def check_converged(func_ir: ir.FunctionIR, typemap: dict, calltypes: dict) -> None:
    """Refuse a group function that not every work-item of its group reaches (see the module
    docstring), naming its line and the condition it depends on."""
    calls = [
        (label, inst)
        for label, block in func_ir.blocks.items()
        for inst in block.body
        if isinstance(inst, ir.Assign) and _is_group_call(typemap, inst)
    ]
    if not calls:
        return
    variation = _Variation(func_ir, typemap, calltypes)
    variation.solve()
    for label, inst in calls:
        call = inst.value
        callee, _ = _callee(typemap, call)
        sub_group = isinstance(_group_type(calltypes, call), SubGroupType)
        level, branch = variation.blocks.get(label, (UNIFORM, None))
        if level >= (PER_WORK_ITEM if sub_group else PER_SUB_GROUP):
            group = "sub-group" if sub_group else "work-group"
            condition = f"line {branch.loc.line}" if branch is not None else "a condition"
            raise errors.UnsupportedError(
                f"{_public(callee)} over a {group} is called where not every work-item of the "
                f"{group} gets to: whether it runs depends on the condition at {condition}, "
                f"which differs between its work-items; call it where all of them do (before "
                f"the branch or loop) and use its result inside",
                loc=inst.loc,
            )


def _is_group_call(typemap: dict, inst: ir.Assign) -> bool:
    value = inst.value
    if not isinstance(value, ir.Expr) or value.op != "call":
        return False
    callee, receiver = _callee(typemap, value)
    return receiver is None and callee in GROUP_FUNCTIONS


@register_pass(mutates_CFG=False, analysis_only=True)
class ConvergedGroupCalls(AnalysisPass):
    """check_converged() on the typed IR, before the phis are taken out for lowering."""

    _name = "dpex_converged_group_calls"

    def __init__(self):
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        check_converged(state.func_ir, state.typemap, state.calltypes)
        return False
