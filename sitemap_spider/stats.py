"""Every Scrapy stats key the crawl writes, named in one place (as Scrapy names ``feedexport/...``).

Keys ending in ``/`` are prefixes: the rest of the key is a reason, a status or a count's kind.
"""

from __future__ import annotations

from typing import Final

from sitemap_spider.sitemaps import DUPLICATE_STAT, EXTENSIONS_DROPPED_STAT, OVER_LIMIT_STAT

# --- the published set ----------------------------------------------------------
#: Entries the pipeline took (valid, before duplicates are dropped).
ENTRIES: Final = "sitemap/entries"
#: URLs and files of the published set; absent when nothing was published.
URLS: Final = "sitemap/urls"
FILES: Final = "sitemap/files"
#: URLs of each group (SITEMAP_GROUPS) in the published set; "other": those of no group.
GROUP_URLS: Final = "sitemap/group_urls/"
#: Pages llms.txt lists (SITEMAP_LLMS_TXT).
LLMS_TXT_PAGES: Final = "sitemap/llms_txt/pages"
#: URLs listed that are not under the base URL (another host, scheme or port, or outside its
#: folder), published as given: search engines take them only by cross-submission.
OFF_BASE: Final = "sitemap/off_base"
#: Why nothing was published; absent when the set was published.
NOT_PUBLISHED: Final = "sitemap/not_published"
#: Where a start URL redirects when that is outside the crawled site (a crawl that can list nothing then).
START_URL_LEAVES: Final = "sitemap/start_url_redirects_to"
#: Why the entries could not be stored (the output directory gone, a full disk), and how many
#: entries were not stored from then on: nothing is published.
STORAGE_FAILED: Final = "sitemap/storage_failed"
NOT_STORED: Final = "sitemap/not_stored"
#: SITEMAP_PUBLISH=False: the listable pages a finished crawl kept instead of publishing them.
COLLECTED: Final = "sitemap/collected"
#: ``sitemap/excluded/<reason>``: URLs not listed, by reason (crawl/report.py's REASONS).
EXCLUDED: Final = "sitemap/excluded/"
#: Items the ``sitemap`` feed format could not hold (named in sitemaps/, which imports nothing of ours).
FEED_OVER_LIMIT: Final = OVER_LIMIT_STAT
#: ``sitemap/feed/extensions_dropped``: items the ``sitemap`` feed wrote without their extensions.
FEED_EXTENSIONS_DROPPED: Final = EXTENSIONS_DROPPED_STAT
#: ``sitemap/feed/duplicate``: items of a URL the ``sitemap`` feed had written already.
FEED_DUPLICATE: Final = DUPLICATE_STAT
#: Links to other origins met on the site's pages.
LINKS_OFFSITE: Final = "sitemap/links/offsite"
#: ``sitemap/canonical/<reason>``: canonical links not followed. ``target_unlistable``: pages listed
#: although they name another URL, which cannot be listed (crawl/canonicals.py; each is named in the
#: report's extension_problems); ``other_scheme``: pages naming their own URL under the other scheme.
CANONICAL: Final = "sitemap/canonical/"
CANONICAL_OTHER_SCHEME: Final = CANONICAL + "other_scheme"

# --- what a publish changed, and IndexNow (sitemaps/changes/compare.py, indexnow.py) ------
#: ``sitemap/diff/added``, ``.../changed``, ``.../removed``: URLs since the set published before.
DIFF: Final = "sitemap/diff/"
#: Why the new set was not compared with a previous one ("first set", or why it was unreadable).
DIFF_NONE: Final = "sitemap/diff/none"
INDEXNOW_URLS: Final = "sitemap/indexnow/urls"
INDEXNOW_REQUESTS: Final = "sitemap/indexnow/requests"
INDEXNOW_RETRIES: Final = "sitemap/indexnow/retries"
#: Changed URLs not under the base URL, where the key file is served: not submitted.
INDEXNOW_OUT_OF_SCOPE: Final = "sitemap/indexnow/out_of_scope"
#: Why the submission failed (the set is published all the same), and the URLs it left unsent.
INDEXNOW_FAILED: Final = "sitemap/indexnow/failed"
INDEXNOW_NOT_SUBMITTED: Final = "sitemap/indexnow/not_submitted"

# --- politeness -----------------------------------------------------------------
#: The robots.txt Crawl-delay applied, in seconds.
CRAWL_DELAY: Final = "sitemap/crawl_delay"
#: ``sitemap/backoff/<status>``: pauses after a 429 or 503.
BACKOFF: Final = "sitemap/backoff/"
#: ``sitemap/robots/unavailable/<cause>``: robots.txt tries that failed (5xx, 429, a refused or
#: broken answer); nothing of its host is fetched meanwhile (crawl/robots.py).
ROBOTS_UNAVAILABLE: Final = "sitemap/robots/unavailable/"
#: robots.txt failed every try: the copy this crawl read before applied (a JOBDIR run it resumes,
#: the first process of two) ...
ROBOTS_FROM_CRAWL: Final = "sitemap/robots/from_this_crawl"
#: ... or the last crawl's copy ...
ROBOTS_FROM_HISTORY: Final = "sitemap/robots/from_history"
#: ... or, with no copy, no rules (as Scrapy reads it).
ROBOTS_NONE: Final = "sitemap/robots/none"

