"""The Scrapy add-on: ``ADDONS = {"sitemap_spider.Addon": 0}`` gives any Scrapy project a published sitemap set.

It installs what turns items into a sitemap set and nothing that changes how a project's
spiders crawl: the item pipeline (every item with a ``loc``, or a ``url``, and an optional
``lastmod`` is listed; the set is sharded, indexed, validated and published atomically when
the crawl finishes), the ``sitemap`` feed format, and the defaults of every ``SITEMAP_*``
setting. The ``sitemap`` spider enables it for itself and adds its own crawl's scheduler,
middlewares and Scrapy settings (crawl/start_up.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: Where the pipeline and the exporter are, as Scrapy settings name components.
PIPELINE = "sitemap_spider.pipeline.SitemapPipeline"
PIPELINE_ORDER = 300
EXPORTER = "sitemap_spider.sitemaps.SitemapItemExporter"


class Addon:
    """Install the sitemap pipeline, the ``sitemap`` feed format and the ``SITEMAP_*`` defaults."""

    def update_settings(self, settings: BaseSettings) -> None:
        # Imported here: `import sitemap_spider` (which ADDONS does) stays cheap.
        from scrapy.utils.misc import load_object

        from sitemap_spider.config import apply_sitemap_defaults

        apply_sitemap_defaults(settings)
        settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", load_object(PIPELINE), PIPELINE_ORDER)
        exporters = settings.get("FEED_EXPORTERS")
        if hasattr(exporters, "set"):  # Scrapy's own settings keep it as a BaseSettings, per-key priorities
            if "sitemap" not in exporters:
                exporters.set("sitemap", EXPORTER, priority="addon")
        else:
            settings.set("FEED_EXPORTERS", {**(exporters or {}), "sitemap": EXPORTER}, priority="addon")
