"""Storage: a staging directory beside the published files, and an atomic-per-file publish.

New files are written into a staging directory inside ``output_dir`` (same filesystem, so
``os.replace`` is atomic), then moved into place shards first and the index last: a reader
that follows the index never finds a listed shard missing, and nothing published so far
changes until every new file is complete. A new file whose bytes are those of the published
file of its name is not moved: the published one stays (its inode, its mtime), so that a web
server's ETag and Last-Modified change only for the files that did. Two processes publishing
into one directory take turns (a lock held while files are compared and moved): their renames
never interleave into a mixed set.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from sitemap_spider.sitemaps.errors import SitemapError
from sitemap_spider.sitemaps.names import SHARD_FILE_PATTERN, STAGING_PREFIX

logger = logging.getLogger(__name__)

#: How long a publish waits for another one into the same directory (comparing and moving files
#: takes seconds at most: a lock held this long is a stuck process, and waiting on would hang cron).
LOCK_TIMEOUT = 600.0
_LOCK_POLL = 0.1
_COMPARE_BLOCK = 1 << 20


def same_bytes(staged: Path, published: Path) -> bool:
    """Whether ``published`` is a regular file (not a link) holding the bytes of ``staged``.

    Sizes first: a file of another size is not read. Read in blocks, up to the first difference.
    """
    try:
        there = os.lstat(published)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(there.st_mode) or there.st_size != os.stat(staged).st_size:
        return False
    with open(staged, "rb") as new, open(published, "rb") as old:
        while True:
            block = new.read(_COMPARE_BLOCK)
            if block != old.read(_COMPARE_BLOCK):
                return False
            if not block:
                return True


def fsync_directory(directory: Path) -> None:
    """Make the renames inside ``directory`` durable."""
    if os.name != "posix":  # directories cannot be opened for fsync on Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs: a file named with a dead one's id is litter."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


class SitemapStorage:
    """The published sitemap files of one output directory."""

    def __init__(self, output_dir: Path) -> None:
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)

    def staging_dir(self) -> Path:
        """Return a new, empty staging directory on the same filesystem as the output.

        Its name carries this process's id, so that staging directories left by a
        killed process can be told from those of a live one and removed.
        """
        self._remove_abandoned_staging()
        return Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=self.output_dir))

    def _remove_abandoned_staging(self) -> None:
        for path in self.output_dir.glob(f"{STAGING_PREFIX}*"):
            pid = path.name[len(STAGING_PREFIX) :].split("-", 1)[0]
            if path.is_dir() and pid.isdigit() and not process_alive(int(pid)):
                logger.info("Removing %s, left by a process that no longer runs", path)
                shutil.rmtree(path, ignore_errors=True)

    def _check_staging(self, staging: Path) -> Path:
        # A guard before rmtree: never remove anything but one of our staging dirs.
        staging = Path(staging)
        if staging.parent.resolve() != self.output_dir.resolve() or not staging.name.startswith(
            STAGING_PREFIX
        ):
            raise SitemapError(f"{staging} is not a staging directory of {self.output_dir}")
        return staging

    def publish(
        self, staging: Path, shard_names: list[str], index_name: str, extra_names: Sequence[str] = (),
        stale_names: Sequence[str] = (),
    ) -> list[str]:
        """Move the shards and the ``extra_names`` files, then the index, into place; remove stale
        shards, the ``stale_names`` files (an earlier set's, the new one has none) and ``staging``.

        A file whose bytes the published file of its name already holds is left as published.
        Returns the names moved into place (new or changed), in the order they were moved.
        """
        staging = self._check_staging(staging)
        names = [*shard_names, *extra_names, index_name]
        for name in names:
            if Path(name).name != name or name.startswith("."):
                raise SitemapError(f"not a plain file name: {name!r}")
            if not (staging / name).is_file():
                raise SitemapError(f"{name} is missing from staging directory {staging}")
        # Checked everything before the first rename: up to here the old set is untouched.
        moved = []
        with self.publishing_lock():
            # Compared under the lock: another publisher may have moved its files in meanwhile.
            for name in names:
                if not same_bytes(staging / name, self.output_dir / name):
                    os.replace(staging / name, self.output_dir / name)
                    moved.append(name)
            fsync_directory(self.output_dir)
            # The new set is live from here on: a failed cleanup is reported, not raised, so
            # that callers do not announce a published set as "not published".
            try:
                self._remove_stale_shards(set(shard_names))
                for name in stale_names:
                    if (self.output_dir / name).is_file():
                        logger.info("Removing %s of the earlier set from %s", name, self.output_dir)
                        (self.output_dir / name).unlink()
                shutil.rmtree(staging)
            except OSError as exc:
                logger.warning("Published, but cleaning up %s failed: %s", self.output_dir, exc)
        logger.info(
            "Published %s and %d sitemap files in %s: %d files new or changed, %d unchanged left in place",
            index_name, len(shard_names), self.output_dir, len(moved), len(names) - len(moved),
        )  # fmt: skip
        return moved

    @contextlib.contextmanager
    def publishing_lock(self, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """Hold the directory's publishing lock: an advisory ``flock`` of the output directory itself
        (no file of ours beside the sitemaps), freed by the kernel if the process dies."""
        path = self.output_dir
        fd = os.open(path, os.O_RDONLY)
        try:
            deadline = time.monotonic() + timeout
            waiting = False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not waiting:
                        logger.warning("Another process is publishing into %s: waiting for it", self.output_dir)
                        waiting = True
                    if time.monotonic() >= deadline:
                        raise SitemapError(
                            f"another process has been publishing into {path} for over {timeout:.0f} s: "
                            "nothing published"
                        ) from None
                    time.sleep(_LOCK_POLL)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _remove_stale_shards(self, current: set[str]) -> None:
        # Shards of an earlier, bigger (or differently compressed) run that no index lists.
        for path in sorted(self.output_dir.iterdir()):
            if SHARD_FILE_PATTERN.match(path.name) and path.name not in current and path.is_file():
                logger.info("Removing stale sitemap file %s", path)
                path.unlink()
        fsync_directory(self.output_dir)

    def discard(self, staging: Path) -> None:
        """Remove a staging directory and everything in it; a missing one is fine."""
        staging = self._check_staging(staging)
        if staging.exists():
            shutil.rmtree(staging)
