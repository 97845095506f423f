"""python -m dpex_kernels env: the pip-installed OpenCL CPU runtime for every process of a venv.

`import dpex_kernels` points the OpenCL ICD loader at the environment's libintelocl.so, but only
in the process that imports it: a plain dpnp script, `python -m dpctl` or a Dask worker sees no
device. The loader reads only /etc/OpenCL/vendors (system-wide, root's) and two variables, so
the variable must be in a process's environment before it starts: in the shell (`--print`, for
eval) or in the venv's activation scripts (`--install`, undone by `--uninstall`), which is what
every process started from an activated shell inherits, Python or not. A .pth file or
sitecustomize would run code in every Python start instead, and still miss other programs.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .user_code import UserError

VARIABLE, OTHER_VARIABLE = "OCL_ICD_FILENAMES", "OCL_ICD_VENDORS"
BEGIN, END = "# >>> dpex_kernels env >>>", "# <<< dpex_kernels env <<<"


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _csh_quote(text: str) -> str:
    if any(c in text for c in "'!\n"):
        raise UserError(f"{text!r} cannot be quoted for csh: use a path without ', ! or newlines")
    return f"'{text}'"


@dataclass(frozen=True)
class Shell:
    """How one shell's activation script sets the variable, and its deactivate unsets it.

    The texts below spell the variables out (OCL_ICD_FILENAMES; _DPEX_KERNELS_OCL_ICD, which
    says the activation set it); VALUE stands for the library's path, quoted for the shell.
    """

    script: str  # the activation script under bin/
    quote: Callable[[str], str]  # a word quoted for the shell
    assign: str  # the line that --print prints
    block: str  # appended to the activation: sets it where the user set neither variable
    anchor: str  # the start of deactivate's definition in the script
    on_deactivate: str  # what deactivate runs first: on the anchor's next line, or inline
    inline: bool = False  # deactivate is one line (csh's alias): the code goes right after

    def assignment(self, library: str) -> str:
        """The line that sets the variable in this shell."""
        return self.assign.replace("VALUE", self.quote(library))

    def lines(self, library: str) -> str:
        """The block appended to the activation script, between the markers."""
        return f"{BEGIN}\n{self.block.replace('VALUE', self.quote(library))}{END}\n"


SH = Shell(
    script="activate",
    quote=shlex.quote,
    assign="export OCL_ICD_FILENAMES=VALUE",
    block="""\
if [ -z "${OCL_ICD_FILENAMES+set}" ] && [ -z "${OCL_ICD_VENDORS+set}" ] ; then
    OCL_ICD_FILENAMES=VALUE
    export OCL_ICD_FILENAMES
    _DPEX_KERNELS_OCL_ICD=1
fi
""",
    anchor="deactivate () {",
    on_deactivate=f"""\
    {BEGIN}
    if [ -n "${{_DPEX_KERNELS_OCL_ICD:-}}" ] ; then
        unset OCL_ICD_FILENAMES _DPEX_KERNELS_OCL_ICD
    fi
    {END}
""",
)
FISH = Shell(
    script="activate.fish",
    quote=_fish_quote,
    assign="set -gx OCL_ICD_FILENAMES VALUE",
    block="""\
if not set -q OCL_ICD_FILENAMES; and not set -q OCL_ICD_VENDORS
    set -gx OCL_ICD_FILENAMES VALUE
    set -g _DPEX_KERNELS_OCL_ICD 1
end
""",
    anchor="function deactivate ",
    on_deactivate=f"""\
    {BEGIN}
    if set -q _DPEX_KERNELS_OCL_ICD
        set -e OCL_ICD_FILENAMES
        set -e _DPEX_KERNELS_OCL_ICD
    end
    {END}
""",
)
CSH = Shell(
    script="activate.csh",
    quote=_csh_quote,
    assign="setenv OCL_ICD_FILENAMES VALUE",
    block="""\
if ( ! $?OCL_ICD_FILENAMES && ! $?OCL_ICD_VENDORS ) then
    setenv OCL_ICD_FILENAMES VALUE
    set _DPEX_KERNELS_OCL_ICD = 1
