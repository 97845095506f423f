"""What users read about the functions kernels call: each one's Python signature and docstring.

A declaration is a function that is never called: `host_stub` gives the stub of the same public
name (`dk.get_global_id`, `dk.atomic.add`) its signature and docstring, so that `help()`,
IPython and the API reference (docs/reference.md) show them, and tests/test_reference.py checks
each one and runs its examples. One module here per topic of the reference. What a call
compiles to is the business of kernel_api's feature modules (kernel_api/index_space.py,
kernel_api/atomics.py, ...); this package imports none of them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

#: Public name -> its declaration, which its stub takes its signature and docstring from.
DECLARATIONS: dict[str, Callable] = {}


def declares(public: str, **sections: str) -> Callable[[Callable], Callable]:
    """Record the decorated function as the declaration of `public` (e.g. "dk.barrier").

    A docstring line `{name}` becomes `sections[name]`, indented as the docstring: a section
    several declarations share (dk.atomic.*'s parameters) is written once.
    """

    def record(declaration: Callable) -> Callable:
        for name, text in sections.items():
            placeholder = f"    {{{name}}}\n"
            if placeholder not in declaration.__doc__:
                raise AssertionError(f"internal error: {public}'s docstring has no {{{name}}}")
            indented = textwrap.indent(text, "    ")
            declaration.__doc__ = declaration.__doc__.replace(placeholder, indented)
        DECLARATIONS[public] = declaration
        return declaration

    return record


# The declarations themselves, one module per topic; importing them records them.
from . import (  # noqa: E402, F401
    atomics,
    group_algorithms,
    index_space,
    memory,
    sub_groups,
    sycl_atomics,
)
