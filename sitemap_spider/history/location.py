"""Where a site's crawl history lives: ``SITEMAP_HISTORY``, else one file per origin in the user's data directory.

The default is ``user_data_dir("sitemap_spider")/sitemap-history/<origin>.sqlite``
(platformdirs: ``~/.local/share/...`` on Linux, or under ``$XDG_DATA_HOME``), whatever
``SITEMAP_OUTPUT_DIR`` is and wherever the crawl is started. Every place that starts a crawl
(a shell in the project, cron, Scrapyd's job directory) belongs to the same user and so finds
the same file. Beside an absolute output directory would not do: its parent is often the web
server's document root (``/var/www/html/sitemaps``), which serves what a crawl keeps there,
or a directory the crawling user may not write to; and the history of a site would then depend
on how its output directory was spelled.

Until this default, the file was ``.scrapy/sitemap-history/<origin>.sqlite`` in Scrapy's
project data directory, relative to where the crawl started (:func:`old_default_file`);
:mod:`sitemap_spider.history.moving` moves such a file to the new place once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_dir
from scrapy.utils.conf import closest_scrapy_cfg, get_config
from scrapy.utils.project import DATADIR_CFG_SECTION, inside_project

from sitemap_spider.writable import write_problem

#: The folder of the default history files, in the user's data directory of the application.
DEFAULT_DIR = "sitemap-history"
#: platformdirs' application name: the folder in the user's data directory.
APP_NAME = "sitemap_spider"
#: Values of ``SITEMAP_HISTORY`` that turn the history off.
OFF = ("", "off", "none", "false", "0")
_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


def file_name(origin: str) -> str:
    """The name of ``origin``'s default history file: one file per origin."""
    return f"{_UNSAFE.sub('_', origin)}.sqlite"


def default_dir() -> Path:
    """The folder of the default history files: the same for every crawl this user starts."""
    # appauthor=False: no "<author>\" level on Windows, one name everywhere.
    return Path(user_data_dir(APP_NAME, appauthor=False)).absolute() / DEFAULT_DIR


def old_default_file(origin: str) -> Path | None:
    """Where releases before the per-user default kept ``origin``'s history, as seen from here; None: nowhere.

    Scrapy's project data directory (``.scrapy`` beside the closest scrapy.cfg, as
    ``httpcache`` uses): found from the working directory, which is why it was replaced.
    Found as ``scrapy.utils.project.data_path`` finds it, without creating the folder as
    that does: a look must not leave an empty ``.scrapy`` in every project.
    """
    if not inside_project():
        folder = Path(".scrapy")
    elif get_config().has_option(DATADIR_CFG_SECTION, "default"):
        folder = Path(get_config().get(DATADIR_CFG_SECTION, "default"))
    else:
        cfg = closest_scrapy_cfg()
        if not cfg:
            return None  # SCRAPY_SETTINGS_MODULE named and no scrapy.cfg (Scrapyd): no project data directory
        folder = Path(cfg).parent / ".scrapy"
    return folder.absolute() / DEFAULT_DIR / file_name(origin)


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

    @property
    def is_default(self) -> bool:
        """Whether the history is on and no file was named: the per-user default."""
        return self.enabled and self.path is None

    def file_for(self, origin: str) -> Path | None:
        """The history file of a crawl of ``origin``, or None when the history is off."""
        if not self.enabled:
            return None
        if self.path is not None:
            return self.path
        return default_dir() / file_name(origin)

    def problem(self, origin: str, output_dir: Path, scrapyd: bool) -> str | None:
        """Why the history cannot live where it would, or None."""
        if not self.enabled:
            return None
        if scrapyd and self.path is not None and not self.given_absolute:
            # The default is absolute; a relative name would land in Scrapyd's job directory.
            return "must be an absolute path (or off) under Scrapyd, which runs jobs in its own directory"
        path = self.file_for(origin)
        assert path is not None
        if path.resolve().is_relative_to(output_dir.resolve()):
            return f"{path} is inside SITEMAP_OUTPUT_DIR ({output_dir}), which a web server may serve"
        if path.is_dir():
            return f"{path} is a directory; name the history file"
        blocked = write_problem(path.parent)
        if blocked is not None:
            # Said now rather than when the set is published: a user without a writable home (a
            # service account running Scrapyd) learns which setting to give before the crawl.
            hint = " (the default: name a file, or set XDG_DATA_HOME)" if self.path is None else ""
            return f"{path} cannot be created: {blocked}{hint}"
        return None
