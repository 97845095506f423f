"""The command line (docs/cli.md): self-check, --version, cache, inspect, aot build, errors.

`env` is tested in test_cli_env.py, the OpenCL build log in test_build_log.py.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import dpctl
import pytest

import dpex_kernels as dk
from dpex_kernels import cli, device
from dpex_kernels.cli import inspect_kernel, progress, selfcheck
from tests.test_build_log import UNDEFINED_CALL_SPIRV

ROOT = Path(__file__).resolve().parent.parent
CPU = "opencl:cpu:0"
ERROR = "python -m dpex_kernels: error: "

MODULE = textwrap.dedent(
    """
    import dpex_kernels as dk

    vector = dk.usm_array(dk.float32, 1)
    vector64 = dk.usm_array(dk.float64, 1)


    @dk.kernel([dk.void(vector, vector), dk.void(vector64, vector64)])
    def copy(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i]


    @dk.kernel
    def double(a, out):
        i = dk.get_global_id(0)
        out[i] = 2 * a[i]


    helper = 3
    """
)


def run_cli(*args: str, cwd: Path = ROOT, **env_changes: str) -> subprocess.CompletedProcess:
    """python -m dpex_kernels ARGS in a fresh interpreter, as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCL_ICD_")}
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-m", "dpex_kernels", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_error_line(stderr: str) -> str:
    """The message of a user mistake: exactly one line on stderr, no traceback."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(ERROR), stderr
    return lines[0]


@pytest.fixture
def user_module(tmp_path) -> Path:
    path = tmp_path / "user_kernels.py"
    path.write_text(MODULE)
    return path


# --------------------------------------------------------------------------------------------
# the self-check
# --------------------------------------------------------------------------------------------


def test_the_self_check_marks_the_default_device_and_passes():
    done = run_cli()
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"^{CPU}  .*  \(default device\)$", done.stdout, re.M), done.stdout
    assert "self-check vecadd[65536]: OK" in done.stdout
    assert done.stdout.strip().endswith(
        f"self-check passed on every device; the default one is {CPU}"
    )


def _other_device() -> SimpleNamespace:
    """What the self-check reads of a device: a second OpenCL CPU platform, PoCL say."""
    return SimpleNamespace(
        filter_string="opencl:cpu:1",
        name="Other OpenCL CPU",
        device_type=SimpleNamespace(name="cpu"),
        backend=SimpleNamespace(name="opencl"),
        driver_version="6.0",
        max_compute_units=2,
        max_work_group_size=4096,
        sub_group_sizes=[8],
        has_aspect_fp64=True,
        has_aspect_fp16=False,
        local_mem_size=64 * 1024,
    )


def _failing_build(cpu_device) -> None:
    """A real build failure: SPIR-V the runtime reads but cannot link, on the real device."""
    device.build_kernel(UNDEFINED_CALL_SPIRV, "dk_bad", dpctl.SyclQueue(cpu_device))


def test_another_device_that_fails_is_reported_with_its_build_log(monkeypatch, capsys, cpu_device):
    other = _other_device()
    real_check = selfcheck.check_device

    def check(device):
        if device is other:
            _failing_build(cpu_device)
        return real_check(device)

    monkeypatch.setattr(dpctl, "get_devices", lambda: [cpu_device, other])
    monkeypatch.setattr(selfcheck, "check_device", check)
    assert cli.main([]) == 0  # the default device passed
    out = capsys.readouterr().out
    assert f"{CPU}  {cpu_device.name}  (default device)" in out
    assert "\nopencl:cpu:1  Other OpenCL CPU\n" in out
    failure = out[out.index("opencl:cpu:1  Other") :]
    assert (
        "self-check FAILED: KernelCompileError: the SYCL runtime could not build kernel" in failure
    )
    assert ": SyclProgramCompilationError\n" in failure  # named, not an empty reason
    assert "build log of the OpenCL runtime" in failure
    assert "dk_undefined_function" in failure  # the runtime's own words
    assert "what to do: nothing if you do not need this device" in failure
    assert "OCL_ICD_VENDORS" in failure
    assert out.strip().splitlines()[-1] == (
        f"self-check passed on the default device {CPU}; it failed on opencl:cpu:1 (see above), "
        f"which programs get only by asking for it"
    )


def test_the_exit_status_is_the_default_devices(monkeypatch, capsys, cpu_device):
    monkeypatch.setattr(selfcheck, "check_device", lambda device: _failing_build(cpu_device))
    assert cli.main([]) == 1
    out = capsys.readouterr().out
    assert "what to do: kernels cannot run on the default device" in out
    assert (
        out.strip().splitlines()[-1] == f"self-check FAILED on the default device {CPU} (see above)"
    )


def test_a_failure_without_a_message_is_named(monkeypatch, capsys, cpu_device):
    other = _other_device()

    def check(device):
        if device is other:
            raise RuntimeError()
        return True

    monkeypatch.setattr(dpctl, "get_devices", lambda: [cpu_device, other])
    monkeypatch.setattr(selfcheck, "check_device", check)
    assert cli.main([]) == 0
    assert "self-check FAILED: RuntimeError: (no message)" in capsys.readouterr().out


def test_list_only_lists(capsys):
    assert cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert CPU in out and "self-check" not in out


# --------------------------------------------------------------------------------------------
# --version, and the dpex-kernels script
# --------------------------------------------------------------------------------------------


def test_version_names_the_compiler_and_runtime_versions():
    done = run_cli("--version")
    assert done.returncode == 0, done.stderr
    pattern = (
        rf"dpex_kernels {re.escape(dk.__version__)} \(numba \S+, llvmlite \S+, dpctl \S+, "
        rf"dpnp \S+, intel-opencl-rt \S+\)"
    )
    assert re.fullmatch(pattern, done.stdout.strip()), done.stdout
    script = shutil.which("dpex-kernels", path=str(Path(sys.executable).parent))
    assert script is not None, "the dpex-kernels script is not installed next to python"
    from_script = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=120)
    assert from_script.stdout == done.stdout


@pytest.mark.parametrize("command", [[], ["env"], ["cache"], ["inspect"], ["aot", "build"]])
def test_help(capsys, command):
    with pytest.raises(SystemExit) as exited:
        cli.main([*command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m dpex_kernels {' '.join(command)}".rstrip())
    if not command:
        assert all(name in out for name in ("aot", "cache", "inspect", "env", "--version"))


# --------------------------------------------------------------------------------------------
# cache
# --------------------------------------------------------------------------------------------


def test_cache_path_list_and_clear(monkeypatch, capsys, tmp_path):
    folder = tmp_path / "cache"
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(folder))
    assert cli.main(["cache", "list"]) == 0
    assert "not there yet" in capsys.readouterr().out

    vector = dk.usm_array(dk.float32, 1)

    @dk.kernel(dk.void(vector, vector), cache=True)
    def cached_copy(a, out):
        out[dk.get_global_id(0)] = a[dk.get_global_id(0)]

    (folder / "notes.txt").write_text("not the cache's")
    assert cli.main(["cache", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(folder)

    assert cli.main(["cache", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == str(folder)
    (entry,) = [line for line in out if "cached_copy-" in line]
    assert re.fullmatch(
        r"\s+[\d.]+ (B|KiB)  \d{4}-\d\d-\d\d \d\d:\d\d  cached_copy-[0-9a-f]{40}", entry
    )
    assert re.fullmatch(r"entries: 1 \(.+\); device binaries: 1 \(.+, in binaries/\)", out[-1])

    assert cli.main(["cache", "clear"]) == 0
    assert "entries: 1, device binaries: 1" in capsys.readouterr().out
    assert not list(folder.glob("*.dpk")) and not list(folder.glob("binaries/*.bin"))
    assert (folder / "notes.txt").read_text() == "not the cache's"  # only the cache's files go
    assert cli.main(["cache", "list"]) == 0
    assert "entries: 0 (0 B); device binaries: 0 (0 B, in binaries/)" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# inspect
# --------------------------------------------------------------------------------------------


def _headers(out: str) -> list[str]:
    return [
        line
        for line in out.splitlines()
        if line.startswith("; copy (") or line.startswith("; double (")
    ]


def test_inspect_prints_each_declared_signature(capsys, user_module):
    assert cli.main(["inspect", f"{user_module}:copy", "--stage", "llvm"]) == 0
    out = capsys.readouterr().out
    headers = _headers(out)
    assert len(headers) == 2 and "float32" in headers[0] and "float64" in headers[1]
    assert out.count("spir_kernel") >= 2


def test_inspect_sig_picks_one_by_expression_or_by_its_text(capsys, user_module):
    target = f"{user_module}:copy"
    assert (
        cli.main(["inspect", target, "--stage", "types", "--sig", "dk.void(vector64, vector64)"])
        == 0
    )
    out = capsys.readouterr().out
    (header,) = _headers(out)
    assert "float64" in header and "float32" not in header
    assert "typed by" in out  # the type annotation
    vector = dk.usm_array(dk.float32, 1)
    text = str(dk.void(vector, vector))
    assert cli.main(["inspect", target, "--stage", "spirv", "--sig", text]) == 0
    out = capsys.readouterr().out
    (header,) = _headers(out)
    assert header == f"; copy {text}"
    assert "OpEntryPoint" in out or "; SPIR-V binary" in out


def test_inspect_a_kernel_of_a_package_module(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "kernels.py").write_text(MODULE)
    done = run_cli("inspect", "app.kernels:copy", "--stage", "types", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(_headers(done.stdout)) == 2 and "typed by" in done.stdout


def test_a_py_file_imports_its_siblings(capsys, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "sibling_types.py").write_text(
        "import dpex_kernels as dk\nvec = dk.usm_array('f4', 1)\n"
    )
    (folder / "uses_sibling.py").write_text(
        "import dpex_kernels as dk\nfrom sibling_types import vec\n\n"
        "@dk.kernel(dk.void(vec, vec))\ndef copy(a, out):\n    out[0] = a[0]\n"
    )
    assert cli.main(["inspect", f"{folder / 'uses_sibling.py'}:copy", "--stage", "llvm"]) == 0
    assert len(_headers(capsys.readouterr().out)) == 1


def test_inspect_compiles_a_lazy_kernel_for_the_signature_given(capsys, user_module):
    args = [
        "inspect",
        f"{user_module}:double",
        "--stage",
        "llvm",
        "--sig",
        "dk.void(vector, vector)",
    ]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    (header,) = _headers(out)
    assert header.startswith("; double (usm_array(float32") and "spir_kernel" in out


@pytest.mark.parametrize(
    ("target", "sig", "said"),
    [
        ("no_such_module:copy", None, "no module named 'no_such_module'"),
        ("missing.py:copy", None, "no file missing.py"),
        ("{module}", None, "is not MODULE:KERNEL"),
        ("{module}:nope", None, "has no kernel 'nope'; its kernels: copy, double"),
        ("{module}:helper", None, "is not a kernel (type int)"),
        ("{module}:double", None, "kernel 'double' is lazy and has no signature"),
        ("{module}:copy", "dk.void(nope)", "bad signature text 'dk.void(nope)': NameError"),
        ("{module}:copy", "dk.void(", "bad signature text 'dk.void(': SyntaxError"),
        ("{module}:copy", "3", "is not a signature (type int)"),
        ("{module}:copy", "dk.void(vector, vector64)", "kernel 'copy' declares no signature"),
        ("{module}:double", "dk.void(vector)", "has 1 parameter(s) but kernel 'double' takes 2"),
    ],
)
def test_a_user_mistake_is_one_line_and_exit_status_2(capsys, user_module, target, sig, said):
    args = ["inspect", target.format(module=user_module), "--stage", "llvm"]
    args += ["--sig", sig] if sig is not None else []
    assert cli.main(args) == 2
    captured = capsys.readouterr()
    assert said in one_error_line(captured.err)
    assert captured.out == ""


def test_output_into_a_closed_pipe_ends_quietly(tmp_path, user_module):
    """`| true` closes the pipe before the kernels have compiled, so the first print fails."""
    command = f"{sys.executable} -m dpex_kernels inspect user_kernels:copy --stage llvm | true"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCL_ICD_")}
    done = subprocess.run(
        ["bash", "-c", f"{command}; echo ${{PIPESTATUS[0]}}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.stdout, done.stderr) == ("1\n", "")


def test_an_internal_error_keeps_its_traceback(monkeypatch, user_module):
    def broken(*args):
        raise RuntimeError("a bug in dpex_kernels")

    monkeypatch.setattr(inspect_kernel, "choose_signatures", broken)
    with pytest.raises(RuntimeError, match="a bug in dpex_kernels"):
        cli.main(["inspect", f"{user_module}:copy", "--stage", "llvm"])


# --------------------------------------------------------------------------------------------
# aot build
# --------------------------------------------------------------------------------------------


def test_aot_build_shows_progress_as_lines_off_a_terminal(tmp_path, user_module):
    bundle = tmp_path / "kernels.dpkb"
    done = run_cli("aot", "build", "user_kernels", "-o", str(bundle), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["copy: 2 signature(s)", f"wrote {bundle}"]
    lines = done.stderr.splitlines()
    expected = [
        "compiling user_kernels: copy(float32 1d, float32 1d)",
        "compiling user_kernels: copy(float64 1d, float64 1d)",
        "bundling: copy(float32 1d, float32 1d)",
        "bundling: copy(float64 1d, float64 1d)",
        f"checking that {bundle} loads",
    ]
    shown = [line.split("] ", 1)[1] for line in lines]
    assert [s for s in shown if s in expected] == expected, done.stderr
    assert all(re.match(r"\[ *\d+\.\d s\] ", line) for line in lines), done.stderr


def test_aot_build_of_a_missing_module_is_one_line(tmp_path):
    done = run_cli("aot", "build", "no_such_module", "-o", str(tmp_path / "k.dpkb"), cwd=tmp_path)
    assert done.returncode == 2
    assert "no module named 'no_such_module'" in one_error_line(done.stderr)


def test_aot_build_refuses_a_missing_folder_before_compiling(capsys, tmp_path, user_module):
    assert cli.main(["aot", "build", str(user_module), "-o", str(tmp_path / "no" / "k.dpkb")]) == 2
    captured = capsys.readouterr()
    assert "there is no folder" in one_error_line(captured.err)


def test_aot_build_of_a_module_without_eager_kernels(capsys, tmp_path):
    path = tmp_path / "lazy_only.py"
    path.write_text("import dpex_kernels as dk\n\n@dk.kernel\ndef k(a):\n    a[0] = 1\n")
    assert cli.main(["aot", "build", str(path), "-o", str(tmp_path / "k.dpkb")]) == 2
    *shown, error = capsys.readouterr().err.strip().splitlines()  # after the module's import
    assert [line.split("] ", 1)[1] for line in shown] == [f"compiling {path}"]
    assert "defines no eager kernel" in one_error_line(error)


# --------------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------------


def test_progress_off_a_terminal_is_plain_lines():
    stream = io.StringIO()
    with progress.Progress("compiling", stream=stream) as shown:
        shown.show("vecadd(float32 1d)")
        shown.advance()
    lines = stream.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "compiling",
        "compiling: vecadd(float32 1d)",
    ]
    assert "\r" not in stream.getvalue()


def test_progress_on_a_terminal_is_a_bar(monkeypatch):
    monkeypatch.setattr(progress, "is_terminal", lambda stream: True)
    stream = io.StringIO()
    with progress.Progress("bundling", 2, " signatures", stream=stream) as shown:
        shown.show("x" * 100)
        shown.advance()
    text = stream.getvalue()
    assert "\r" in text and "bundling:  50%" in text and "1/2" in text
    assert "x" * (progress.MAX_TEXT - 1) + "…" in text and "x" * progress.MAX_TEXT not in text


def test_a_terminal_is_a_tty_with_a_width():
    import fcntl
    import pty
    import struct
    import termios

    main_fd, tty_fd = pty.openpty()
    with os.fdopen(tty_fd, "w") as tty:
        fcntl.ioctl(tty_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 0, 0, 0))
        assert not progress.is_terminal(tty)  # a pty without a width shows no bar
        fcntl.ioctl(tty_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        assert progress.is_terminal(tty)
    os.close(main_fd)
    assert not progress.is_terminal(io.StringIO())
