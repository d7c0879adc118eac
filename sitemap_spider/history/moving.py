"""The one-time move of a history file from the old default place to the per-user one.

Without it, the upgrade to the per-user default would start every site's history afresh:
one crawl without conditional requests, every page re-dated, no page kept on a bad day.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

logger = logging.getLogger(__name__)

#: What SQLite may keep beside a database file (WAL mode; a crashed crawl leaves them).
_SIDE_FILES = ("-wal", "-shm", "-journal")


def move_old_history(old: Path, new: Path) -> bool:
    """Move the history at ``old`` to ``new`` if only ``old`` exists; whether it moved.

    sqlite3.Error or OSError: nothing moved, ``old`` left as it was.
    """
    if new.exists() or not old.is_file():
        return False
    new.parent.mkdir(parents=True, exist_ok=True)
    # Copied through SQLite, not renamed: it reads what a crashed crawl left in the WAL beside
    # the file, and works across filesystems (the project and the home directory often differ).
    copy = new.with_name(f".{new.name}.{os.getpid()}.moving")
    try:
        _copy_database(old, copy)
        if not _place(copy, new):
            return False  # another process of the same crawl moved it first
    finally:
        copy.unlink(missing_ok=True)
    for suffix in ("", *_SIDE_FILES):
        Path(f"{old}{suffix}").unlink(missing_ok=True)
    try:
        old.parent.rmdir()  # only when empty: another origin's history may still be there
    except OSError:
        pass
    logger.warning(
        "Crawl history moved from %s, the default of earlier releases (relative to where the crawl "
        "started), to %s, the default now: the same file wherever the crawl is started",
        old,
        new,
    )
    return True


def _copy_database(source: Path, target: Path) -> None:
    # mode=rw: never create an empty database where the old file just went away.
    src = sqlite3.connect(f"{source.absolute().as_uri()}?mode=rw", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def _place(copy: Path, new: Path) -> bool:
    """Give ``copy`` the name ``new`` unless it exists by now; whether it did."""
    try:
        # A link never replaces a file: a second worker of the crawl, started at the same
        # moment, cannot swap the file under the first one once it is reading it.
        os.link(copy, new)
    except FileExistsError:
        return False
    except OSError:
        os.replace(copy, new)  # a filesystem without hard links
    return True
