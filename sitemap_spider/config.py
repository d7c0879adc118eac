"""Settings and spider arguments, read and validated once at start-up.

Nothing deeper than this module reads ``settings[...]`` or spider arguments:
the spider, middlewares and pipeline receive a frozen :class:`SitemapConfig`
and :class:`CrawlTarget`. Every error names the setting or argument at fault
(the readers of single values and :class:`ConfigError` are in config_parsing.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

# Not `from sitemap_spider import ...`: that names the package, whose __init__ imports the add-on.
import sitemap_spider.default_settings as default_settings  # noqa: PLR0402
from sitemap_spider.config_parsing import (
    CHANGEFREQS,
    ConfigError,
    Rule,
    parse_absolute_url,
    parse_render_mode,
    read_base_url,
    read_bool,
    read_choice,
    read_history,
    read_number,
    read_patterns,
    read_bucket,
    read_groups,
    read_rules,
    read_strings,
    read_text,
    read_workers,
    warn_unknown_settings,
)
from sitemap_spider.crawl.urls import Site
from sitemap_spider.history.location import HistoryLocation
from sitemap_spider.indexnow import IndexNowConfig
from sitemap_spider.rich_config import RichConfig
from sitemap_spider.sitemaps import (
    MAX_BYTES_PER_SITEMAP,
    MAX_URLS_PER_SITEMAP,
    BucketTarget,
    IngestOptions,
    OutputOptions,
    SitemapGroup,
    origin_of,
)

__all__ = [
    "CHANGEFREQS",
    "ConfigError",
    "CrawlTarget",
    "PolitenessConfig",
    "Rule",
    "SharedConfig",
    "SitemapConfig",
    "apply_crawl_defaults",
    "apply_defaults",
    "apply_sitemap_defaults",
]

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
NO_HISTORY = HistoryLocation(enabled=False)


@dataclass(frozen=True)
class SharedConfig:
    """``SITEMAP_REDIS_URL`` and friends: one crawl shared by several workers through Redis."""

    redis_url: str
    crawl_id: str | None
    resume: bool
    idle_seconds: float
    lease_seconds: float
    wait_seconds: float = 30.0

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SharedConfig | None:
        """The shared-crawl settings, or None when ``SITEMAP_REDIS_URL`` is not set."""
        url = read_text(settings, "SITEMAP_REDIS_URL")
        if url is None:
            return None
        if urlsplit(url).scheme not in REDIS_SCHEMES:
            raise ConfigError("SITEMAP_REDIS_URL", f"needs a redis://, rediss:// or unix:// URL, got {url!r}")
        idle = read_number(settings, "SITEMAP_REDIS_IDLE_SECONDS", float, 0.1, 3600.0)
        lease = read_number(settings, "SITEMAP_REDIS_LEASE_SECONDS", float, 1.0, 86_400.0)
        wait = read_number(settings, "SITEMAP_REDIS_WAIT_SECONDS", float, 0.0, 3600.0)
        return cls(
            redis_url=url,
            crawl_id=read_text(settings, "SITEMAP_CRAWL_ID"),
            resume=read_bool(settings, "SITEMAP_RESUME"),
            idle_seconds=idle,
            lease_seconds=lease,
            wait_seconds=wait,
        )


@dataclass(frozen=True)
class PolitenessConfig:
    """How long the crawl lets a site slow it down (see politeness.py)."""

    max_crawl_delay: float
    max_backoff: float
    retry_times: int = 0  # retries of a transient fault, each after a back-off (crawl/retries.py)
    retry_delay: float = 0.0  # the first back-off; it doubles at each retry
    last_pass_delay: float = 0.0  # pause before the pages that still failed are tried again
    retry_budget: float = 0.0  # nothing but faults for this long stops the crawl; 0: never

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> PolitenessConfig:
        """``SITEMAP_MAX_CRAWL_DELAY``, ``SITEMAP_MAX_BACKOFF`` and the ``SITEMAP_RETRY_*`` settings."""
        return cls(
            max_crawl_delay=read_number(settings, "SITEMAP_MAX_CRAWL_DELAY", float, 0.0, MAX_WAIT_SECONDS),
            max_backoff=read_number(settings, "SITEMAP_MAX_BACKOFF", float, 0.0, MAX_WAIT_SECONDS),
            retry_times=read_number(settings, "SITEMAP_RETRY_TIMES", int, 0, 100),
            retry_delay=read_number(settings, "SITEMAP_RETRY_DELAY", float, 0.0, MAX_WAIT_SECONDS),
            last_pass_delay=read_number(settings, "SITEMAP_RETRY_LAST_PASS_DELAY", float, 0.0, MAX_WAIT_SECONDS),
            retry_budget=read_number(settings, "SITEMAP_RETRY_BUDGET", float, 0.0, 86_400.0),
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
    stylesheet: bool
    report_path: Path | None
    max_shrink: float
    groups: tuple[SitemapGroup, ...]
    bucket: BucketTarget | None
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
    workers_after_seconds: float = 0.0
    queue_memory: int = 10_000
    shared: SharedConfig | None = None
    indexnow: IndexNowConfig | None = None
    progress: str = "auto"
    publish: bool = True
    # The crawl history (history/): where it lives, and how long a failing page stays listed.
    history: HistoryLocation = NO_HISTORY
    keep_failed_days: float = 7.0
    rich: RichConfig = field(default_factory=RichConfig)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SitemapConfig:
        """Read and validate the settings; raise :class:`ConfigError` on the first bad one."""
        warn_unknown_settings(settings)
        report = read_text(settings, "SITEMAP_REPORT")
        return cls(
            output_dir=Path(read_text(settings, "SITEMAP_OUTPUT_DIR") or "sitemaps").absolute(),
            base_url=read_base_url(settings, "SITEMAP_BASE_URL"),
            max_urls=read_number(settings, "SITEMAP_MAX_URLS", int, 1, MAX_URLS_PER_SITEMAP),
            max_bytes=read_number(settings, "SITEMAP_MAX_BYTES", int, MIN_MAX_BYTES, MAX_BYTES_PER_SITEMAP),
            gzip=read_bool(settings, "SITEMAP_GZIP"),
            validate=read_bool(settings, "SITEMAP_VALIDATE"),
            stylesheet=read_bool(settings, "SITEMAP_XSL"),
            max_shrink=read_number(settings, "SITEMAP_MAX_SHRINK", float, 0.0, 1.0),
            groups=read_groups(settings, "SITEMAP_GROUPS"),
            bucket=read_bucket(settings, "SITEMAP_OUTPUT_URI"),
            report_path=Path(report).absolute() if report else None,
            include=read_patterns(settings, "SITEMAP_INCLUDE"),
            exclude=read_patterns(settings, "SITEMAP_EXCLUDE"),
            deny=read_patterns(settings, "SITEMAP_DENY"),
            strip_params=tuple(p.lower() for p in read_strings(settings, "SITEMAP_STRIP_PARAMS")),
            follow_nofollow=read_bool(settings, "SITEMAP_FOLLOW_NOFOLLOW"),
            include_noindex=read_bool(settings, "SITEMAP_INCLUDE_NOINDEX"),
            include_canonicalised=read_bool(settings, "SITEMAP_INCLUDE_CANONICALISED"),
            dedupe_content=read_bool(settings, "SITEMAP_DEDUPE_CONTENT"),
            robots_agents=tuple(a.lower() for a in read_strings(settings, "SITEMAP_ROBOTS_AGENTS")),
            max_segment_repeats=read_number(settings, "SITEMAP_MAX_SEGMENT_REPEATS", int, 1, 1_000),
            rules=read_rules(settings, "SITEMAP_RULES"),
            sort_run_size=read_number(settings, "SITEMAP_SORT_RUN_SIZE", int, 1_000, 10_000_000),
            stop_on_bad_input=read_bool(settings, "SITEMAP_STOP_ON_BAD_INPUT"),
            render=parse_render_mode("SITEMAP_RENDER", settings.get("SITEMAP_RENDER")),
            browser_path=read_text(settings, "SITEMAP_BROWSER_PATH"),
            render_timeout=read_number(settings, "SITEMAP_RENDER_TIMEOUT", float, 1.0, 600.0),
            render_idle_timeout=read_number(settings, "SITEMAP_RENDER_IDLE_TIMEOUT", float, 0.0, 60.0),
            render_pages=read_number(settings, "SITEMAP_RENDER_PAGES", int, 1, 64),
            politeness=PolitenessConfig.from_settings(settings),
            workers=read_workers(settings, "SITEMAP_WORKERS"),
            workers_after=read_number(settings, "SITEMAP_WORKERS_AFTER", int, 0, 100_000_000),
            workers_after_seconds=read_number(settings, "SITEMAP_WORKERS_AFTER_SECONDS", float, 0.0, 3600.0),
            queue_memory=read_number(settings, "SITEMAP_QUEUE_MEMORY", int, 0, 100_000_000),
            shared=SharedConfig.from_settings(settings),
            indexnow=IndexNowConfig.from_settings(settings),
            progress=read_choice(settings, "SITEMAP_PROGRESS", PROGRESS_MODES),
            publish=read_bool(settings, "SITEMAP_PUBLISH"),
            history=read_history(settings, "SITEMAP_HISTORY"),
            keep_failed_days=read_number(settings, "SITEMAP_KEEP_FAILED_DAYS", float, 0.0, 3650.0),
            rich=RichConfig.from_settings(settings),
        )

    def listable(self, public_url: str) -> bool:
        """Whether the include / exclude patterns let a URL into the sitemap."""
        if self.include and not any(p.search(public_url) for p in self.include):
            return False
        return not any(p.search(public_url) for p in self.exclude)

    def output_options(self, base_url: str) -> OutputOptions:
        """Where and how the set is written, for files served under ``base_url``."""
        return OutputOptions(
            output_dir=self.output_dir,
            base_url=base_url,
            max_urls=self.max_urls,
            max_bytes=self.max_bytes,
            gzip=self.gzip,
            validate=self.validate,
            stylesheet=self.stylesheet,
            llms_txt=self.rich.llms_txt,
            max_shrink=self.max_shrink,
            groups=self.groups,
            bucket=self.bucket,
            sort_run_size=self.sort_run_size,
            extra_files=(self.indexnow.key_file,) if self.indexnow is not None else (),
        )

    def ingest_options(self) -> IngestOptions:
        """How ``scrapy publish`` makes a set of its input's records."""
        return IngestOptions(self.base_url, self.stop_on_bad_input, self.sort_run_size, self.output_options)

    def rule_for(self, public_url: str) -> Rule | None:
        """The first rule whose pattern matches the URL."""
        return next((rule for rule in self.rules if rule.pattern.search(public_url)), None)


