"""Packaging of sitemap_spider, for Scrapyd: ``scrapyd-deploy`` runs ``setup.py bdist_egg``.

Scrapyd runs the project from the zipped egg it is sent, without installing it: every
file the product reads at run time must be declared below as package data, and must
be read through importlib.resources (a zipped egg has no filesystem path for it).
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent


def requirements(path: Path) -> list[str]:
    """The requirement specifiers of a pip requirements file, one per line, comments dropped.

    requirements.txt stays the one list of runtime dependencies. pip options (``-r``,
    ``-e``, ``--hash``, ...) cannot be install_requires: refuse them loudly instead of
    silently leaving a dependency out of the package metadata.
    """
    specifiers: list[str] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        # pip reads " #" (or a line starting with "#") as the start of a comment.
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            raise SystemExit(f"{path.name}:{number}: pip option {line!r} cannot go into install_requires")
        specifiers.append(line)
    return specifiers


setup(
    name="sitemap_spider",
    version="0.1",
    description="Crawls a website and publishes its XML sitemaps (sitemaps.org protocol)",
    python_requires=">=3.11",
    packages=find_packages(exclude=["tests", "tests.*"]),
    package_data={
        # The official XSDs every published file is validated against, and where they come from.
        "sitemap_spider.schemas": ["*.xsd", "SOURCES.md"],
        # The HTML report's inline style and script (sitemap_spider/report/html.py).
        "sitemap_spider.report": ["assets/*.css", "assets/*.js"],
        # PEP 561 marker: the package is typed (mypy --strict clean).
        "sitemap_spider": ["py.typed"],
    },
    # Scrapyd finds the settings module of an egg through this entry point.
    entry_points={"scrapy": ["settings = sitemap_spider.settings"]},
    install_requires=requirements(HERE / "requirements.txt"),
    # Scrapyd puts the .egg file itself on sys.path: the package runs from the zip, and
    # reads its data files with importlib.resources, so it is safe to run zipped.
    zip_safe=True,
)
