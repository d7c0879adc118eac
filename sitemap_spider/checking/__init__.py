"""``scrapy validate``: the checks of sitemap files, pure and streamed (no Scrapy here)."""
