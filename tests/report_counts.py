"""What the counts of a crawl report (JSON ``counts`` and ``listed``, which the HTML charts show) must say."""

from __future__ import annotations

from typing import Any


def count_problems(report: dict[str, Any], pages_fetched: int | None, *, lossy: bool = False) -> list[str]:
    """How the report's counts disagree with themselves, and with the pages the site served (if given).

    Every page fetched has one status and one depth; every listed URL one lastmod age and one
    section (a URL listed twice, counted as ``duplicate``, is counted twice there). ``lossy``: a
    crawl resumed after a SIGKILL, whose counts of exclusions and entries taken in its last
    second are lost (the lastmod ages and sections come from the stored entries: still exact).
    """
    counts: dict[str, int] = report["counts"]
    fetched = counts.get("fetched", 0)
    urls = report["urls"] + report["excluded"].get("duplicate", 0)
    found = {
        "statuses": sum(n for key, n in counts.items() if key.startswith("status/")),
        "depths": sum(n for key, n in counts.items() if key.startswith("depth/")),
        "lastmod ages": sum(report["listed"]["lastmod_age"].values()),
        "sections": sum(report["listed"]["sections"].values()),
        "exclusions": counts.get("excluded", 0),
    }
    expected = {
        "statuses": fetched,
        "depths": fetched,
        "lastmod ages": urls,
        "sections": urls,
        "exclusions": sum(report["excluded"].values()) - report["excluded"].get("duplicate", 0),
    }
    if lossy:
        del found["exclusions"]
    problems = [f"{name}: {found[name]}, expected {expected[name]}" for name in found if found[name] != expected[name]]
    if pages_fetched is not None and fetched != pages_fetched:
        problems.append(f"fetched: {fetched}, the site served {pages_fetched} pages")
    if report.get("urls") is not None and counts.get("listed", 0) != report["urls"] and not lossy:
        # Pages dropped as the set was built (another page's bytes, a URL taken twice) are not listed.
        problems.append(f"listed: {counts.get('listed', 0)}, {report['urls']} URLs published")
    return problems
