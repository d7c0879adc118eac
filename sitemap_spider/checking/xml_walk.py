"""The XML side of ``check_document``: a <urlset> or <sitemapindex> streamed with lxml's iterparse.

Only the element being checked and the root stay in memory: each ``<url>`` is checked,
validated against the XSDs (wrapped in a copy of its root, so that one bad URL is reported
with its own line and the rest are still read) and dropped. The parser never loads a DTD,
resolves no entity and touches no network; a document with a DOCTYPE is refused before
parsing starts.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Final

# lxml ships no type information (lxml-stubs is not a dependency of the project).
from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.checking.context import Context
from sitemap_spider.checking.links import link_problems
from sitemap_spider.checking.reader import BoundedReader, SqueezedWhitespace
from sitemap_spider.checking.schemas import sitemapindex_schema, urlset_schema
from sitemap_spider.checking.tail_count import count_start_tags, start_tag, unparsed_tail
from sitemap_spider.checking.values import changefreq_problems, lastmod_problems, priority_problems
from sitemap_spider.checking.xsd_messages import PREFIXES, describe
from sitemap_spider.sitemaps import MAX_SITEMAPS_PER_INDEX, MAX_URLS_PER_SITEMAP, SITEMAP_NAMESPACE

#: The prolog (XML declaration, comments, processing instructions) read before the root.
MAX_PROLOG: Final = 64 * 1024
_PROLOG_ITEM: Final = re.compile(rb"\s*(?:<\?.*?\?>|<!--.*?-->)", re.DOTALL)
_ENCODING: Final = re.compile(rb"""<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']""")
_ELEMENT: Final = re.compile(r"Element '\{([^}]*)\}([^']+)'")
_STRICT_WILDCARD: Final = "demanded by the strict wildcard"
_XHTML_LINK: Final = "{http://www.w3.org/1999/xhtml}link"
_NEWS: Final = "{http://www.google.com/schemas/sitemap-news/0.9}news"
_CHUNK: Final = 64 * 1024
#: Elements one <url> may hold: 1,000 images (Google's limit) of 5 elements each, and many links.
MAX_ELEMENTS_PER_ENTRY: Final = 10_000
# root local name -> (entry element, its limit, limit rule)
_KINDS: Final = {
    "urlset": ("url", MAX_URLS_PER_SITEMAP, "limits.urls"),
    "sitemapindex": ("sitemap", MAX_SITEMAPS_PER_INDEX, "limits.sitemaps"),
}
_VALUE_CHECKS: Final = {
    "changefreq": changefreq_problems,
    "priority": priority_problems,
}


