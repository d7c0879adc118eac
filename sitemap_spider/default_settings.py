"""Defaults of the sitemap spider: every ``SITEMAP_*`` setting and the Scrapy settings it changes.

The spider applies these at Scrapy's 'default' priority, so a project's
settings.py and ``-s NAME=VALUE`` override any of them; ``config.SitemapConfig`` validates them.
The manual's settings reference (docs/settings.md) is generated from this module: each
assignment is a setting, the ``#`` lines right above it say what it does (a setting on the line
after another shares its block), and ``# --- Title ---`` lines open its sections.
"""

from __future__ import annotations

# --- Output -----------------------------------------------------------------
# Directory the sitemap set is published to (relative to the working directory; under Scrapyd
# it must be absolute, since jobs run in Scrapyd's own directory), with its missing parents. It is
# checked at start-up, before any request, by making it and a file in it, then removing what the
# check made: a place no file can be made in (under a file, in /proc, a read-only filesystem) stops
# the crawl, the add-on's too, with the reason. A crawl that lists nothing leaves no empty folder.
SITEMAP_OUTPUT_DIR = "sitemaps"
# Object storage the set is published to as well: "s3://bucket/prefix/" (S3, or the S3 API of R2,
# MinIO, Spaces, B2, with AWS_ENDPOINT_URL), through botocore (the [s3] extra) and Scrapy's AWS_*
# settings for the credentials. SITEMAP_OUTPUT_DIR is then the working copy: the set is built
# there, compared with the one the bucket serves, and uploaded, the index last. None: no bucket.
SITEMAP_OUTPUT_URI: str | None = None
# Absolute URL the files will be served from: each index <loc> is this URL + the file's name;
# None means the public origin + "/".
SITEMAP_BASE_URL: str | None = None
# Shard limits, URLs and uncompressed bytes per file: a shard closes before an entry would cross
# either (the defaults are the protocol's maximums).
SITEMAP_MAX_URLS = 50_000
SITEMAP_MAX_BYTES = 52_428_800
# Write shards as reproducible .xml.gz files (gzip mtime 0; the index stays plain XML).
SITEMAP_GZIP = False
# Validate every file against the official XSDs before publishing it.
SITEMAP_VALIDATE = True
# A stylesheet for people: sitemap.xsl is published beside the set and every file names it in an
# <?xml-stylesheet?> line, so that a browser shows a sitemap as a table (URL, lastmod, images,
# videos, language versions) instead of raw XML. Search engines ignore the line.
SITEMAP_XSL = False
# llms.txt (llmstxt.org) beside the set: the site's name and description from its home page, then
# one section per group (SITEMAP_GROUPS) or first path segment, each listed page as a Markdown
# link with its title and meta description. Written by `scrapy crawl sitemap` (it reads the
# pages), published with the set; a site of more pages lists its SITEMAP_LLMS_TXT_MAX shallowest.
SITEMAP_LLMS_TXT = False
SITEMAP_LLMS_TXT_MAX = 5000
# A new set that lists fewer than this share of the URLs of the set published before is not
# published: a site half down, a robots.txt accident or a login wall would otherwise replace the
# whole sitemap with a fraction of it. The previous set and the history stay; the command exits
# non-zero. 0 turns the guard off (a deliberate shrink).
SITEMAP_MAX_SHRINK = 0.5
# Sitemaps by section: [{"group": name, "prefix": "/blog/"} or {"group": name, "pattern": regex}],
# the first rule that matches a URL (a path prefix, written as is or percent-encoded: "/博客/"
# is "/%E5%8D%9A%E5%AE%A2/", or a regular expression searched in the URL) names its group. Each group's URLs go into files of their own, sitemap-<group>-00001.xml,
# sharded at the limits; the URLs no rule matches stay in sitemap-00001.xml. Search Console then
# reports indexing per section. Names: lower-case letters, digits, '-' and '_' ("news" and
# "other", the URLs of no group in the counts, are taken).
SITEMAP_GROUPS: list[dict[str, str]] = []
# Path of the report: JSON (counts, stats, every excluded URL with its reason), or, for a path
# ending in .html, one self-contained page with charts and sortable tables; None: no report.
# Written by every crawl, SITEMAP_PUBLISH=False included; `scrapy audit` adds its findings.
SITEMAP_REPORT: str | None = None
# auto: a live status line on a terminal, and a progress log line every LOGSTATS_INTERVAL
# seconds; log: the log line only; off: neither.
SITEMAP_PROGRESS = "auto"
# Entries kept in memory before a sorted run spills to disk (bounds memory).
SITEMAP_SORT_RUN_SIZE = 100_000
# `scrapy publish`: stop at the first bad input line instead of reporting and skipping it.
SITEMAP_STOP_ON_BAD_INPUT = False
# False: the crawl collects its entries and exclusions and publishes nothing (what `scrapy audit`
# runs); one process only: not with JOBDIR nor SITEMAP_REDIS_URL.
SITEMAP_PUBLISH = True

