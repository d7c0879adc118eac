"""Scrapy settings of the sitemap_spider project.

The sitemap spider's own defaults (every SITEMAP_* setting and the Scrapy
settings it changes) are in sitemap_spider/default_settings.py; whatever is
set here or with ``-s`` overrides them.
"""

BOT_NAME = "sitemap_spider"
SPIDER_MODULES = ["sitemap_spider.crawl.spider"]
# `scrapy crawl` with start-up checks and an exit code that says whether a set was published,
# and publish, validate and audit in a checkout that is not pip-installed. An installed package
# (or Scrapyd's egg) also registers those three as `scrapy.commands` entry points: Scrapy reads
# COMMANDS_MODULE last, over the same classes, so each command is defined once.
COMMANDS_MODULE = "sitemap_spider.commands"
# The project's own add-on: the sitemap pipeline, the `sitemap` feed format and the SITEMAP_*
# defaults, for every spider here (the sitemap spider also enables it itself).
ADDONS = {"sitemap_spider.Addon": 0}
# Scrapy checks the format of `-o urls.xml:sitemap` before add-ons load: name it here too.
FEED_EXPORTERS = {"sitemap": "sitemap_spider.sitemaps.SitemapItemExporter"}
FEED_EXPORT_ENCODING = "utf-8"
