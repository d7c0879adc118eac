"""xmllint with the official XSDs: the independent verdict ``scrapy validate`` is compared with.

The schemas are the package's copies of the official files (sitemap_spider/schemas), loaded by
a wrapper that imports them all (urlset and sitemapindex take elements of other namespaces with
strict processing). xhtml1-strict.xsd imports the W3C's xml.xsd from the network: an XML
catalog answers it with a local copy, and xmllint runs with --nonet.

    python -m tests.xmllint_check FILE...    prints each file's verdict
"""

from __future__ import annotations

import functools
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final, Literal

SCHEMAS: Final = Path(__file__).parent.parent / "sitemap_spider" / "schemas"
EXTENSIONS: Final = {
    "http://www.google.com/schemas/sitemap-image/1.1": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9": "sitemap-news.xsd",
    "http://www.w3.org/1999/xhtml": "xhtml1-strict.xsd",
}
SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
_XML_XSD: Final = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://www.w3.org/XML/1998/namespace">
  <xs:attribute name="lang" type="xs:language"/>
  <xs:attribute name="space"><xs:simpleType><xs:restriction base="xs:NCName">
    <xs:enumeration value="default"/><xs:enumeration value="preserve"/></xs:restriction></xs:simpleType></xs:attribute>
  <xs:attribute name="base" type="xs:anyURI"/>
</xs:schema>
"""
_CATALOG: Final = """<?xml version="1.0"?>
<catalog xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog">
  <uri name="http://www.w3.org/2001/xml.xsd" uri="xml.xsd"/>
  <system systemId="http://www.w3.org/2001/xml.xsd" uri="xml.xsd"/>
</catalog>
"""
_ROOT: Final = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(urlset|sitemapindex)[\s>/]")

Verdict = Literal["valid", "invalid", "not_xml"]


def available() -> bool:
    return shutil.which("xmllint") is not None


@functools.cache
def _schema_dir() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="xmllint-schemas-"))
    for schema in SCHEMAS.glob("*.xsd"):
        shutil.copyfile(schema, folder / schema.name)
    (folder / "xml.xsd").write_text(_XML_XSD, encoding="utf-8")
    (folder / "catalog.xml").write_text(_CATALOG, encoding="utf-8")
    for root, main in (("urlset", "sitemap.xsd"), ("sitemapindex", "siteindex.xsd")):
        imports = [(SITEMAP_NS, main), *EXTENSIONS.items()]
        lines = "".join(f'  <xsd:import namespace="{ns}" schemaLocation="{name}"/>\n' for ns, name in imports)
        (folder / f"official-{root}.xsd").write_text(
            f'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">\n{lines}</xsd:schema>\n',
            encoding="utf-8",
        )
    return folder


def _head(path: Path) -> bytes:
    with path.open("rb") as raw:
        data = raw.read(65536)
    if data.startswith(b"\x1f\x8b"):
        with gzip.open(path, "rb") as unzipped:
            data = unzipped.read(65536)
    return data


def verdict(path: Path) -> Verdict:
    """xmllint's verdict on one file (xmllint reads gzip itself); not_xml for a text sitemap."""
    head = _head(path)
    if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        return "not_xml"
    root = _ROOT.search(head)
    schema = _schema_dir() / f"official-{root.group(1).decode() if root else 'urlset'}.xsd"
    env = {**os.environ, "XML_CATALOG_FILES": str(_schema_dir() / "catalog.xml")}
    done = subprocess.run(
        ["xmllint", "--noout", "--nonet", "--schema", str(schema), str(path)],
        capture_output=True, text=True, env=env, check=False, timeout=60,
    )  # fmt: skip
    if "failed to compile" in done.stderr or "WXS schema" in done.stderr and "failed" in done.stderr:
        raise RuntimeError(f"the schemas did not load: {done.stderr[:2000]}")
    return "valid" if done.returncode == 0 else "invalid"


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(verdict(Path(name)), name)
