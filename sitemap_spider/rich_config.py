"""The settings of rich sitemaps (hreflang, images, videos, news) and llms.txt, read and checked once.

Both ask the crawl to read more of each listed page and to keep it with the entry.

A block of SitemapConfig (config.py) of its own, as PolitenessConfig is.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import ClassVar, Final

from scrapy.settings import BaseSettings

from sitemap_spider.config_parsing import ConfigError, read_bool, read_number, read_strings, read_text
from sitemap_spider.sitemaps import news_language

_HOST: Final = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?::[0-9]{1,5})?")


@dataclass(frozen=True)
class RichConfig:
    """``SITEMAP_HREFLANG``, ``SITEMAP_IMAGES`` and friends, ``SITEMAP_VIDEOS``, ``SITEMAP_NEWS_*``."""

    hreflang: bool = True
    images: bool = False
    image_hosts: tuple[str, ...] = ()  # hosts (with a port when not the default) images may be on besides the site's
    image_min_size: int = 48  # a declared width or height under this many pixels: an icon, not written
    videos: bool = False
    news_name: str | None = None  # the publication's name; None: no news files
    news_language: str | None = None  # news:language when the page's <html lang> gives none
    #: SITEMAP_LLMS_TXT: the most pages llms.txt lists (SITEMAP_LLMS_TXT_MAX); 0: no llms.txt, no
    #: page summaries read.
    llms_txt: int = 0

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RichConfig:
        hosts = tuple(host.lower() for host in read_strings(settings, "SITEMAP_IMAGE_HOSTS"))
        for host in hosts:
            if not _HOST.fullmatch(host):
                raise ConfigError("SITEMAP_IMAGE_HOSTS", f"must list host names like cdn.example.com, got {host!r}")
        language = read_text(settings, "SITEMAP_NEWS_LANGUAGE")
        if language is not None and news_language(language) != language.lower():
            raise ConfigError("SITEMAP_NEWS_LANGUAGE", f"must be an ISO 639 code (en, fr; zh-cn, zh-tw), got {language!r}")
        llms_max = read_number(settings, "SITEMAP_LLMS_TXT_MAX", int, 1, 10_000_000)
        return cls(
            hreflang=read_bool(settings, "SITEMAP_HREFLANG"),
            images=read_bool(settings, "SITEMAP_IMAGES"),
            image_hosts=hosts,
            image_min_size=read_number(settings, "SITEMAP_IMAGE_MIN_SIZE", int, 0, 100_000),
            videos=read_bool(settings, "SITEMAP_VIDEOS"),
            news_name=read_text(settings, "SITEMAP_NEWS_NAME"),
            news_language=None if language is None else language.lower(),
            llms_txt=read_bool(settings, "SITEMAP_LLMS_TXT") * llms_max,
        )

    @property
    def news(self) -> bool:
        """Whether articles go into news files."""
        return self.news_name is not None

    #: The kinds of a history kept before they were noted: the defaults' (hreflang only).
    DEFAULT_KINDS: ClassVar[str] = "h"
    #: Each extension kind's letter in a history's note, and the attribute that turns it on.
    KIND_NAMES: ClassVar[dict[str, str]] = {"h": "hreflang", "i": "images", "v": "videos", "n": "news"}

    def kinds(self, url_form: str = "") -> str:
        """The extensions a crawl reads from its pages, as the history notes them: a 304 can list a
        page with only what its record was written with.

        A letter each (KIND_NAMES), followed by a digest in brackets of the settings that shaped
        what a record keeps of that kind when they are not the defaults': SITEMAP_IMAGE_MIN_SIZE and
        SITEMAP_IMAGE_HOSTS for images, SITEMAP_NEWS_LANGUAGE for news, and for every kind
        ``url_form``, how the crawl writes the URLs it keeps ("" when as by default: see
        Enricher). A history kept before the digests ("hi") was written with the defaults.
        (The publication's name is not kept as read: a record's news is listed under the setting's.)
        """
        noted = ""
        for letter, name in self.KIND_NAMES.items():
            if getattr(self, name):
                shaping = (url_form, *self._shaping(letter))
                default = shaping == ("", *_DEFAULTS._shaping(letter))
                noted += letter if default else f"{letter}({_digest(shaping)})"
        return noted

    def _shaping(self, letter: str) -> tuple[object, ...]:
        """The settings besides the URLs' form that shape what a record keeps of a kind."""
        if letter == "i":
            return (self.image_min_size, *sorted(set(self.image_hosts)))
        if letter == "n":
            return (self.news_language,)
        return ()


_DEFAULTS: Final = RichConfig()
_NOTED_KIND: Final = re.compile(r"[a-z](?:\([0-9a-f]*\))?")


def _digest(values: tuple[object, ...]) -> str:
    # Hexadecimal, without the kinds' letters: a version that reads the note letter by letter
    # sees the kinds it knows and nothing else.
    return hashlib.sha256(repr(values).encode()).hexdigest()[:8]


def noted_kinds(noted: str) -> list[str]:
    """The kinds of a history's note (RichConfig.kinds), each with its digest, in order:
    "hi(1a2b3c4d)" -> ["h", "i(1a2b3c4d)"]."""
    return _NOTED_KIND.findall(noted)
