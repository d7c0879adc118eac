from __future__ import annotations

from typing import Any

import pytest
from scrapy.settings import Settings

from sitemap_spider.config import ConfigError, CrawlTarget, PolitenessConfig, SitemapConfig, apply_defaults
from sitemap_spider.crawl.politeness import Politeness
from sitemap_spider.crawl.stopping import PromptStop
from sitemap_spider.progress import CrawlProgress


def config(**overrides: Any) -> SitemapConfig:
    settings = Settings()
    apply_defaults(settings)
    settings.setdict(overrides, priority="cmdline")
    return SitemapConfig.from_settings(settings)


def test_defaults_are_valid_and_protocol_sized() -> None:
    conf = config()
    assert (conf.max_urls, conf.max_bytes, conf.gzip, conf.validate) == (50_000, 52_428_800, False, True)
    assert conf.output_dir.is_absolute() and conf.output_dir.name == "sitemaps"
    assert "utm_*" in conf.strip_params and conf.follow_nofollow and not conf.rules


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SITEMAP_MAX_URLS", "50001", "between 1 and 50,000"),
        ("SITEMAP_MAX_URLS", "0", "between"),
        ("SITEMAP_MAX_URLS", "many", "whole number"),
        ("SITEMAP_WORKERS_AFTER_SECONDS", "-1", "between"),
        ("SITEMAP_MAX_BYTES", "60000000", "52,428,800"),
        ("SITEMAP_GZIP", "perhaps", "true or false"),
        ("SITEMAP_PUBLISH", "sometimes", "true or false"),
        ("SITEMAP_EXCLUDE", '["("]', "bad regular expression"),
        ("SITEMAP_INCLUDE", "[", "bad regular expression"),
        ("SITEMAP_DENY", '["ok", 3]', "list of regular expressions"),
        ("SITEMAP_BASE_URL", "/sitemaps/", "absolute"),
        ("SITEMAP_RULES", '[{"pattern": "/", "changefreq": "sometimes"}]', "changefreq must be one of"),
        ("SITEMAP_RULES", '[{"pattern": "/", "priority": 1.5}]', "0.0 to 1.0"),
        ("SITEMAP_RULES", '[{"pattern": "/", "priority": "high"}]', "0.0 to 1.0"),
        ("SITEMAP_RULES", '[{"pattern": "/"}]', "neither"),
        ("SITEMAP_RULES", '[{"pattern": "(", "priority": 0.5}]', "bad regular expression"),
        ("SITEMAP_RULES", '[{"changefreq": "daily"}]', "pattern"),
        ("SITEMAP_RULES", "{not json", "not valid JSON"),
        ("SITEMAP_MAX_CRAWL_DELAY", "-1", "between 0 and 3600"),
        ("SITEMAP_MAX_CRAWL_DELAY", "nan", "between 0 and 3600"),
        ("SITEMAP_MAX_BACKOFF", "soon", "must be a number"),
        ("SITEMAP_MAX_BACKOFF", "86400", "between 0 and 3600"),
        ("SITEMAP_PROGRESS", "live", "one of auto, log, off"),
        ("SITEMAP_RETRY_TIMES", "-1", "between 0 and 100"),
        ("SITEMAP_RETRY_TIMES", "2.5", "must be a whole number"),
        ("SITEMAP_RETRY_DELAY", "often", "must be a number"),
        ("SITEMAP_RETRY_LAST_PASS_DELAY", "-5", "between 0 and 3600"),
        ("SITEMAP_RETRY_BUDGET", "a day", "must be a number"),
    ],
)
def test_bad_settings_name_the_setting(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        config(**{name: value})
    assert str(error.value).startswith(name)
    assert message in str(error.value)


def test_settings_from_the_command_line_are_converted() -> None:
    conf = config(
        SITEMAP_MAX_URLS="7",
        SITEMAP_GZIP="True",
        SITEMAP_EXCLUDE="/a{1,3}/",
        SITEMAP_STRIP_PARAMS="ref,UTM_*",
        SITEMAP_BASE_URL="https://cdn.example.com/maps",
        SITEMAP_RULES='[{"pattern": "/blog/", "changefreq": "daily", "priority": "0.8"}]',
    )
    assert conf.max_urls == 7 and conf.gzip is True
    assert [p.pattern for p in conf.exclude] == ["/a{1,3}/"]
    assert conf.strip_params == ("ref", "utm_*")
    assert conf.base_url == "https://cdn.example.com/maps/"
    rule = conf.rule_for("https://h/blog/post")
    assert rule is not None and (rule.changefreq, rule.priority) == ("daily", 0.8)
    assert conf.rule_for("https://h/about") is None


def test_politeness_settings() -> None:
    retries = {"retry_delay": 0.5, "last_pass_delay": 30.0, "retry_budget": 900.0}
    assert config().politeness == PolitenessConfig(60.0, 120.0, retry_times=5, **retries)
    conf = config(SITEMAP_MAX_CRAWL_DELAY="0", SITEMAP_MAX_BACKOFF="2.5", SITEMAP_RETRY_TIMES="0")
    assert conf.politeness == PolitenessConfig(0.0, 2.5, retry_times=0, **retries)
    conf = config(SITEMAP_RETRY_DELAY="0.25", SITEMAP_RETRY_LAST_PASS_DELAY="0")
    assert (conf.politeness.retry_delay, conf.politeness.last_pass_delay) == (0.25, 0.0)


def test_default_extensions_join_the_project_s_own() -> None:
    # A project's EXTENSIONS (settings.py, -s) outranks the defaults; ours is added to it, not lost.
    settings = Settings({"EXTENSIONS": {"scrapy.extensions.logstats.LogStats": None}})
    apply_defaults(settings)
    extensions = settings.getdict("EXTENSIONS")
    assert extensions[Politeness] == 100
    assert extensions["scrapy.extensions.logstats.LogStats"] is None
    # Named by the project, even as a string, it is left as the project set it: off.
    settings = Settings({"EXTENSIONS": '{"sitemap_spider.crawl.politeness.Politeness": null}'})
    apply_defaults(settings)
    assert settings.getdict("EXTENSIONS") == {
        "sitemap_spider.crawl.politeness.Politeness": None, PromptStop: 110, CrawlProgress: 500,
    }  # fmt: skip


def test_listable_applies_include_then_exclude() -> None:
    conf = config(SITEMAP_INCLUDE='["/docs/"]', SITEMAP_EXCLUDE='["/docs/old/"]')
    assert conf.listable("https://h/docs/a")
    assert not conf.listable("https://h/docs/old/a")
    assert not conf.listable("https://h/blog/a")


def test_crawl_target_from_string_arguments() -> None:
    target = CrawlTarget.from_arguments(
        {"url": "HTTP://127.0.0.1:8000  http://127.0.0.1:8000/b?utm_source=x", "public_url": "https://www.example.com", "_job": "abc"},
        ("utm_*",),
    )
    assert target.start_urls == ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/b")
    assert target.site.crawl_origin == "http://127.0.0.1:8000"
    assert target.site.public_origin == "https://www.example.com"
    assert target.base_url(config()) == "https://www.example.com/"
    assert target.base_url(config(SITEMAP_BASE_URL="https://cdn.example.com/")) == "https://cdn.example.com/"


@pytest.mark.parametrize(
    ("arguments", "name"),
    [
        ({}, "url"),
        ({"url": "  "}, "url"),
        ({"url": "/foo"}, "url"),
        ({"url": "www.example.com"}, "url"),
        ({"url": "ftp://h/"}, "url"),
        ({"url": "http://a.example/ http://b.example/"}, "url"),
        ({"url": "http://h/", "public_url": "example.com"}, "public_url"),
        ({"url": "http://h/", "public_url": "https://example.com/blog/"}, "public_url"),
        ({"url": "http://h/", "urls": "http://h/"}, "urls"),
    ],
)
def test_bad_arguments_name_the_argument(arguments: dict[str, str], name: str) -> None:
    with pytest.raises(ConfigError) as error:
        CrawlTarget.from_arguments(arguments)
    assert error.value.name == name


@pytest.mark.parametrize(
    ("enabled", "extensions", "imported"),
    [
        ("False", {}, False),
        ("True", {}, True),
        # The user's own entry for it is theirs: it stays, and Scrapy loads it.
        ("False", {"scrapy.extensions.remote_control.RemoteControl": 0}, True),
    ],
)
def test_remote_control_that_is_off_is_not_even_loaded(enabled: str, extensions: dict[str, int], imported: bool) -> None:
    """Scrapy imports every extension its settings name to merge them; the remote control imports aiohttp."""
    from scrapy.utils.conf import build_component_list

    from sitemap_spider.crawl.spider import SitemapSpider

    settings = Settings()
    settings.set("REMOTE_CONTROL_ENABLED", enabled, priority="cmdline")
    settings.set("EXTENSIONS", extensions, priority="project")
    SitemapSpider.update_settings(settings)
    names = {str(name) for name in build_component_list(settings.getwithbase("EXTENSIONS"))}
    assert ("scrapy.extensions.remote_control.RemoteControl" in names) is imported
    assert any(name.endswith("PacingAutoThrottle'>") or name.endswith("PacingAutoThrottle") for name in names)


@pytest.mark.parametrize(
    ("user_setting", "limit", "url_length_kept"),
    [
        ({}, None, False),
        ({"scrapy.spidermiddlewares.urllength.UrlLengthMiddleware": 800}, None, True),
        ({}, "1000", True),  # a limit the user sets is applied
    ],
)
def test_spider_middlewares_a_sitemap_crawl_never_uses_are_left_out(
    user_setting: dict[str, int], limit: str | None, url_length_kept: bool
) -> None:
    """URL length and meta-copy checks: a layer each for every request of every page; one the user names stays."""
    from scrapy.utils.conf import build_component_list

    from sitemap_spider.crawl.spider import SitemapSpider

    settings = Settings()
    settings.set("SPIDER_MIDDLEWARES", user_setting, priority="project")
    if limit is not None:
        settings.set("URLLENGTH_LIMIT", limit, priority="cmdline")
    SitemapSpider.update_settings(settings)
    names = set(build_component_list(settings.getwithbase("SPIDER_MIDDLEWARES")))
    assert ("scrapy.spidermiddlewares.urllength.UrlLengthMiddleware" in names) is url_length_kept
    assert "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware" not in names
    # What the crawl relies on stays: depth (DEPTH_LIMIT, DEPTH_PRIORITY), HTTP errors, start requests,
    # and Referer, which Scrapy's redirect middlewares look for.
    assert {"scrapy.spidermiddlewares.depth.DepthMiddleware", "scrapy.spidermiddlewares.httperror.HttpErrorMiddleware",
            "scrapy.spidermiddlewares.start.StartSpiderMiddleware",
            "scrapy.spidermiddlewares.referer.RefererMiddleware"} <= names


@pytest.mark.parametrize(("level", "per_page"), [("INFO", False), ("WARNING", False), ("DEBUG", True), (10, True), (20, False)])
def test_the_per_page_debug_lines_are_not_built_when_the_log_level_drops_them(level: str | int, per_page: bool) -> None:
    from scrapy.http import HtmlResponse, Request
    from scrapy.logformatter import LogFormatter
    from scrapy.utils.test import get_crawler

    from sitemap_spider.crawl.log_lines import LevelLogFormatter
    from sitemap_spider.crawl.spider import SitemapSpider

    settings = Settings({"LOG_LEVEL": level})
    SitemapSpider.update_settings(settings)  # the crawl's LOG_FORMATTER, unless the user names another
    assert settings["LOG_FORMATTER"] == "sitemap_spider.crawl.log_lines.LevelLogFormatter"
    formatter = LevelLogFormatter.from_crawler(get_crawler(settings_dict={"LOG_LEVEL": level}))
    request = Request("https://example.com/a")
    response = HtmlResponse(request.url, body=b"<html></html>", request=request)
    assert (formatter.crawled(request, response, None) is not None) is per_page  # type: ignore[arg-type]
    assert (formatter.scraped({"loc": request.url}, response, None) is not None) is per_page  # type: ignore[arg-type]
    # Lines above DEBUG (a dropped item, an error) are Scrapy's own, at any level.
    assert all(getattr(LevelLogFormatter, name) is getattr(LogFormatter, name)
               for name in ("dropped", "item_error", "spider_error", "download_error"))


@pytest.mark.parametrize("value", ["False", "false", "0", "off", "no", "OFF"])
def test_publish_off_in_any_spelling_picks_the_collecting_mode(value: str) -> None:
    """The mode is chosen from SITEMAP_PUBLISH before SitemapConfig reads it: both read it alike,
    or "off" would publish the set it was asked to leave alone."""
    from sitemap_spider.modes import mode_class
    from sitemap_spider.modes.collecting import CollectingMode

    settings = Settings({"SITEMAP_PUBLISH": value})
    apply_defaults(settings)
    assert mode_class(settings) is CollectingMode
    assert SitemapConfig.from_settings(settings).publish is False


def test_a_misspelt_setting_is_named_with_the_one_meant(caplog: pytest.LogCaptureFixture) -> None:
    """SITEMAP_GZIPP=1 was ignored without a word (found by trying the product as a new user)."""
    settings = Settings({"SITEMAP_GZIPP": "1", "SITEMAP_NOTHING_LIKE_OURS": "x", "SITEMAP_GZIP": "1"})
    apply_defaults(settings)
    with caplog.at_level("WARNING"):
        SitemapConfig.from_settings(settings)
        SitemapConfig.from_settings(settings)  # once a process
    said = [record.getMessage() for record in caplog.records]
    assert said == [
        "SITEMAP_GZIPP is not a setting of sitemap_spider (did you mean SITEMAP_GZIP?): it is ignored",
        "SITEMAP_NOTHING_LIKE_OURS is not a setting of sitemap_spider: it is ignored",
    ]
