"""The command line: `python -m dpex_kernels` or `dpex-kernels` (docs/cli.md).

Without a command it is the self-check. A mistake on the command line (a missing module, no
such kernel, bad signature text) is one line on stderr and exit status 2; anything else that
goes wrong is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import metadata
from pathlib import Path

from .user_code import UserError

PROG = "python -m dpex_kernels"
#: What --version names besides dpex_kernels: what a bug report needs.
_COMPONENTS = ("numba", "llvmlite", "dpctl", "dpnp", "intel-opencl-rt")


def version_line() -> str:
    """dpex_kernels' version and its compiler's and runtime's, without importing them."""
    from .. import __version__

    parts = []
    for name in _COMPONENTS:
        try:
            parts.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} not installed")
    return f"dpex_kernels {__version__} ({', '.join(parts)})"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Without a command: list the SYCL devices, compile and run a check kernel "
        "on each (exit status: the default device's result).",
    )
    parser.add_argument("--version", action="store_true", help="print the versions and exit")
    parser.add_argument("--list", action="store_true", help="only list the devices")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    aot = commands.add_parser("aot", help="ahead-of-time bundles")
    aot_commands = aot.add_subparsers(dest="aot_command", required=True, metavar="COMMAND")
    build = aot_commands.add_parser("build", help="bundle the eager kernels of a module")
    build.add_argument("module", help="a module name, or the path of a .py file")
    build.add_argument("-o", "--output", required=True, help="the bundle file to write")

    cache = commands.add_parser("cache", help="the disk cache of cache=True kernels")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True, metavar="COMMAND")
    cache_commands.add_parser("path", help="print the cache folder")
    cache_commands.add_parser("list", help="list the entries with their sizes")
    cache_commands.add_parser("clear", help="delete every entry and device binary")

    inspect = commands.add_parser("inspect", help="print a kernel's types, LLVM IR or SPIR-V")
    inspect.add_argument("target", metavar="MODULE:KERNEL", help="e.g. app.kernels:vecadd")
    inspect.add_argument("--stage", required=True, choices=("types", "llvm", "spirv"))
    inspect.add_argument(
        "--sig",
        metavar="TEXT",
        help="one signature: its text as shown, or an expression such as "
        "'dk.void(vector, vector)' with the module's names (a lazy kernel needs one)",
    )

    env = commands.add_parser(
        "env", help="make the pip-installed OpenCL runtime visible to every process"
    )
    action = env.add_mutually_exclusive_group()
    action.add_argument(
        "--print", action="store_true", help='print the line for eval "$(... env --print)"'
    )
    action.add_argument(
        "--install", action="store_true", help="set the variable in the venv's activate scripts"
    )
    action.add_argument("--uninstall", action="store_true", help="take it out of them again")
    env.add_argument(
        "--shell", choices=("sh", "fish", "csh"), default="sh", help="for --print (default: sh)"
    )
    env.add_argument(
        "--prefix",
        type=Path,
        default=Path(sys.prefix),
        help=f"the environment (default: this Python's, {sys.prefix})",
    )
    return parser


def _run(options: argparse.Namespace) -> int:
    if options.command == "aot":
        from .aot import build

        return build(options.module, options.output)
    if options.command == "cache":
        from . import cache

        run = {"path": cache.show_path, "list": cache.list_entries, "clear": cache.clear}
        return run[options.cache_command]()
    if options.command == "inspect":
        from .inspect_kernel import inspect

        return inspect(options.target, options.stage, options.sig)
    if options.command == "env":
        from . import env

        if options.print:
            return env.print_line(options.prefix, options.shell)
        if options.install:
            return env.install(options.prefix)
        if options.uninstall:
            return env.uninstall(options.prefix)
        return env.status(options.prefix)
    from .selfcheck import run

    return run(options.list)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m dpex_kernels` and of the `dpex-kernels` script."""
    options = _parser().parse_args(argv)
    if options.version:
        print(version_line())
        return 0
    try:
        return _run(options)
    except UserError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.status
    except BrokenPipeError:  # `... inspect ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing at exit either
        return 1
