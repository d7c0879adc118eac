"""One XSD for sitemaps with their extensions: sitemap.xsd, siteindex.xsd, image, video, news, xhtml.

urlset and sitemapindex admit elements of other namespaces with strict processing, so a
file using ``<image:image>`` validates only against a schema set that knows the image XSD.
Both are the official schemas only: an ``xsd`` finding is a violation of them. (The files the
crawl writes are held to a stricter schema for xhtml:link, sitemaps/validate.py's, which is
ours; other people's sitemaps are not: what search engines ignore in a link is a warning of
links.py, not an XSD error.) The imports, and xhtml1-strict.xsd's import of the W3C's
xml.xsd, are answered from the package (importlib.resources: Scrapyd runs a zipped egg) by an
lxml resolver: nothing is fetched from the network.
"""

from __future__ import annotations

import functools
import importlib.resources
from typing import Any, Final

# lxml ships no type information (lxml-stubs is not a dependency of the project).
from lxml import etree  # type: ignore[import-untyped]

SCHEMA_PACKAGE: Final = "sitemap_spider.schemas"
_PREFIX: Final = "sitemap-spider-schema-"
# namespace -> schema file of the package
EXTENSION_SCHEMAS: Final = {
    "http://www.sitemaps.org/schemas/sitemap/0.9": "sitemap.xsd",
    "http://www.google.com/schemas/sitemap-image/1.1": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9": "sitemap-news.xsd",
    "http://www.w3.org/1999/xhtml": "xhtml1-strict.xsd",
}
# The attributes of the xml: namespace that xhtml1-strict.xsd refers to, declared here
# rather than fetched from www.w3.org.
_XML_NAMESPACE_XSD: Final = b"""<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://www.w3.org/XML/1998/namespace">
  <xs:attribute name="lang" type="xs:language"/>
  <xs:attribute name="space">
    <xs:simpleType>
      <xs:restriction base="xs:NCName">
        <xs:enumeration value="default"/>
        <xs:enumeration value="preserve"/>
      </xs:restriction>
    </xs:simpleType>
  </xs:attribute>
  <xs:attribute name="base" type="xs:anyURI"/>
</xs:schema>
"""
_XML_NAMESPACE_LOCATION: Final = "http://www.w3.org/2001/xml.xsd"


class _PackageResolver(etree.Resolver):  # type: ignore[misc]
    def resolve(self, url: str, pubid: str | None, context: Any) -> Any:
        if url == _XML_NAMESPACE_LOCATION:
            return self.resolve_string(_XML_NAMESPACE_XSD, context, base_url=url)
        if url.startswith(_PREFIX):
            data = importlib.resources.files(SCHEMA_PACKAGE).joinpath(url[len(_PREFIX) :]).read_bytes()
            return self.resolve_string(data, context, base_url=url)
        return None  # anything else is refused by no_network


def _wrapper(schemas: dict[str, str]) -> bytes:
    imports = "".join(
        f'<xsd:import namespace="{namespace}" schemaLocation="{_PREFIX}{name}"/>'
        for namespace, name in schemas.items()
    )
    return f'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">{imports}</xsd:schema>'.encode()


def _load(schemas: dict[str, str]) -> etree.XMLSchema:
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    parser.resolvers.add(_PackageResolver())
    return etree.XMLSchema(etree.fromstring(_wrapper(schemas), parser))


@functools.cache
def urlset_schema() -> etree.XMLSchema:
    """sitemap.xsd with every official extension schema (xhtml1-strict.xsd for xhtml:link)."""
    return _load(EXTENSION_SCHEMAS)


@functools.cache
def sitemapindex_schema() -> etree.XMLSchema:
    """siteindex.xsd with every extension schema (both use the one sitemap namespace)."""
    others = {ns: name for ns, name in EXTENSION_SCHEMAS.items() if name != "sitemap.xsd"}
    return _load({"http://www.sitemaps.org/schemas/sitemap/0.9": "siteindex.xsd", **others})
