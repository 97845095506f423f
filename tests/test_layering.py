"""The import graph follows the layers docs/architecture.md lists: no module imports one above it.

The tables under "## Layers" in docs/architecture.md are read here, so the docs and the check
cannot drift apart; every module of the package must belong to a row.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dpex_kernels

PACKAGE = Path(dpex_kernels.__file__).parent
DOCS = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
_ROW = re.compile(r"^\|\s*(\d+)\s*\|(.*)\|\s*$")


def _layers(heading: str) -> dict[str, int]:
    """unit -> level, from the table under `heading` in docs/architecture.md."""
    text = DOCS.read_text()
    table = text[text.index(heading) :].split("\n\n", 2)[1]
    levels = {}
    for line in table.splitlines():
        found = _ROW.match(line)
        if found:
            for unit in re.findall(r"`([\w./]+)`", found.group(2)):
                levels[unit] = int(found.group(1))
    return levels


PACKAGE_LAYERS = _layers("### The package")
COMPILER_LAYERS = _layers("### Inside `compiler/`")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["dpex_kernels", *parts])


def _imports(path: Path) -> set[str]:
    """Every module of the package `path` imports, at any depth of its code."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t.startswith("dpex_kernels.") and _exists(t))
    return found


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative).is_dir()


def _unit(module: str, layers: dict[str, int], depth: int) -> str:
    """The row a module belongs to: its longest dotted prefix below the package that the
    table names, `depth` parts deep at most."""
    parts = module.split(".")[depth:]
    for cut in range(len(parts), 0, -1):
        candidate = ".".join(parts[:cut])
        if candidate in layers:
            return candidate
    raise AssertionError(f"{module} is in no row of docs/architecture.md's layer table")


def _violations(layers: dict[str, int], depth: int, prefix: str) -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module_name(path)
        if not importer.startswith(prefix) or importer == prefix.rstrip("."):
            continue
        own = _unit(importer, layers, depth)
        for imported in sorted(_imports(path)):
            if not imported.startswith(prefix):
                continue
            other = _unit(imported, layers, depth)
            if layers[other] > layers[own]:
                problems.append(
                    f"{importer} (level {layers[own]}) imports {imported} "
                    f"({other}, level {layers[other]})"
                )
    return problems


def test_the_layer_tables_are_read():
    assert PACKAGE_LAYERS["types"] < PACKAGE_LAYERS["artifacts"] < PACKAGE_LAYERS["compiler"]
    assert COMPILER_LAYERS["backend"] < COMPILER_LAYERS["frontend"] < COMPILER_LAYERS["compile"]


def test_no_module_imports_one_on_a_higher_level():
    assert _violations(PACKAGE_LAYERS, 1, "dpex_kernels.") == []


def test_inside_the_compiler_no_module_imports_one_on_a_higher_level():
    assert _violations(COMPILER_LAYERS, 2, "dpex_kernels.compiler.") == []


def test_cache_and_aot_read_artifacts_and_never_each_other():
    for path in [PACKAGE / "cache.py", *sorted((PACKAGE / "aot").glob("*.py"))]:
        imported = _imports(path)
        other = "dpex_kernels.aot" if path.name == "cache.py" else "dpex_kernels.cache"
        assert not any(m == other or m.startswith(other + ".") for m in imported), path
