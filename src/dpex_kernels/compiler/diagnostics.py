"""Compile failures as KernelCompileError: short for the user's mistakes, plain about ours.

A mistake in the kernel (a Numba typing or lowering error, a construct this target refuses)
gets a few lines: what is wrong, the file, line and source of the statement, and a hint.
Anything else is a bug in dpex_kernels: the error says "internal error" and the caller
chains the original exception, so its traceback survives.
"""

from __future__ import annotations

import inspect
import linecache
import os
import re

import numba
from numba.core import errors as numba_errors

from ..errors import KernelCompileError

_NUMBA_PATH = os.path.dirname(numba.__file__)

_HINTS = (
    (
        r"^print\(\) of|function print>",
        "print() in kernels takes scalars and string constants; to see an array, write "
        "it to an output array and print that on the host",
    ),
    (
        r"np\.(empty|zeros|ones|array|full)\b|\bNRT\b|meminfo",
        "kernels cannot allocate arrays; pass an output array, or use dk.local.array / "
        "dk.private.array",
    ),
    (
        r"pyobject|reflected list|Untyped global|Cannot determine Numba type|imprecise type",
        "only typed, device-compatible code runs in kernels: no Python objects, lists, dicts "
        "or untyped globals",
    ),
    (
        r"function <built-in function (get|set)item>",
        "index an array with integers or slices, one per dimension (a[i] on 1-d, a[i, j] "
        "on 2-d arrays)",
    ),
)

# Numba appends to its messages the source excerpt, the typing context and, for calls that
# matched no implementation, every candidate it tried: the statement's location says it all.
_MESSAGE_END = re.compile(r"\n\s*\nThere are \d+ candidate|\n\nFile \"|\nDuring: ")
# Numba colours its messages when colorama is installed: the colour codes go first.
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def definition_location(py_func) -> str:
    """`file:line` of a function's `def`."""
    try:
        filename = inspect.getsourcefile(py_func) or py_func.__code__.co_filename
        return f"{filename}:{py_func.__code__.co_firstlineno}"
    except (TypeError, AttributeError):
        return "<unknown source>"


def current_loc():
    """The location of the user-code statement Numba typed or lowered last (or None)."""
    loc = numba_errors.loc_info.get("loc")
    return loc if _in_user_code(loc) else None


def _in_user_code(loc) -> bool:
    return loc is not None and bool(loc.filename) and not loc.filename.startswith(_NUMBA_PATH)


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        yield exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__


def _user_loc(exc: BaseException, stop=None):
    """The first location in the exception chain (up to `stop`) in user code, not Numba's."""
    for link in _chain(exc):
        if link is stop:
            break
        loc = getattr(link, "loc", None)
        if _in_user_code(loc):
            return loc
    return None


def _statement(loc) -> str:
    source = linecache.getline(loc.filename, loc.line).strip()
    return f"{loc.filename}:{loc.line}" + (f"\n    {source}" if source else "")


# Numba's message once its pipeline wrapped the error (the first argument, which Numba patches,
# as it does for an undefined name, while `msg` keeps the message before the patch).
_PIPELINE = re.compile(r"^Failed in \w+ mode pipeline \(step: [^)]*\)\n")


# A call that matched no implementation because one of this package's typing templates refused
# it says why: that reason is the message (the first one: the most literal argument types).
_OUR_REFUSAL = re.compile(
    r"raised a specific error:\n\s*\w+: (.*?)\n\s*raised from \S*dpex_kernels\S*", re.S
)


# A template that prefers literal arguments (the kernel API's) refused both the literal and the
# plain argument types: its reason is the message (the literal attempt's).
_LITERAL_REFUSAL = re.compile(
    r"^- Resolution failure for literal arguments:\n(.*?)\n- Resolution failure for non-literal",
    re.S,
)


def _short(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, numba_errors.NumbaError):
        text = str(exc.args[0]) if exc.args else str(exc.msg)
    text = _PIPELINE.sub("", _COLOUR.sub("", text))
    refusal = _OUR_REFUSAL.search(text) or _LITERAL_REFUSAL.search(text)
    if refusal is not None:
        return refusal.group(1).strip()
    return _MESSAGE_END.split(text, maxsplit=1)[0].strip()


def is_user_error(exc: BaseException) -> bool:
    """Numba's verdicts on the code (typing, lowering, unsupported), and this target's refusals."""
    if isinstance(exc, numba_errors.InternalError):
        return False
    # Python that Numba cannot read (`f(**kwargs)`): not a NumbaError, but the code's.
    unsupported = (numba_errors.NumbaError, numba_errors.UnsupportedBytecodeError)
    return isinstance(exc, (*unsupported, NotImplementedError))


def _reported_inside(exc: BaseException) -> KernelCompileError | None:
    """A KernelCompileError already made for a callee, which Numba's typing wrapped."""
    return next((link for link in _chain(exc) if isinstance(link, KernelCompileError)), None)


def compile_failure(
    py_func, exc: BaseException, *, what: str = "kernel", stale_loc=None, internal=None
) -> KernelCompileError:
    """The KernelCompileError for `exc`, raised while compiling `py_func`.

    `internal` defaults to what is_user_error says; callers past Numba's pipeline pass True.
    The location is the exception's own, else the statement Numba was working on unless it
    is `stale_loc` (what was current before this compile began), else the `def` line.
    """
    name = getattr(py_func, "__qualname__", repr(py_func))
    inner = _reported_inside(exc)
    if inner is not None:
        if getattr(inner, "function", None) is py_func:
            return inner  # the same function, for other argument types
        loc = _user_loc(exc, stop=inner)
        where = _statement(loc) if loc is not None else definition_location(py_func)
        return _tagged(
            KernelCompileError(
                f"cannot compile {what} '{name}' for a SYCL device: a device function it "
                f"calls cannot be compiled\n  at {where}\n{inner}"
            ),
            py_func,
        )
    loc = _user_loc(exc)
    if loc is None and current_loc() is not stale_loc:
        loc = current_loc()
    where = _statement(loc) if loc is not None else definition_location(py_func)
    if internal is None:
        internal = not is_user_error(exc)
    if internal:
        return _tagged(
            KernelCompileError(
                f"internal error in dpex_kernels while compiling {what} '{name}' ({where}): "
                f"{type(exc).__name__}: {exc}\nThis is a bug in dpex_kernels, not in your code; "
                f"please report it with the traceback above"
            ),
            py_func,
        )
    return _tagged(user_error(py_func, _short(exc), where, what=what), py_func)


def _tagged(error: KernelCompileError, py_func) -> KernelCompileError:
    """Remember which function failed, so a caller's report does not repeat it."""
    error.function = py_func
    return error


def user_error(py_func, problem: str, where: str | None = None, *, what: str = "kernel"):
    """A KernelCompileError naming the function, where the problem is and a matching hint."""
    name = getattr(py_func, "__qualname__", repr(py_func))
    where = where or definition_location(py_func)
    hint = next((h for pattern, h in _HINTS if re.search(pattern, problem)), None)
    text = f"cannot compile {what} '{name}' for a SYCL device: {problem}\n  at {where}"
    if hint:
        text += f"\nHint: {hint}."
    return KernelCompileError(text)
