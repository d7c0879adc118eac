"""Independent checks of published sitemaps, for every test that produces some.

Validation here loads the XSDs straight from the package folder with lxml and parses whole
documents (not the product's streaming sitemaps/xml/validate.py), and reading back uses Scrapy's own
sitemap reader, so a bug in the product's code cannot hide itself.
"""

from __future__ import annotations

import gzip
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from lxml import etree  # type: ignore[import-untyped]
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

import sitemap_spider

SCHEMA_DIR = Path(sitemap_spider.__file__).parent / "schemas"
NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
MAX_URLS = 50_000
MAX_BYTES = 52_428_800
INDEX_NAME = "sitemap_index.xml"
# ID1 ID2 CM=deflate, FLG 0 (no name, no comment, no extra), MTIME 0, XFL 0, OS 255 (unknown).
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
EXTENSION_NAMESPACES = {
    "xhtml": "http://www.w3.org/1999/xhtml",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


@cache
def schema(name: str) -> etree.XMLSchema:
    """The official XSD ``name`` (sitemap.xsd or siteindex.xsd), parsed from its file."""
    return etree.XMLSchema(etree.parse(str(SCHEMA_DIR / name)))


def file_bytes(path: Path) -> bytes:
    """The uncompressed content of a .xml or .xml.gz file."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def check_gzip(data: bytes, plain: bytes) -> None:
    """``data`` is ``plain`` gzipped with the fixed header, as Python and Scrapy read it."""
    assert data[:10] == GZIP_HEADER
    assert gzip.decompress(data) == plain
    assert gunzip(data) == plain


def assert_valid(data: bytes, schema_name: str, label: str) -> None:
    """Fail unless ``data`` validates against ``schema_name``; a urlset that declares extension
    namespaces against sitemap.xsd with the extensions' schemas (image, video, news: the
    official ones; xhtml:link: the package's own), strictly."""
    document = etree.fromstring(data)
    if schema_name == "sitemap.xsd" and set(document.nsmap) - {None}:
        assert set(document.nsmap) - {None} <= set(EXTENSION_NAMESPACES), document.nsmap
        # Only the namespaces the file uses are declared.
        used = {etree.QName(element).namespace for element in document.iter()}
        assert {document.nsmap[prefix] for prefix in document.nsmap if prefix} <= used, label
        schema_name = "sitemap-extensions.xsd"
    xsd = schema(schema_name)
    assert xsd.validate(document), f"{label}: {xsd.error_log}"
    assert etree.QName(document).namespace == NAMESPACE, label


def read_urls(data: bytes, label: str) -> list[dict[str, str]]:
    """Validate a whole <urlset> and read it back with Scrapy's reader, in file order."""
    assert len(data) <= MAX_BYTES, f"{label}: {len(data)} bytes"
    assert_valid(data, "sitemap.xsd", label)
    sitemap = Sitemap(data)
    assert sitemap.type == "urlset", label
    urls = [{key: str(value) for key, value in url.items()} for url in sitemap]
    assert 1 <= len(urls) <= MAX_URLS, f"{label}: {len(urls)} URLs"
    return urls


def read_urlset(path: Path) -> list[dict[str, str]]:
    """Check and read one sitemap file (.xml or .xml.gz)."""
    return read_urls(file_bytes(path), str(path))


def as_instant(lastmod: str) -> datetime:
    """A lastmod as an aware datetime (a date alone is midnight UTC)."""
    if _DATE_ONLY.fullmatch(lastmod):
        return datetime.fromisoformat(lastmod).replace(tzinfo=UTC)
    return datetime.fromisoformat(lastmod)


def read_sitemap_set(output_dir: Path, base_url: str, news: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    """Check a published set (index + shards) in ``output_dir``; return all URLs in order, but
    those of the news files (``sitemap-news-*``), which go into ``news`` when given."""
    index_path = output_dir / INDEX_NAME
    index_data = index_path.read_bytes()
    assert len(index_data) <= MAX_BYTES
    assert_valid(index_data, "siteindex.xsd", str(index_path))
    index = Sitemap(index_data)
    assert index.type == "sitemapindex"
    listed = [{key: str(value) for key, value in entry.items()} for entry in index]
    assert 1 <= len(listed) <= MAX_URLS

    names = []
    urls: list[dict[str, str]] = []
    for entry in listed:
        assert entry["loc"].startswith(base_url), entry["loc"]
        name = entry["loc"][len(base_url) :]
        assert "/" not in name, name
        shard_urls = read_urlset(output_dir / name)
        lastmods = [as_instant(url["lastmod"]) for url in shard_urls if "lastmod" in url]
        # When the file changed: its newest entry's date, or a later publish's time when the file
        # changed without a later entry (a URL added without a lastmod, one removed).
        if "lastmod" in entry:
            assert not lastmods or as_instant(entry["lastmod"]) >= max(lastmods), entry
        else:
            assert not lastmods, entry
        names.append(name)
        if name.startswith("sitemap-news-"):
            assert len(shard_urls) <= 1000, name
            if news is not None:
                news.extend(shard_urls)
        else:
            urls.extend(shard_urls)

    assert len(set(names)) == len(names), names
    present = {path.name for path in output_dir.glob("sitemap-*.xml*")}
    assert present == set(names), f"files {sorted(present)} != listed {names}"
    leftovers = list(output_dir.glob(".sitemap-staging-*"))
    assert not leftovers, leftovers
    return urls
