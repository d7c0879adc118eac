"""Settings and spider arguments, read and validated once at start-up.

Nothing deeper than this module reads ``settings[...]`` or spider arguments:
the spider, middlewares and pipeline receive a frozen :class:`SitemapConfig`
and :class:`CrawlTarget`. Every error names the setting or argument at fault.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from sitemap_spider import default_settings
from sitemap_spider.rendering import RENDER_MODES
from sitemap_spider.urls import Site, normalize_url, origin_of

CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
PROTOCOL_MAX_URLS = 50_000
PROTOCOL_MAX_BYTES = 52_428_800
# Below this a shard cannot hold the XML declaration, the urlset and one long URL.
MIN_MAX_BYTES = 4_096
#: Spider arguments the sitemap spider takes; Scrapyd adds ``_job`` to every run.
SPIDER_ARGUMENTS = ("url", "public_url", "render")
IGNORED_ARGUMENTS = ("_job",)
REDIS_SCHEMES = ("redis", "rediss", "unix")
# A wait longer than an hour between two requests is a crawl that never ends.
MAX_WAIT_SECONDS = 3_600.0
#: Component priority dicts among the defaults: merged into the project's own, not replaced by them.
COMPONENT_SETTINGS = ("EXTENSIONS", "DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES")

_Number = TypeVar("_Number", int, float)


class ConfigError(ValueError):
    """A bad setting or spider argument; the message starts with its name."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name


@dataclass(frozen=True)
class Rule:
    """``changefreq`` / ``priority`` for the URLs a pattern matches."""

    pattern: re.Pattern[str]
    changefreq: str | None
    priority: float | None


@dataclass(frozen=True)
class SharedConfig:
    """``SITEMAP_REDIS_URL`` and friends: one crawl shared by several workers through Redis."""

    redis_url: str
    crawl_id: str | None
    resume: bool
    idle_seconds: float
    lease_seconds: float

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SharedConfig | None:
        """The shared-crawl settings, or None when ``SITEMAP_REDIS_URL`` is not set."""
        url = _text(settings, "SITEMAP_REDIS_URL")
        if url is None:
            return None
        if urlsplit(url).scheme not in REDIS_SCHEMES:
            raise ConfigError("SITEMAP_REDIS_URL", f"needs a redis://, rediss:// or unix:// URL, got {url!r}")
        idle = _number(settings, "SITEMAP_REDIS_IDLE_SECONDS", float, 0.1, 3600.0)
        lease = _number(settings, "SITEMAP_REDIS_LEASE_SECONDS", float, 1.0, 86_400.0)
        return cls(
            redis_url=url,
            crawl_id=_text(settings, "SITEMAP_CRAWL_ID"),
            resume=_bool(settings, "SITEMAP_RESUME"),
            idle_seconds=idle,
            lease_seconds=lease,
        )


@dataclass(frozen=True)
class PolitenessConfig:
    """How long the crawl lets a site slow it down (see politeness.py)."""

    max_crawl_delay: float
    max_backoff: float

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> PolitenessConfig:
        """``SITEMAP_MAX_CRAWL_DELAY`` and ``SITEMAP_MAX_BACKOFF``, in seconds."""
        return cls(
            max_crawl_delay=_number(settings, "SITEMAP_MAX_CRAWL_DELAY", float, 0.0, MAX_WAIT_SECONDS),
            max_backoff=_number(settings, "SITEMAP_MAX_BACKOFF", float, 0.0, MAX_WAIT_SECONDS),
        )