def walk_xml(reader: BoundedReader, head: bytes, context: Context) -> None:
    """Check the XML document ``reader`` gives (``head`` is its start, already read)."""
    if not _prolog_allowed(reader.head(MAX_PROLOG), context):
        return
    declared = _ENCODING.search(head[:200])
    encoding = declared.group(1).decode("ascii", "replace") if declared else "UTF-8"
    if encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
        context.finding("xml.encoding", 1, f"declared encoding {encoding!r}: a sitemap must be UTF-8")
    parser = etree.XMLPullParser(
        events=("start", "end"),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    source = SqueezedWhitespace(reader)
    walker: _Walker | None = None
    depth = 0
    while True:
        chunk = source.read(_CHUNK)
        error: etree.XMLSyntaxError | None = None
        try:
            if chunk:
                parser.feed(chunk)
            else:
                parser.close()
        except etree.XMLSyntaxError as exc:
            error = exc  # what was read before it is still checked
        events = parser.read_events()
        for event, element in events:
            if event == "start":
                depth += 1
                if depth == 1:
                    walker = _Walker.open(element, context)
                    if walker is None:
                        return
                elif walker is not None and not walker.grow(element):
                    return
                continue
            depth -= 1
            if depth == 1 and walker is not None:
                walker.child(element)
                if walker.past_limit:
                    walker.count_rest(events, unparsed_tail(chunk), source)
                    return
        if error is not None:
            line = error.lineno if error.lineno else None
            context.finding("xml.not_well_formed", line, f"{error.msg}; reading stopped")
            return
        if not chunk:
            break
    if walker is not None:
        walker.close()


def _prolog_allowed(prolog: bytes, context: Context) -> bool:
    """False, with the finding, for a DOCTYPE or a prolog too long to look through."""
    prolog = prolog.removeprefix(b"\xef\xbb\xbf")
    position = 0
    while (item := _PROLOG_ITEM.match(prolog, position)) is not None:
        position = item.end()
    rest = prolog[position:].lstrip()
    line = prolog[: len(prolog) - len(rest)].count(b"\n") + 1
    if rest.startswith(b"<!DOCTYPE"):
        context.finding(
            "xml.dtd", line, "a DOCTYPE: DTDs and entities are refused (XXE, entity expansion); not read"
        )
        return False
    # Anything but the root's start tag here ("<!--" unterminated, "<!" of any kind) would let
    # libxml2 read on into what was not looked at: refused.
    if rest.startswith(b"<!") or (not rest.startswith(b"<") and len(prolog) >= MAX_PROLOG):
        context.finding(
            "xml.not_well_formed", line, f"no root element in the first {MAX_PROLOG:,} bytes; not read"
        )
        return False
    return True


class _Walker:
    """The checks of the root's children, one at a time."""

    def __init__(self, root: etree._Element, kind: str, context: Context, validate: bool) -> None:
        self.root = root
        self.kind = kind
        self.context = context
        self.namespace: str | None = etree.QName(root).namespace
        self.entry_tag = etree.QName(self.namespace, _KINDS[kind][0]).text
        self.schema = (urlset_schema() if kind == "urlset" else sitemapindex_schema()) if validate else None
        self.unknown_namespaces: set[str] = set()
        #: An entry past the limit was read: the rest is counted, not parsed (count_rest).
        self.past_limit = False
        self._elements = 0  # in the root's child being read

    @classmethod
    def open(cls, root: etree._Element, context: Context) -> _Walker | None:
        qname = etree.QName(root)
        if root.getroottree().docinfo.doctype:  # never expected: the prolog scan refuses them
            context.finding("xml.dtd", root.sourceline, "a DOCTYPE: refused")
            return None
        if qname.localname not in _KINDS:
            context.finding(
                "xml.root",
                root.sourceline,
                f"root element <{qname.localname}>, not <urlset> or <sitemapindex>",
            )
            return None
        context.document.kind = qname.localname
        if qname.namespace != SITEMAP_NAMESPACE:
            context.finding(
                "xml.namespace",
                root.sourceline,
                f"<{qname.localname}> is in namespace {qname.namespace!r}, not {SITEMAP_NAMESPACE!r}; the XSDs were not applied",
            )
        return cls(root, qname.localname, context, validate=qname.namespace == SITEMAP_NAMESPACE)

    def grow(self, element: etree._Element) -> bool:
        """Count an element started inside the root; False, with the finding, past the bound of
        one child (its whole tree is in memory until it ends: one <url> of a million images
        would take gigabytes)."""
        if element.getparent() is self.root:
            self._elements = 0
        self._elements += 1
        if self._elements <= MAX_ELEMENTS_PER_ENTRY:
            return True
        parent = etree.QName(self.root[-1]).localname if len(self.root) else self.kind
        self.context.finding(
            "limits.entry",
            element.sourceline,
            f"a <{parent}> with more than {MAX_ELEMENTS_PER_ENTRY:,} elements; reading stopped",
        )
        return False

    def child(self, element: etree._Element) -> None:
        if element.tag == self.entry_tag:
            self._entry(element)
        elif isinstance(element.tag, str):
            qname = etree.QName(element)
            if qname.namespace == self.namespace:
                self.context.finding(
                    "xsd", element.sourceline, f"<{qname.localname}> is not allowed in <{self.kind}>"
                )
            else:
                self._validate(element, set(), None)
        # Drop what was read: only the root and the current element stay in memory.
        element.clear(keep_tail=False)
        while element.getprevious() is not None:
            del self.root[0]

    def count_rest(self, events: Iterator[tuple[str, etree._Element]], tail: bytes, source: SqueezedWhitespace) -> None:
        """Count the entries after the one past the limit: those the parser already reported
        (``events``), then the start tags in the bytes it was not given (``tail`` and on)."""
        depth = 1
        for event, element in events:
            depth += 1 if event == "start" else -1
            if event == "start" and depth == 2 and element.tag == self.entry_tag:
                self.context.document.entries += 1
        tag = start_tag(self.root.prefix, _KINDS[self.kind][0])
        self.context.document.entries += count_start_tags(tag, tail, lambda: source.read(_CHUNK))

    def close(self) -> None:
        if self.context.document.entries == 0:
            what = "URL" if self.kind == "urlset" else "sitemap"
            self.context.finding("file.empty", self.root.sourceline, f"<{self.kind}> lists no {what}")

    def _entry(self, element: etree._Element) -> None:
        document = self.context.document
        document.entries += 1
        _, limit, limit_rule = _KINDS[self.kind]
        if document.entries > limit:
            # Past the limit the file is refused whatever its entries hold: they are counted, not
            # checked (a gzip bomb of a million tiny <url> would otherwise cost a validation each).
            self.past_limit = True
            self.context.finding(
                limit_rule,
                element.sourceline,
                f"more than {limit:,} <{etree.QName(element).localname}>; the ones after are counted, not checked",
            )
            return
        fields = {
            etree.QName(child).localname: child for child in element if _in_namespace(child, self.namespace)
        }
        flagged: set[str] = set()
        lastmod = fields.get("lastmod")
        lastmod_text = (lastmod.text or "").strip() if lastmod is not None else None
        news = self.kind == "urlset" and element.find(_NEWS) is not None
        loc = self._loc(fields.get("loc"), flagged, lastmod_text, news)
        if lastmod is not None and lastmod_text is not None:
            self._report(lastmod, lastmod_problems(lastmod_text, self.context.sink.now), flagged, loc)
        if self.kind == "urlset":
            for name, check in _VALUE_CHECKS.items():
                value = fields.get(name)
                if value is not None:
                    self._report(value, check((value.text or "").strip()), flagged, loc)
            for link in element.iterchildren(_XHTML_LINK):
                for rule, detail in link_problems(link.attrib):
                    self.context.finding(rule, link.sourceline, detail, loc)
        self._validate(element, flagged, loc)

    def _loc(self, element: etree._Element | None, flagged: set[str], lastmod: str | None, news: bool) -> str | None:
        if element is None:
            return None  # the XSD names the missing <loc>
        loc = (element.text or "").strip()
        if not self.context.check_loc(loc, element.sourceline, self.kind == "urlset", lastmod, news=news):
            flagged.add("loc")
        elif self.kind == "sitemapindex":
            self.context.document.children.append((loc, element.sourceline))
        return loc

    def _report(
        self, element: etree._Element, problems: list[tuple[str, str]], flagged: set[str], loc: str | None
    ) -> None:
        for rule, detail in problems:
            self.context.finding(rule, element.sourceline, detail, loc)
            if rule.endswith((".format", ".timezone", ".invalid")):
                flagged.add(etree.QName(element).localname)

    def _validate(self, element: etree._Element, flagged: set[str], loc: str | None) -> None:
        """XSD errors of one child, except those of a value a rule above already named."""
        if self.schema is None:
            return
        wrapper = etree.Element(self.root.tag, nsmap=self.root.nsmap)
        wrapper.append(copy.deepcopy(element))
        if self.schema.validate(wrapper):
            return
        entry = _KINDS[self.kind][0] if element.tag == self.entry_tag else ""
        children = [_display_name(child) for child in element if isinstance(child.tag, str)] if entry else []
        for error in self.schema.error_log:
            named = _ELEMENT.search(error.message)
            if named and _STRICT_WILDCARD in error.message:
                if named.group(1) not in self.unknown_namespaces:
                    self.unknown_namespaces.add(named.group(1))
                    self.context.finding(
                        "xsd.unknown_extension",
                        error.line,
                        f"<{named.group(2)}> of namespace {named.group(1)!r}, which has no known schema",
                    )
                continue
            if named and named.group(1) == SITEMAP_NAMESPACE and named.group(2) in flagged:
                continue
            self.context.finding("xsd", error.line, describe(error.message, entry, children), loc)


def _display_name(element: etree._Element) -> str:
    """The name an XSD message gives the element (xsd_messages.name_of), the document's prefix
    for a namespace with no known schema."""
    qname = etree.QName(element)
    if qname.namespace in PREFIXES:
        return f"{PREFIXES[qname.namespace]}{qname.localname}"
    return f"{element.prefix}:{qname.localname}" if element.prefix else qname.text


def _in_namespace(element: etree._Element, namespace: str | None) -> bool:
    return isinstance(element.tag, str) and etree.QName(element).namespace == namespace
