"""The OpenCL runtime's build log in KernelCompileError (build_log.py): a build that fails says
why, in the runtime's words, where dpctl alone gave an empty reason."""

from __future__ import annotations

import struct

import dpctl
import pytest

import dpex_kernels as dk
from dpex_kernels import build_log, device


def _spirv_calling_an_undefined_function() -> bytes:
    """SPIR-V 1.0 of a kernel `dk_bad` that calls `dk_undefined_function`, which it declares
    (Import linkage) but nobody defines: the runtime reads it, and its build fails at link
    time, with a log naming the function."""

    def op(code: int, *operands: int) -> list[int]:
        return [(len(operands) + 1) << 16 | code, *operands]

    def text(value: str) -> list[int]:
        data = value.encode() + b"\0"
        data += b"\0" * (-len(data) % 4)
        return list(struct.unpack(f"<{len(data) // 4}I", data))

    void, function_type, undefined, kernel, label, call = range(1, 7)
    words = [0x07230203, 0x00010000, 0, 7, 0]  # magic, version 1.0, generator, id bound, schema
    words += op(17, 4) + op(17, 6) + op(17, 5)  # OpCapability Addresses, Kernel, Linkage
    words += op(14, 2, 2)  # OpMemoryModel Physical64 OpenCL
    words += op(15, 6, kernel, *text("dk_bad"))  # OpEntryPoint Kernel
    words += op(71, undefined, 41, *text("dk_undefined_function"), 1)  # LinkageAttributes Import
    words += op(19, void) + op(33, function_type, void)  # OpTypeVoid, OpTypeFunction
    words += op(54, void, undefined, 0, function_type) + op(56)  # a declaration only
    words += op(54, void, kernel, 0, function_type) + op(248, label)
    words += op(57, void, call, undefined)  # OpFunctionCall
    words += op(253) + op(56)  # OpReturn, OpFunctionEnd
    return struct.pack(f"<{len(words)}I", *words)


UNDEFINED_CALL_SPIRV = _spirv_calling_an_undefined_function()


def test_the_log_of_a_build_that_fails(cpu_device):
    log = build_log.build_log(UNDEFINED_CALL_SPIRV, cpu_device)
    assert log.startswith("build log of the OpenCL runtime:\n")
    assert "dk_undefined_function" in log
    assert all(line.startswith("    ") and line == line.rstrip() for line in log.splitlines()[1:])


def test_a_kernel_that_does_not_build_says_why(cpu_device):
    with pytest.raises(dk.KernelCompileError) as info:
        device.build_kernel(UNDEFINED_CALL_SPIRV, "dk_bad", dpctl.SyclQueue(cpu_device))
    first, *rest = str(info.value).splitlines()
    assert first.startswith("the SYCL runtime could not build kernel 'dk_bad' for opencl:cpu:0")
    assert first.endswith(": SyclProgramCompilationError")  # dpctl's message is empty
    assert rest[0] == "build log of the OpenCL runtime:"
    assert any("dk_undefined_function" in line for line in rest)


def test_without_a_log_it_says_why(monkeypatch, cpu_device):
    spirv = device._empty_kernel_spirv()
    said = build_log.build_log(spirv, cpu_device)
    assert said == "no build log: the OpenCL runtime builds this SPIR-V when asked directly"
    monkeypatch.setattr(build_log, "opencl_devices", lambda device: (None, []))
    said = build_log.build_log(UNDEFINED_CALL_SPIRV, cpu_device)
    assert said == "no build log: the OpenCL ICD loader lists no device like this one"


def test_a_long_log_keeps_its_last_lines():
    text = build_log._format("\n".join(f"line {i}" for i in range(100)))
    lines = text.splitlines()
    assert (
        lines[0]
        == f"build log of the OpenCL runtime (its last {build_log.MAX_LINES} lines of 100):"
    )
    assert len(lines) == build_log.MAX_LINES + 1 and lines[-1] == "    line 99"
