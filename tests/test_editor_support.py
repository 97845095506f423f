"""Editors and type checkers see the public names: the package ships py.typed and a stub of its
lazily imported names, and jedi (the completion engine of many editors) completes them.

jedi runs in the base interpreter with the package's folder on its path, as an editor sees an
installed package (a plain install, or src/ as pyright reads an editable install's .pth):
jedi cannot follow the import hook of scikit-build-core's editable installs (docs/contributing.md).
"""

from __future__ import annotations

import ast
import site
import sys
from pathlib import Path

import jedi
import pytest

import dpex_kernels as dk

PACKAGE = Path(dk.__file__).parent


def _stub_names(package: Path) -> set[str]:
    tree = ast.parse((package / "__init__.pyi").read_text())
    names = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    names |= {node.target.id for node in tree.body if isinstance(node, ast.AnnAssign)}
    return names


def test_the_package_is_marked_typed():
    assert (PACKAGE / "py.typed").is_file()


def test_the_stub_lists_exactly_the_public_names():
    assert _stub_names(PACKAGE) - {"__version__"} == set(dk.__all__)
    for name in dk.__all__:
        assert getattr(dk, name) is not None, name


@pytest.fixture(scope="module")
def editor():
    """(environment, project) of an editor whose interpreter has the package installed."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(sys.base_prefix) / "bin" / f"python{version}"
    environment = jedi.create_environment(str(base), safe=False)
    paths = [str(PACKAGE.parent), *site.getsitepackages()]
    return environment, jedi.Project(Path.cwd(), sys_path=paths)


def _script(source: str, editor) -> jedi.Script:
    environment, project = editor
    return jedi.Script(source, path="example.py", environment=environment, project=project)


def _completions(source: str, editor) -> set[str]:
    lines = source.splitlines()
    return {c.name for c in _script(source, editor).complete(len(lines), len(lines[-1]))}


def test_jedi_completes_every_public_name(editor):
    found = _completions("import dpex_kernels as dk\ndk.", editor)
    assert set(dk.__all__) <= found


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("dk.ker", {"kernel"}),
        ("dk.get_gl", {"get_global_id", "get_global_size"}),
        ("dk.atomic.", {"add", "compare_exchange"}),
        ("dk.usm_", {"usm_array"}),
        ("dk.reduce_", {"reduce_over_group"}),
    ],
)
def test_jedi_completes_kernel_scope_functions(editor, prefix, expected):
    assert expected <= _completions(f"import dpex_kernels as dk\n{prefix}", editor)


def test_jedi_shows_a_signature_and_docstring(editor):
    script = _script("import dpex_kernels as dk\ndk.usm_array(", editor)
    (signature,) = script.get_signatures(2, len("dk.usm_array("))
    assert [p.name for p in signature.params][:2] == ["dtype", "ndim"]
    assert signature.docstring()