@dataclass(frozen=True)
class SitemapConfig:
    """Every ``SITEMAP_*`` setting, typed and checked."""

    output_dir: Path
    base_url: str | None
    max_urls: int
    max_bytes: int
    gzip: bool
    validate: bool
    report_path: Path | None
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    deny: tuple[re.Pattern[str], ...]
    strip_params: tuple[str, ...]
    follow_nofollow: bool
    include_noindex: bool
    include_canonicalised: bool
    dedupe_content: bool
    robots_agents: tuple[str, ...]
    max_segment_repeats: int
    rules: tuple[Rule, ...]
    sort_run_size: int
    stop_on_bad_input: bool
    render: str
    browser_path: str | None
    render_timeout: float
    render_idle_timeout: float
    render_pages: int
    politeness: PolitenessConfig
    workers: int = 1
    workers_after: int = 0
    shared: SharedConfig | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SitemapConfig:
        """Read and validate the settings; raise :class:`ConfigError` on the first bad one."""
        report = _text(settings, "SITEMAP_REPORT")
        return cls(
            output_dir=Path(_text(settings, "SITEMAP_OUTPUT_DIR") or "sitemaps").absolute(),
            base_url=_base_url(settings),
            max_urls=_number(settings, "SITEMAP_MAX_URLS", int, 1, PROTOCOL_MAX_URLS),
            max_bytes=_number(settings, "SITEMAP_MAX_BYTES", int, MIN_MAX_BYTES, PROTOCOL_MAX_BYTES),
            gzip=_bool(settings, "SITEMAP_GZIP"),
            validate=_bool(settings, "SITEMAP_VALIDATE"),
            report_path=Path(report).absolute() if report else None,
            include=_patterns(settings, "SITEMAP_INCLUDE"),
            exclude=_patterns(settings, "SITEMAP_EXCLUDE"),
            deny=_patterns(settings, "SITEMAP_DENY"),
            strip_params=tuple(p.lower() for p in _strings(settings, "SITEMAP_STRIP_PARAMS")),
            follow_nofollow=_bool(settings, "SITEMAP_FOLLOW_NOFOLLOW"),
            include_noindex=_bool(settings, "SITEMAP_INCLUDE_NOINDEX"),
            include_canonicalised=_bool(settings, "SITEMAP_INCLUDE_CANONICALISED"),
            dedupe_content=_bool(settings, "SITEMAP_DEDUPE_CONTENT"),
            robots_agents=tuple(a.lower() for a in _strings(settings, "SITEMAP_ROBOTS_AGENTS")),
            max_segment_repeats=_number(settings, "SITEMAP_MAX_SEGMENT_REPEATS", int, 1, 1_000),
            rules=_rules(settings),
            sort_run_size=_number(settings, "SITEMAP_SORT_RUN_SIZE", int, 1_000, 10_000_000),
            stop_on_bad_input=_bool(settings, "SITEMAP_STOP_ON_BAD_INPUT"),
            render=_render_mode("SITEMAP_RENDER", settings.get("SITEMAP_RENDER")),
            browser_path=_text(settings, "SITEMAP_BROWSER_PATH"),
            render_timeout=_number(settings, "SITEMAP_RENDER_TIMEOUT", float, 1.0, 600.0),
            render_idle_timeout=_number(settings, "SITEMAP_RENDER_IDLE_TIMEOUT", float, 0.0, 60.0),
            render_pages=_number(settings, "SITEMAP_RENDER_PAGES", int, 1, 64),
            politeness=PolitenessConfig.from_settings(settings),
            workers=_workers(settings, "SITEMAP_WORKERS"),
            workers_after=_number(settings, "SITEMAP_WORKERS_AFTER", int, 0, 100_000_000),
            shared=SharedConfig.from_settings(settings),
        )

    def listable(self, public_url: str) -> bool:
        """Whether the include / exclude patterns let a URL into the sitemap."""
        if self.include and not any(p.search(public_url) for p in self.include):
            return False
        return not any(p.search(public_url) for p in self.exclude)

    def rule_for(self, public_url: str) -> Rule | None:
        """The first rule whose pattern matches the URL."""
        return next((rule for rule in self.rules if rule.pattern.search(public_url)), None)


