"""The face of sitemaps/: ``__all__``, the lazy table behind it, and who may go past it."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import sitemap_spider.sitemaps as face

PACKAGE = Path(face.__file__).parent.parent
INIT = Path(face.__file__)


def test_every_name_of_the_face_is_its_home_modules_own() -> None:
    assert sorted(face.__all__) == sorted(face._HOME_OF)
    for name in face.__all__:
        home = importlib.import_module(f"sitemap_spider.sitemaps.{face._HOME_OF[name]}")
        assert getattr(face, name) is getattr(home, name), name


def test_typed_imports_match_the_lazy_table() -> None:
    # mypy reads the imports under TYPE_CHECKING, the interpreter reads _HOMES: the same names.
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    typed: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                assert alias.asname == alias.name, alias.name
            typed.setdefault(node.module, set()).update(alias.name for alias in node.names)
    assert typed == {module: set(names) for module, names in face._HOMES.items()}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(face, "no_such_name")
    with pytest.raises(ImportError):
        exec("from sitemap_spider.sitemaps import no_such_name", {})


def test_importing_the_face_loads_no_module_of_it() -> None:
    code = (
        "import sys, sitemap_spider.sitemaps\n"
        "print(sorted(m for m in sys.modules if m.startswith('sitemap_spider.sitemaps.')))\n"
        "from sitemap_spider.sitemaps import SitemapEntry, normalize_url\n"
        "print('lxml' in sys.modules, 'sitemap_spider.sitemaps.shards.set_builder' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "False False"]


def test_the_rest_of_the_package_imports_the_face_only() -> None:
    deep = []
    for path in PACKAGE.rglob("*.py"):
        if INIT.parent in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sitemap_spider.sitemaps."):
                deep.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.module}")
            if isinstance(node, ast.Import):
                deep += [f"{path.relative_to(PACKAGE)}:{node.lineno} {a.name}" for a in node.names
                         if a.name.startswith("sitemap_spider.sitemaps.")]
    assert deep == []
