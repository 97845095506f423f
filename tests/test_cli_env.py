"""python -m dpex_kernels env (docs/cli.md): the pip-installed runtime for processes that do
not import dpex_kernels. Each check ends in a fresh `python -c "import dpctl"` that does not
import dpex_kernels, in the environment the command gives it; this checkout's own venv is
never edited (a temporary prefix holds copies of the activation scripts)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from dpex_kernels.cli import env
from dpex_kernels.cli.user_code import UserError

PYTHON = shlex.quote(sys.executable)
COUNT_DEVICES = f"{PYTHON} -c 'import dpctl; print(dpctl.get_num_devices())'"
LIBRARY = Path(sys.prefix) / "lib" / "libintelocl.so"


def clean_env() -> dict[str, str]:
    """This environment without the ICD variables (the tests' own process has the bootstrap's)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("OCL_ICD_")}


def shell(command: str, program: str = "bash") -> list[str]:
    done = subprocess.run(
        [program, "-c", command], env=clean_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dpex_kernels", "env", *args],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def model_scripts(tmp_path_factory) -> Path:
    """Fresh activation scripts of this Python's venv module."""
    folder = tmp_path_factory.mktemp("model")
    venv.create(folder, with_pip=False, symlinks=True)
    return folder / "bin"


@pytest.fixture
def prefix(tmp_path, model_scripts) -> Path:
    """An environment whose lib/ is this venv's (the runtime library must keep its real folder:
    it finds its own dependencies next to itself) and whose bin/ holds copies of the scripts."""
    (tmp_path / "bin").mkdir()
    for shell_ in env.SHELLS.values():
        (tmp_path / "bin" / shell_.script).write_bytes((model_scripts / shell_.script).read_bytes())
    (tmp_path / "lib").symlink_to(LIBRARY.parent, target_is_directory=True)
    return tmp_path


def test_without_the_variable_a_plain_process_sees_no_device():
    """The problem: what the commands below fix (and what makes their checks able to fail)."""
    assert shell(COUNT_DEVICES) == ["0"]


def test_env_says_where_things_stand():
    done = run_cli()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"runtime: {LIBRARY}"
    assert lines[1].startswith("this shell: OCL_ICD_FILENAMES is not set, so processes that do not")
    assert lines[2].startswith("activation scripts: ")


def test_print_gives_the_line_for_eval():
    done = run_cli("--print")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"export OCL_ICD_FILENAMES={shlex.quote(str(LIBRARY))}\n"
    eval_it = f'eval "$({PYTHON} -m dpex_kernels env --print)"'
    assert shell(f"{eval_it} && {COUNT_DEVICES}") == ["1"]


def test_print_for_fish_and_csh():
    assert (
        run_cli("--print", "--shell", "fish").stdout == f"set -gx OCL_ICD_FILENAMES '{LIBRARY}'\n"
    )
    assert run_cli("--print", "--shell", "csh").stdout == f"setenv OCL_ICD_FILENAMES '{LIBRARY}'\n"


@pytest.mark.parametrize("program", ["bash", "sh"])
def test_install_sets_it_on_activation_and_deactivate_unsets_it(prefix, program):
    done = run_cli("--install", "--prefix", str(prefix))
    assert done.returncode == 0, done.stderr
    activate = shlex.quote(str(prefix / "bin" / "activate"))
    lines = shell(
        f'. {activate} && {COUNT_DEVICES} && echo "$OCL_ICD_FILENAMES" && deactivate && '
        f'echo "${{OCL_ICD_FILENAMES-unset}}"',
        program,
    )
    assert lines == ["1", str(prefix / "lib" / "libintelocl.so"), "unset"]
    # A variable the user set is never overridden, nor unset by deactivate.
    lines = shell(
        f'export OCL_ICD_FILENAMES=/mine && . {activate} && echo "$OCL_ICD_FILENAMES" && '
        f'deactivate && echo "$OCL_ICD_FILENAMES"',
        program,
    )
    assert lines == ["/mine", "/mine"]


def test_install_is_idempotent_and_uninstall_restores_every_script(prefix):
    originals = {p.name: p.read_bytes() for p in (prefix / "bin").iterdir()}
    assert "activation scripts: not set up" in run_cli("--prefix", str(prefix)).stdout
    assert run_cli("--install", "--prefix", str(prefix)).returncode == 0
    installed = {p.name: p.read_bytes() for p in (prefix / "bin").iterdir()}
    assert all(installed[name] != originals[name] for name in originals)
    assert run_cli("--install", "--prefix", str(prefix)).returncode == 0
    assert {p.name: p.read_bytes() for p in (prefix / "bin").iterdir()} == installed
    assert "activation scripts: set up" in run_cli("--prefix", str(prefix)).stdout
    done = run_cli("--uninstall", "--prefix", str(prefix))
    assert done.returncode == 0 and done.stdout.count("OCL_ICD_FILENAMES removed") == 3
    assert {p.name: p.read_bytes() for p in (prefix / "bin").iterdir()} == originals
    assert run_cli("--uninstall", "--prefix", str(prefix)).stdout.count("nothing to remove") == 3


@pytest.mark.parametrize("name", ["fish", "csh"])
def test_fish_and_csh_deactivate_unset_it_first(model_scripts, name):
    """Their shells may be absent here, so the text is checked (both ran by hand, fish 3.6 and
    tcsh 6.24: set on activation, unset on deactivate, a user's variable kept)."""
    shell_ = env.SHELLS[name]
    original = (model_scripts / shell_.script).read_text()
    edited = env.add_blocks(original, shell_, "/env/lib/libintelocl.so")
    assert edited.endswith(shell_.lines("/env/lib/libintelocl.so"))
    assert "'/env/lib/libintelocl.so'" in edited
    deactivate = edited[edited.index(shell_.anchor) + len(shell_.anchor) :]
    if not shell_.inline:  # fish: the lines after `function deactivate ...`; csh: in the alias
        deactivate = deactivate.split("\n", 1)[1]
    assert deactivate.startswith(shell_.on_deactivate) and "_DPEX_KERNELS_OCL_ICD" in deactivate
    assert env.add_blocks(edited, shell_, "/env/lib/libintelocl.so") == edited
    assert env.remove_blocks(edited) == original


def test_csh_refuses_a_path_it_cannot_quote():
    with pytest.raises(UserError, match="cannot be quoted for csh"):
        env.CSH.lines("/it's/lib/libintelocl.so")


def test_an_environment_without_the_runtime_is_one_line(tmp_path):
    done = run_cli("--install", "--prefix", str(tmp_path))
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("python -m dpex_kernels: error: no ") and "not installed" in line
