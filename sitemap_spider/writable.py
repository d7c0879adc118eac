"""Whether files can be made in a directory, asked at start-up, before any request.

``SITEMAP_OUTPUT_DIR`` is created with its parents at the first entry, and the history file
when the set is published: a place neither can be made in (a path under a file, ``/proc``, a
read-only filesystem) is found now by trying, so that the crawl stops naming the setting
instead of failing entry after entry. Trying, not ``os.access``: root passes every permission
check, and a pseudo-filesystem refuses what its mode bits allow.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

#: The name of the file made and removed at once in the directory asked about.
PROBE_PREFIX = ".sitemap-spider-probe-"
# Another process starting at the same moment (a Redis worker) may remove a folder this one
# has just seen, as this one removes those it made: a vanished folder is asked about again.
_TRIES = 3


def write_problem(directory: Path) -> str | None:
    """Why no file can be made in ``directory``, or None when one can.

    The missing folders of ``directory`` are made as the crawl would make them (``mkdir -p``), a
    file is made in it and removed, then the folders made for the question are removed again:
    a crawl that stops later leaves nothing behind.
    """
    problem = None
    for _ in range(_TRIES):
        problem, vanished = _try(Path(directory))
        if not vanished:
            break
    return problem


def _try(directory: Path) -> tuple[str | None, bool]:
    """The problem, and whether a folder seen at first was gone when it was used."""
    missing: list[Path] = []
    for folder in (directory, *directory.parents):
        if os.path.lexists(folder):
            if not folder.is_dir():
                return f"{folder} is not a directory", False
            break
        missing.append(folder)
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except OSError as exc:
                return f"creating {folder} failed: {exc.strerror or exc}", _vanished(exc, made)
            made.append(folder)
        try:
            handle, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=directory)
        except OSError as exc:
            return f"creating a file in {directory} failed: {exc.strerror or exc}", _vanished(exc, made)
        os.close(handle)
        os.unlink(probe)
        return None, False
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):  # not empty: another process's now
                folder.rmdir()


def _vanished(error: OSError, made: list[Path]) -> bool:
    # A folder this process made is not removed by another before this one does; one it saw may be.
    return isinstance(error, FileNotFoundError) and not made
