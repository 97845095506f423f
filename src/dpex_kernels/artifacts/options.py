"""CompileOptions: every option that changes a kernel's code, defined once.

Each field has its default here, its validation in `__post_init__`, its part of the cache key in
`key()` and its JSON form in `to_json()` / `from_json()`. The dispatcher builds one from what
the user wrote, the compiler and the back end read it, the cache and AOT bundles store it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

#: The kinds of host-SIMD kernel (compiler/backend/host_simd.py): none, element-wise loops with
#: streaming stores, reductions, row loops with streaming stores. Offloaded loops only: not a
#: @dk.kernel option.
HOST_SIMD_KINDS = ("", "stream", "reduce", "rows")


#: Fields added after files were first written, with the value a file without one means.
_ADDED_FIELDS = {"noalias": False}


@dataclass(frozen=True)
class CompileOptions:
    """How one kernel is compiled; equal options give equal code on equal targets."""

    fastmath: bool = False
    opt_level: int = 3
    debug: bool = False
    #: The sub-group size the kernel requires; 0 leaves it to the runtime.
    sub_group_size: int = 0
    host_simd: str = ""
    #: Whether no array argument shares memory with another that the kernel writes (LLVM's
    #: `noalias` on their data pointers): loads stay in registers across stores. Only
    #: offloaded loops set it, and their launches check it (offloading/ranges.py).
    noalias: bool = False

    def __post_init__(self) -> None:
        for name in ("fastmath", "debug", "noalias"):
            if type(getattr(self, name)) is not bool:
                raise ValueError(f"{name} must be True or False; got {getattr(self, name)!r}")
        if type(self.opt_level) is not int or self.opt_level not in range(4):
            raise ValueError(f"opt_level must be 0, 1, 2 or 3; got {self.opt_level!r}")
        if type(self.sub_group_size) is not int or self.sub_group_size < 0:
            raise ValueError(
                f"sub_group_size must be a positive int or None (the runtime's choice); "
                f"got {self.sub_group_size!r}"
            )
        if self.host_simd not in HOST_SIMD_KINDS:
            raise ValueError(f"host_simd must be one of {HOST_SIMD_KINDS}; got {self.host_simd!r}")

    @classmethod
    def from_user(
        cls,
        kernel_name: str,
        *,
        fastmath: object = False,
        opt_level: object = 3,
        debug: object = False,
        sub_group_size: object = None,
        host_simd: str = "",
        noalias: bool = False,
    ) -> CompileOptions:
        """The options of @dk.kernel(...) as written: truthy flags are flags, None is 0."""
        if sub_group_size is not None and (type(sub_group_size) is not int or sub_group_size < 1):
            raise ValueError(
                f"kernel '{kernel_name}': sub_group_size must be a positive int or None "
                f"(the runtime's choice); got {sub_group_size!r}"
            )
        return cls(
            fastmath=bool(fastmath),
            opt_level=opt_level,
            debug=bool(debug),
            sub_group_size=sub_group_size or 0,
            host_simd=host_simd,
            noalias=noalias,
        )

    @property
    def code_sub_group_size(self) -> int:
        """The sub-group size the code requires (its SubgroupSize mode; 0: none), as the back
        end writes it (compiler/backend/pipeline.py finish): host-SIMD kernels run one
        work-item a sub-group."""
        return 1 if self.host_simd else self.sub_group_size

    def key(self) -> str:
        """This object's part of a cache key."""
        return repr(sorted(asdict(self).items()))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> CompileOptions:
        """The options written by to_json(); ValueError for anything else."""
        names = {f.name for f in fields(cls)}
        if isinstance(data, dict):
            data = {**_ADDED_FIELDS, **data}
        if not isinstance(data, dict) or set(data) != names:
            raise ValueError(f"compile options must be an object with the fields {sorted(names)}")
        return cls(**data)
