"""The rich sitemaps' settings (sitemap_spider/rich_config.py): defaults, conversion, errors naming the setting."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.settings import Settings

from sitemap_spider.config import ConfigError, SitemapConfig, apply_defaults
from sitemap_spider.rich_config import RichConfig
from sitemap_spider.sitemaps.entry import Alternate, News, RichEntry, SitemapEntry, Video
from sitemap_spider.sitemaps.item_entries import entry_from_item


def config(**overrides: Any) -> RichConfig:
    settings = Settings()
    apply_defaults(settings)
    settings.setdict(overrides, priority="cmdline")
    return SitemapConfig.from_settings(settings).rich


def test_defaults_hreflang_only() -> None:
    assert config() == RichConfig(hreflang=True, images=False, image_hosts=(), image_min_size=48, videos=False)
    assert not config().news


def test_settings_from_the_command_line() -> None:
    rich = config(
        SITEMAP_IMAGES="True",
        SITEMAP_IMAGE_HOSTS='["CDN.example.net", "img.example.org:8443"]',
        SITEMAP_IMAGE_MIN_SIZE="0",
        SITEMAP_VIDEOS="1",
        SITEMAP_NEWS_NAME=" The Daily ",
        SITEMAP_NEWS_LANGUAGE="zh-TW",
        SITEMAP_HREFLANG="False",
    )
    assert rich == RichConfig(False, True, ("cdn.example.net", "img.example.org:8443"), 0, True, "The Daily", "zh-tw")
    assert rich.news


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SITEMAP_IMAGES", "maybe"),
        ("SITEMAP_IMAGE_HOSTS", "https://cdn.example.net/"),
        ("SITEMAP_IMAGE_MIN_SIZE", "-1"),
        ("SITEMAP_VIDEOS", "sometimes"),
        ("SITEMAP_NEWS_LANGUAGE", "english"),
        ("SITEMAP_HREFLANG", "yes please"),
    ],
)
def test_bad_settings_name_the_setting(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        config(**{name: value})


def test_items_with_extension_fields_become_rich_entries() -> None:
    """The add-on's pipeline reads the same fields as scrapy publish's JSON Lines."""
    item = {
        "url": "https://www.example.com/a",
        "alternates": [["fr", "https://www.example.com/fr/a"]],
        "images": [{"loc": "https://www.example.com/a.png"}],
        "videos": [{"thumbnail_loc": "https://www.example.com/t.jpg", "title": "T", "description": "D",
                    "player_loc": "https://www.example.com/p", "duration": "30"}],
        "news": {"name": "N", "language": "en", "publication_date": "2024-05-01", "title": "T"},
    }  # fmt: skip
    assert entry_from_item(item) == RichEntry(
        "https://www.example.com/a",
        alternates=(Alternate("fr", "https://www.example.com/fr/a"),),
        images=("https://www.example.com/a.png",),
        videos=(Video("https://www.example.com/t.jpg", "T", "D", player_loc="https://www.example.com/p", duration=30),),
        news=News("N", "en", "2024-05-01", "T"),
    )
    assert type(entry_from_item({"loc": "https://www.example.com/b", "images": []})) is SitemapEntry
