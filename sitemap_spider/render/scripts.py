"""What an inline script can add to a page, judged by what it does rather than who wrote it.

A page needs a browser only if a script can add what the crawl acts on: a link the
static HTML lacks, a robots meta tag, a canonical link. Loaders (a script that creates
a ``<script>``, ``<link rel=stylesheet>`` or ``<img>`` and inserts it), cosmetic code
(titles, classes, text) and scripts that write markup whose links the page already has
statically (javadoc's ``document.writeln('<A HREF="...">')`` beside the same link in its
navigation bar) add nothing. A vendor list of analytics snippets never keeps up with
the web (Baidu's loaders were missing from ours); a rule about effects does.

The reading is lexical, not a JavaScript parser: string, template and regular-expression
literals are lifted out so that markup inside them can be read and code outside them
matched; whatever the rules cannot follow (a tag name or markup held in a variable) is
taken to build content.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from lxml import etree, html  # type: ignore[import-untyped]

# Stands for the i-th literal in a script's skeleton: characters no script contains.
_MARK = "\ue000"
_LITERAL = re.compile(_MARK + r"(\d+)" + _MARK)
# A ${...} substitution inside a template literal: text the rules cannot know.
DYNAMIC = "\ue001"
_NUMBER = re.compile(r"\b(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\b")
_SPACE = re.compile(r"\s+")
# Where a "/" starts a regular expression rather than a division.
_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}

# Mounting a framework app, or DOM APIs that take markup or build trees the rules cannot read.
_BUILDS_TREES = re.compile(
    r"ReactDOM|createRoot\s*\(|hydrateRoot\s*\(|createApp\s*\(|new\s+Vue\s*\(|customElements\s*\.\s*define|"
    r"replaceChildren|attachShadow|DOMParser|createContextualFragment|createElementNS|importNode"
)
# Setting an attribute by name: only a link's, a robots tag's or a canonical's attributes count.
_SET_ATTRIBUTE = re.compile(r"\.\s*(?:setAttribute|attr|prop)\s*\(\s*" + _MARK + r"(\d+)" + _MARK + r"\s*,")
_LINK_ATTRIBUTES = frozenset({"href", "src", "content", "rel", "name"})
_CREATE = re.compile(r"createElement\s*\(\s*(?:" + _MARK + r"(\d+)" + _MARK + r"\s*\))?")
# Calls whose arguments are markup (document.write, jQuery's inserters, $("<a ...>")).
_MARKUP_CALL = re.compile(
    r"(?:\bdocument\s*\.\s*write(?:ln)?|\.\s*(?:insertAdjacentHTML|html|append|prepend|after|before|"
    r"replaceWith|wrap|wrapAll|wrapInner))\s*\("
)
# jQuery's $(...): markup when given a literal that holds a tag; else a selector, an element, a function.
_JQUERY_CALL = re.compile(r"(?<![\w$.])(?:\$|jQuery)\s*\(")
_MARKUP_ASSIGN = re.compile(r"\.\s*(?:innerHTML|outerHTML)\s*\+?=(?!=)")
# Elements whose creation is harmless: they carry no link, robots rule or canonical the crawl reads.
_NAVIGATION_TAGS = frozenset({"a", "area", "frame", "iframe", "link", "meta", "base"})
#: Elements whose only way to lead anywhere is their href: a script that gives them only hrefs the
#: page has (or fragments of the page itself) adds no page to crawl.
_ANCHOR_TAGS = frozenset({"a", "area"})
_HREF_ASSIGN = re.compile(r"\.\s*href\s*=(?!=)")
_ROBOTS_NAMES = re.compile(r"robots|bot$", re.IGNORECASE)
_HTML_PARSER = html.HTMLParser(recover=True, encoding="utf-8")
_MAX_CACHED_MARKUP = 16 * 1024
_MAX_CACHED_SCRIPT = 64 * 1024


@dataclass(frozen=True)
class LexedScript:
    """A script with its literals lifted out: ``skeleton`` holds a mark per literal."""

    skeleton: str
    literals: tuple[str, ...]

    def template(self) -> str:
        """The code with every string and number literal removed: the same on every page of a template."""
        code = _LITERAL.sub('""', self.skeleton)
        return _SPACE.sub(" ", _NUMBER.sub("0", code)).strip()


# One token at a time: comments, string and template literals, a slash, or a run of other code.
_TOKEN = re.compile(
    r"(?P<comment>//[^\n]*|<!--[^\n]*|/\*.*?(?:\*/|\Z))"
    r"|(?P<string>'(?:[^'\\\n]|\\.)*'?|\"(?:[^\"\\\n]|\\.)*\"?|`(?:[^`\\]|\\.)*`?)"
    r"|(?P<slash>/)"
    r"|(?P<code>[^/'\"`<]+|<)",
    re.DOTALL,
)
_REGEX_LITERAL = re.compile(r"/((?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+)/[a-zA-Z]*")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_SUBSTITUTION = re.compile(r"\$\{[^}]*\}")


def lex(script: str) -> LexedScript:
    """Lift string, template and regex literals out of ``script``; drop its comments.

    Cached: a site's pages repeat the same scripts (loaders, ready handlers) on every page.
    A script longer than 64 KiB is lexed each time: 4,096 of those kept would be a lot of memory.
    """
    return _lex(script) if len(script) > _MAX_CACHED_SCRIPT else _cached_lex(script)


def _lex(script: str) -> LexedScript:
    out: list[str] = []
    literals: list[str] = []
    last = ""  # the last significant character of code, to tell a regex from a division
    i, n = 0, len(script)
    while i < n:
        match = _TOKEN.match(script, i)
        assert match is not None  # the alternatives cover every character
        kind = match.lastgroup
        i = match.end()
        if kind == "comment":
            out.append(" ")
            continue
        text = None
        if kind == "string":
            raw = match.group()
            body = raw[1:-1] if len(raw) > 1 and raw[-1] == raw[0] else raw[1:]
            if raw[0] == "`":
                body = _SUBSTITUTION.sub(DYNAMIC, body)
            text = _ESCAPE.sub(r"\1", body)
        elif kind == "slash" and last in _REGEX_BEFORE:
            regex = _REGEX_LITERAL.match(script, match.start())
            if regex is not None:
                text, i = regex.group(1), regex.end()
        if text is not None:
            out.append(f"{_MARK}{len(literals)}{_MARK}")
            literals.append(text)
            last = "a"
            continue
        code = match.group()
        if _MARK in code:
            # The skeleton's own mark, written in the code by a (hostile) page: a literal's number
            # between two of them would name a literal that is not there.
            code = code.replace(_MARK, " ")
        out.append(code)
        stripped = code.rstrip()
        if stripped:
            last = stripped[-1]
    return LexedScript("".join(out), tuple(literals))


_cached_lex = lru_cache(maxsize=4096)(_lex)


def _argument(skeleton: str, start: int, assignment: bool) -> str:
    """The argument text from ``start``: to the matching ``)``, or for an assignment to the statement's end."""
    depth = 0
    for i in range(start, len(skeleton)):
        char = skeleton[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return skeleton[start:i]
            depth -= 1
        elif depth == 0 and assignment and char in ";\n":
            return skeleton[start:i]
    return skeleton[start:]


def _literal_text(argument: str, literals: tuple[str, ...]) -> str | None:
    """The markup an argument made only of literals joined by ``+`` (or commas) spells; None otherwise."""
    rest = _LITERAL.sub("", argument)
    if rest.strip(" \t\r\n+,()"):
        return None
    return "".join(literals[int(index)] for index in _LITERAL.findall(argument))


def markup_is_known(markup: str, known: Callable[[str], bool]) -> bool:
    """Whether markup holds nothing the crawl acts on that ``known`` (the page's static links) lacks."""
    if "<" not in markup:
        return True
    # Cached, for the same markup comes back on many pages (a menu a script writes on every page
    # of a site); a long one is not kept.
    targets = _markup_targets(markup) if len(markup) > _MAX_CACHED_MARKUP else _cached_markup_targets(markup)
    return targets is not None and all(known(target) for target in targets)


def _markup_targets(markup: str) -> tuple[str, ...] | None:
    """The link targets markup holds; None when it holds what no static link can match.

    That is a ``<base>``, a canonical link, a robots meta tag, an ``http-equiv``, or an
    attribute built at run time. Parsed with lxml's HTML parser as parsel would, without
    parsel's wrapping.
    """
    root = etree.fromstring(f"<div>{markup}</div>".replace("\x00", "").encode("utf-8"), parser=_HTML_PARSER)
    targets = []
    for element in root.iter("a", "area", "frame", "iframe", "link", "meta", "base"):
        tag = element.tag
        attrs = element.attrib
        if tag == "base" or any(DYNAMIC in value for value in attrs.values()):
            return None
        if tag == "link" and "canonical" in (attrs.get("rel") or "").lower():
            return None
        if tag == "meta" and (_ROBOTS_NAMES.search(attrs.get("name") or "") or attrs.get("http-equiv")):
            return None
        target = attrs.get("href") if tag in ("a", "area") else attrs.get("src") if tag in ("frame", "iframe") else None
        if target is not None:
            targets.append(target.strip())
    return tuple(targets)


_cached_markup_targets = lru_cache(maxsize=4096)(_markup_targets)


#: Verdicts of scripts whose rules never asked which links the page has: the same on every page.
#: Keyed by a digest of the script, so that a hostile site's big scripts are not kept.
_SAME_ON_EVERY_PAGE: dict[bytes, bool] = {}
_MAX_VERDICTS = 4096


def _script_key(script: str) -> bytes:
    return hashlib.blake2b(script.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def adds_content(script: str, known: Callable[[str], bool]) -> bool:
    """Whether running ``script`` may add a link, robots rule or canonical the static page lacks.

    ``known(href)``: whether the page links to ``href`` (resolved against it) statically.
    A site's pages repeat the same scripts, and most verdicts never ask ``known``: those are
    kept per script text, so the rules run once per script, not once per page.
    """
    key = _script_key(script)
    verdict = _SAME_ON_EVERY_PAGE.get(key)
    if verdict is not None:
        return verdict
    asked = False

    def watched(href: str) -> bool:
        nonlocal asked
        asked = True
        return known(href)

    verdict = _adds_content(script, watched)
    if not asked and len(_SAME_ON_EVERY_PAGE) < _MAX_VERDICTS:
        _SAME_ON_EVERY_PAGE[key] = verdict
    return verdict


def _adds_content(script: str, known: Callable[[str], bool]) -> bool:
    lexed = lex(script)
    skeleton, literals = lexed.skeleton, lexed.literals
    if _BUILDS_TREES.search(skeleton):
        return True
    for match in _SET_ATTRIBUTE.finditer(skeleton):
        attribute = literals[int(match.group(1))].strip().lower()
        if attribute == "href" and _href_is_known(_argument(skeleton, match.end(), False), literals, known):
            continue
        if attribute in _LINK_ATTRIBUTES:
            return True
    for match in _CREATE.finditer(skeleton):
        tag = match.group(1)
        if tag is None:
            return True  # a tag name the rules cannot read
        name = literals[int(tag)].strip().lower()
        if name in _ANCHOR_TAGS and _hrefs_are_known(skeleton, literals, known):
            continue  # a skip link to "#main", a link the page has
        if name in _NAVIGATION_TAGS and not (name == "link" and _only_stylesheets(literals)):
            return True
    for pattern, assignment in ((_MARKUP_CALL, False), (_MARKUP_ASSIGN, True)):
        for match in pattern.finditer(skeleton):
            argument = _argument(skeleton, match.end(), assignment)
            if not argument.strip():
                continue  # a getter: .html(), .append()
            markup = _literal_text(argument, literals)
            if markup is None:
                return True  # markup built at run time
            if not markup_is_known(markup, known):
                return True
    for match in _JQUERY_CALL.finditer(skeleton):
        markup = _literal_text(_argument(skeleton, match.end(), False), literals)
        if markup is not None and not markup_is_known(markup, known):
            return True
    return False


def _hrefs_are_known(skeleton: str, literals: tuple[str, ...], known: Callable[[str], bool]) -> bool:
    """Whether the script gives elements hrefs (``x.href = ...``, ``setAttribute('href', ...)``), each
    one the page knows or a fragment of it; False when it gives none the rules can see."""
    values = [_argument(skeleton, match.end(), True) for match in _HREF_ASSIGN.finditer(skeleton)]
    values += [
        _argument(skeleton, match.end(), False)
        for match in _SET_ATTRIBUTE.finditer(skeleton)
        if literals[int(match.group(1))].strip().lower() == "href"
    ]
    return bool(values) and all(_href_is_known(value, literals, known) for value in values)


def _href_is_known(value: str, literals: tuple[str, ...], known: Callable[[str], bool]) -> bool:
    """Whether an href expression leads nowhere new: it starts with a literal ``#`` (the page itself,
    whatever id follows, as WordPress's skip link does) or is a literal the page links to already."""
    first = _LITERAL.match(value.strip())
    if first is None:
        return False  # built at run time: it may lead anywhere
    if literals[int(first.group(1))].startswith("#"):
        return True
    whole = _literal_text(value, literals)
    return whole is not None and known(whole)


def _only_stylesheets(literals: tuple[str, ...]) -> bool:
    """A script creating <link> elements names only stylesheet-like relations, never canonical."""
    values = {text.strip().lower() for text in literals}
    return not any("canonical" in value or "alternate" in value for value in values) and bool(
        values & {"stylesheet", "preload", "prefetch", "preconnect", "dns-prefetch", "icon"}
    )
