"""No module imports another module's private names: an underscore is a promise.

A name with a leading underscore is its module's own; a module with one is its package's
own. So ``from convcheck.x import _y`` is refused unless ``_y`` is a module and the
importer lives in ``convcheck.x`` (a package's private modules are for its modules),
and a private module is imported only from inside the package that holds it. Every import
counts, inside functions and under ``if TYPE_CHECKING:`` too (a type is a name as well).
"""

import ast

from test_layout import PACKAGE, module_name


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _owner(module: str) -> str | None:
    """The package a module is private to, None for a public one: the package holding
    its first underscore component."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:i])
    return None


def _inside(importer: str, package: str) -> bool:
    return importer == package or importer.startswith(package + ".")


def trespasses() -> list[str]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    found = []
    for importer, path in sorted(paths.items()):
        package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
                names: list[tuple[str, str]] = []
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                modules = [base]
                names = [(base, alias.name) for alias in node.names]
            else:
                continue
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            for module in modules:
                if not _inside(module, "convcheck"):
                    continue
                owner = _owner(module)
                if owner is not None and not _inside(importer, owner):
                    found.append(f"{where}: {importer} imports private module {module}")
            for base, name in names:
                if not _private(name) or not _inside(base, "convcheck"):
                    continue
                if f"{base}.{name}" in paths:  # a private module of ``base``
                    if not _inside(importer, base):
                        found.append(f"{where}: {importer} imports private module {base}.{name}")
                elif base != importer:
                    found.append(f"{where}: {importer} imports {base}'s private {name}")
    return found


def test_no_module_imports_another_modules_private_names():
    assert trespasses() == []
