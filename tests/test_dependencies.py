"""The dependencies pyproject.toml declares are what the package imports, and requirements.txt installs them.

pyproject.toml declares the package's dependencies (with the ``render`` and ``redis``
extras); requirements.txt is the pinned install the README's commands use. Two lists, so
this test keeps them together: every distribution the code imports is declared, every
declared one is imported, requirements.txt names exactly the declared ones, and its pins
and this environment's versions are within the declared bounds.
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Final

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
PACKAGE: Final = REPO_ROOT / "sitemap_spider"


@cache
def project() -> dict[str, object]:
    table: dict[str, object] = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]
    return table


def declared() -> dict[str, Requirement]:
    """Every requirement of pyproject.toml, the extras' included, by canonical name."""
    extras = project()["optional-dependencies"]
    assert isinstance(extras, dict)
    specifiers = [*project()["dependencies"], *(s for group in extras.values() for s in group)]  # type: ignore[misc]
    requirements = [Requirement(specifier) for specifier in specifiers]
    by_name = {canonicalize_name(requirement.name): requirement for requirement in requirements}
    assert len(by_name) == len(requirements), "a distribution declared twice"
    return by_name


def pinned() -> dict[str, Requirement]:
    """requirements.txt's requirements, by canonical name."""
    found: dict[str, Requirement] = {}
    for raw in (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            requirement = Requirement(line)
            found[canonicalize_name(requirement.name)] = requirement
    return found


def imported_top_level_names() -> dict[str, str]:
    """Each top-level module the package imports (at module level, in functions, for type checking) -> a file."""
    names: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                names.setdefault(module.split(".")[0], str(path.relative_to(REPO_ROOT)))
    return names


def third_party_imports() -> dict[str, str]:
    """Distribution (canonical name) -> a file that imports it, for every import outside the stdlib."""
    providers = importlib.metadata.packages_distributions()
    found: dict[str, str] = {}
    for name, where in imported_top_level_names().items():
        if name in sys.stdlib_module_names or name == "sitemap_spider" or name == "__future__":
            continue
        assert name in providers, f"{where} imports {name}, which no installed distribution provides"
        for distribution in providers[name]:
            found.setdefault(canonicalize_name(distribution), where)
    return found


def test_every_imported_distribution_is_declared_and_every_declared_one_is_imported() -> None:
    imports = third_party_imports()
    undeclared = {name: where for name, where in imports.items() if name not in declared()}
    assert not undeclared, f"imported but not in pyproject.toml: {undeclared}"
    assert sorted(set(declared()) - set(imports)) == [], "declared in pyproject.toml but never imported"


def test_the_extras_hold_what_only_their_part_imports() -> None:
    imports = third_party_imports()
    extras = project()["optional-dependencies"]
    assert isinstance(extras, dict)
    parts = {
        "render": "sitemap_spider/render/",
        "redis": "sitemap_spider/modes/shared/",
        "s3": "sitemap_spider/sitemaps/shards/bucket.py",
    }
    assert set(extras) == set(parts)
    for extra, part in parts.items():
        for specifier in extras[extra]:
            name = canonicalize_name(Requirement(specifier).name)
            assert imports[name].startswith(part), f"[{extra}] {name} is imported by {imports[name]}"


def test_requirements_txt_installs_every_declared_distribution_within_its_bounds() -> None:
    declared_ones, pins = declared(), pinned()
    assert sorted(pins) == sorted(declared_ones), (
        "requirements.txt and pyproject.toml name different distributions"
    )
    for name, requirement in declared_ones.items():
        pin = pins[name]
        exact = [spec.version for spec in pin.specifier if spec.operator == "=="]
        for version in exact:
            assert requirement.specifier.contains(version), (
                f"requirements.txt pins {pin}, outside {requirement}"
            )
        installed = Version(importlib.metadata.version(name))
        assert requirement.specifier.contains(installed), (
            f"{name} {installed} installed, outside {requirement}"
        )
        assert pin.specifier.contains(installed), (
            f"{name} {installed} installed, outside requirements.txt's {pin}"
        )