@dataclass(frozen=True)
class CrawlTarget:
    """What the spider arguments ask for: where to start and how to publish."""

    start_urls: tuple[str, ...]
    site: Site
    render: str | None = None  # the `render` argument; None: the SITEMAP_RENDER setting

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any], strip_params: tuple[str, ...] = ()) -> CrawlTarget:
        """Validate spider arguments (strings from ``-a`` or Scrapyd)."""
        unknown = sorted(set(arguments) - set(SPIDER_ARGUMENTS) - set(IGNORED_ARGUMENTS))
        if unknown:
            raise ConfigError(
                unknown[0], f"unknown spider argument (known: {', '.join(SPIDER_ARGUMENTS)})"
            )
        raw = str(arguments.get("url") or "").split()
        if not raw:
            raise ConfigError("url", "missing: pass the site to crawl, -a url=https://www.example.com/")
        start_urls = tuple(_absolute_url("url", value, strip_params) for value in raw)
        origins = {origin_of(url) for url in start_urls}
        if len(origins) > 1:
            raise ConfigError("url", f"all start URLs must share one origin, got {sorted(origins)}")
        crawl_origin = origins.pop()
        public_origin = crawl_origin
        public = str(arguments.get("public_url") or "").strip()
        if public:
            public_url = _absolute_url("public_url", public)
            if urlsplit(public_url).path not in ("", "/") or urlsplit(public_url).query:
                raise ConfigError("public_url", f"must be an origin like https://www.example.com/, got {public!r}")
            public_origin = origin_of(public_url)
        render = arguments.get("render")
        return cls(
            start_urls,
            Site(crawl_origin, public_origin),
            None if render is None else _render_mode("render", render),
        )

    def render_mode(self, config: SitemapConfig) -> str:
        """never, auto or always: the argument if given, else the setting."""
        return self.render or config.render

    def base_url(self, config: SitemapConfig) -> str:
        """Where the sitemap files will be served: the setting, else the public origin."""
        return config.base_url or self.site.public_origin + "/"


def _absolute_url(name: str, value: str, strip_params: tuple[str, ...] = ()) -> str:
    url = normalize_url(value, strip_params)
    if url is None or "://" not in value:
        raise ConfigError(name, f"needs an absolute http(s) URL, got {value!r}")
    return url


def _text(settings: BaseSettings, name: str) -> str | None:
    value = settings.get(name)
    if value is None:
        return None
    if not isinstance(value, (str, Path)):
        raise ConfigError(name, f"must be a string, got {value!r}")
    return str(value).strip() or None


def _bool(settings: BaseSettings, name: str) -> bool:
    try:
        return settings.getbool(name)
    except ValueError:
        raise ConfigError(name, f"must be true or false, got {settings.get(name)!r}") from None


def _number(settings: BaseSettings, name: str, kind: type[_Number], low: _Number, high: _Number) -> _Number:
    """A setting read as ``kind`` (int: a whole number; float: any number), from ``low`` to ``high``."""
    whole = kind is int
    what = "a whole number" if whole else "a number"
    spec = "," if whole else "g"  # 50,000 URLs; 0.1 seconds
    raw = settings.get(name)
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        raise ConfigError(name, f"must be {what}, got {raw!r}") from None
    if whole and isinstance(raw, float) and raw != value:  # int() would drop the fraction
        raise ConfigError(name, f"must be {what}, got {raw!r}")
    if not low <= value <= high:
        raise ConfigError(name, f"must be between {low:{spec}} and {high:{spec}}, got {value:{spec}}")
    return value


def _workers(settings: BaseSettings, name: str) -> int:
    """A number of crawling processes, or "auto": one per core, at most two."""
    if str(settings.get(name)).strip().lower() == "auto":
        return max(1, min(2, os.cpu_count() or 1))
    return _number(settings, name, int, 1, 2)


def _render_mode(name: str, value: Any) -> str:
    mode = str(value).strip().lower()
    if mode not in RENDER_MODES:
        raise ConfigError(name, f"must be one of {', '.join(RENDER_MODES)}, got {value!r}")
    return mode


