"""The shared crawl's Redis client: it waits out a Redis that is briefly unreachable, then gives up for good."""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

import redis
from redis.backoff import NoBackoff
from redis.client import Pipeline
from redis.retry import Retry

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


# Refusals Redis gets over by itself, named by the first word of its reply (in a pipeline's error,
# redis-py puts the command before it): unable to persist (MISCONF), running a long script (BUSY),
# a replica that lost its primary (MASTERDOWN), loading its data after a restart (LOADING).
_PASSING_REPLY = re.compile(r"(?:^|: )(?:MISCONF|BUSY|MASTERDOWN|LOADING) ")


def _passes(error: redis.RedisError) -> bool:
    """Whether Redis may well take the command if it is sent again: unreachable, restarting, failing
    over (a read-only replica), or refusing for now (out of memory, cannot persist, busy). Redis
    did not run a refused command, so sending it again is safe."""
    if isinstance(error, (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError,
                          redis.exceptions.OutOfMemoryError, redis.exceptions.TryAgainError)):  # fmt: skip
        return True
    return isinstance(error, redis.ResponseError) and _PASSING_REPLY.search(str(error)) is not None


class PatientRedis(redis.Redis):
    """A Redis client whose commands wait up to ``wait_seconds`` for an unreachable Redis.

    A restart or a network blip of a few seconds costs a pause: the command is tried
    again every half second, blocking this worker, which can do nothing without Redis
    anyway. Once the wait runs out, :attr:`failure` says why, ``on_failure`` is told,
    and every later command fails at once (:class:`RedisLost`): the crawl stops and
    publishes nothing, rather than go on with entries or links that could not be stored.
    A pipeline's batch waits and fails as a command does (:class:`PatientPipeline`). A Redis
    that answers but refuses for now (out of memory, unable to persist, busy, a read-only
    replica during a failover) is waited for the same way; any other error gives up at once.
    """

    wait_seconds: float = 30.0
    failure: str | None = None
    on_failure: Callable[[str], None] | None = None

    @classmethod
    def connect(cls, url: str, wait_seconds: float, on_failure: Callable[[str], None]) -> PatientRedis:
        # A connection attempt to a host that does not answer must not outlast the whole wait.
        # redis-py's own retries (10, with back-off) would wait before ours starts counting:
        # the wait is ours alone, so SITEMAP_REDIS_WAIT_SECONDS is what a worker waits.
        client = cast("PatientRedis", cls.from_url(
            url, socket_connect_timeout=max(0.5, min(5.0, wait_seconds)), retry=Retry(NoBackoff(), 0)
        ))  # fmt: skip
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

    def patiently(self, call: Callable[[], _T], again: bool = True) -> _T:
        """``call`` (a command, or a pipeline's batch), sent again while Redis cannot take it, for up
        to ``wait_seconds`` from the first try; ``again=False``: sent once (a transaction that may
        have run is not run twice). Any other error of Redis's gives up on it at once: raised into
        Scrapy's engine, it could leave a page half scheduled and the worker open for ever."""
        if self.failure is not None:
            raise RedisLost(self.failure)
        first_try = time.monotonic()
        waited = False
        while True:
            try:
                result = call()
            except redis.exceptions.NoScriptError:
                raise  # redis-py's Script loads the script again and sends it
            except redis.RedisError as exc:
                if isinstance(exc, RedisLost):
                    raise
                if not _passes(exc) or not again:
                    self.fail(f"Redis answered with an error: {exc}")
                    raise RedisLost(self.failure) from exc
                now = time.monotonic()
                if not waited:
                    waited = True
                    logger.warning(
                        "Redis does not answer or refuses for now (%s); waiting up to %s s for it "
                        "(SITEMAP_REDIS_WAIT_SECONDS)", exc, self.wait_seconds,
                    )  # fmt: skip
                if now - first_try >= self.wait_seconds:
                    self.fail(f"Redis did not answer for {self.wait_seconds:g} s (SITEMAP_REDIS_WAIT_SECONDS): {exc}")
                    raise RedisLost(self.failure) from exc
                if isinstance(exc, redis.ReadOnlyError):
                    # A failover: the next try connects again, to whatever the address names now.
                    self.connection_pool.disconnect()
                time.sleep(min(_RETRY_EVERY, self.wait_seconds - (now - first_try)))
            else:
                if waited:
                    logger.warning("Redis answers again after %.1f s", time.monotonic() - first_try)
                return result


class PatientPipeline(Pipeline):
    """A pipeline of :class:`PatientRedis`: its batch waits for Redis, or fails, as a command does.

    A batch cut off by a lost connection is sent again whole, as a command is; its scripts are
    loaded again first. A transaction (MULTI/EXEC) is sent once: one that may have run is not
    run twice, and a failure gives up on Redis.
    """

    def __init__(self, client: PatientRedis, transaction: bool, shard_hint: Any) -> None:
        super().__init__(client.connection_pool, client.response_callbacks, transaction, shard_hint)
        self._patient = client
        self._atomic = transaction  # the instance attribute hides Redis.transaction() from the type checker

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        # Pipeline.execute resets the pipeline (its commands and scripts), whether it went out or not.
        batch, scripts = list(self.command_stack), set(self.scripts)
        transaction = self._atomic or self.explicit_transaction
        run = super().execute

        def send() -> list[Any]:
            self.command_stack, self.scripts = list(batch), set(scripts)
            return run(raise_on_error)

        return self._patient.patiently(send, again=not transaction)
