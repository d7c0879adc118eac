"""When a rendered page is ready to read: its scripts have stopped building it.

Waiting for the network to stay quiet for 500 ms (Playwright's ``networkidle``)
costs every page at least that long, and misses links a timer adds later. The
page is watched from the inside instead. A script injected before the page's
own (an init script) counts the work still under way that can build DOM: fetch
and XHR calls, script elements still loading, and short timers. The page is
ready once ``load`` has fired, nothing is under way and the DOM has not changed
for ``QUIET_MS``. A page that never gets there (a poll, a ticking clock) is read
as it is after the bound; when the watch cannot run (the page navigated away, a
document that is not HTML) the network going idle is the fallback.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Page

logger = logging.getLogger(__name__)

#: The DOM unchanged this long, with nothing under way, means the page is built. DOM work that
#: no timer or request announces (a promise chain, a framework's scheduler) ends within a few
#: frames; longer work that matters starts from a timer, a request or a script, which are counted.
QUIET_MS = 100
#: Timers up to this delay are waited for (a link added after a short pause); longer ones are a
#: carousel or a reminder, and waiting for them would make every such page take the bound.
TIMER_LIMIT_MS = 1000
# Seconds the readiness call may take beyond its own bound before the page is read as it is.
_CALL_MARGIN = 2.0

# Runs in every frame before the page's own scripts. It keeps the page's behaviour: each
# wrapper calls the original with the same arguments and returns what it returned.
WATCH_SCRIPT = """
(() => {
  if (window.__sitemapReady) return;
  const now = () => performance.now();
  const state = { busy: 0, last: now() };
  const touch = () => { state.last = now(); };
  const start = () => { state.busy++; touch(); };
  const end = () => { state.busy = Math.max(0, state.busy - 1); touch(); };
  const wait = window.setTimeout.bind(window);
  const timers = new Set();
  const setT = window.setTimeout, clearT = window.clearTimeout;
  window.setTimeout = function (handler, delay, ...rest) {
    const ms = delay === undefined ? 0 : Number(delay);
    if (typeof handler !== "function" || !(ms <= TIMER_LIMIT_MS)) {
      return setT.call(window, handler, delay, ...rest);
    }
    let id;
    const fire = (...args) => {
      if (timers.delete(id)) end();
      return handler.apply(this, args);
    };
    id = setT.call(window, fire, delay, ...rest);
    timers.add(id);
    start();
    return id;
  };
  window.clearTimeout = function (id) {
    if (timers.delete(id)) end();
    return clearT.call(window, id);
  };
  if (window.fetch) {
    const fetchF = window.fetch;
    window.fetch = function (...args) {
      start();
      let promise;
      try { promise = fetchF.apply(this, args); } catch (error) { end(); throw error; }
      promise.then(end, end);
      return promise;
    };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    start();
    this.addEventListener("loadend", end, { once: true });
    try { return send.apply(this, args); } catch (error) { end(); throw error; }
  };
  const watchScript = (node) => {
    if (node.nodeName === "SCRIPT" && node.src && !node.__sitemapSeen) {
      node.__sitemapSeen = true;
      start();
      node.addEventListener("load", end, { once: true });
      node.addEventListener("error", end, { once: true });
    }
  };
  new MutationObserver((records) => {
    touch();
    for (const record of records) {
      for (const node of record.addedNodes) watchScript(node);
    }
  }).observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
  window.__sitemapReady = (quietMs, boundMs) => new Promise((resolve) => {
    const started = now();
    const check = () => {
      const t = now();
      if (t - started >= boundMs) return resolve(false);
      const settled = document.readyState === "complete" && state.busy === 0 && t - state.last >= quietMs;
      if (settled) return resolve(true);
      wait(check, state.busy ? 20 : Math.max(10, quietMs - (t - state.last)));
    };
    check();
  });
})();
""".replace("TIMER_LIMIT_MS", str(TIMER_LIMIT_MS))


async def watch(page: Page) -> None:
    """Install the watch before the page's scripts run (``playwright_page_init_callback``)."""
    await page.add_init_script(WATCH_SCRIPT)


async def settle(page: Page, timeout_ms: float) -> bool:
    """Wait until the page is built, at most ``timeout_ms`` after ``load``; whether it was built by then
    (scrapy-playwright keeps the answer in the PageMethod's ``result``)."""
    from playwright.async_api import Error as PlaywrightError

    try:
        ready = await asyncio.wait_for(
            page.evaluate(
                "([quiet, bound]) => window.__sitemapReady ? window.__sitemapReady(quiet, bound) : null",
                [QUIET_MS, timeout_ms],
            ),
            timeout_ms / 1000 + _CALL_MARGIN,
        )
    except (PlaywrightError, TimeoutError) as exc:
        logger.debug("Could not watch %s settle (%s); waiting for the network instead", page.url, exc)
        ready = None
    if ready is None:
        ready = await network_idle(page, timeout_ms)
    elif not ready:
        logger.debug("%s still busy after %s ms; reading the DOM as it is", page.url, timeout_ms)
    if not page.url.startswith("http"):
        # Not the page's DOM: Chromium's error page after a navigation to another origin was aborted.
        raise RuntimeError(f"the page tried to navigate to another origin (the browser shows {page.url})")
    return bool(ready)


async def network_idle(page: Page, timeout_ms: float) -> bool:
    """Wait for the network to go quiet, at most ``timeout_ms``; whether it did."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        await page.wait_for_load_state("networkidle", timeout=timeout_ms)
    except PlaywrightTimeout:
        logger.debug("Network not idle after %s ms on %s; reading the DOM as it is", timeout_ms, page.url)
        return False
    return True