def _json_or(settings: BaseSettings, name: str, *, lenient: bool = False) -> Any:
    """A list-valued setting: a Python value, or a JSON string from ``-s``.

    ``lenient``: a string that is not JSON is the value itself (a regex such
    as ``[0-9]+/`` starts like a JSON list).
    """
    value = settings.get(name)
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            if lenient:
                return value
            raise ConfigError(name, f"is not valid JSON: {exc}") from None
    return value


def _strings(settings: BaseSettings, name: str) -> tuple[str, ...]:
    value = _json_or(settings, name)
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"must be a list of strings, got {value!r}")
    return tuple(v.strip() for v in value if v.strip())


def _compile(name: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(name, f"bad regular expression {pattern!r}: {exc}") from None


def _patterns(settings: BaseSettings, name: str) -> tuple[re.Pattern[str], ...]:
    value = _json_or(settings, name, lenient=True)
    if value is None or value == "":
        return ()
    # A lone pattern is not split on commas: "a{1,3}" is one regex.
    patterns = [value] if isinstance(value, str) else value
    if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
        raise ConfigError(name, f"must be a list of regular expressions, got {value!r}")
    return tuple(_compile(name, p) for p in patterns)


def _base_url(settings: BaseSettings) -> str | None:
    value = _text(settings, "SITEMAP_BASE_URL")
    if value is None:
        return None
    url = normalize_url(value)
    if url is None or "://" not in value:
        raise ConfigError("SITEMAP_BASE_URL", f"needs an absolute http(s) URL, got {value!r}")
    if urlsplit(url).query:
        raise ConfigError("SITEMAP_BASE_URL", f"must not have a query, got {value!r}")
    return url if url.endswith("/") else url + "/"


def _rules(settings: BaseSettings) -> tuple[Rule, ...]:
    name = "SITEMAP_RULES"
    value = _json_or(settings, name)
    if not value:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ConfigError(name, f"must be a list of {{pattern, changefreq, priority}} objects, got {value!r}")
    rules = []
    for index, item in enumerate(value):
        where = f"{name}[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("pattern"), str):
            raise ConfigError(where, f"needs a 'pattern' string, got {item!r}")
        extra = set(item) - {"pattern", "changefreq", "priority"}
        if extra:
            raise ConfigError(where, f"unknown keys {sorted(extra)}")
        changefreq = item.get("changefreq")
        if changefreq is not None and changefreq not in CHANGEFREQS:
            raise ConfigError(where, f"changefreq must be one of {', '.join(CHANGEFREQS)}, got {changefreq!r}")
        priority = item.get("priority")
        if priority is not None:
            if isinstance(priority, bool) or not isinstance(priority, (int, float, str)):
                raise ConfigError(where, f"priority must be a number from 0.0 to 1.0, got {priority!r}")
            try:
                priority = float(priority)
            except ValueError:
                raise ConfigError(where, f"priority must be a number from 0.0 to 1.0, got {priority!r}") from None
            if math.isnan(priority) or not 0.0 <= priority <= 1.0:
                raise ConfigError(where, f"priority must be a number from 0.0 to 1.0, got {priority!r}")
        if changefreq is None and priority is None:
            raise ConfigError(where, "sets neither changefreq nor priority")
        rules.append(Rule(_compile(where, item["pattern"]), changefreq, priority))
    return tuple(rules)


def apply_defaults(settings: BaseSettings) -> None:
    """Give every setting of :mod:`default_settings` its value at 'addon' priority.

    Above Scrapy's defaults, below the project's settings.py and ``-s``: the
    spider's defaults behave as an add-on's would. Components (extensions,
    middlewares) are added to the project's dict of that name, unless it names
    them already: ``-s 'EXTENSIONS={"sitemap_spider.politeness.Politeness": null}'``
    turns one off.
    """
    for name in dir(default_settings):
        if not name.isupper():
            continue
        value = getattr(default_settings, name)
        if name in COMPONENT_SETTINGS:
            for path, order in value.items():
                settings.setdefault_in_component_priority_dict(name, load_object(path), order)
        else:
            settings.set(name, value, priority="addon")
