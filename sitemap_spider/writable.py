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
import stat
import tempfile
from pathlib import Path

#: The name of the file made and removed at once in the directory asked about.
PROBE_PREFIX = ".sitemap-spider-probe-"
# Another process starting at the same moment (a Redis worker) may remove a folder this one
# has just seen, as this one removes those it made: a vanished folder is asked about again.
_TRIES = 10


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
        kind = _kind(folder)  # one look: another process may make or remove it meanwhile
        if kind is not None:
            if kind != "dir":
                return f"{folder} is not a directory", False
            break
        missing.append(folder)
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                kind = _kind(folder)
                if kind == "dir":  # another process starting now made it: its to remove
                    continue
                # Not a directory, or made and removed again by that process: asked again then.
                return f"{folder} is not a directory", kind is None
            except OSError as exc:
                return f"creating {folder} failed: {exc.strerror or exc}", _vanished(exc)
            made.append(folder)
        try:
            handle, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=directory)
        except OSError as exc:
            return f"creating a file in {directory} failed: {exc.strerror or exc}", _vanished(exc)
        os.close(handle)
        os.unlink(probe)
        return None, False
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):  # not empty: another process's now
                folder.rmdir()


def _kind(path: Path) -> str | None:
    """What is at ``path``: "dir" for a directory (a link to one too), "other" for anything else,
    None for nothing (nor for a dangling link: mkdir then fails, on every try)."""
    try:
        return "dir" if stat.S_ISDIR(os.stat(path).st_mode) else "other"
    except (FileNotFoundError, NotADirectoryError):  # not there, or under a file (said of that file)
        return None


def _vanished(error: OSError) -> bool:
    # Another process asking at the same time removes the folders it made, which this one may have
    # seen or built on (a folder made here inside one made there): asked again.
    return isinstance(error, FileNotFoundError)
