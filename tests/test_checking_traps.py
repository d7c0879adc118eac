"""sitemap_spider/checking/traps.py: which pages found in no sitemap look like a crawler trap."""

from __future__ import annotations

import pytest

from sitemap_spider.checking.traps import SERIES_DEPTHS, find_traps, repeated_segment, url_shape

SITE = "https://www.example.com"


@pytest.mark.parametrize(
    ("url", "shape"),
    [
        (SITE + "/calendar/2031/05", "/calendar/{n}/{n}"),
        (SITE + "/calendar/2031-05-17/", "/calendar/{n}-{n}-{n}/"),
        (SITE + "/archive?page=88", "/archive?page={n}"),
        (SITE + "/archive?page=88&sort=asc", "/archive?page={n}&sort=asc"),
        (SITE + "/product/123-blue-shoe", "/product/{n}-blue-shoe"),  # a slug keeps its page apart
        (SITE + "/about", "/about"),
        (SITE, "/"),
        ("http://127.0.0.1:8080/p2", "/p{n}"),  # the port is not part of it
    ],
)
def test_url_shape(url: str, shape: str) -> None:
    assert url_shape(url) == shape


@pytest.mark.parametrize(
    ("url", "segment"),
    [
        (SITE + "/docs/more/more/", "more"),
        (SITE + "/a/b/a/b", "a"),
        (SITE + "/blog/page/2/page/3/", "page"),
        (SITE + "/blog/2024/05/05/post", None),  # a date repeats numbers, not a loop
        (SITE + "/docs/more/", None),
        (SITE + "/shoes/shoes-red", None),
        (SITE + "/?a=1&a=1", None),  # the query is not the path
    ],
)
def test_repeated_segment(url: str, segment: str | None) -> None:
    assert repeated_segment(url) == segment


def calendar(first: int, last: int) -> dict[str, int]:
    """Months of a calendar walked one a level, from depth ``first`` to ``last``."""
    return {f"{SITE}/calendar/{2024 + n // 12}/{n % 12 + 1:02d}": n + first for n in range(last - first + 1)}


def test_a_series_walked_down_to_depth_limit_is_endless_and_a_numbered_catalogue_is_not() -> None:
    depths = {
        SITE + "/": 0,
        **calendar(1, 100),
        **{f"{SITE}/product?id={n}": 2 + n % 2 for n in range(500)},  # 500 products, two levels deep
        SITE + "/deep/page": 100,  # a real page at the limit
    }
    traps = find_traps(depths, 100)
    assert traps.series == {"/calendar/{n}/{n}": 100}
    assert traps.why(SITE + "/calendar/2024/01") == (
        "one of 100 URLs like /calendar/{n}/{n}, followed level after level down to DEPTH_LIMIT (100) "
        "without an end"
    )
    assert traps.why(SITE + "/product?id=7") is None
    assert traps.why(SITE + "/deep/page") is None
    repeating = traps.why(SITE + "/docs/more/more/")
    assert repeating == "its path repeats 'more', as relative links resolved against their own page do"


@pytest.mark.parametrize(
    ("depths", "limit", "endless"),
    [
        (calendar(91, 100), 100, True),  # SERIES_DEPTHS levels, down to the limit
        (calendar(92, 100), 100, False),  # one level fewer
        (calendar(1, 99), 100, False),  # stopped before the limit: it has an end
        (calendar(1, 100), 0, False),  # no limit: nothing stopped it
        (calendar(1, 9), 9, False),  # a limit too low to tell a walk from a site
        (calendar(1, 10), 10, True),
    ],
)
def test_when_a_series_is_endless(depths: dict[str, int], limit: int, endless: bool) -> None:
    assert SERIES_DEPTHS == 10
    assert bool(find_traps(depths, limit).series) is endless