# --- Which URLs are listed ----------------------------------------------------
# Regular expressions searched in the public URL: only matches of INCLUDE (if
# any) and no match of EXCLUDE are listed. Pages are crawled either way.
SITEMAP_INCLUDE: list[str] = []
SITEMAP_EXCLUDE: list[str] = []
# List pages that say noindex / name another canonical URL anyway.
SITEMAP_INCLUDE_NOINDEX = False
SITEMAP_INCLUDE_CANONICALISED = False
# A page served byte for byte the same under several URLs (/ and /index.html,
# ?print=1 variants) is listed once, under the first of its URLs in sort order.
SITEMAP_DEDUPE_CONTENT = True
# Agent names whose robots meta tags and X-Robots-Tag lines apply besides "robots".
SITEMAP_ROBOTS_AGENTS = ["googlebot"]
# changefreq / priority rules: [{"pattern": regex, "changefreq": word, "priority": 0.0-1.0}],
# the first rule whose pattern matches wins.
# Google and Bing ignore both fields, so nothing is written unless rules say so.
SITEMAP_RULES: list[dict[str, object]] = []

# --- Which URLs are crawled ---------------------------------------------------
# Regular expressions searched in the public URL: matching URLs are never fetched.
SITEMAP_DENY: list[str] = []
# Query parameters removed from every URL (glob patterns, case-insensitive), and path parameters
# of the same names (";jsessionid=..." after a segment): click trackers, and the session ids of
# PHP, Java and Django servers, which name a visitor's session, never a page.
SITEMAP_STRIP_PARAMS = [
    "utm_*", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid",
    "yclid", "twclid", "ttclid", "igshid", "mc_cid", "mc_eid", "_ga", "_gl",
    "phpsessid", "jsessionid", "sessionid",
]
# Follow rel="nofollow" links and pages with a nofollow robots directive: nofollow
# says nothing about whether the target should be indexed.
SITEMAP_FOLLOW_NOFOLLOW = True
# A URL whose path repeats one segment more often than this is a crawler trap
# (relative links building /a/more/more/more/...), and is not fetched.
SITEMAP_MAX_SEGMENT_REPEATS = 3
# Requests the crawl's queue holds in memory (about 1.5 KB each) before the rest wait on
# disk, in a temporary directory removed at the end (without JOBDIR; a resumable crawl's
# queue is its state). Pickling every request to disk cost about 0.8 ms of CPU a page; a
# queue this size takes about 15 MB. 0: every request waits on disk.
SITEMAP_QUEUE_MEMORY = 10_000

# --- How the crawl is run (modes/) ---------------------------------------------
# The class that picks the crawl's mode from JOBDIR, SITEMAP_WORKERS, SITEMAP_REDIS_URL and
# SITEMAP_PUBLISH, and makes it; the crawl sees the mode only through
# sitemap_spider.crawl.mode.Mode, as Scrapy's engine sees the class SCHEDULER names.
SITEMAP_MODE_CHOOSER = "sitemap_spider.modes.SettingsChooser"

# --- Both cores of this machine ------------------------------------------------
# Crawling processes: "auto" is one per core, at most 2. The second one starts
# once SITEMAP_WORKERS_AFTER requests wait in the queue (a small site never
# needs it; 0: at once) and they are at least SITEMAP_WORKERS_AFTER_SECONDS of
# work at the crawl's pace so far, or the crawl has gone on twice that long with
# them waiting (its start-up, about a second of a core, must pay off: a recrawl's
# 304s go fast; 0: the count alone); each URL is then fetched by the process its
# hash names. One process with JOBDIR, SITEMAP_REDIS_URL, feed exports (-o) or under Scrapyd.
SITEMAP_WORKERS = "auto"
SITEMAP_WORKERS_AFTER = 500
SITEMAP_WORKERS_AFTER_SECONDS = 4.0