# --- retries (crawl/retries.py) -------------------------------------------------
#: Retries of transient faults held back for a back-off (Scrapy's ``retry/*`` count every retry).
RETRY_HELD: Final = "sitemap/retry/held"
#: Failures while the whole site was slowed down for its trouble: held again without using up a try.
RETRY_SITE_TROUBLE: Final = "sitemap/retry/site_trouble"
#: Pages fetched after at least one transient fault.
RETRY_RECOVERED: Final = "sitemap/retry/recovered"
#: Pages that had failed every retry, tried again in the last pass.
RETRY_LAST_PASS: Final = "sitemap/retry/last_pass"
#: Pages that could not be fetched after every retry and the last pass; ``.../<cause>``: by cause.
NOT_FETCHED: Final = "sitemap/not_fetched"
NOT_FETCHED_CAUSE: Final = "sitemap/not_fetched/"

# --- rendering ------------------------------------------------------------------
RENDER_PAGES: Final = "sitemap/render/pages"
RENDER_FAILED: Final = "sitemap/render/failed"
RENDER_SCRIPTS_READ: Final = "sitemap/render/scripts_read"
#: ``.../<reason>``: why pages went to the browser, or would have without one.
RENDER_REASON: Final = "sitemap/render/reason/"
RENDER_UNAVAILABLE: Final = "sitemap/render/unavailable/"
RENDER_SKIPPED_SCRIPTS_RENDERED_BEFORE: Final = "sitemap/render/skipped/scripts_rendered_before"
#: Pages not rendered because an earlier crawl's probe of their script files found nothing (render/known.py).
RENDER_SKIPPED_SCRIPTS_FOUND_NOTHING_BEFORE: Final = "sitemap/render/skipped/scripts_found_nothing_before"
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
#: Requests of the leader's queue lent to the helper when its own ran out.
WORKERS_LENT: Final = "sitemap/workers/lent"
#: The worker that publishes a shared crawl's set, on the workers that leave it that job.
SHARED_PUBLISHER: Final = "sitemap/shared/publisher"
#: Requests put back in the shared queue after their worker stopped answering.
SHARED_REQUEUED: Final = "sitemap/shared/requeued"

# --- crawl history (history/) ---------------------------------------------------
#: ``sitemap/history/<outcome>``: pages new to the history, changed, unchanged, or answered 304.
HISTORY: Final = "sitemap/history/"
HISTORY_NEW: Final = HISTORY + "new"
HISTORY_CHANGED: Final = HISTORY + "changed"
HISTORY_UNCHANGED: Final = HISTORY + "unchanged"
HISTORY_NOT_MODIFIED: Final = HISTORY + "not_modified"
#: ``sitemap/history/whole_for_render/<why>``: pages the history knows fetched whole, not asked for a 304,
#: for their render decision (render/revisits.py): rendered, scripts, undecided.
HISTORY_WHOLE_FOR_RENDER: Final = HISTORY + "whole_for_render/"
#: Pages of the last set this crawl could not fetch (timeout, connection error, 5xx, 429), listed as before.
KEPT_TRANSIENT_ERROR: Final = "sitemap/kept/transient_error"
#: Records written to the history when the set was published; why they could not be.
HISTORY_RECORDS: Final = "sitemap/history/records"
HISTORY_NOT_UPDATED: Final = "sitemap/history/not_updated"
# --- rich sitemaps: hreflang, images, videos, news (crawl/enrich.py, sitemaps/xml/hreflang.py) ---
#: ``sitemap/hreflang/<reason>``: alternates not written (not_reciprocal, target_not_listed,
#: bad_hreflang, duplicate_hreflang), and those on other hosts written unchecked (unchecked).
HREFLANG: Final = "sitemap/hreflang/"
#: ``sitemap/images/over_limit``: pages with more than 1,000 images (the first 1,000 written).
IMAGES: Final = "sitemap/images/"
#: ``sitemap/video/missing_field``: videos not written for want of a required field.
VIDEO: Final = "sitemap/video/"
#: ``sitemap/news/<reason>``: articles not in the news files (bad_date, no_title, no_language,
#: too_old); ``sitemap/news/urls``: articles in them.
NEWS: Final = "sitemap/news/"
NEWS_URLS: Final = NEWS + "urls"
