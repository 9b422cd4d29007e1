"""The package's structure, read with ``ast``: its import graph and private names.

Module-level and function-level imports both count (an import inside a
function that only dodges a circle is still a circle); imports under
``if TYPE_CHECKING:`` do not (they never run). The graph may not gain a
circle, and function-level imports of the package's own modules may not
grow (docs/architecture.md).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "django_sitemaps_plus"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE

#: Function-level imports of the package's own modules (each module an
#: import statement loads, counted once): ``ready()``, the package's lazy
#: loader, the optional integrations (Wagtail, django CMS) and the admin's
#: validation run (``site_validation.run``: web processes load no lxml).
MOST_FUNCTION_LEVEL_IMPORTS = 10


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package at ``root`` by dotted name (migrations left out)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _targets(
    module: str,
    node: ast.Import | ast.ImportFrom,
    is_package: bool,
    known: dict[str, Path],
    package: str,
) -> Iterator[str]:
    """The package's modules an import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")[: None if is_package else -1]
            base = base[: len(base) - node.level + 1]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        # ``from package import module`` loads the module; ``from module
        # import name`` the module.
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix
                 for a in node.names]  # fmt: skip
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name.split(".")[0] == package and name != module:
            yield name


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_graph(root: Path = ROOT) -> tuple[dict[str, set[str]], list[tuple[str, str, int]]]:
    """Each module's imports of the package's modules, and every
    function-level one as (module, imported, line)."""
    known = modules(root)
    package = root.name
    edges: dict[str, set[str]] = {name: set() for name in known}
    in_functions: list[tuple[str, str, int]] = []
    for module, path in known.items():
        is_package = path.name == "__init__.py"

        def walk(node: ast.AST, in_function: bool, module: str = module, pkg: bool = is_package):
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    continue
                if isinstance(child, ast.Import | ast.ImportFrom):
                    for target in sorted(set(_targets(module, child, pkg, known, package))):
                        edges[module].add(target)
                        if in_function:
                            in_functions.append((module, target, child.lineno))
                function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                walk(child, in_function or function)

        walk(ast.parse(path.read_text(encoding="utf-8")), False)
    return edges, in_functions


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _short(names: set[str]) -> set[str]:
    return {name.removeprefix(f"{PACKAGE}.") for name in names}


def test_no_import_circle() -> None:
    found = [_short(component) for component in circles(import_graph()[0])]
    assert not found, f"import circles: {found}"


def test_function_level_imports_do_not_grow() -> None:
    in_functions = import_graph()[1]
    assert len(in_functions) <= MOST_FUNCTION_LEVEL_IMPORTS, "\n".join(
        f"{module}:{line} imports {target}" for module, target, line in in_functions
    )


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [{"a", "b"}]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [{"a", "b", "c"}]),
    ],
)
def test_circles_are_found(edges: dict[str, set[str]], expected: list[set[str]]) -> None:
    assert circles(edges) == expected


def test_function_level_imports_are_counted(tmp_path: Path) -> None:
    """A function-level import is an edge and is counted; one under
    ``TYPE_CHECKING`` is not an edge; relative imports resolve."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from pkg import b\n"
        "if TYPE_CHECKING:\n    from pkg.sub import c\n"
    )
    (package / "b.py").write_text("def f():\n    from .sub.c import name\n    return name\n")
    (package / "sub" / "c.py").write_text("import os\n\nname = os.sep\n")
    edges, in_functions = import_graph(package)
    assert edges["pkg.a"] == {"pkg.b"}
    assert edges["pkg.b"] == {"pkg.sub.c"}
    assert edges["pkg.sub.c"] == set()
    assert in_functions == [("pkg.b", "pkg.sub.c", 2)]
    assert circles(edges) == []
    (package / "sub" / "c.py").write_text("from .. import a\n")  # the module pkg.a
    assert circles(import_graph(package)[0]) == [{"pkg.a", "pkg.b", "pkg.sub.c"}]


#: Django's own private API the package uses on purpose.
DJANGO_PRIVATE = {"_meta", "_default_manager", "_base_manager", "_current_app"}


def private_uses(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """(module, line, name) of each use of a private name (``_x``, not
    ``__x__``) that another module of the package defines and this one
    does not: an attribute not on ``self``/``cls``, or an imported name."""
    defined: dict[str, set[str]] = {}
    used: list[tuple[str, int, str]] = []
    for module, path in modules(root).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.setdefault(node.name, set()).add(module)
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                used.append((module, node.lineno, node.attr))
            elif isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_")]
                used += [(module, node.lineno, name) for name in private]
    return [
        (module, line, name)
        for module, line, name in used
        if name in defined and module not in defined[name] and name not in DJANGO_PRIVATE
    ]


def test_no_module_uses_another_modules_private_names() -> None:
    found = private_uses()
    assert not found, "\n".join(f"{m}:{line} uses {name}" for m, line, name in found)


def test_private_uses_are_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("class A:\n    def _hook(self):\n        return self._hook\n")
    (package / "b.py").write_text("from pkg.a import A\n\ndef f(a):\n    return a._hook()\n")
    assert private_uses(package) == [("pkg.b", 4, "_hook")]
