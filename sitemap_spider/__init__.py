"""sitemap_spider: crawl a site the way a search engine does and publish its XML sitemaps.

``scrapy crawl sitemap -a url=...`` in this project; in any other Scrapy project,
``ADDONS = {"sitemap_spider.Addon": 0}`` publishes a sitemap set of its spiders' items.
"""

from sitemap_spider.addon import Addon

__all__ = ["Addon"]
