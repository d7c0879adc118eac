"""A report file is whole or absent: written beside itself under a hidden name, then renamed into place.

The one owner of that name (``.<report>.partial``): the writers use :func:`replacing`, and a
crawl clears what a killed one left with :func:`remove_stale`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

logger = logging.getLogger(__name__)


def partial_name(path: Path) -> str:
    """The hidden name ``path`` is written under until it is whole."""
    return f".{path.name}.partial"


@contextmanager
def replacing(path: Path) -> Iterator[IO[str]]:
    """A text file that becomes ``path`` when the block ends well; removed when it does not.

    Only a SIGKILL (or a power cut) in the middle can leave it: :func:`remove_stale` then.
    """
    partial = path.with_name(partial_name(path))
    try:
        with partial.open("w", encoding="utf-8") as out:
            yield out
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def remove_stale(folder: Path, name: re.Pattern[str], before: float) -> list[Path]:
    """Remove the files of ``folder`` whose whole name matches ``name``, last changed before ``before``.

    For temporary files of ours a killed process left: only our own names, and only older
    than the run that looks, so a file another crawl is writing right now stays.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if not name.fullmatch(entry.name) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime >= before:
                continue
            os.unlink(entry.path)
        except FileNotFoundError:
            continue  # removed by someone else meanwhile
        logger.info("Removed %s, left by a crawl that was killed", entry.path)
        removed.append(Path(entry.path))
    return removed


def stale_partial(path: Path) -> re.Pattern[str]:
    """The name :func:`replacing` writes ``path`` under, as :func:`remove_stale` takes it."""
    return re.compile(re.escape(partial_name(path)))
