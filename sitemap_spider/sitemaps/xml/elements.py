"""The bytes of sitemap documents: the only code that writes a ``<url>``, and reads one back.

Every function here is pure and takes fields that passed the checks of rules.py. A shard holds
one ``<url>`` per line; ``url_line`` writes one, ``url_lines`` a block of them from the
columns of the publishing loop (the fast path: one f-string for the common entry, pinned to the
XML that lxml and Scrapy's ``Sitemap`` read back by tests/test_xml.py), and ``parse_url_line``
reads the loc and lastmod of a line of the previous set back; ``index_locs`` reads an index's.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import IO, Final

from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.names import STYLESHEET_NAME
from sitemap_spider.sitemaps.runs.lines import Extras

SITEMAP_NAMESPACE: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
XML_DECLARATION: Final = b'<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_OPEN: Final = XML_DECLARATION + b'<urlset xmlns="' + SITEMAP_NAMESPACE.encode() + b'">\n'
URLSET_CLOSE: Final = b"</urlset>\n"
SITEMAPINDEX_OPEN: Final = XML_DECLARATION + b'<sitemapindex xmlns="' + SITEMAP_NAMESPACE.encode() + b'">\n'
SITEMAPINDEX_CLOSE: Final = b"</sitemapindex>\n"
#: SITEMAP_XSL: the line after the declaration that has a browser show a file through the set's
#: stylesheet (relative: it is published beside every file of the set).
STYLESHEET_LINE: Final = f'<?xml-stylesheet type="text/xsl" href="{STYLESHEET_NAME}"?>\n'.encode()

#: The end of every ``<url>`` line; extension elements go before it (``with_extensions``).
URL_CLOSE: Final = "</url>\n"
_URL_LINE_START: Final = "<url><loc>"
# A <url> line as url_line writes it: loc, maybe lastmod, changefreq, priority (no extensions).
_URL_LINE: Final = re.compile(
    r"<url><loc>([^<]*)</loc>(?:<lastmod>([^<]*)</lastmod>)?"
    r"(?:<changefreq>[^<]*</changefreq>)?(?:<priority>[^<]*</priority>)?</url>\n"
)
#: The optional children of ``<url>``, in sitemap.xsd's order.
URL_OPTIONAL: Final = ("lastmod", "changefreq", "priority")

_ESCAPES: Final = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&apos;"))


def with_stylesheet(head: bytes, stylesheet: bool) -> bytes:
    """A document's ``head`` (``URLSET_OPEN``, ``SITEMAPINDEX_OPEN``, ...) with the stylesheet
    line after its declaration when ``stylesheet`` is on; as it is otherwise."""
    if not stylesheet:
        return head
    assert head.startswith(XML_DECLARATION)
    return XML_DECLARATION + STYLESHEET_LINE + head[len(XML_DECLARATION) :]


def needs_escaping(text: str) -> bool:
    """True if ``text`` holds one of the five characters ``escape`` replaces."""
    return "&" in text or "<" in text or ">" in text or '"' in text or "'" in text


def is_verbatim(loc: str, lastmod: str | None) -> bool:
    """True if a checked loc and lastmod go into a ``<url>`` as they are: nothing to escape,
    seconds in the lastmod (``xml_lastmod``)."""
    return not needs_escaping(loc) and (lastmod is None or len(lastmod) < 17 or lastmod[16] == ":")


def escape(text: str) -> str:
    """Entity-escape the five XML special characters, as the protocol asks."""
    # "&" goes first so the other replacements' ampersands are not escaped again.
    for char, entity in _ESCAPES:
        if char in text:
            text = text.replace(char, entity)
    return text


def format_priority(value: float) -> str:
    """Write a priority as a plain decimal: 1 -> "1.0", 0.75 -> "0.75" (no exponent)."""
    text = f"{value:.4f}".rstrip("0")
    if text.endswith("."):
        text += "0"
    # Tiny values round to zero; "-0.0" would still validate but reads like a bug.
    return "0.0" if text == "-0.0" else text


def xml_lastmod(value: str) -> str:
    """Return the form of a checked lastmod that goes into the file.

    A date-time without seconds (allowed by W3C Datetime) is not an xsd:dateTime, so
    ":00" is added: the same instant, in a form the XSD accepts.
    """
    if len(value) > 16 and value[16] != ":":
        return f"{value[:16]}:00{value[16:]}"
    return value


def url_element(entry: SitemapEntry) -> bytes:
    """Return one ``<url>`` line; the entry must have passed ``check_entry``."""
    return url_element_of(entry.loc, entry.lastmod, entry.changefreq, entry.priority)


def url_element_of(loc: str, lastmod: str | None, changefreq: str | None, priority: float | None) -> bytes:
    """``url_element`` of an entry given by its (checked) fields."""
    return url_line(loc, lastmod, changefreq, priority).encode("utf-8")


def url_line(loc: str, lastmod: str | None, changefreq: str | None, priority: float | None) -> str:
    """``url_element_of`` as text (ASCII for checked fields: a checked loc is ASCII)."""
    # Element order is fixed by sitemap.xsd's tUrl sequence.
    if lastmod is None and changefreq is None and priority is None:  # a loc alone: one format call
        return f"<url><loc>{escape(loc)}</loc></url>\n"
    parts = ["<url><loc>", escape(loc), "</loc>"]
    if lastmod is not None:
        parts += ("<lastmod>", xml_lastmod(lastmod), "</lastmod>")
    if changefreq is not None:
        parts += ("<changefreq>", changefreq, "</changefreq>")
    if priority is not None:
        parts += ("<priority>", format_priority(priority), "</priority>")
    parts.append("</url>\n")
    return "".join(parts)


def url_lines(locs: list[str], lastmods: list[str], extras: list[Extras | None], *, verbatim: bool) -> list[str]:
    """The ``<url>`` lines of a block of kept run lines (``entry_lines.FirstOfEach``) without
    extension XML; ``verbatim``: every loc and lastmod goes in as it is (``is_verbatim``)."""
    # The common entry (a loc, maybe a lastmod) is formatted by one f-string, inlined. A
    # verbatim set skips the two looks below: the join and five scans of each block, and the
    # lastmod's seconds on each line (some 0.15 s less per million lines).
    check = not verbatim
    # Escaping is the exception: decided once for the block.
    special = check and needs_escaping("".join(locs))
    lines: list[str] = []
    add_line = lines.append
    for loc, lastmod, extra in zip(locs, lastmods, extras):
        if extra is None:
            if special:
                loc = escape(loc)
            if not lastmod:
                add_line(f"<url><loc>{loc}</loc></url>\n")
            elif check and len(lastmod) > 16 and lastmod[16] != ":":  # no seconds
                add_line(f"<url><loc>{loc}</loc><lastmod>{xml_lastmod(lastmod)}</lastmod></url>\n")
            else:
                add_line(f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod></url>\n")
        else:
            add_line(url_line(loc, lastmod or None, extra[0], extra[1]))
    return lines


def with_extensions(line: str, children: str) -> str:
    """A ``<url>`` line with extension elements (``xhtml:link``, ``image:image``, ...) added at its end."""
    return line[: -len(URL_CLOSE)] + children + URL_CLOSE if children else line


def url_line_of_text(loc: str, children: dict[str, str]) -> str:
    """``url_line`` of a loc and the text of its optional children as another file has them
    (written as they are, so that an unchanged page gives the same line)."""
    tail = "".join(f"<{key}>{children[key]}</{key}>" for key in URL_OPTIONAL if children.get(key))
    return f"<url><loc>{escape(loc)}</loc>{tail}</url>\n"


def parse_url_line(line: str) -> tuple[str, str | None] | None:
    """The loc (unescaped) and lastmod of a ``<url>`` line of ``url_line``; None if it is not one."""
    match = _URL_LINE.fullmatch(line)
    if match is None:
        return None
    loc = match.group(1)
    return (html.unescape(loc) if "&" in loc else loc), match.group(2)


def loc_in(line: str) -> str:
    """The loc of a ``<url>`` line, extensions or not."""
    loc = line[len(_URL_LINE_START) : line.find("</loc>")]
    return html.unescape(loc) if "&" in loc else loc


def url_lines_of_document(raw: IO[bytes]) -> Iterator[str]:
    """The ``<url>`` elements of a ``<urlset>`` in any layout (another generator's, or with
    extensions), stream-parsed, as the lines ``url_line`` writes, without their extensions;
    lxml's XMLSyntaxError if it is not XML."""
    ns = "{" + SITEMAP_NAMESPACE + "}"
    loc: str | None = None
    # lastmod, changefreq, priority: kept as written, so that the line of an unchanged page is
    # the same text as the one the shard writer writes (one comparison, no parsing).
    fields: dict[str, str] = {}
    tags = (ns + "loc", ns + "lastmod", ns + "changefreq", ns + "priority", ns + "url")
    for _, element in etree.iterparse(raw, events=("end",), tag=tags):
        name = element.tag[len(ns) :]
        if name == "loc":
            loc = (element.text or "").strip()
        elif name != "url":
            fields[name] = (element.text or "").strip()
        else:
            if loc:
                yield url_line_of_text(loc, fields)
            loc = None
            fields.clear()
            element.clear()
            while element.getprevious() is not None:
                del element.getparent()[0]


def index_locs(source: str | IO[bytes]) -> Iterator[str]:
    """The ``<loc>`` of each ``<sitemap>`` of a sitemap index (a path or a binary file), streamed;
    lxml's XMLSyntaxError if it is not XML."""
    for _, element in etree.iterparse(source, events=("end",), tag="{" + SITEMAP_NAMESPACE + "}loc"):
        yield (element.text or "").strip()
        element.clear()


def sitemap_element(loc: str, lastmod: str | None) -> bytes:
    """Return one ``<sitemap>`` line of a sitemap index."""
    if lastmod is None:
        return f"<sitemap><loc>{escape(loc)}</loc></sitemap>\n".encode()
    return (
        f"<sitemap><loc>{escape(loc)}</loc><lastmod>{xml_lastmod(lastmod)}</lastmod></sitemap>\n"
    ).encode()
