"""sitemap_spider/checking/links.py: which <xhtml:link> search engines ignore or misread (#25)."""

from __future__ import annotations

import pytest

from sitemap_spider.checking.links import link_problems

E = "https://www.example.com"


@pytest.mark.parametrize(
    ("attributes", "rules"),
    [
        ({"rel": "alternate", "hreflang": "fr", "href": f"{E}/fr/"}, []),
        ({"rel": "alternate", "hreflang": "en-gb", "href": f"{E}/"}, []),  # case does not matter
        ({"rel": "alternate", "hreflang": "EN-GB", "href": f"{E}/"}, []),
        ({"rel": "alternate", "hreflang": "zh-Hant-TW", "href": f"{E}/"}, []),
        ({"rel": "alternate", "hreflang": "x-default", "href": f"{E}/"}, []),
        ({"rel": "alternate", "media": "only screen and (max-width: 640px)", "href": "https://m.example.com/"}, []),
        ({"rel": "amphtml", "href": f"{E}/a.amp"}, ["link.ignored"]),
        ({"rel": "alternate", "href": "android-app://com.example/page"}, ["link.ignored"]),
        ({"rel": "alternate", "hreflang": "fr"}, ["link.ignored"]),
        ({"rel": "alternate", "hreflang": "es-419", "href": f"{E}/"}, ["link.hreflang"]),
        ({"rel": "alternate", "hreflang": "eng", "href": f"{E}/"}, ["link.hreflang"]),
        ({"rel": "alternate", "hreflang": "en-UK", "href": f"{E}/"}, ["link.hreflang"]),
        ({"rel": "alternate", "hreflang": "en_US", "href": f"{E}/"}, []),  # not xs:language: the xsd error
        ({"rel": "alternate", "hreflang": "fr", "href": "/fr/"}, ["link.not_absolute"]),
        ({"rel": "alternate", "hreflang": "fr", "href": "/fr/tags/scene/"}, ["link.not_absolute"]),  # 15 characters
        ({"rel": "alternate", "hreflang": "fr", "href": "//www.example.com/fr/"}, ["link.not_absolute"]),
        ({"rel": "alternate", "hreflang": "fr", "href": "ftp://www.example.com/fr/"}, ["link.href"]),
        ({"rel": "alternate", "hreflang": "fr", "href": f"{E}/caf\u00e9"}, ["link.href"]),
    ],
)
def test_link_problems(attributes: dict[str, str], rules: list[str]) -> None:
    assert [rule for rule, _ in link_problems(attributes)] == rules


def test_en_uk_names_the_region_to_use() -> None:
    (_, detail), = link_problems({"rel": "alternate", "hreflang": "en-UK", "href": f"{E}/"})
    assert "use en-GB" in detail
