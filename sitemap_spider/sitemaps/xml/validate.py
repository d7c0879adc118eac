"""Streaming validation of sitemap files against the official XSDs and the protocol's limits.

The XSDs are read through importlib.resources only: under Scrapyd the package runs from a
zipped egg, where package files have no filesystem path.
"""

from __future__ import annotations

import functools
import gzip
import io
import logging
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Final

# lxml ships no type information (lxml-stubs is not a dependency of the project).
from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.sitemaps.errors import SitemapValidationError
from sitemap_spider.sitemaps.xml.schema_files import parse_schema, schema_bytes
from sitemap_spider.sitemaps.limits import MAX_BYTES_PER_SITEMAP, MAX_SITEMAPS_PER_INDEX, MAX_URLS_PER_SITEMAP
from sitemap_spider.sitemaps.xml.elements import SITEMAP_NAMESPACE

logger = logging.getLogger(__name__)

# A urlset's URLs and an index's sitemaps have one limit, and so does every file's size.
MAX_CHILDREN: Final = max(MAX_URLS_PER_SITEMAP, MAX_SITEMAPS_PER_INDEX)
MAX_UNCOMPRESSED_BYTES: Final = MAX_BYTES_PER_SITEMAP
# Documents up to this size are parsed whole and validated as a tree: about twice as fast
# as streaming, and lxml releases the GIL for both steps (so a shard is validated on a
# thread while the next one is written). The tree of a file this size takes about 60 MB;
# larger files are streamed in constant memory.
TREE_VALIDATION_MAX_BYTES: Final = 8 * 1024 * 1024
# Root element -> (schema file, child element counted against MAX_CHILDREN).
_KINDS: Final = {"urlset": ("sitemap.xsd", "url"), "sitemapindex": ("siteindex.xsd", "sitemap")}


# A urlset that declares other namespaces than the sitemap's is validated with the schemas of
# the extensions loaded too (the official image, video and news ones, and ours for xhtml:link).
EXTENSIONS_SCHEMA: Final = "sitemap-extensions.xsd"


@functools.cache
def load_schema(file_name: str) -> etree.XMLSchema:
    """Return the parsed schema ``file_name`` (cached; lxml validators are per call)."""
    return parse_schema(schema_bytes(file_name), base_url=file_name)


def _urlset_schema(namespaces: dict[str | None, str]) -> str:
    """The schema of a urlset whose root declares ``namespaces``."""
    return EXTENSIONS_SCHEMA if len(namespaces) > 1 else "sitemap.xsd"


class _CountingReader:
    """A read()-only view of a stream that stops once more than ``limit`` bytes came out."""

    def __init__(self, stream: io.BufferedIOBase, limit: int, name: str) -> None:
        self._stream = stream
        self._limit = limit
        self._name = name
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self.count += len(data)
        if self.count > self._limit:
            raise SitemapValidationError(f"{self._name}: more than {self._limit} uncompressed bytes")
        return data


def _open(path: Path) -> io.BufferedIOBase:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


# How a document is read: called for each pass over it.
Opener = Callable[[], io.BufferedIOBase]


def _root_kind(path: Path | str, opener: Opener) -> tuple[str, str]:
    """Return "urlset" or "sitemapindex" from the root element, reading only the file's head,
    and the schema to validate it with."""
    try:
        with opener() as stream:
            reader = _CountingReader(stream, MAX_UNCOMPRESSED_BYTES, str(path))
            events = etree.iterparse(reader, events=("start",), no_network=True)
            _, root = next(events)
    except (etree.XMLSyntaxError, OSError, EOFError, zlib.error, StopIteration) as exc:
        raise SitemapValidationError(f"{path}: not a readable XML file: {exc}") from exc
    qname = etree.QName(root)
    if qname.localname not in _KINDS:
        raise SitemapValidationError(
            f"{path}: root element <{qname.localname}> is neither <urlset> nor <sitemapindex>"
        )
    if qname.namespace != SITEMAP_NAMESPACE:
        raise SitemapValidationError(
            f"{path}: <{qname.localname}> has namespace {qname.namespace!r}, expected {SITEMAP_NAMESPACE!r}"
        )
    kind = str(qname.localname)
    return kind, _urlset_schema(root.nsmap) if kind == "urlset" else _KINDS[kind][0]


