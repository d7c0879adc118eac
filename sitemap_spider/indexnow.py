"""IndexNow: after a publish, tell search engines which URLs were added, changed or removed.

Opt-in (``SITEMAP_INDEXNOW_KEY``). The key file ``<key>.txt`` is published with the set
(OutputOptions.extra_files), so it is served from ``SITEMAP_BASE_URL`` beside the sitemaps,
and a key file there vouches only for URLs under that location (the IndexNow protocol's rule):
others are counted as out of scope and not sent. A first set (nothing to compare with) sends
nothing. 429 and 5xx answers, timeouts and refused connections are retried a bounded number
of times with back-off; a failure is logged and counted and never undoes the publish.

The POSTs are made with urllib in a thread of their own, which the code that published the set
waits for (``submit_in_thread``). In a crawl that code is the ``spider_closed`` handler
(pipeline.py -> mode.end -> SetPublisher.finish): by then Scrapy's engine has closed its
downloader, so ``engine.download`` cannot carry them, and the set was just written in that same
blocking call, whose report must hold the outcome. Every request has a timeout, the attempts
and the waits are capped and the whole submission has a deadline; the thread bounds what those
do not (a name lookup is not covered by the socket timeout) and keeps an unforeseen error of
the submission from reaching the publish.
"""

from __future__ import annotations

import heapq
import http.client
import itertools
import json
import logging
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings

from sitemap_spider.config_parsing import ConfigError, read_text
from sitemap_spider.crawl.dates import retry_after_seconds
from sitemap_spider.sitemaps import KINDS, SetChanges

logger = logging.getLogger(__name__)

#: The shared endpoint: it passes every submission on to each search engine that takes part.
DEFAULT_ENDPOINT: Final = "https://api.indexnow.org/indexnow"
#: The protocol's limit of URLs in one request.
MAX_URLS_PER_REQUEST: Final = 10_000
_KEY = re.compile(r"[A-Za-z0-9-]{8,128}")
ATTEMPTS: Final = 3  # a request and two retries, as Scrapy's RETRY_TIMES=2
FIRST_BACKOFF: Final = 1.0  # seconds before the first retry without Retry-After, doubled after
MAX_RETRY_AFTER: Final = 60.0  # the longest wait a Retry-After may ask for
REQUEST_TIMEOUT: Final = 30.0
DEADLINE: Final = 300.0  # the whole submission, in seconds: no retry starts past it
_USER_AGENT = "sitemap_spider/0.1 (IndexNow)"


@dataclass(frozen=True)
class IndexNowConfig:
    """``SITEMAP_INDEXNOW_KEY`` and ``SITEMAP_INDEXNOW_ENDPOINT``."""

    key: str
    endpoint: str

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> IndexNowConfig | None:
        """The IndexNow settings, or None when no key is set (IndexNow off)."""
        key = read_text(settings, "SITEMAP_INDEXNOW_KEY")
        if key is None:
            return None
        if not _KEY.fullmatch(key):
            raise ConfigError(
                "SITEMAP_INDEXNOW_KEY", f"must be 8 to 128 characters among a-z, A-Z, 0-9 and '-', got {key!r}"
            )
        endpoint = read_text(settings, "SITEMAP_INDEXNOW_ENDPOINT") or DEFAULT_ENDPOINT
        parts = urlsplit(endpoint)
        try:
            _ = parts.port  # raises for a port that is not a number
        except ValueError:
            parts = urlsplit("")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError("SITEMAP_INDEXNOW_ENDPOINT", f"needs an absolute http(s) URL, got {endpoint!r}")
        return cls(key, endpoint)

    @property
    def key_file(self) -> tuple[str, bytes]:
        """The file that proves the key is the site's: ``<key>.txt`` holding the key."""
        return f"{self.key}.txt", self.key.encode()


@dataclass
class Submission:
    """What a submission did."""

    urls: int = 0  # URLs the endpoint accepted
    requests: int = 0  # POSTs sent, retries included
    retries: int = 0
    out_of_scope: int = 0  # URLs the key file cannot vouch for (not under the base URL)
    failed: str | None = None  # why the rest was not submitted
    not_submitted: int = 0  # URLs left unsent by the failure


class _Refused(Exception):
    """An answer that a retry would not change (400, 403, 422...)."""


