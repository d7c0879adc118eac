"""libxml2's XSD messages said the way a person would say them.

``Element '{http://www.sitemaps.org/schemas/sitemap/0.9}changefreq': This element is not
expected. Expected is ( ##other{...}* ).`` is what libxml2 says of a ``<priority>`` written
before ``<changefreq>``; the report says "<changefreq> must come before <priority> inside
<url>". ``describe`` knows the messages libxml2 gives for sitemaps (element order, missing or
repeated elements, values out of their set, range or type, attributes, text where only
elements go) and the fields of ``<url>`` and ``<sitemap>``; any other message is kept,
namespaces written as the usual prefixes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from sitemap_spider.sitemaps import SITEMAP_NAMESPACE

PREFIXES: Final = {
    SITEMAP_NAMESPACE: "",
    "http://www.google.com/schemas/sitemap-image/1.1": "image:",
    "http://www.google.com/schemas/sitemap-video/1.1": "video:",
    "http://www.google.com/schemas/sitemap-news/0.9": "news:",
    "http://www.w3.org/1999/xhtml": "xhtml:",
}
#: The fields of each entry, in the order sitemap.xsd and siteindex.xsd fix.
FIELDS: Final = {
    "url": ("loc", "lastmod", "changefreq", "priority"),
    "sitemap": ("loc", "lastmod"),
}
# What a value of each simple type of the schemas looks like (named by libxml2 in its messages).
_TYPES: Final = {
    "tLastmod": "a date (YYYY-MM-DD) or a date-time with seconds and a zone (YYYY-MM-DDThh:mm:ss+hh:mm)",
    "tPriority": "a decimal from 0.0 to 1.0",
    "tLoc": "a URL of 12 to 2,048 characters",
    "LanguageCode": "a language tag: letters and digits in parts of at most 8, joined by '-' (en, en-GB)",
    "URI": "a URI",
    "dateTime": "a date-time with seconds (YYYY-MM-DDThh:mm:ss+hh:mm)",
    "date": "a date (YYYY-MM-DD)",
    "boolean": "true or false",
    "nonNegativeInteger": "a whole number, 0 or more",
    "positiveInteger": "a whole number, 1 or more",
    "decimal": "a decimal number",
}
# Patterns of the official schemas whose meaning is worth saying in words.
_PATTERNS: Final = {
    "news:language": "an ISO 639 language code of 2 or 3 lower-case letters, without region (zh-cn and "
    "zh-tw excepted)",
}

_HEAD: Final = re.compile(r"Element '(?P<element>[^']+)'(?:, attribute '(?P<attribute>[^']+)')?: (?P<rest>.*)", re.DOTALL)
_QNAME: Final = re.compile(r"\{([^}]*)\}([\w.\-]+)")
_OTHER: Final = re.compile(r"##other\{[^}]*\}\*")
_EXPECTED: Final = re.compile(r"Expected is (?:one of )?\( (?P<names>.*) \)\.")
_ENUMERATION: Final = re.compile(r"\[facet 'enumeration'\] The value '(?P<value>.*)' is not an element of the set \{(?P<set>.*)\}\.")
_PATTERN: Final = re.compile(r"\[facet 'pattern'\] The value '(?P<value>.*)' is not accepted by the pattern '(?P<pattern>.*)'\.")
_MAX: Final = re.compile(r"\[facet 'max(?:In|Ex)clusive'\] The value '(?P<value>.*)' is greater than the maximum value allowed \('(?P<limit>.*)'\)\.")
_MIN: Final = re.compile(r"\[facet 'min(?:In|Ex)clusive'\] The value '(?P<value>.*)' is less than the minimum value allowed \('(?P<limit>.*)'\)\.")
_LENGTH: Final = re.compile(r"\[facet '(?P<facet>minLength|maxLength)'\] The value has a length of '(?P<length>\d+)'; .* length of '(?P<limit>\d+)'\.")
_TYPE: Final = re.compile(r"'(?P<value>.*)' is not a valid value of the (?:local )?(?:atomic|union|list) type(?: '(?P<type>[^']*)')?\.")
_NOT_ALLOWED: Final = re.compile(r"The attribute '(?P<name>[^']+)' is not allowed\.")
_REQUIRED: Final = re.compile(r"The attribute '(?P<name>[^']+)' is required but missing\.")
_CUT: Final = 80


def name_of(qname: str) -> str:
    """``{namespace}local`` written with the usual prefix (``image:loc``; a sitemap field bare)."""
    match = _QNAME.fullmatch(qname)
    if match is None:
        return qname
    namespace, local = match.groups()
    return f"{PREFIXES[namespace]}{local}" if namespace in PREFIXES else qname


def short(message: str) -> str:
    """A libxml2 message with every ``{namespace}`` written as its prefix."""
    return _QNAME.sub(lambda match: name_of(match.group(0)), message)


def describe(message: str, entry: str = "url", children: Sequence[str] = ()) -> str:
    """libxml2's ``message`` about an element inside an ``<entry>`` whose children are ``children``
    (their names, prefixed as ``name_of`` writes them, in document order)."""
    head = _HEAD.match(message.strip())
    if head is None:
        return short(message)
    element, rest = name_of(head.group("element")), head.group("rest")
    if head.group("attribute"):
        return _attribute_value(element, head.group("attribute"), rest) or short(message)
    if rest.startswith("This element is not expected."):
        return _unexpected(element, _expected(rest), entry, children)
    if rest.startswith("Missing child element(s)."):
        names = _expected(rest)
        what = " or ".join(f"<{name}>" for name in names if name) or "a required element"
        return f"<{element}> has no {what}"
    return _content(element, rest) or _facet(f"<{element}>", element, rest) or short(message)


def _expected(rest: str) -> list[str]:
    """The elements libxml2 says it expected; "" stands for extension elements (##other)."""
    match = _EXPECTED.search(rest)
    if match is None:
        return []
    names = [name.strip() for name in _OTHER.sub("", match.group("names")).split(",")]
    return [name_of(name) for name in names if name] + ([""] if "##other" in match.group("names") else [])


def _unexpected(element: str, expected: list[str], entry: str, children: Sequence[str]) -> str:
    fields = FIELDS.get(entry, ())
    if expected and expected[0] == "loc" and len(expected) == 1:
        if "loc" not in children:
            return f"<{entry}> has no <loc>"
        return f"<loc> must come first inside <{entry}>, before <{element}>"
    if element in fields:
        if children.count(element) > 1:
            return f"<{entry}> may hold one <{element}>; this is another"
        before = children[: children.index(element)] if element in children else list(children)
        later = [name for name in before if name in fields and fields.index(name) > fields.index(element)]
        if later:
            return f"<{element}> must come before <{later[0]}> inside <{entry}>"
        extensions = [name for name in before if name not in fields]
        if extensions:
            return f"<{element}> must come before <{extensions[0]}> inside <{entry}>: extension elements go last"
    if ":" not in element and fields:
        listed = ", ".join(f"<{name}>" for name in fields)
        return (
            f"<{element}> is not an element of <{entry}>, which holds {listed} and elements of other "
            "namespaces (extensions)"
        )
    named = [f"<{name}>" for name in expected if name]
    if not named:
        return f"<{element}> is not allowed here"
    return f"<{element}> is not allowed here: the schema expects {' or '.join(named)} at this place"


def _content(element: str, rest: str) -> str | None:
    if rest.startswith("Character content other than whitespace is not allowed"):
        return f"<{element}> holds text between its elements, where only elements may go"
    if "content is not allowed, because the content type is empty" in rest:
        return f"<{element}> must be empty"
    if rest.startswith("No matching global declaration available for the validation root"):
        return f"<{element}> is not a root the schemas know"
    return None


def _attribute_value(element: str, attribute: str, rest: str) -> str | None:
    if (match := _NOT_ALLOWED.match(rest)) is not None:
        return f"<{element}> may not have the attribute {match.group('name')}"
    return _facet(f"the {attribute} attribute of <{element}>", f"{element}@{attribute}", rest)


def _facet(subject: str, key: str, rest: str) -> str | None:
    if (match := _REQUIRED.match(rest)) is not None:
        return f"{subject} lacks the required attribute {match.group('name')}"
    if (match := _ENUMERATION.match(rest)) is not None:
        values = ", ".join(value.strip(" '") for value in match.group("set").split(","))
        return f"{subject} {_quote(match.group('value'))} is not one of {values}"
    if (match := _PATTERN.match(rest)) is not None:
        wanted = _PATTERNS.get(key, f"a value matching {match.group('pattern')!r}")
        return f"{subject} {_quote(match.group('value'))} is not {wanted}"
    if (match := _MAX.match(rest)) is not None:
        return f"{subject} {_quote(match.group('value'))} is over the maximum, {match.group('limit')}"
    if (match := _MIN.match(rest)) is not None:
        return f"{subject} {_quote(match.group('value'))} is under the minimum, {match.group('limit')}"
    if (match := _LENGTH.match(rest)) is not None:
        bound = "at least" if match.group("facet") == "minLength" else "at most"
        return f"{subject} has {match.group('length')} characters; the schema allows {bound} {match.group('limit')}"
    if (match := _TYPE.match(rest)) is not None:
        kind = (match.group("type") or "").rsplit("}", 1)[-1]
        return f"{subject} {_quote(match.group('value'))} is not {_TYPES.get(kind, 'of the type the schema requires')}"
    return None


def _quote(value: str) -> str:
    return repr(value if len(value) <= _CUT else value[:_CUT] + "...")
