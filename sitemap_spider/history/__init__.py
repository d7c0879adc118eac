"""The crawl history: what each published crawl saw of each listed page, in one SQLite file.

A page's record holds its content fingerprint, its validators (Last-Modified, ETag),
when it was first seen and when its content last changed, the lastmod in force, its
last status, when it was last fetched well, and its links on the site. The next crawl
reads it to date changes, to ask the server whether a page changed (a 304 keeps its
entry and leads the crawl on through its stored links), and to keep a page that fails
for a day listed as it was. The crawl mode stages this crawl's records (store.py
``Staging``, the JOBDIR state, Redis) and commits them in one transaction right after
the set is published (:meth:`HistoryStore.commit`).

This package imports nothing of the crawl: the spider builds records, the modes move
them, and the store keeps them.
"""

from __future__ import annotations

from sitemap_spider.history.record import Outcome, PageRecord
from sitemap_spider.history.store import HistoryStore, Staging

__all__ = ["HistoryStore", "Outcome", "PageRecord", "Staging"]
