"""Every Scrapy stats key the crawl writes, named in one place (as Scrapy names ``feedexport/...``).

Keys ending in ``/`` are prefixes: the rest of the key is a reason, a status or a count's kind.
"""

from __future__ import annotations

from typing import Final

from sitemap_spider.sitemaps.exporter import OVER_LIMIT_STAT

# --- the published set ----------------------------------------------------------
#: Entries the pipeline took (valid, before duplicates are dropped).
ENTRIES: Final = "sitemap/entries"
#: URLs and files of the published set; absent when nothing was published.
URLS: Final = "sitemap/urls"
FILES: Final = "sitemap/files"
#: Why nothing was published; absent when the set was published.
NOT_PUBLISHED: Final = "sitemap/not_published"
#: ``sitemap/excluded/<reason>``: URLs not listed, by reason (crawl/report.py's REASONS).
EXCLUDED: Final = "sitemap/excluded/"
#: Items the ``sitemap`` feed format could not hold (named in sitemaps/, which imports nothing of ours).
FEED_OVER_LIMIT: Final = OVER_LIMIT_STAT
#: Links to other origins met on the site's pages.
LINKS_OFFSITE: Final = "sitemap/links/offsite"

# --- politeness -----------------------------------------------------------------
#: The robots.txt Crawl-delay applied, in seconds.
CRAWL_DELAY: Final = "sitemap/crawl_delay"
#: ``sitemap/backoff/<status>``: pauses after a 429 or 503.
BACKOFF: Final = "sitemap/backoff/"

# --- rendering ------------------------------------------------------------------
RENDER_PAGES: Final = "sitemap/render/pages"
RENDER_FAILED: Final = "sitemap/render/failed"
RENDER_SCRIPTS_READ: Final = "sitemap/render/scripts_read"
#: ``.../<reason>``: why pages went to the browser, or would have without one.
RENDER_REASON: Final = "sitemap/render/reason/"
RENDER_UNAVAILABLE: Final = "sitemap/render/unavailable/"
RENDER_SKIPPED_SCRIPTS_RENDERED_BEFORE: Final = "sitemap/render/skipped/scripts_rendered_before"
#: Pages judged statically because renders of their template found nothing (render/learning.py).
RENDER_SKIPPED_NO_GAIN: Final = "sitemap/render/skipped/no_gain"
#: Renders made to learn whether a template gains from rendering (its first pages, and samples).
RENDER_PROBES: Final = "sitemap/render/probes"
#: Pages of a no-gain template rendered all the same, to check it still gains nothing.
RENDER_SAMPLES: Final = "sitemap/render/samples"
#: Templates whose pages are judged statically after their renders found nothing.
RENDER_TEMPLATES_NO_GAIN: Final = "sitemap/render/templates/no_gain"
#: No-gain templates a sample render put back to rendering.
RENDER_TEMPLATES_REGAINED: Final = "sitemap/render/templates/regained"
#: URLs first met in a rendered DOM: absent from that page's static HTML and not met before.
RENDER_URLS_FOUND: Final = "sitemap/render/urls_found"
#: Pages the second crawling process sent to the first to render (one browser per machine).
RENDER_HANDED_OVER: Final = "sitemap/render/handed_over"

# --- crawl modes ----------------------------------------------------------------
#: 2 once the second crawling process has started.
WORKERS: Final = "sitemap/workers"
#: The second crawling process died before the end.
WORKERS_LOST: Final = "sitemap/workers/lost"
#: The worker that publishes a shared crawl's set, on the workers that leave it that job.
SHARED_PUBLISHER: Final = "sitemap/shared/publisher"
#: Requests put back in the shared queue after their worker stopped answering.
SHARED_REQUEUED: Final = "sitemap/shared/requeued"