def validate_file(path: Path, whole: bool = True) -> int:
    """Validate a sitemap or sitemap index (.xml or .xml.gz); return its number of children.

    Memory stays bounded whatever the file's size; ``whole=False`` streams even small
    files (constant memory, about half the speed). Raises SitemapValidationError naming
    the file and the problem.
    """
    path = Path(path)
    data = _small_document(path) if whole else None
    if data is not None:
        return validate_document(data, path)
    # Too big for a tree: streamed in constant memory.
    return _validate_streaming(path, functools.partial(_open, path))


def validate_document(data: bytes, name: Path | str) -> int:
    """``validate_file`` for the uncompressed bytes of a document already in memory.

    Validated as a tree: meant for documents of at most TREE_VALIDATION_MAX_BYTES.
    """
    count = _count_if_valid(data)
    if count is not None:
        return count
    # Invalid: the streaming validation finds and names the problem.
    _validate_streaming(name, functools.partial(io.BytesIO, data))
    # Never expected: both validate with the same libxml2 and XSD.
    raise SitemapValidationError(f"{name}: rejected when validated whole, accepted when streamed")


def _small_document(path: Path) -> bytes | None:
    """The uncompressed bytes of ``path`` if there are at most TREE_VALIDATION_MAX_BYTES."""
    try:
        if not path.name.endswith(".gz"):
            return path.read_bytes() if path.stat().st_size <= TREE_VALIDATION_MAX_BYTES else None
        with gzip.open(path, "rb") as stream:
            data = stream.read(TREE_VALIDATION_MAX_BYTES + 1)
    except (OSError, EOFError, zlib.error):
        return None  # the streaming validation reports it
    return data if len(data) <= TREE_VALIDATION_MAX_BYTES else None


def _count_if_valid(data: bytes) -> int | None:
    """The number of children of a valid document, or None if it is not valid."""
    # A parser per call: a parser object must not be used by two threads at once. Blank text
    # between elements, comments and processing instructions are left out of the tree: the
    # schema ignores them (libxml2 keeps the blank text of an element that has nothing else),
    # building and validating the tree is faster without them, and the root's children are
    # then its elements only.
    parser = etree.XMLParser(
        no_network=True, huge_tree=False, remove_blank_text=True, remove_comments=True, remove_pis=True
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return None
    qname = etree.QName(root)
    if qname.localname not in _KINDS or qname.namespace != SITEMAP_NAMESPACE:
        return None
    schema_name = _KINDS[qname.localname][0] if qname.localname != "urlset" else _urlset_schema(root.nsmap)
    if not load_schema(schema_name).validate(root):
        return None
    # Valid: every child is a <url> (or a <sitemap>), the one element the schema allows there.
    count = len(root)
    return count if count <= MAX_CHILDREN else None


def _validate_streaming(path: Path | str, opener: Opener) -> int:
    kind, schema_name = _root_kind(path, opener)
    child = _KINDS[kind][1]
    child_tag = f"{{{SITEMAP_NAMESPACE}}}{child}"
    root_tag = f"{{{SITEMAP_NAMESPACE}}}{kind}"
    count = 0
    complete = False
    try:
        with opener() as stream:
            reader = _CountingReader(stream, MAX_UNCOMPRESSED_BYTES, str(path))
            # resolve_entities keeps lxml's default ("internal": never an external entity);
            # with schema=, resolve_entities=False hides a truncated document's error.
            events = etree.iterparse(
                reader,
                events=("end",),
                tag=(child_tag, root_tag),
                schema=load_schema(schema_name),
                no_network=True,
            )
            for _, element in events:
                if element.tag == root_tag:
                    complete = True
                    continue
                count += 1
                if count > MAX_CHILDREN:
                    raise SitemapValidationError(f"{path}: more than {MAX_CHILDREN} <{child}> elements")
                # Drop what was parsed so far: only the current element stays in memory.
                element.clear()
                parent = element.getparent()
                while parent is not None and element.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as exc:
        raise SitemapValidationError(f"{path}: {schema_name}: {exc}") from exc
    except (OSError, EOFError, zlib.error) as exc:
        raise SitemapValidationError(f"{path}: cannot read: {exc}") from exc
    if not complete:  # belt and braces: never call a document valid without its end tag
        raise SitemapValidationError(f"{path}: incomplete document, </{kind}> not found")
    logger.debug("%s is a valid <%s> of %d <%s>", path, kind, count, child)
    return count
