"""The XSDs of the package, and the one resolver that answers their imports from it.

The files are read through importlib.resources (Scrapyd runs a zipped egg); every import a
schema makes is answered from them, or, for xhtml1-strict.xsd's import of the W3C's xml.xsd,
from the few attributes declared here: nothing is fetched from the network.
"""

from __future__ import annotations

import importlib.resources
from typing import Any, Final

# lxml ships no type information (lxml-stubs is not a dependency of the project).
from lxml import etree  # type: ignore[import-untyped]

SCHEMA_PACKAGE: Final = "sitemap_spider.schemas"
XML_NAMESPACE_LOCATION: Final = "http://www.w3.org/2001/xml.xsd"
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


def schema_bytes(file_name: str) -> bytes:
    """The content of the package's schema file ``file_name``."""
    return importlib.resources.files(SCHEMA_PACKAGE).joinpath(file_name).read_bytes()


def has_schema(file_name: str) -> bool:
    """Whether the package has a schema file ``file_name``."""
    return file_name.endswith(".xsd") and importlib.resources.files(SCHEMA_PACKAGE).joinpath(file_name).is_file()


class PackageResolver(etree.Resolver):  # type: ignore[misc]
    """Resolves a schema's imports to the files of this package, never to the network."""

    def resolve(self, url: str, pubid: str | None, context: Any) -> Any:
        if url == XML_NAMESPACE_LOCATION:
            return self.resolve_string(_XML_NAMESPACE_XSD, context, base_url=url)
        name = url.rsplit("/", 1)[-1]
        if has_schema(name):
            return self.resolve_string(schema_bytes(name), context, base_url=name)
        return None  # anything else is refused by no_network


def parse_schema(document: bytes, base_url: str | None = None) -> etree.XMLSchema:
    """The XSD ``document``, its imports resolved from the package."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    parser.resolvers.add(PackageResolver())
    return etree.XMLSchema(etree.fromstring(document, parser, base_url=base_url))
