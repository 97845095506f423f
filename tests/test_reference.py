"""The API reference is complete: every public name has a numpydoc docstring (a one-line
summary, Parameters when it takes any, Returns when it returns something, Raises naming what it
raises, Examples that run) and an entry in docs/reference.md.

The public names are `dk.__all__` (listed once, in __init__.pyi), the functions of its
namespaces (`dk.atomic.add`, `dk.aot.build`, ...) and the members users call (MEMBERS). Numba's
scalar types, the group operations (`dk.plus`, ...) and the fence flags are values: the
reference lists them in tables. A kernel-scope function's docstring and signature come from its
declaration (compiler/kernel_api/declarations/), which the reference renders. Every example
runs here, as a doctest on this machine's default device.
"""

from __future__ import annotations

import builtins
import doctest
import enum
import importlib
import inspect
import re
import warnings
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import jedi
import numba
import pytest
from numba.core import errors as numba_errors
from numba.core.extending import _Intrinsic
from numpydoc.docscrape import NumpyDocString

import dpex_kernels as dk
from dpex_kernels.compiler.kernel_api.declarations import DECLARATIONS
from dpex_kernels.compiler.kernel_api.registry import is_kernel_api

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference.md"

#: The functions of each namespace in dk.__all__, spelled from the namespace.
NAMESPACES = {
    "aot": ("build", "runtime.load", "runtime.Bundle"),
    "atomic": ("add", "sub", "min", "max", "exchange", "compare_exchange"),
    "local": ("array",),
    "private": ("array",),
    "sub_group": ("get_local_id", "get_size", "reduce_add", "shuffle", "broadcast", "barrier"),
    "types": (),  # the top level's own types, re-exported
}
#: The methods and properties users call, per class (the launch, kernel[range](...), is in the
#: class docstring: it is the C launcher's __getitem__).
MEMBERS = {
    "JitKernel": (
        "compile",
        "signatures",
        "simulate",
        "inspect_llvm",
        "inspect_spirv",
        "inspect_types",
    ),
    "CompiledKernel": ("spirv", "llvm_ir", "float_atomics"),
    "DeviceFunction": ("compile", "signatures"),
    "USMArrayType": ("sycl_device",),
}
#: What each class's Attributes section describes: its data users read.
ATTRIBUTES = {
    "JitKernel": {"definitions", "signatures", "stats", "py_func"},
    "CompiledKernel": {"signature", "device", "sycl_kernel", "attrs", "spirv", "llvm_ir"},
    "KernelStats": {"compiles", "cache_hits", "cache_misses"},
    "DeviceFunction": {"py_func", "signatures"},
    "USMArrayType": {"dtype", "ndim", "layout", "usm_type", "device", "readonly", "sycl_device"},
    "Range": {"ndim", "size"},
    "NdRange": {"global_range", "local_range", "ndim"},
    "LocalAccessor": {"shape", "dtype", "ndim", "nbytes"},
    "aot.runtime.Bundle": {"path", "kernels"},
    **{
        name: {member.name for member in getattr(dk, name)}
        for name in ("MemoryOrder", "MemoryScope", "AddressSpace", "GroupOperation")
    },
}
#: Classes users get from the library rather than construct: no constructor Parameters.
MADE_BY_THE_LIBRARY = {
    "JitKernel",
    "CompiledKernel",
    "KernelStats",
    "DeviceFunction",
    "USMArrayType",
    "aot.runtime.Bundle",
}
#: What a name's Raises section must name (beyond these, any it names must exist).
MUST_RAISE = {
    "kernel": {"TypeError", "ValueError", "KernelCompileError"},
    "JitKernel": {
        "InvalidRangeError",
        "KernelSignatureError",
        "ExecutionQueueError",
        "TypeError",
        "KernelCompileError",
        "KernelBoundsError",
    },
    "JitKernel.compile": {"TypeError", "KernelCompileError"},
    "func": {"TypeError", "KernelCompileError"},
    "DeviceFunction": {"TypeError"},
    "usm_array": {"TypeError", "ValueError", "DeviceNotFoundError"},
    "typeof": {"TypeError"},
    "Range": {"InvalidRangeError"},
    "NdRange": {"InvalidRangeError"},
    "LocalAccessor": {"TypeError"},
    "offload": {"ValueError", "KernelCompileError"},
    "raw_launch": {"TypingError"},
    "aot.build": {"TypeError", "ValueError"},
    "aot.runtime.load": {"BundleError"},
    # every kernel-scope function refuses to run on the host
    **{public.removeprefix("dk."): {"TypeError"} for public in DECLARATIONS},
}
#: Numba intrinsics return what their typing function gives, which no annotation says.
INTRINSICS_RETURNING_NOTHING = {"raw_wait"}