endif
""",
    anchor="alias deactivate '",
    on_deactivate="test $?_DPEX_KERNELS_OCL_ICD != 0 && unsetenv OCL_ICD_FILENAMES "
    "&& unset _DPEX_KERNELS_OCL_ICD; ",
    inline=True,
)
SHELLS = {"sh": SH, "fish": FISH, "csh": CSH}


def runtime_library(prefix: Path) -> Path:
    """The environment's own Intel OpenCL CPU runtime (pip's intel-opencl-rt)."""
    return prefix / "lib" / "libintelocl.so"


def _checked_library(prefix: Path) -> Path | None:
    """The library to name, or None where the loader finds it already; UserError if absent."""
    from .._runtime import icd_registered

    library = runtime_library(prefix)
    if not library.exists():
        raise UserError(
            f"no {library}: the Intel OpenCL CPU runtime is not installed in {prefix} "
            f"(pip install 'intel-opencl-rt>=2026.1,<2026.2')",
            status=1,
        )
    if icd_registered(library):
        print(
            f"nothing to do: a vendor file of the OpenCL ICD loader names {library} already",
            file=sys.stderr,
        )
        return None
    return library


def remove_blocks(text: str) -> str:
    """An activation script without what `add_blocks` put in."""
    kept, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END and inside:
            inside = False
        elif not inside:
            kept.append(line)
    return "".join(kept).replace(CSH.on_deactivate, "")


def add_blocks(text: str, shell: Shell, library: str) -> str:
    """An activation script that sets the variable, and whose deactivate unsets it again."""
    text = remove_blocks(text)
    start = text.find(shell.anchor)
    if start < 0:
        raise ValueError(f"no {shell.anchor.strip()!r} in it")
    at = start + len(shell.anchor) if shell.inline else text.index("\n", start) + 1
    text = text[:at] + shell.on_deactivate + text[at:]
    return text + ("" if text.endswith("\n") else "\n") + shell.lines(library)


def _scripts(prefix: Path) -> list[tuple[Shell, Path]]:
    """The environment's activation scripts, of the shells this command knows."""
    found = [(s, prefix / "bin" / s.script) for s in SHELLS.values()]
    return [(s, p) for s, p in found if p.is_file()]


def _scripts_to_edit(prefix: Path) -> list[tuple[Shell, Path]]:
    found = _scripts(prefix)
    if not found:
        raise UserError(
            f"no activation scripts in {prefix / 'bin'}: this is not a virtual environment; "
            f"put the line of 'python -m dpex_kernels env --print' in your shell's profile"
        )
    return found


def install(prefix: Path) -> int:
    """Write the variable into the environment's activation scripts (again: replaced)."""
    library = _checked_library(prefix)
    if library is None:
        return 0
    for shell, path in _scripts_to_edit(prefix):
        try:
            path.write_text(add_blocks(path.read_text(), shell, str(library)))
        except ValueError as exc:
            print(f"{path}: left alone, not a script this command knows ({exc})", file=sys.stderr)
            continue
        print(f"{path}: sets {VARIABLE}={library} where neither variable is set")
    print("activate the environment again for it to take effect")
    return 0


def uninstall(prefix: Path) -> int:
    """Take the variable out of the activation scripts again."""
    for _, path in _scripts_to_edit(prefix):
        text = path.read_text()
        cleaned = remove_blocks(text)
        if cleaned != text:
            path.write_text(cleaned)
            print(f"{path}: {VARIABLE} removed")
        else:
            print(f"{path}: nothing to remove")
    return 0


def print_line(prefix: Path, shell_name: str) -> int:
    """The line that sets the variable in a shell: eval "$(python -m dpex_kernels env --print)"."""
    from .._runtime import BOOTSTRAPPED

    library = _checked_library(prefix)
    if library is None:
        return 0
    current = None if BOOTSTRAPPED else os.environ.get(VARIABLE)
    if current is not None and current != str(library):
        print(f"note: this replaces {VARIABLE}={current} of this shell", file=sys.stderr)
    shell = SHELLS[shell_name]
    print(shell.assignment(str(library)))
    return 0


def status(prefix: Path) -> int:
    """Whether processes that do not import dpex_kernels see the runtime, and how to fix it."""
    from .._runtime import BOOTSTRAPPED

    library = _checked_library(prefix)
    if library is None:
        return 0
    print(f"runtime: {library}")
    shell_values = {
        name: None if BOOTSTRAPPED else os.environ.get(name) for name in (VARIABLE, OTHER_VARIABLE)
    }
    shown = [f"{name}={value}" for name, value in shell_values.items() if value is not None]
    if shown:
        print(f"this shell: {', '.join(shown)} (set by you: dpex_kernels never overrides it)")
    else:
        print(
            f"this shell: {VARIABLE} is not set, so processes that do not import dpex_kernels "
            f"(dpnp scripts, python -m dpctl, Dask workers) see no CPU device"
        )
    scripts = [path for _, path in _scripts(prefix) if BEGIN in path.read_text()]
    if scripts:
        print(f"activation scripts: set up ({', '.join(str(p) for p in scripts)})")
    else:
        print(
            "activation scripts: not set up; run 'python -m dpex_kernels env --install' and "
            'activate the environment again, or eval "$(python -m dpex_kernels env --print)"'
        )
    return 0
