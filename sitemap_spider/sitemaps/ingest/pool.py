"""The worker processes of ``scrapy publish``: started whole, with Ctrl-C and SIGTERM held meanwhile."""

from __future__ import annotations

import signal
from concurrent.futures import ProcessPoolExecutor
from typing import Final

#: Signals held while the worker processes start: see start_pool.
_STOP_SIGNALS: Final = frozenset({signal.SIGINT, signal.SIGTERM})


def start_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, all of them started, with Ctrl-C and SIGTERM held meanwhile.

    The pool forks its workers at its first task, then starts the thread that will stop them. A
    KeyboardInterrupt between the two (Ctrl-C, or SIGTERM, which ``scrapy publish`` turns into
    one) left workers that nothing would stop, and the process waited for them at exit for ever.
    Held here, the signal comes once the pool is whole, and the pool stops as usual. The workers
    start with the signal mask and SIGTERM of a fresh process, and ignore Ctrl-C.
    """
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_signals, initargs=(held,))
        pool.submit(int).result()  # forks every worker and starts the pool's thread now
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return pool


def _worker_signals(mask: set[int | signal.Signals]) -> None:
    # Ctrl-C on a terminal reaches every process of the group. A worker that took it as a
    # KeyboardInterrupt while sending a result kept the queue's lock, and the next send waited
    # for it for ever, the publish with it: the main process alone stops the run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
