"""Which browser renders pages, and the scrapy-playwright settings that drive it.

Playwright's own Chromium (``playwright install chromium``) is preferred; then
a system Chromium or Chrome on the PATH, Chromium's headless shell first;
``SITEMAP_BROWSER_PATH`` names one explicitly. Rendering also needs scrapy-playwright
(the ``render`` extra): without it there is no browser, whatever is installed. Everything
a page loads besides its own document and same-site scripts, XHR and fetch is aborted:
images, fonts and analytics cost time and build no links. Nothing on another origin is
requested, navigations included.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    from playwright.async_api import Request as PlaywrightRequest

logger = logging.getLogger(__name__)

# Chromium's headless shell first (Debian's chromium-headless-shell): the build Playwright itself
# runs for headless pages, and the one its own download looks for first. Starting it and rendering
# a page of the Hexo blog of tests/data took 0.6 CPU s and 0.6 s, against 1.2-1.4 CPU s and 2-6 s
# for Debian's full chromium in its headless mode (machine B, three runs each): on a static site,
# one template probe's browser was the whole difference between render=auto and render=never.
SYSTEM_BROWSERS = (
    "chromium-headless-shell", "chromium", "chromium-browser",
    "google-chrome", "google-chrome-stable", "chrome",
)  # fmt: skip
# Chromium's own background traffic goes nowhere on a closed network and slows start-up.
_QUIET_ARGS = (
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-gpu",
)
# Resource types a page needs to build its DOM; everything else is aborted.
_KEPT_RESOURCES = frozenset({"document", "script", "xhr", "fetch"})
INSTALL_HINT = (
    "install scrapy-playwright (pip install 'sitemap_spider[render]') and a browser with "
    "`playwright install chromium` (or Debian's `apt-get install chromium-headless-shell`), "
    "or name one with -s SITEMAP_BROWSER_PATH=/path/to/chrome"
)


@dataclass(frozen=True)
class Browser:
    """A Chromium to launch: ``executable`` is None for Playwright's own build."""

    executable: str | None
    description: str


def _playwright_chromium() -> Path | None:
    """Playwright's downloaded Chromium, looked up on disk without starting Playwright."""
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    cache = Path(root) if root and root != "0" else Path.home() / ".cache" / "ms-playwright"
    for pattern in ("chromium_headless_shell-*/chrome-*/headless_shell", "chromium-*/chrome-*/chrome"):
        for candidate in sorted(cache.glob(pattern), reverse=True):
            if os.access(candidate, os.X_OK):
                return candidate
    return None


def rendering_installed() -> bool:
    """Whether scrapy-playwright (the ``render`` extra) is installed: without it no browser can be driven."""
    return importlib.util.find_spec("scrapy_playwright") is not None


def find_browser(explicit: str | None) -> Browser | None:
    """The browser to render with, or None when there is none."""
    if not rendering_installed():
        return None
    if explicit:
        found = shutil.which(explicit) or explicit
        if os.path.isfile(found) and os.access(found, os.X_OK):
            return Browser(found, f"{found} (SITEMAP_BROWSER_PATH)")
        return None
    own = _playwright_chromium()
    if own is not None:
        return Browser(None, f"Playwright's Chromium ({own})")
    for name in SYSTEM_BROWSERS:
        system = shutil.which(name)
        if system:
            return Browser(system, f"system browser {system}")
    return None


def playwright_settings(browser: Browser, *, pages: int, timeout: float) -> dict[str, Any]:
    """scrapy-playwright settings for rendering with ``browser``."""
    args = list(_QUIET_ARGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to start its sandbox as root
    launch: dict[str, Any] = {"headless": True, "args": args}
    if browser.executable:
        launch["executable_path"] = browser.executable
    handler = "sitemap_spider.render.download.RenderingDownloadHandler"
    return {
        "DOWNLOAD_HANDLERS": {"http": handler, "https": handler},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": launch,
        "PLAYWRIGHT_MAX_CONTEXTS": 1,
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": pages,
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": timeout * 1000,
        "PLAYWRIGHT_ABORT_REQUEST": "sitemap_spider.render.browser.abort_request",
    }


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def leaves_origin(request: PlaywrightRequest) -> bool:
    """Whether a request of the browser goes to another origin than the page's.

    The page's first navigation (its frame still ``about:blank``) is the crawled URL,
    which Scrapy's middlewares let through; nothing after it may leave its origin.
    """
    page_url = request.frame.page.main_frame.url
    return page_url.startswith("http") and _origin(request.url) != _origin(page_url)


def redirect_leaves_origin(request: PlaywrightRequest, location: str) -> bool:
    """Whether a redirect of ``request`` to ``location`` goes to another origin than the page's."""
    page_url = request.frame.page.main_frame.url
    origin = _origin(page_url if page_url.startswith("http") else request.url)
    return _origin(urljoin(request.url, location)) != origin


def abort_request(request: PlaywrightRequest) -> bool:
    """Whether the browser skips a request: media, fonts, styles, anything on another origin.

    A script that navigates the page away (``location = "http://169.254.169.254/"``)
    is aborted too: Chromium then shows its error page, which ``ready.settle`` refuses.
    """
    if not request.is_navigation_request() and request.resource_type not in _KEPT_RESOURCES:
        return True
    return leaves_origin(request)

