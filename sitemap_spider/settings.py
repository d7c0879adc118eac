"""Scrapy settings of the sitemap_spider project.

The sitemap spider's own defaults (every SITEMAP_* setting and the Scrapy
settings it changes) are in sitemap_spider/default_settings.py; whatever is
set here or with ``-s`` overrides them.
"""

BOT_NAME = "sitemap_spider"
SPIDER_MODULES = ["sitemap_spider.crawl.spider"]
# `scrapy crawl` with start-up checks and an exit code that says whether a set was published.
COMMANDS_MODULE = "sitemap_spider.commands"
# `-o urls.xml:sitemap` writes a sitemap urlset from any spider whose items have a `loc`.
FEED_EXPORTERS = {"sitemap": "sitemap_spider.sitemaps.exporter.SitemapItemExporter"}
FEED_EXPORT_ENCODING = "utf-8"
