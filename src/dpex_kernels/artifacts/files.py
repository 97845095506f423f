"""Kernel artifacts as plain data: a JSON description plus SPIR-V and LLVM IR files, checksummed.

One writer and one reader, shared by AOT bundles (aot/bundle.py, aot/runtime.py) and the disk
cache (cache.py). Nothing here unpickles or imports anything named by the data: exception
classes are Python built-ins, by name. Numba-free, so a bundle loads without Numba.

What is read is untrusted (docs/security.md): archives are read within size limits, JSON
within a nesting depth, every field of a description is checked, and every SPIR-V module is
checked against the description (check_code) before anything can hand it to the runtime.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import json
import re
import reprlib
import zipfile
from collections.abc import Callable
from dataclasses import MISSING, asdict, fields

from .. import program_binaries
from .._runtime import device_by_canonical_name
from ..errors import BOUNDS_MARK
from ..types.params import ITEM, POINTER, kernel_slots
from ..types.spec import (
    FIELDS,
    LAYOUTS,
    MAX_NDIM,
    SCALAR_NAMES,
    USM_TYPES,
    ArraySpec,
    LocalAccessorSpec,
)
from . import spirv_tools
from .kernel import NDIMS, Builder, CodeFacts, KernelArtifact
from .options import CompileOptions
from .spirv import check_kernel
from .target import FILTER_STRING, Target

#: How deep a JSON document read from a file may nest (a description nests 8 deep).
MAX_JSON_DEPTH = 20
#: The most bytes one archive member may hold, and all the members read from one archive.
MAX_MEMBER_BYTES = 64 * 2**20
MAX_ARCHIVE_BYTES = 512 * 2**20
#: The most bytes of one SPIR-V module (checking one takes about 1 s per 4 MiB at worst).
MAX_SPIRV_BYTES = 8 * 2**20
#: The most parameters a kernel may have.
MAX_PARAMS = 1024
#: What a kernel's symbol may be: it names its entry point and, in program_binaries.py, a file.
SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
_EXCEPTION_CODE = re.compile(r"[0-9]{1,10}")
_FIELDS = (
    "name",
    "symbol",
    "params",
    "options",
    "target",
    "default_ndim",
    "front_end",
    "needs_nd_range",
    "max_work_group_items",
    "exceptions",
    "float_atomics",
    "variants",
)
_VARIANT_FIELDS = ("spirv", "spirv_sha256", "llvm", "llvm_sha256", "aspects", "local_memory")
_ARRAY_FIELDS = {f.name: f for f in fields(ArraySpec) if f.name != "contiguity"}


class CorruptArtifacts(ValueError):
    """A description or file that does not match what was written: never loaded."""


def shown(value: object) -> str:
    """`value` for a message: short, whatever a file put there."""
    return reprlib.repr(value)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json_arg(value):
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def builtin_exceptions(exceptions: dict) -> bool:
    """Whether every debug-mode exception class is a Python built-in (what the data can name)."""
    return all(
        exc is None or getattr(builtins, exc.__name__, None) is exc
        for exc, _ in exceptions.values()
    )


def param_to_json(param: ArraySpec | LocalAccessorSpec | str) -> dict:
    if isinstance(param, LocalAccessorSpec):
        return {"local_accessor": asdict(param)}
    if isinstance(param, ArraySpec):
        data = asdict(param)
        data.pop("contiguity")
        return {"array": data}
    return {"scalar": param}


def _array_spec(data: dict) -> ArraySpec:
    if set(data) != set(_ARRAY_FIELDS):
        raise CorruptArtifacts(f"an array parameter has the fields {shown(sorted(data))}")
    dtype, ndim, layout, usm_type, device = (data[name] for name in FIELDS)
    if not (
        dtype in SCALAR_NAMES
        and type(ndim) is int
        and 0 <= ndim <= MAX_NDIM
        and layout in LAYOUTS
        and usm_type in USM_TYPES
        and isinstance(device, str)
        and FILTER_STRING.fullmatch(device)
        and all(
            type(data[name]) is type(field.default)
            for name, field in _ARRAY_FIELDS.items()
            if field.default is not MISSING
        )
    ):
        raise CorruptArtifacts(f"an array parameter is malformed: {shown(data)}")
    return ArraySpec(**data)


def _local_accessor_spec(data: dict) -> LocalAccessorSpec:
    dtype, ndim = data.get("dtype"), data.get("ndim")
    if not (
        set(data) == {"dtype", "ndim"}
        and dtype in SCALAR_NAMES
        and dtype != "bool"
        and not dtype.startswith("complex")
        and type(ndim) is int
        and 1 <= ndim <= 3
    ):
        raise CorruptArtifacts(f"a LocalAccessor parameter is malformed: {shown(data)}")
    return LocalAccessorSpec(dtype, ndim)


def param_from_json(description: object) -> ArraySpec | LocalAccessorSpec | str:
    if isinstance(description, dict) and len(description) == 1:
        ((kind, value),) = description.items()
        if kind == "array" and isinstance(value, dict):
            return _array_spec(value)
        if kind == "local_accessor" and isinstance(value, dict):
            return _local_accessor_spec(value)
        if kind == "scalar" and (value in SCALAR_NAMES or value == ITEM):
            return value
    raise CorruptArtifacts(
        f"a parameter is neither an array, a LocalAccessor, an item nor a scalar: "
        f"{shown(description)}"
    )


def describe(artifact: KernelArtifact, put: Callable[[str, bytes], None], stem: str, ndims=NDIMS):
    """Write the SPIR-V and LLVM IR of `artifact`'s variants for `ndims` through `put(name,
    data)`, each under `stem`; return the JSON description that read() takes back."""
    variants = {}
    for ndim in ndims:
        llvm_ir, spirv = artifact.variant(ndim)
        facts = artifact.facts(ndim)
        llvm_bytes = llvm_ir.encode()
        put(f"{stem}/{ndim}d.spv", spirv)
        put(f"{stem}/{ndim}d.ll", llvm_bytes)
        variants[str(ndim)] = {
            "spirv": f"{stem}/{ndim}d.spv",
            "spirv_sha256": _digest(spirv),
            "llvm": f"{stem}/{ndim}d.ll",
            "llvm_sha256": _digest(llvm_bytes),
            "aspects": list(facts.aspects),
            "local_memory": facts.local_memory,
            "written_arguments": list(facts.written_arguments),
        }
    return {
        "name": artifact.name,
        "symbol": artifact.symbol,
        "params": [param_to_json(p) for p in artifact.params],
        "options": artifact.options.to_json(),
        "target": artifact.target.to_json(),
        "default_ndim": artifact.default_ndim,
        "front_end": artifact.front_end,
        "needs_nd_range": artifact.needs_nd_range,
        "max_work_group_items": artifact.max_work_group_items,
        "exceptions": {
            str(code): [exc.__name__ if exc is not None else None, [_json_arg(a) for a in args]]
            for code, (exc, args) in artifact.exceptions.items()
        },
        "float_atomics": artifact.float_atomics,
        "variants": variants,
    }


def _too_deep(document: object) -> bool:
    """Whether a parsed JSON document nests deeper than MAX_JSON_DEPTH (without recursion)."""
    pending = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            return True
        items = value.values() if isinstance(value, dict) else value
        pending.extend((item, depth + 1) for item in items if isinstance(item, (dict, list)))
    return False


def parse_json(data: bytes, name: str) -> object:
    """The JSON document in the file `name`, nested at most MAX_JSON_DEPTH deep."""
    try:
        document = json.loads(data)
    except RecursionError:  # the parser's own limit: far deeper than any description
        raise CorruptArtifacts(f"{name} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # not JSON, not UTF-8, an integer of too many digits
        raise CorruptArtifacts(f"{name} is not JSON ({exc})") from None
    if isinstance(document, (dict, list)) and _too_deep(document):
        raise CorruptArtifacts(f"{name} nests deeper than {MAX_JSON_DEPTH} levels")
    return document


class Archive:
    """The members of a zip archive held in memory, each read once and within the limits."""

    def __init__(self, data: bytes):
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
        except Exception as exc:  # whatever zipfile meets in a damaged file
            raise CorruptArtifacts(f"it is not a zip archive ({exc})") from None
        self._members: dict[str, bytes] = {}
        self._total = 0

    def read(self, name: str) -> bytes:
        """The member `name`; CorruptArtifacts when absent, too large or damaged."""
        found = self._members.get(name)
        if found is not None:
            return found
        try:
            info = self._zip.getinfo(name)
        except KeyError:
            raise CorruptArtifacts(f"it holds no file {shown(name)}") from None
        self._total += info.file_size
        if info.file_size > MAX_MEMBER_BYTES or self._total > MAX_ARCHIVE_BYTES:
            raise CorruptArtifacts(f"{name} makes the archive larger than the limits allow")
        try:
            found = self._members[name] = self._zip.read(info)
        except Exception as exc:  # zipfile raises what its decompressors raise
            raise CorruptArtifacts(f"{name} cannot be read ({type(exc).__name__}: {exc})") from None
        return found


def checked_file(get: Callable[[str], bytes], name: object, sha256: object) -> bytes:
    """The file `name` read through `get`, if its SHA-256 is `sha256`."""
    if not isinstance(name, str) or not isinstance(sha256, str):
        raise CorruptArtifacts(f"a file entry is not a name and a checksum: {shown(name)}")
    data = get(name)
    if _digest(data) != sha256:
        raise CorruptArtifacts(f"{name} does not match its checksum")
    return data


def check_code(artifact: KernelArtifact, spirv: bytes, tools: bool = True) -> CodeFacts:
    """The facts of `spirv` if it is a valid module of `artifact`'s kernel: an entry point of
    its symbol taking the arguments its parameters flatten into (types/params.py; a debug
    kernel's error record last), and with `tools` passing SPIRV-Tools' validator where that
    is installed. CorruptArtifacts saying what is wrong otherwise: nothing else may reach the
    runtime."""
    if len(spirv) > MAX_SPIRV_BYTES:
        raise CorruptArtifacts(f"its SPIR-V is larger than {MAX_SPIRV_BYTES} bytes")
    kinds = [slot.kind for slot in kernel_slots(artifact.params)]
    if artifact.error_flag:
        kinds.append(POINTER)
    try:
        facts = check_kernel(spirv, artifact.symbol, kinds, artifact.options.code_sub_group_size)
    except ValueError as exc:
        raise CorruptArtifacts(f"its SPIR-V is refused: {exc}") from None
    refusal = spirv_tools.validate(spirv) if tools else None
    if refusal is not None:
        raise CorruptArtifacts(f"its SPIR-V is refused by SPIRV-Tools' validator: {refusal}")
    return facts


def _built_before(artifact: KernelArtifact, spirv: bytes) -> bool:
    """Whether a device binary is kept for this module: the runtime built it before (after
    SPIRV-Tools passed it), and will load that binary rather than see the module again."""
    try:
        device = device_by_canonical_name(artifact.target.device)
    except ValueError:  # no such device here: whoever runs the module builds it
        return False
    return program_binaries.kept(spirv, artifact.symbol, device)


def _exception(code: object, entry: object) -> tuple[int, tuple]:
    """A debug kernel's status code and (built-in exception class, args), as launch_error
    (errors.py) reads them."""
    if not (
        isinstance(code, str)
        and _EXCEPTION_CODE.fullmatch(code)
        and isinstance(entry, list)
        and len(entry) == 2
        and (entry[0] is None or isinstance(entry[0], str))
        and isinstance(entry[1], list)
        and all(isinstance(a, (str, int, float, bool, type(None))) for a in entry[1])
    ):
        raise CorruptArtifacts(f"an exception entry is malformed: {shown(code)}: {shown(entry)}")
    name, args = entry
    if args and args[0] == BOUNDS_MARK and not (len(args) == 5 and type(args[2]) is int):
        raise CorruptArtifacts(f"a bounds error entry is malformed: {shown(args)}")
    found = getattr(builtins, name, None) if name else None
    if name and not (isinstance(found, type) and issubclass(found, Exception)):
        found = RuntimeError  # what the data names must be an exception, and no exit
    try:
        if found is not None:
            found("one message, as launch_error passes")
    except TypeError:  # a class that takes other arguments (UnicodeDecodeError)
        found = RuntimeError
    return int(code), (found, tuple(args))


def _facts(variant: dict) -> CodeFacts:
    aspects, local_memory = variant["aspects"], variant["local_memory"]
    written = variant["written_arguments"]
    if (
        not isinstance(aspects, list)
        or not all(isinstance(a, str) for a in aspects)
        or type(local_memory) is not int
        or local_memory < 0
        or not isinstance(written, list)
        or not all(type(w) is int and w >= 0 for w in written)
    ):
        raise CorruptArtifacts("a variant's facts have the wrong types")
    return CodeFacts(tuple(aspects), local_memory, tuple(written))


def _artifact(description: object, **extra) -> KernelArtifact:
    """The artifact of a description's fields, each checked; its variants not yet added."""
    if not isinstance(description, dict):
        raise CorruptArtifacts(f"a description is not a JSON object: {shown(description)}")
    missing = [name for name in _FIELDS if name not in description]
    if missing:
        raise CorruptArtifacts(f"a description lacks {', '.join(missing)}")
    name, symbol, params = description["name"], description["symbol"], description["params"]
    if not (isinstance(name, str) and name.isidentifier() and len(name) <= 200):
        raise CorruptArtifacts(f"the kernel name {shown(name)} is not a Python identifier")
    if not (isinstance(symbol, str) and SYMBOL.fullmatch(symbol)):
        raise CorruptArtifacts(f"the symbol {shown(symbol)} is not a C identifier")
    if not isinstance(params, list) or len(params) > MAX_PARAMS:
        raise CorruptArtifacts(f"the parameters are not a list of at most {MAX_PARAMS}")
    default_ndim, exceptions = description["default_ndim"], description["exceptions"]
    float_atomics = description["float_atomics"]
    needs_nd_range, max_items = description["needs_nd_range"], description["max_work_group_items"]
    if not (
        type(default_ndim) is int
        and default_ndim in NDIMS
        and isinstance(description["front_end"], str)
        and type(needs_nd_range) is bool
        and type(max_items) is int
        and max_items >= 0
        and isinstance(exceptions, dict)
        and isinstance(description["variants"], dict)
        and isinstance(float_atomics, dict)
        and all(path in ("native", "cas") for path in float_atomics.values())
    ):
        raise CorruptArtifacts("the description's fields have the wrong types")
    try:
        options = CompileOptions.from_json(description["options"])
        target = Target.from_json(description["target"])
    except (ValueError, TypeError) as exc:  # TypeError: a field of an unhashable type
        raise CorruptArtifacts(f"the options or target are malformed ({exc})") from None
    return KernelArtifact(
        name=name,
        symbol=symbol,
        params=tuple(param_from_json(p) for p in params),
        options=options,
        target=target,
        default_ndim=default_ndim,
        exceptions=dict(_exception(code, entry) for code, entry in exceptions.items()),
        float_atomics=dict(float_atomics),
        front_end=description["front_end"],
        needs_nd_range=needs_nd_range,
        max_work_group_items=max_items,
        **extra,
    )


def read(
    description: object,
    get: Callable[[str], bytes],
    *,
    linked_ir: str | None = None,
    type_annotation: str = "",
    builder: Builder | None = None,
    binaries: bool = False,
) -> KernelArtifact:
    """The artifact a description written by describe() stands for, each file checked against
    its checksum and each module against the description (check_code); with `linked_ir` and a
    `builder` it can make more variants. Raises CorruptArtifacts for anything else.

    SPIRV-Tools' validator (50 us to 1 ms a module) runs on each module but, where device
    `binaries` are kept and loaded (cache=True), not on one the runtime has built before."""
    artifact = _artifact(
        description, linked_ir=linked_ir, type_annotation=type_annotation, builder=builder
    )
    for key, variant in description["variants"].items():
        if key not in ("1", "2", "3") or not isinstance(variant, dict):
            raise CorruptArtifacts(f"a variant {shown(key)} is not one of 1, 2 or 3 dimensions")
        missing = [name for name in _VARIANT_FIELDS if name not in variant]
        if missing:
            raise CorruptArtifacts(f"variant {key} lacks {', '.join(missing)}")
        spirv = checked_file(get, variant["spirv"], variant["spirv_sha256"])
        llvm_ir = checked_file(get, variant["llvm"], variant["llvm_sha256"])
        try:
            tools = not (binaries and _built_before(artifact, spirv))
            facts = check_code(artifact, spirv, tools)
            llvm_text = llvm_ir.decode()
        except (CorruptArtifacts, UnicodeDecodeError) as exc:
            raise CorruptArtifacts(f"{variant['spirv']}: {exc}") from None
        if facts != _facts(variant):
            raise CorruptArtifacts(
                f"{variant['spirv']}: the aspects and local memory the description gives are "
                f"{shown(_facts(variant))}, its code's are {facts}"
            )
        artifact.add_variant(int(key), llvm_text, spirv, facts)
    if not artifact.has_variant(artifact.default_ndim):
        raise CorruptArtifacts("the description lacks its default variant")
    return artifact
