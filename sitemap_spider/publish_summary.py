"""What the end of a crawl says of the set it published: the summary in the log, the report's fields."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sitemap_spider import stats as keys
from sitemap_spider.sitemaps import INDEX_NAME, off_base_note

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from sitemap_spider.sitemaps import PublishResult

# The crawl end's logger (crawl_end.py), as before this module was split from it.
logger = logging.getLogger("sitemap_spider.crawl_end")


def report_fields(result: PublishResult) -> dict[str, Any]:
    """The published set, as the report's summary has it."""
    summary: dict[str, Any] = {
        "urls": result.urls,
        "files": result.files,
        "index": str(result.index_path),
        "index_url": result.index_url,
    }
    if result.group_urls:
        summary["groups"] = dict(result.group_urls)
    if result.llms_txt is not None:
        summary["llms_txt"] = vars(result.llms_txt)
    return summary


def log_published(result: PublishResult, excluded: dict[str, int], stats: StatsCollector) -> None:
    """The summary of a published set, then what the log adds to it: URLs not under the base URL,
    what rendering bought."""
    _log_summary(result, excluded, not_fetched(stats))
    if result.off_base:
        base_url = result.index_url[: -len(INDEX_NAME)]
        note = off_base_note(result.off_base, base_url, result.off_base_example)
        logger.warning("Sitemap: %s", note)
    log_rendering(stats)


def log_rendering(stats: StatsCollector) -> None:
    """Say what rendering bought: pages rendered, URLs only rendering found, templates dropped."""
    value = stats.get_value
    rendered = (value(keys.RENDER_PAGES) or 0) + (value(keys.RENDER_PROBES) or 0)
    skipped = value(keys.RENDER_SKIPPED_NO_GAIN) or 0
    if not rendered and not skipped:
        return
    logger.info(
        "Rendering: %s page(s) rendered (%s to learn whether their template needs it), "
        "%s URL(s) found only by rendering; %s template(s) judged statically after renders found nothing "
        "(%s page(s) not rendered), %s put back by a sample",
        f"{rendered:,}",
        f"{value(keys.RENDER_PROBES) or 0:,}",
        f"{value(keys.RENDER_URLS_FOUND) or 0:,}",
        value(keys.RENDER_TEMPLATES_NO_GAIN) or 0,
        f"{skipped:,}",
        value(keys.RENDER_TEMPLATES_REGAINED) or 0,
    )


def not_fetched(stats: StatsCollector) -> str:
    """Pages given up after every retry and the last pass, and why, as a line of the summary: '' when none."""
    values = stats.get_stats()
    total = int(values.get(keys.NOT_FETCHED) or 0)
    if not total:
        return ""
    causes = sorted(
        (key[len(keys.NOT_FETCHED_CAUSE) :], int(value))
        for key, value in values.items()
        if key.startswith(keys.NOT_FETCHED_CAUSE)
    )
    why = ", ".join(f"{cause} {count:,}" for cause, count in causes)
    return f"\n  could not be fetched (after every retry and a last pass): {total:,} ({why})"


def _log_summary(result: PublishResult, excluded: dict[str, int], not_fetched: str = "") -> None:
    reasons = ", ".join(f"{reason} {count:,}" for reason, count in excluded.items() if count)
    logger.log(
        logging.WARNING if not_fetched else logging.INFO,
        "Sitemap published: %s URLs in %s file(s); index %s%s\n"
        "  not listed: %s%s\n"
        "  changed since the previous set: %s%s\n"
        "  add this line to robots.txt:  Sitemap: %s",
        f"{result.urls:,}",
        result.files,
        result.index_path,
        describe_groups(result.group_urls),
        reasons or "none",
        not_fetched,
        result.changes.describe() if result.changes is not None else "not compared",
        "" if result.llms_txt is None else "\n  " + result.llms_txt.describe(),
        result.index_url,
    )


def describe_groups(group_urls: tuple[tuple[str, int], ...]) -> str:
    """The URLs per group (SITEMAP_GROUPS) as a line of the summary; '' without groups."""
    if not group_urls:
        return ""
    return "\n  by group: " + ", ".join(f"{group} {urls:,}" for group, urls in group_urls)