def _public(name: str):
    value = dk
    for part in name.split("."):
        value = getattr(value, part)
    return value


def _is_value(name: str) -> bool:
    """Scalar types, group operations and fence flags: values the reference tabulates."""
    value = getattr(dk, name, None) if "." not in name else None
    return isinstance(value, (numba.types.Type, enum.Enum, int))


def _documented_names() -> list[str]:
    names = []
    for name in sorted(dk.__all__):
        value = getattr(dk, name)
        if isinstance(value, ModuleType):
            names += [f"{name}.{member}" for member in NAMESPACES[name]]
        elif not _is_value(name):
            names.append(name)
            names += [f"{name}.{member}" for member in MEMBERS.get(name, ())]
    return names


DOCUMENTED = _documented_names()
VALUES = sorted(name for name in dk.__all__ if _is_value(name))


def _target(name: str):
    """The object whose __doc__ describes `name`: a property's getter's for members."""
    owner, _, member = name.rpartition(".")
    if owner in MEMBERS:
        attribute = inspect.getattr_static(_public(owner), member)
        if isinstance(attribute, property):
            return attribute
    return _public(name)


def _kind(target) -> str:
    if isinstance(target, property):
        return "property"
    if inspect.isclass(target):
        return "class"
    return "function"


def _parameters(target) -> list[str]:
    """The parameters a caller passes, spelled as numpydoc documents them."""
    signature = inspect.signature(target)
    parameters = list(signature.parameters.values())
    if isinstance(target, _Intrinsic):
        parameters = parameters[1:]  # Numba's typing context
    spelled = []
    for parameter in parameters:
        if parameter.name in ("self", "cls"):
            continue
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
        spelled.append(prefix.get(parameter.kind, "") + parameter.name)
    return spelled


def _returns_something(name: str, target, kind: str) -> bool:
    if kind == "property":
        return True
    if kind == "class" or name in INTRINSICS_RETURNING_NOTHING:
        return False
    return inspect.signature(target).return_annotation not in (None, "None")


def _exception(name: str, module: str | None) -> type | None:
    """The exception class `name`: dk's, Python's, Numba's, or one of the documented
    function's own module."""
    own = importlib.import_module(module) if module else None
    for namespace in (dk, builtins, numba_errors, own):
        value = getattr(namespace, name, None)
        if isinstance(value, type) and issubclass(value, BaseException):
            return value
    return None


def _parsed(name: str, target) -> NumpyDocString:
    doc = inspect.getdoc(target)
    assert doc, f"{name} has no docstring"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpydoc warns about unknown sections
        return NumpyDocString(doc)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_docstring_has_every_section_it_needs(name):
    target = _target(name)
    kind = _kind(target)
    doc = _parsed(name, target)
    summary = doc["Summary"]
    assert len(summary) == 1 and summary[0].endswith("."), f"{name}: a one-line summary"

    documented = [
        part.strip() for p in doc["Parameters"] for part in p.name.split(",") if part.strip()
    ]
    constructed = (
        kind == "class"
        and name not in MADE_BY_THE_LIBRARY
        and not issubclass(target, (BaseException, enum.Enum))
    )
    if kind == "function" or constructed:
        assert documented == _parameters(target), f"{name}: Parameters"
    for parameter in doc["Parameters"]:
        assert parameter.desc, f"{name}: parameter {parameter.name} has no description"

    if _returns_something(name, target, kind):
        assert doc["Returns"], f"{name}: a Returns section"

    raised = {entry.type for entry in doc["Raises"]}
    for exception in raised:
        assert _exception(exception, getattr(target, "__module__", None)), (
            f"{name}: {exception} is not an exception class"
        )
    assert MUST_RAISE.get(name, set()) <= raised, f"{name}: Raises"

    if name in ATTRIBUTES:
        described = {a.name for a in doc["Attributes"]}
        assert ATTRIBUTES[name] <= described, f"{name}: Attributes"

    assert any(line.startswith(">>>") for line in doc["Examples"]), f"{name}: Examples"


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_examples_run(name):
    doc = inspect.getdoc(_target(name)) or ""
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    assert test.examples, f"{name} has no example"
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)