def submit_in_thread(config: IndexNowConfig, changes: SetChanges, base_url: str) -> Submission:
    """``submit`` in a daemon thread, waited for at most DEADLINE plus two request timeouts."""
    limit = DEADLINE + 2 * REQUEST_TIMEOUT
    done: list[Submission] = []
    abandoned = threading.Event()

    def run() -> None:
        try:
            done.append(submit(config, changes, base_url))
        except Exception as exc:  # logged and returned as the failure: never raised into the publish
            if not abandoned.is_set():
                logger.exception("IndexNow submission failed")
                done.append(Submission(failed=f"{type(exc).__name__}: {exc}"))

    thread = threading.Thread(target=run, name="indexnow", daemon=True)
    thread.start()
    thread.join(limit)
    if done:
        return done[0]
    # Left behind: its reads of the closed spool files end it, and it says nothing more.
    abandoned.set()
    logger.error("IndexNow submission abandoned after %.0f s (the sitemap set is published)", limit)
    return Submission(failed=f"no end within {limit:.0f} s")


def changed_urls(changes: SetChanges) -> Iterator[str]:
    """The added, changed and removed URLs together, in loc order."""
    return heapq.merge(*(changes.urls(kind) for kind in KINDS))


def submit(
    config: IndexNowConfig,
    changes: SetChanges,
    base_url: str,
    sleep: Callable[[float], None] = time.sleep,
) -> Submission:
    """POST the changed URLs under ``base_url`` (where the key file is served), in batches."""
    outcome = Submission()
    if not changes.compared:
        logger.info("IndexNow: nothing submitted (%s)", changes.previous)
        return outcome
    parts = urlsplit(base_url)
    # A key file vouches for URLs under its own location, whatever their scheme.
    scope = base_url.split("://", 1)[1]
    urls = (url for url in changed_urls(changes) if _in_scope(url, scope, outcome))
    payload = {"host": parts.netloc, "key": config.key, "keyLocation": base_url + config.key_file[0]}
    deadline = time.monotonic() + DEADLINE
    while batch := list(itertools.islice(urls, MAX_URLS_PER_REQUEST)):
        if outcome.failed is None and time.monotonic() >= deadline:
            outcome.failed = f"the submission took over {DEADLINE:.0f} s"
        if outcome.failed is not None:
            outcome.not_submitted += len(batch)
            continue
        try:
            _post(config.endpoint, {**payload, "urlList": batch}, outcome, deadline, sleep)
        except (_Refused, OSError, http.client.HTTPException, ValueError) as exc:
            outcome.failed = str(exc)
            outcome.not_submitted += len(batch)
        else:
            outcome.urls += len(batch)
    _log(config, outcome)
    return outcome


def _in_scope(url: str, scope: str, outcome: Submission) -> bool:
    if url.split("://", 1)[-1].startswith(scope):
        return True
    outcome.out_of_scope += 1
    return False


def _post(
    endpoint: str, payload: dict[str, object], outcome: Submission, deadline: float, sleep: Callable[[float], None]
) -> None:
    """One batch: retried after a 429, a 5xx or no answer; raises what ends it."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": _USER_AGENT}
    for attempt in range(1, ATTEMPTS + 1):
        outcome.requests += 1
        request = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
                response.read()
                return  # 200 or 202: taken (urllib raises for the others)
        except urllib.error.HTTPError as exc:
            with exc:
                if exc.code != 429 and exc.code < 500:
                    raise _Refused(f"{endpoint} answered {exc.code} {exc.reason}") from exc
                if attempt == ATTEMPTS or time.monotonic() >= deadline:
                    raise _Refused(f"{endpoint} answered {exc.code} {exc.reason} {attempt} times") from exc
                wait = retry_after(exc.headers.get("Retry-After"), FIRST_BACKOFF * 2 ** (attempt - 1))
        except (OSError, http.client.HTTPException) as exc:
            if attempt == ATTEMPTS or time.monotonic() >= deadline:
                raise
            wait = FIRST_BACKOFF * 2 ** (attempt - 1)
            logger.info("IndexNow: %s did not answer (%s), retrying in %.1f s", endpoint, exc, wait)
        outcome.retries += 1
        sleep(wait)


def retry_after(value: str | None, default: float) -> float:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), at most
    MAX_RETRY_AFTER; ``default`` without one, or with one that cannot be read."""
    seconds = retry_after_seconds(value, datetime.now(UTC))
    return default if seconds is None else min(seconds, MAX_RETRY_AFTER)


def _log(config: IndexNowConfig, outcome: Submission) -> None:
    if outcome.out_of_scope:
        logger.warning(
            "IndexNow: %s changed URL(s) not under the base URL, where the key file is served: not submitted",
            f"{outcome.out_of_scope:,}",
        )
    if outcome.failed is not None:
        logger.error(
            "IndexNow submission failed, %s URL(s) not submitted (the sitemap set is published): %s",
            f"{outcome.not_submitted:,}",
            outcome.failed,
        )
    elif outcome.urls:
        logger.info(
            "IndexNow: %s URL(s) submitted to %s in %d request(s)", f"{outcome.urls:,}", config.endpoint, outcome.requests
        )
    else:
        logger.info("IndexNow: no changed URL to submit")
