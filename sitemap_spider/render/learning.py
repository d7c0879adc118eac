"""Whether rendering pays, learnt per page template from what the first renders found.

Pages built from one template (a javadoc class page, a blog post) carry the same
scripts: the same same-site script files, and inline scripts that differ only in
their string and number literals. Once a few renders of a template found no link
the static HTML lacked and changed no robots or canonical decision, its other pages
are judged by their static HTML; one in ``SAMPLE_EVERY`` is still rendered, and a
sample that finds something puts the template back to rendering, the pages met while
it was out included.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from parsel import Selector

from sitemap_spider.crawl.pages import page_tags
from sitemap_spider.render.scripts import lex

if TYPE_CHECKING:
    from scrapy.http import TextResponse

#: Renders of a template that must all find nothing before its pages are judged statically.
RENDERS_TO_LEARN = 3
#: Of a no-gain template's pages, every this many-th is rendered all the same.
SAMPLE_EVERY = 50
# Templates remembered; past this, pages of new templates are rendered as before.
_MAX_TEMPLATES = 10_000


@dataclass(frozen=True)
class PageReading:
    """How the spider reads a page: its links on the site, and what decides its listing (robots, canonical)."""

    site_links: Callable[[TextResponse], frozenset[str]]
    decisions: Callable[[TextResponse], tuple[object, ...]]

    def gain(self, static: TextResponse, rendered: TextResponse) -> bool:
        """Whether the rendered DOM holds a link, or a listing decision, the static HTML lacks."""
        return bool(self.site_links(rendered) - self.site_links(static)) or (
            self.decisions(rendered) != self.decisions(static)
        )


class Plan(Enum):
    """What to do with one page whose static HTML gave a reason to render."""

    RENDER = "render"  # the template's renders found something (or too many templates to learn)
    PROBE = "probe"  # one of the template's first renders, to learn whether rendering it pays
    SAMPLE = "sample"  # a no-gain template's page rendered to check the template still gains nothing
    SKIP = "skip"  # judged by its static HTML: the template's renders found nothing
    WAIT = "wait"  # the template's first renders (or a sample) are under way: wait for what they find


@dataclass
class _Template:
    found_nothing: int = 0
    found_something: int = 0
    in_flight: int = 0
    skipped: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


def template_signature(selector: Selector, script_files: Iterable[str]) -> str:
    """The page's template: its same-site script files and its inline scripts without literals."""
    parts = sorted(set(script_files))
    for script in page_tags(selector).inline_scripts():
        code = lex(script).template()
        if code:
            parts.append(code)
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=12).hexdigest()


class TemplateLearner:
    """Per template: render until ``RENDERS_TO_LEARN`` renders found nothing, then sample."""

    def __init__(self) -> None:
        self._templates: dict[str, _Template] = {}
        #: Templates whose pages are judged statically now; and those a sample put back.
        self.dropped = 0
        self.regained = 0

    def plan(self, signature: str) -> Plan:
        template = self._templates.get(signature)
        if template is None:
            if len(self._templates) >= _MAX_TEMPLATES:
                return Plan.RENDER
            template = self._templates[signature] = _Template()
        if template.found_something:
            return Plan.RENDER
        if template.found_nothing >= RENDERS_TO_LEARN:
            if template.in_flight:
                # A sample is out: what it finds decides these pages too (the spider follows their
                # static links meanwhile), so a template that gains again misses no page's links.
                return Plan.WAIT
            template.skipped += 1
            if template.skipped % SAMPLE_EVERY == 0:
                template.in_flight += 1
                return Plan.SAMPLE
            return Plan.SKIP
        if template.found_nothing + template.in_flight < RENDERS_TO_LEARN:
            template.in_flight += 1
            return Plan.PROBE
        return Plan.WAIT

    async def wait(self, signature: str) -> None:
        """Until a render of the template under way ends."""
        await self._templates[signature].changed.wait()

    def learn(self, signature: str, gained: bool) -> None:
        """A render of the template ended; ``gained``: it found what the static page lacked."""
        template = self._templates.get(signature)
        if template is None:
            return
        template.in_flight = max(0, template.in_flight - 1)
        if gained:
            if not template.found_something and template.found_nothing >= RENDERS_TO_LEARN:
                self.regained += 1
            template.found_something += 1
        elif not template.found_something:
            template.found_nothing += 1
            if template.found_nothing == RENDERS_TO_LEARN:
                self.dropped += 1
        template.notify()

    def failed(self, signature: str) -> None:
        """A render of the template failed: it taught nothing; a waiting page may try instead."""
        template = self._templates.get(signature)
        if template is not None:
            template.in_flight = max(0, template.in_flight - 1)
            template.notify()
