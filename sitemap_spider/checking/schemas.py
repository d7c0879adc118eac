"""One XSD for sitemaps with their extensions: sitemap.xsd, siteindex.xsd, image, video, news, xhtml.

urlset and sitemapindex admit elements of other namespaces with strict processing, so a
file using ``<image:image>`` validates only against a schema set that knows the image XSD.
Both are the official schemas only: an ``xsd`` finding is a violation of them. (The files the
crawl writes are held to a stricter schema for xhtml:link, sitemaps/xml/validate.py's, which is
ours; other people's sitemaps are not: what search engines ignore in a link is a warning of
links.py, not an XSD error.) The imports are answered from the package by the resolver of
sitemaps/xml/schema_files.py, the one the crawl's own validation uses: nothing is fetched from
the network.
"""

from __future__ import annotations

import functools
from typing import Final

# lxml ships no type information (lxml-stubs is not a dependency of the project).
from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.sitemaps import parse_schema

# namespace -> schema file of the package
EXTENSION_SCHEMAS: Final = {
    "http://www.sitemaps.org/schemas/sitemap/0.9": "sitemap.xsd",
    "http://www.google.com/schemas/sitemap-image/1.1": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9": "sitemap-news.xsd",
    "http://www.w3.org/1999/xhtml": "xhtml1-strict.xsd",
}
def _wrapper(schemas: dict[str, str]) -> bytes:
    imports = "".join(
        f'<xsd:import namespace="{namespace}" schemaLocation="{name}"/>'
        for namespace, name in schemas.items()
    )
    return f'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">{imports}</xsd:schema>'.encode()


def _load(schemas: dict[str, str]) -> etree.XMLSchema:
    return parse_schema(_wrapper(schemas))


@functools.cache
def urlset_schema() -> etree.XMLSchema:
    """sitemap.xsd with every official extension schema (xhtml1-strict.xsd for xhtml:link)."""
    return _load(EXTENSION_SCHEMAS)


@functools.cache
def sitemapindex_schema() -> etree.XMLSchema:
    """siteindex.xsd with every extension schema (both use the one sitemap namespace)."""
    others = {ns: name for ns, name in EXTENSION_SCHEMAS.items() if name != "sitemap.xsd"}
    return _load({"http://www.sitemaps.org/schemas/sitemap/0.9": "siteindex.xsd", **others})
