"""A crawl's process ends without the interpreter's last garbage collections.

When a Python process exits, the interpreter runs its cyclic garbage collector over every
object it tracks, more than once, while it frees the modules. After a crawl that took about
0.4 s on the 2-core benchmark machine (BENCHMARKS.md, "The end of a process"), in every
crawling process, whatever the size of the site: an eighth of a recrawl of a small
documentation site.

By the time this is called the crawl has closed its files and published; what is left is the
interpreter's own teardown. :func:`gc.freeze` moves every object to the generation the
collector never looks at. Nothing else changes: atexit handlers and ``weakref.finalize``
callbacks run, log handlers flush, and reference counting frees each object as the modules
are torn down. Only objects kept alive by reference cycles are left to the operating system,
which takes the whole process's memory back anyway.
"""

from __future__ import annotations

import gc


def skip_exit_collection() -> None:
    """Let the process exit without collecting garbage it is about to give back whole."""
    gc.freeze()
