"""The shared crawl's Redis client: it waits out a Redis that is briefly unreachable, then gives up for good."""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

import redis
from redis.client import Pipeline

logger = logging.getLogger(__name__)

# How often a command is tried again while Redis does not answer.
_RETRY_EVERY = 0.5

_T = TypeVar("_T")
_D = TypeVar("_D")
_P = ParamSpec("_P")


def check_reachable(url: str) -> str | None:
    """Why the Redis at ``url`` cannot be used, or None when it answers."""
    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    try:
        client.ping()
    except redis.RedisError as exc:
        return str(exc)
    finally:
        client.close()
    return None


class RedisLost(redis.ConnectionError):
    """Raised by every command once :class:`PatientRedis` has given up on Redis (its ``failure``)."""


def unless_lost(default: _D) -> Callable[[Callable[_P, _T]], Callable[_P, _T | _D]]:
    """For what Scrapy's engine calls for each page (the scheduler, a lease, an entry, a count, the
    idle check): once Redis is given up on, the call does nothing and returns ``default``.

    ``on_failure`` has stopped the crawl, which publishes nothing. Raised into the engine instead, the
    error could leave a page's output half scheduled, and Scrapy (2.19) closes the spider only once
    that page is done: the worker said it stopped, and never exited.
    """

    def wrap(call: Callable[_P, _T]) -> Callable[_P, _T | _D]:
        @functools.wraps(call)
        def unless(*args: _P.args, **kwargs: _P.kwargs) -> _T | _D:
            try:
                return call(*args, **kwargs)
            except RedisLost:
                return default

        return unless

    return wrap


def _refuses_to_store(error: redis.ResponseError) -> bool:
    """Whether Redis refused a write for good: out of memory under ``noeviction``, or unable to
    persist (MISCONF). A read-only replica (a failover under way) is waited for instead."""
    # In a pipeline's error, redis-py puts the command before Redis's own message.
    return isinstance(error, redis.exceptions.OutOfMemoryError) or re.search(r"(^|: )MISCONF ", str(error)) is not None


class PatientRedis(redis.Redis):
    """A Redis client whose commands wait up to ``wait_seconds`` for an unreachable Redis.

    A restart or a network blip of a few seconds costs a pause: the command is tried
    again every half second, blocking this worker, which can do nothing without Redis
    anyway. Once the wait runs out, :attr:`failure` says why, ``on_failure`` is told,
    and every later command fails at once (:class:`RedisLost`): the crawl stops and
    publishes nothing, rather than go on with entries or links that could not be stored.
    A pipeline's batch waits and fails as a command does (:class:`PatientPipeline`). A Redis
    that answers but refuses to store (out of memory, or unable to persist) is given up on at
    once, as one that is gone.
    """

    wait_seconds: float = 30.0
    failure: str | None = None
    on_failure: Callable[[str], None] | None = None

    @classmethod
    def connect(cls, url: str, wait_seconds: float, on_failure: Callable[[str], None]) -> PatientRedis:
        # A connection attempt to a host that does not answer must not outlast the whole wait.
        client = cast("PatientRedis", cls.from_url(url, socket_connect_timeout=max(0.5, min(5.0, wait_seconds))))
        client.wait_seconds = wait_seconds
        client.on_failure = on_failure
        return client

    def fail(self, why: str) -> None:
        """Give up on Redis: every command from now on fails at once."""
        if self.failure is None:
            self.failure = why
            if self.on_failure is not None:
                self.on_failure(why)

    def execute_command(self, *args: Any, **options: Any) -> Any:
        run = super().execute_command
        return self.patiently(lambda: run(*args, **options))  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> PatientPipeline:
        return PatientPipeline(self, transaction, shard_hint)

    def patiently(self, call: Callable[[], _T]) -> _T:
        """``call`` (a command, or a pipeline's batch), tried again while Redis does not answer."""
        if self.failure is not None:
            raise RedisLost(self.failure)
        started: float | None = None
        while True:
            try:
                result = call()
            except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError) as exc:
                now = time.monotonic()
                if started is None:
                    started = now
                    logger.warning(
                        "Redis does not answer (%s); waiting up to %s s for it (SITEMAP_REDIS_WAIT_SECONDS)",
                        exc, self.wait_seconds,
                    )  # fmt: skip
                if now - started >= self.wait_seconds:
                    self.fail(f"Redis did not answer for {self.wait_seconds:g} s (SITEMAP_REDIS_WAIT_SECONDS): {exc}")
                    raise RedisLost(self.failure) from exc
                time.sleep(min(_RETRY_EVERY, self.wait_seconds - (now - started)))
            except redis.ResponseError as exc:
                if not _refuses_to_store(exc):
                    raise
                # Waiting changes nothing, and a page's links or entry that Redis did not take would be lost.
                self.fail(f"Redis refuses to store the crawl: {exc}")
                raise RedisLost(self.failure) from exc
            else:
                if started is not None:
                    logger.warning("Redis answers again after %.1f s", time.monotonic() - started)
                return result


class PatientPipeline(Pipeline):
    """A pipeline of :class:`PatientRedis`: its batch waits for Redis, or fails, as a command does.

    A batch cut off by a lost connection is sent again whole, as a command is.
    """

    def __init__(self, client: PatientRedis, transaction: bool, shard_hint: Any) -> None:
        super().__init__(client.connection_pool, client.response_callbacks, transaction, shard_hint)
        self._patient = client

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        batch = list(self.command_stack)
        run = super().execute

        def send() -> list[Any]:
            self.command_stack = list(batch)  # Pipeline.execute empties it, whether it went out or not
            return run(raise_on_error)

        return self._patient.patiently(send)
