"""Where a site's crawl history lives: ``SITEMAP_HISTORY``, else one file per origin in Scrapy's data directory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scrapy.utils.project import data_path

#: The folder of the default history files, under the project's data directory (as ``httpcache``).
DEFAULT_DIR = "sitemap-history"
#: Values of ``SITEMAP_HISTORY`` that turn the history off.
OFF = ("", "off", "none", "false", "0")
_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


@dataclass(frozen=True)
class HistoryLocation:
    """``SITEMAP_HISTORY`` read: off, a file named by the user, or the default per origin."""

    enabled: bool
    path: Path | None = None  # None while enabled: the default file of the crawled origin
    given_absolute: bool = False  # whether the setting named an absolute path (Scrapyd needs one)

    @classmethod
    def from_value(cls, value: str | None) -> HistoryLocation:
        """None: the default place; an OFF word: off; anything else: the file."""
        if value is None:
            return cls(enabled=True)
        if value.strip().lower() in OFF:
            return cls(enabled=False)
        given = Path(value.strip()).expanduser()
        return cls(enabled=True, path=given.absolute(), given_absolute=given.is_absolute())

    def file_for(self, origin: str) -> Path | None:
        """The history file of a crawl of ``origin``, or None when the history is off."""
        if not self.enabled:
            return None
        if self.path is not None:
            return self.path
        return Path(data_path(DEFAULT_DIR)).absolute() / f"{_UNSAFE.sub('_', origin)}.sqlite"

    def problem(self, origin: str, output_dir: Path, scrapyd: bool) -> str | None:
        """Why the history cannot live where it would, or None."""
        if not self.enabled:
            return None
        if scrapyd and not self.given_absolute:
            return "must be an absolute path (or off) under Scrapyd, which runs jobs in its own directory"
        path = self.file_for(origin)
        assert path is not None
        if path.resolve().is_relative_to(output_dir.resolve()):
            return f"{path} is inside SITEMAP_OUTPUT_DIR ({output_dir}), which a web server may serve"
        if path.is_dir():
            return f"{path} is a directory; name the history file"
        return None