# --- One crawl, several workers (Redis through scrapy-redis) -----------------
# redis://host:6379/0: share the crawl with every worker given the same URL; None: one process.
SITEMAP_REDIS_URL: str | None = None
# Prefix of the crawl's Redis keys (sitemap:<id>:...); None: derived from the start URL's origin.
SITEMAP_CRAWL_ID: str | None = None
# Join an unfinished shared crawl whose workers are all gone instead of starting it over.
SITEMAP_RESUME = False
# The crawl ends once the shared queue is empty and no worker had a request in
# flight for this long: a slow page on another worker may still bring links.
SITEMAP_REDIS_IDLE_SECONDS = 3.0
# A worker silent for this long is taken for dead and what it had taken goes
# back to the queue; must exceed any pause of a live worker (a long GC, a slow disk).
SITEMAP_REDIS_LEASE_SECONDS = 30.0
# A worker that cannot reach Redis (a restart, a network blip) pauses and tries again
# for this long; after that the crawl stops with an error and publishes nothing.
SITEMAP_REDIS_WAIT_SECONDS = 30.0

# --- JavaScript rendering (scrapy-playwright) ----------------------------------
# never: no browser; auto: render pages whose static HTML shows scripts build
# content; always: render every HTML page. The `render` spider argument overrides it.
SITEMAP_RENDER = "auto"
# A Chromium/Chrome executable; None: Playwright's own Chromium, else one on the PATH.
SITEMAP_BROWSER_PATH: str | None = None
# Seconds a page may take to load in the browser; after that its static HTML is used.
SITEMAP_RENDER_TIMEOUT = 20.0
# Seconds a page may take after `load` to settle (no fetch, XHR, script load or short
# timer under way, the DOM unchanged for a moment) before its DOM is read as it is.
SITEMAP_RENDER_IDLE_TIMEOUT = 2.0
# Pages rendered at the same time (one browser context).
SITEMAP_RENDER_PAGES = 4

# --- Politeness (politeness.py) ----------------------------------------------
# The longest robots.txt Crawl-delay obeyed, in seconds: a larger one is cut to
# this (and logged) so that "Crawl-delay: 86400" cannot stall the crawl; 0 ignores Crawl-delay.
SITEMAP_MAX_CRAWL_DELAY = 60.0
# The longest pause of the site when it is in trouble (429s, most recent answers failing,
# answers asking to wait), and the longest retry wait of a page, in seconds: a larger
# Retry-After is cut to this, and the doubling back-off stops growing at it; 0: no back-off.
SITEMAP_MAX_BACKOFF = 120.0
# Transient faults (429, 502, 503, 504, 408, 522, 524, connection errors, truncated
# bodies) are retried this many times, each page on its own back-off: SITEMAP_RETRY_DELAY
# seconds doubled at each retry (+-50% jitter, or the answer's Retry-After), at most
# SITEMAP_MAX_BACKOFF. Once the rest of the crawl is done, the pages still failing get at
# most SITEMAP_RETRY_LAST_PASS_DELAY seconds more, all together and once per crawl (the clock
# stops while a retry's new pages are fetched); then, if the site's home
# page answers, their waits are cut short (their tries are not), and a page out of retries
# is tried once more (the last pass) before it is given up (crawl/retries.py).
# SITEMAP_RETRY_DELAY is also the site's first pause when it is in trouble and gave no
# Retry-After; 0: retries at once. 0.5 s gives a page's retries urllib3's schedule for a
# backoff_factor of 0.5 (0.5, 1, 2, 4, 8 s: 15.5 s in all, a page down for a short deploy is
# found again) and a site pause that doubles from 0.5 s; with 1 s the fault-weather benchmark's
# tail (a chain of pages behind failing ones, retried one after the other) took 14 s longer.
SITEMAP_RETRY_TIMES = 5
SITEMAP_RETRY_DELAY = 0.5
SITEMAP_RETRY_LAST_PASS_DELAY = 30.0
# A site that has answered nothing but such faults for this many seconds is down:
# the crawl stops and publishes nothing (the previous set stays); 0: wait for ever.
SITEMAP_RETRY_BUDGET = 900.0

