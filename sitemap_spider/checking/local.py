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
                # Where a child is served is known only with --base-url: the URL an index gives is a
                # claim about a site this copy may not mirror (another host, http for https), and
                # read as the child's location it made every URL of the child cross-submitted.
                location = child.location if base_url else None
                queue.append((dataclasses.replace(child, name=str(local), location=location), local))
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
    """The file below an index's folder that holds the sitemap served at ``url``, if there is one.

    With ``base_url``, the URL's path below it. Without, the longest end of the URL's path that
    names a file there: ``/en/sitemap.xml`` is ``en/sitemap.xml`` when a copy of the site keeps
    its folders (Hugo's multilingual sitemaps are all called sitemap.xml), else ``sitemap.xml``.
    """
    if base_url and url.startswith(base_url):
        candidates = [unquote(url[len(base_url) :])]
    else:
        segments = unquote(urlsplit(url).path).split("/")
        candidates = ["/".join(segments[start:]) for start in range(1, len(segments))]
    for relative in candidates:
        parts = Path(relative).parts
        # Only below the index's folder: no absolute path, no "..".
        if not parts or Path(relative).is_absolute() or ".." in parts:
            continue
        candidate = directory / relative
        if candidate.is_file():
            return candidate
    return None