#: SITEMAP_PROGRESS: a live line on a terminal and a log line, the log line only, or neither.
PROGRESS_MODES = ("auto", "log", "off")


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
        start_urls = tuple(parse_absolute_url("url", value, strip_params) for value in raw)
        origins = {origin_of(url) for url in start_urls}
        if len(origins) > 1:
            raise ConfigError("url", f"all start URLs must share one origin, got {sorted(origins)}")
        crawl_origin = origins.pop()
        public_origin = crawl_origin
        public = str(arguments.get("public_url") or "").strip()
        if public:
            public_url = parse_absolute_url("public_url", public)
            if urlsplit(public_url).path not in ("", "/") or urlsplit(public_url).query:
                raise ConfigError("public_url", f"must be an origin like https://www.example.com/, got {public!r}")
            public_origin = origin_of(public_url)
        render = arguments.get("render")
        return cls(
            start_urls,
            Site(crawl_origin, public_origin),
            None if render is None else parse_render_mode("render", render),
        )

    def render_mode(self, config: SitemapConfig) -> str:
        """never, auto or always: the argument if given, else the setting."""
        return self.render or config.render

    def base_url(self, config: SitemapConfig) -> str:
        """Where the sitemap files will be served: the setting, else the public origin."""
        return config.base_url or self.site.public_origin + "/"