# --- IndexNow (indexnow.py) ------------------------------------------------------
# A key of 8 to 128 characters [a-zA-Z0-9-] turns IndexNow on: <key>.txt is published with the
# set, and after each publish the added, changed and removed URLs are POSTed to the endpoint.
SITEMAP_INDEXNOW_KEY: str | None = None
# The shared IndexNow endpoint, which passes submissions on to every engine that takes part.
SITEMAP_INDEXNOW_ENDPOINT = "https://api.indexnow.org/indexnow"
# --- Crawl history (history/) ------------------------------------------------
# The SQLite file of what the last published crawl saw (dates changes, asks for 304s,
# keeps failing pages listed); None: sitemap-history/<origin>.sqlite in the user's data
# directory (platformdirs: ~/.local/share/sitemap_spider on Linux), the same file wherever
# the crawl is started; "off" or "": no history. Never inside SITEMAP_OUTPUT_DIR; under Scrapyd
# a named file must be an absolute path. Its folder is checked at start-up as SITEMAP_OUTPUT_DIR is.
SITEMAP_HISTORY: str | None = None
# A page of the last set that fails (timeout, connection error, 5xx, 429) stays listed
# with its previous entry for this many days since it was last fetched well.
SITEMAP_KEEP_FAILED_DAYS = 7.0
# --- Rich sitemaps (rich_config.py; docs/rich.md) ------------------------------
# hreflang alternates (<link rel="alternate" hreflang>, Link headers): reciprocal ones are written.
SITEMAP_HREFLANG = True
# image:image of each listed page's content images (never downloaded).
SITEMAP_IMAGES = False
# Hosts besides the site's own that images may be on (CDNs): ["cdn.example.com"], with :port
# when not the default.
SITEMAP_IMAGE_HOSTS: list[str] = []
# An image whose declared width or height is under this many pixels is an icon: left out.
SITEMAP_IMAGE_MIN_SIZE = 48
# video:video of schema.org VideoObjects (JSON-LD, microdata) and <video> elements.
SITEMAP_VIDEOS = False
# The publication's name: articles of the last 2 days go into sitemap-news-NNNNN.xml; None: off.
SITEMAP_NEWS_NAME: str | None = None
# news:language when a page's <html lang> gives none (ISO 639: en, fr; zh-cn, zh-tw).
SITEMAP_NEWS_LANGUAGE: str | None = None

# --- Scrapy settings this crawl changes -------------------------------------
# robots.txt decides what is fetched, and so what can be listed.
ROBOTSTXT_OBEY = True
# A crawl run from cron or Scrapyd opens no console: Scrapy's telnet console and remote control
# (which also writes a job file under the user's home) each listen on a local port for the
# crawl's whole life, and starting them cost each crawl about 0.1 CPU s (a one-page site: 0.67 s
# with them, 0.58 s without, medians of 6 runs). -s turns either back on to debug a crawl.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
# Breadth-first: with a depth limit, Scrapy's default LIFO order would drop pages
# first reached through a long path; FIFO reaches every page by its shortest one.
DEPTH_PRIORITY = 1
# Scrapy's pickle FIFO disk queue, naming each request's spider methods without a search of the
# spider (modes/request_dict.py): the same files, a tenth fewer instructions per page when every
# request spills (BENCHMARKS.md section 11).
SCHEDULER_DISK_QUEUE = "sitemap_spider.modes.request_dict.FifoDiskQueue"
SCHEDULER_START_DISK_QUEUE = "sitemap_spider.modes.request_dict.FifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# Ends infinite URL spaces (calendars) while real pages dozens of clicks deep are found.
DEPTH_LIMIT = 100
# Politeness: a few parallel requests per site, adapted to the server's latency.
CONCURRENT_REQUESTS_PER_DOMAIN = 8
# A page's requests and its entry, taken one at a time: the pipeline stores an entry at once
# and the scheduler a request, so Scrapy's 100 (100 asyncio tasks for every page's output)
# bought nothing and cost about a fifth of a recrawl's CPU.
CONCURRENT_ITEMS = 1
# Scrapy's two DEBUG lines a page are not even built when LOG_LEVEL drops them (crawl/log_lines.py).
LOG_FORMATTER = "sitemap_spider.crawl.log_lines.LevelLogFormatter"
# Scrapy's stats, counted without the per-call wrapping of Scrapy 2.19's collector (about twenty
# counts a page; crawl/counting.py): the same stats, dumped and read the same way.
STATS_CLASS = "sitemap_spider.crawl.counting.CountingStatsCollector"
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.25
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 4.0
# Applies robots.txt Crawl-delay and Retry-After to the site's downloader slot. Order 100:
# after AutoThrottle (order 0), whose slot delay it may raise. Added to, not replacing,
# a project's own EXTENSIONS.
# PromptStop: a stop does not wait out the site's pause (crawl/stopping.py).
# CrawlProgress: the progress line (SITEMAP_PROGRESS).
EXTENSIONS = {
    "sitemap_spider.crawl.politeness.Politeness": 100,
    "sitemap_spider.crawl.stopping.PromptStop": 110,
    "sitemap_spider.progress.CrawlProgress": 500,
}
# Pages larger than this are not HTML anyone indexes whole; don't download them.
# HttpCompressionMiddleware holds decompressed bodies (a gzip bomb) to it too.
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
# Scrapy's 180 s, times three tries, let one page that trickles a byte a second hold a
# slot for 9 minutes; a real page that needs more than 30 s is not one a search engine waits for.
DOWNLOAD_TIMEOUT = 30
USER_AGENT = "Mozilla/5.0 (compatible; sitemap_spider/0.1)"
