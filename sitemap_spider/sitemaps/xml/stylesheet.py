"""The stylesheet for people (SITEMAP_XSL): ``sitemap.xsl``, published beside the set.

A browser that opens a file of the set applies it (the ``<?xml-stylesheet?>`` line the writer puts
after the declaration, elements.STYLESHEET_LINE) and shows a table: URL, lastmod, images, videos,
language versions; for the index, each file and its lastmod. Read through importlib.resources:
under Scrapyd the package runs from a zipped egg.
"""

from __future__ import annotations

import importlib.resources
from functools import cache


@cache
def stylesheet_document() -> bytes:
    """The bytes of ``sitemap.xsl`` as it is published."""
    return importlib.resources.files(__package__).joinpath("sitemap.xsl").read_bytes()