def apply_defaults(settings: BaseSettings) -> None:
    """Give every setting of :mod:`default_settings` its value at 'addon' priority.

    Above Scrapy's defaults, below the project's settings.py and ``-s``: the
    spider's defaults behave as an add-on's would. Components (extensions,
    middlewares) are added to the project's dict of that name, unless it names
    them already: ``-s 'EXTENSIONS={"sitemap_spider.crawl.politeness.Politeness": null}'``
    turns one off.
    """
    _apply(settings, lambda name: True)


def apply_sitemap_defaults(settings: BaseSettings) -> None:
    """The ``SITEMAP_*`` settings' defaults only (the add-on's), at 'addon' priority."""
    _apply(settings, lambda name: name.startswith("SITEMAP_"))


def apply_crawl_defaults(settings: BaseSettings) -> None:
    """The Scrapy settings the sitemap spider's crawl changes, at 'addon' priority."""
    _apply(settings, lambda name: not name.startswith("SITEMAP_"))


def _apply(settings: BaseSettings, wanted: Callable[[str], bool]) -> None:
    for name in dir(default_settings):
        if not name.isupper() or not wanted(name):
            continue
        value = getattr(default_settings, name)
        if name in COMPONENT_SETTINGS:
            for path, order in value.items():
                settings.setdefault_in_component_priority_dict(name, load_object(path), order)
        else:
            settings.set(name, value, priority="addon")
