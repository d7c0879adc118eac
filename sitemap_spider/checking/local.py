"""``scrapy validate`` on local files: an index's sitemaps are read from beside it."""

from __future__ import annotations

import dataclasses
import functools
from collections import deque
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from sitemap_spider.checking.session import Session, Target, sitemap_key


def validate_paths(session: Session, paths: list[str], base_url: str | None = None) -> None:
    """Check local files, and the sitemaps their indexes list that lie beside them.

    ``base_url``: where the files are served (their location for the cross-submission rule);
    a sitemap an index lists under it is read from the same place under the index's folder.
    """
    queue: deque[tuple[Target, Path]] = deque()
    for name in paths:
        path = Path(name)
        target = session.input(name, urljoin(base_url, path.name) if base_url else None, _key(path))
        if target is not None:
            queue.append((target, path))
    while queue:
        target, path = queue.popleft()
        try:
            with path.open("rb") as raw:
                children = session.check(target, raw, functools.partial(_child_key, path.parent, base_url))
        except OSError as exc:
            session.unread(target, "read.missing", f"cannot open: {exc.strerror or exc}")
            continue
        missing: list[Target] = []
        for child in children:
            local = local_file(path.parent, child.name, base_url)
            if local is None:
                missing.append(child)
            else:
                queue.append((dataclasses.replace(child, name=str(local)), local))
        if missing:
            # One finding per index: a local copy of a remote index can list thousands.
            file, line = missing[0].listed_at or (target.name, 0)
            session.finding(
                "index.child_not_local",
                file,
                line,
                f"{len(missing):,} listed sitemap(s) have no file of their name beside {path.name}, "
                f"first {missing[0].name}; not read",
                missing[0].name,
            )


def _key(path: Path) -> str:
    """A local file's key for loop detection: its real path, whatever the spelling."""
    return f"file:{path.resolve()}"


def _child_key(directory: Path, base_url: str | None, url: str) -> str:
    local = local_file(directory, url, base_url)
    return _key(local) if local is not None else sitemap_key(url)


def local_file(directory: Path, url: str, base_url: str | None) -> Path | None:
    """The file beside an index that holds the sitemap served at ``url``, if there is one."""
    if base_url and url.startswith(base_url):
        relative = unquote(url[len(base_url) :])
    else:
        relative = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    parts = Path(relative).parts
    # Only below the index's folder: no absolute path, no "..".
    if not parts or Path(relative).is_absolute() or ".." in parts:
        return None
    candidate = directory / relative
    return candidate if candidate.is_file() else None
