"""Opening an HTML report in the real headless Chromium (Playwright), watching what it logs and requests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import ConsoleMessage, Page, Request, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
#: Where screenshots of the reports go (ignored by git): CI keeps them as artefacts.
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


@dataclass
class OpenReport:
    """A report loaded in a browser page, with every console message, page error and request seen."""

    page: Page
    url: str
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught errors, and any request but the file itself."""
        return [*self.console, *self.errors, *(f"request {url}" for url in self.requests if url != self.url)]

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path), full_page=True)
        return path


@contextmanager
def open_report(path: Path) -> Iterator[OpenReport]:
    """Load ``path`` in headless Chromium and wait until every table has unpacked its rows."""
    with sync_playwright() as playwright:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            report = OpenReport(page, path.resolve().as_uri())

            def on_console(message: ConsoleMessage) -> None:
                if message.type in ("error", "warning"):
                    report.console.append(f"console {message.type}: {message.text}")

            def on_request(request: Request) -> None:
                report.requests.append(request.url)

            page.on("console", on_console)
            page.on("pageerror", lambda error: report.errors.append(f"page error: {error}"))
            page.on("request", on_request)
            page.goto(report.url)
            # A locator, not a predicate: the report's Content-Security-Policy forbids eval.
            expect(page.locator("section.table:not([data-ready])")).to_have_count(0, timeout=60_000)
            yield report
        finally:
            browser.close()
