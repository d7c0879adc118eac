"""The ``Request.meta`` keys the crawl's parts use to tell each other about a request, named in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from scrapy import Request

#: The spider asks for this URL to be recorded as excluded (the reason), not fetched.
SKIP: Final = "sitemap_skip"
#: The page facts a render request carries from the static fetch (empty for a probe's render:
#: test with ``in``, see :func:`for_browser`).
RENDER: Final = "sitemap_render"
#: Fetch a page and judge its static HTML, never render it.
NO_RENDER: Final = "sitemap_no_render"
#: A page resource (a script read to decide on rendering), not a page: nothing to record.
RESOURCE: Final = "sitemap_resource"
#: The key of the page's navigation script set (render/revisits.py), set by its render decision.
SCRIPT_SET: Final = "sitemap_script_set"
#: The render decision probed the page, and the probe failed: it is judged by its static HTML.
PROBE_FAILED: Final = "sitemap_probe_failed"
#: The history knows the page, which is fetched whole (not asked for a 304) for its render decision: why.
WHOLE_FOR_RENDER: Final = "sitemap_whole_for_render"
#: The request's row in the JOBDIR state, or its lease in a shared crawl.
STATE_ID: Final = "sitemap_state_id"
#: `scrapy validate`: the document (checking.session.Target) a request fetches.
VALIDATE_TARGET: Final = "sitemap_validate_target"
#: The request asks the server whether the page changed since the crawl history's record (304 or 200).
CONDITIONAL: Final = "sitemap_conditional"
#: The request is the last pass's try of a page that failed all its retries (crawl/retries.py).
LAST_PASS: Final = "sitemap_last_pass"
#: The request failed while its site was slowed down for trouble of its own (crawl/politeness.py):
#: the failure was the site's, and does not use up one of the page's tries (crawl/retries.py).
SITE_TROUBLE: Final = "sitemap_site_trouble"
#: The page failed once while its site was in trouble, and waits again with the tries it had: that
#: failure was counted for the site, and its next ones are the page's (crawl/politeness.py).
PUT_BACK: Final = "sitemap_put_back"
#: A held request's own scheduler priority, before its wait's end put it ahead of every page
#: (modes/held.py): a retry put back in a pause goes back to it, in its turn.
OWN_PRIORITY: Final = "sitemap_own_priority"
#: When the request reached the downloader (monotonic): politeness.py's send time of a failed request.
REACHED_DOWNLOADER: Final = "sitemap_reached_downloader"
#: Queue this request past the duplicate filter, once: the crawl queued its URL before (a page the
#: other process of a two-process crawl lent or sent back to render). Taken off as it is queued, so
#: a redirect from it is filtered as usual (modes/schedulers.py SpillScheduler).
PAST_FILTER: Final = "sitemap_past_filter"
#: The page's callback ended without judging it: the crawl stopped while its render decision waited (a
#: script file's read, its template's probe). Not marked done: a JOBDIR or Redis crawl judges it on resume.
NOT_DONE: Final = "sitemap_not_done"


def for_browser(request: Request) -> bool:
    """Whether the request is the browser's (a render, a probe's, a script read for one), not a page's."""
    return RENDER in request.meta or RESOURCE in request.meta
