"""Requests written to a queue (the spill directory, JOBDIR's state, Redis), their spider methods named cheaply.

Scrapy writes a request as ``request.to_dict(spider=spider)``, which names its callback and
errback by listing every member of the spider (``inspect.getmembers``), once for each, for
every request written. In a recrawl of 20,000 pages where half the queue spilled to disk,
that search was 3% of the crawl's CPU (py-spy; instructions: BENCHMARKS.md section 11); a JOBDIR or Redis
crawl writes every request. A bound method of the spider is named here by its own
``__name__``, once that name is checked to give the same function back: the dict is the one
Scrapy writes (a method under two names may be written under the other one, which reads back
as the same method), and ``request_from_dict`` reads it as before. Anything else (a function that
is not the spider's, a name-mangled method) is left to Scrapy's search, and to its error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from scrapy.squeues import PickleFifoDiskQueue

if TYPE_CHECKING:
    from scrapy import Request, Spider


def method_name(func: Any, spider: Spider | None) -> Any:
    """The name of ``func`` on ``spider`` when it is one of the spider's methods; else ``func`` itself."""
    if spider is None or getattr(func, "__self__", None) is not spider:
        return func
    name = getattr(func, "__name__", None)
    function = getattr(func, "__func__", None)
    found = getattr(spider, name, None) if isinstance(name, str) and function is not None else None
    return name if found is not None and getattr(found, "__func__", None) is function else func


@contextmanager
def methods_named(request: Request, spider: Spider | None) -> Iterator[Request]:
    """``request`` with its callback and errback as names while it is written; as it was afterwards."""
    callback, errback = request.callback, request.errback
    try:
        # to_dict takes a callback that is not callable as it is: the name Scrapy would have found.
        request.callback = method_name(callback, spider)
        request.errback = method_name(errback, spider)
        yield request
    finally:
        request.callback, request.errback = callback, errback


def request_dict(request: Request, spider: Spider | None) -> dict[str, Any]:
    """``request.to_dict(spider=spider)``, as Scrapy writes it, without its search of the spider."""
    with methods_named(request, spider):
        return request.to_dict(spider=spider)


class FifoDiskQueue(PickleFifoDiskQueue):  # type: ignore[misc,valid-type]  # a class Scrapy builds at run time
    """Scrapy's ``PickleFifoDiskQueue`` (SCHEDULER_DISK_QUEUE), writing the same dicts for less."""

    def push(self, request: Request) -> None:
        with methods_named(request, self.spider):
            super().push(request)
