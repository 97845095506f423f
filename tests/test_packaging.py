"""A built wheel works on its own: it holds the compiled launcher, and examples run from it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory) -> Path:
    """The package built as a wheel (no dependencies) and unpacked into a directory of its own."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = out.glob("dpex_kernels-*.whl")
    target = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def test_wheel_holds_the_compiled_launcher_and_no_sources_of_tests(installed_wheel):
    names = {p.relative_to(installed_wheel).as_posix() for p in installed_wheel.rglob("*")}
    assert any(
        n.startswith("dpex_kernels/dispatcher/_launcher.") and n.endswith(".so") for n in names
    )
    assert not any(n.startswith(("tests/", "benchmarks/", "examples/")) for n in names)


@pytest.mark.parametrize("example", ["vecadd", "jacobi_njit"])
def test_examples_run_from_the_installed_wheel(installed_wheel, example, tmp_path):
    # -S: no site-packages .pth files, so the editable install of this checkout is not seen;
    # the dependencies come from this environment's site-packages, after the wheel.
    script = tmp_path / f"{example}.py"
    shutil.copy(ROOT / "examples" / f"{example}.py", script)
    site_packages = sysconfig.get_paths()["purelib"]
    icd = Path(sys.prefix) / "lib" / "libintelocl.so"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed_wheel), site_packages])}
    if icd.exists() and not env.get("OCL_ICD_FILENAMES"):
        env["OCL_ICD_FILENAMES"] = str(icd)  # what the bootstrap does when site runs
    check = (
        f"import dpex_kernels; assert dpex_kernels.__file__.startswith({str(installed_wheel)!r})"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            f"{check}; import runpy; runpy.run_path({str(script)!r}, run_name='__main__')",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