def test_the_launch_is_documented():
    """kernel[range](*args, depends_on=...) is the C launcher's: JitKernel's docstring says it."""
    doc = inspect.getdoc(dk.JitKernel)
    assert "kernel[range](*args, depends_on=None)" in doc
    assert "depends_on" in doc.split("Examples")[1]


def test_the_namespace_lists_are_complete():
    for namespace in ("atomic", "local", "private", "sub_group"):
        module = getattr(dk, namespace)
        found = {id(value) for value in vars(module).values() if is_kernel_api(value)}
        listed = {id(getattr(module, name)) for name in NAMESPACES[namespace]}
        assert found == listed, namespace


def test_every_kernel_scope_function_is_declared():
    stubs = {f"dk.{name}" for name in DOCUMENTED if is_kernel_api(_public(name))}
    assert stubs == set(DECLARATIONS)


# --- the reference page -----------------------------------------------------------------------


def _resolve(path: str):
    """The object a `::: path` directive renders, found at run time."""
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            value = getattr(value, part)
        return value
    raise ImportError(path)


class Directive(NamedTuple):
    """One `::: path` of the reference: what it renders, and its options."""

    target: object
    members: set[str] | None  # the members its options list; None: all
    heading: str | None


def _directives() -> list[Directive]:
    found = []
    lines = REFERENCE.read_text().splitlines()
    for index, line in enumerate(lines):
        if not line.startswith("::: "):
            continue
        members = heading = None
        listing = False
        for option in lines[index + 1 :]:
            if option and not option.startswith(" "):
                break
            option = option.strip()
            if option == "members:":
                members, listing = set(), True
            elif listing and option.startswith("- "):
                members.add(option[2:])
            elif option.startswith("heading:"):
                heading = option.partition(":")[2].strip().strip('"')
            elif option:
                listing = False
        found.append(Directive(_resolve(line[4:].strip()), members, heading))
    return found


def _rendered_as(name: str):
    """What the reference renders for `name`: its declaration for a kernel-scope function."""
    return DECLARATIONS.get(f"dk.{name}", _public(name))


@pytest.mark.parametrize("name", DOCUMENTED)
def test_every_public_name_is_in_the_reference(name):
    directives = _directives()
    owner, _, member = name.rpartition(".")
    if owner in MEMBERS and member in MEMBERS[owner]:
        entries = [d.members for d in directives if d.target is _public(owner)]
        assert entries, f"{owner} has no entry in docs/reference.md"
        assert any(m is None or member in m for m in entries), f"{name} is not rendered"
        return
    rendered = _rendered_as(name)
    (directive,) = [d for d in directives if d.target is rendered] or [None]
    assert directive, f"{name} has no `::: ...` entry in docs/reference.md"
    if directive.heading is not None:  # written where the rendered name would mislead
        spelled, _, parameters = directive.heading.partition("(")
        assert spelled == name.removeprefix("aot.runtime.")
        written = [p.split("=")[0].strip() for p in parameters.rstrip(")").split(",")]
        assert [p for p in written if p] == _parameters(_public(name))


@pytest.mark.parametrize("name", VALUES)
def test_every_public_value_is_in_the_reference(name):
    assert re.search(rf"`dk\.{name}`", REFERENCE.read_text()), f"dk.{name}"


def test_kernel_scope_functions_show_their_parameters():
    """help(), IPython and jedi's interpreter mode (Jupyter's completion) read the declaration's
    signature and docstring from the stub."""
    assert list(inspect.signature(dk.get_global_id).parameters) == ["dim"]
    assert list(inspect.signature(dk.atomic.add).parameters) == ["arr", "idx", "val"]
    assert dk.barrier.__doc__ == DECLARATIONS["dk.barrier"].__doc__
    source = "dk.atomic.add("
    (signature,) = jedi.Interpreter(source, [{"dk": dk}]).get_signatures(1, len(source))
    assert [p.name for p in signature.params] == ["arr", "idx", "val"]
    with pytest.raises(TypeError, match="only be called inside a @dk.kernel"):
        dk.get_global_id(0)
