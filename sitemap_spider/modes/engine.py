"""What the crawl needs of Scrapy's engine that Scrapy has no public call for, kept in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.core.engine import ExecutionEngine


def wake_engine(engine: ExecutionEngine | None) -> None:
    """Have an idle engine ask its scheduler for work, and check whether it is idle, now."""
    # Scrapy (2.19) looks at an idle engine again only at its slot's heartbeat, every
    # ExecutionEngine._SLOT_HEARTBEAT_INTERVAL (5 s): work that arrives from outside this
    # process (the other crawling process's links, another Redis worker's requests, the
    # end of the crawl) would wait for it. The heartbeat calls engine._slot.nextcall.schedule(),
    # the engine's own once-only call to its loop; calling it sooner is what the heartbeat
    # does, early. There is no public way to do this.
    # Should a later Scrapy rename or drop these private attributes, this does nothing:
    # the crawl is as right as before and notices such news at the heartbeat's pace
    # (its end comes up to 5 s later, a worker waiting for work waits up to 5 s).
    slot = getattr(engine, "_slot", None)
    schedule = getattr(getattr(slot, "nextcall", None), "schedule", None)
    if callable(schedule):
        schedule()
