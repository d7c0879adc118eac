"""sitemap_spider/checking/xsd_messages.py: libxml2's real messages, said in words (#25).

Each row is a <url> validated with the official schemas (the messages are libxml2's own, not
copies), then the finding scrapy validate reports of it.
"""

from __future__ import annotations

import io

import pytest

from sitemap_spider.checking.document import check_document
from sitemap_spider.checking.session import Session
from sitemap_spider.checking.xsd_messages import describe, name_of

NS = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
)
L = "<loc>https://www.example.com/a</loc>"
NEWS = "<news:publication><news:name>n</news:name><news:language>{}</news:language></news:publication>"


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        (f"{L}<priority>0.5</priority><changefreq>daily</changefreq>", "<changefreq> must come before <priority> inside <url>"),
        (f"{L}<changefreq>daily</changefreq><lastmod>2024-01-01</lastmod>", "<lastmod> must come before <changefreq> inside <url>"),
        (f"<lastmod>2024-01-01</lastmod>{L}", "<loc> must come first inside <url>, before <lastmod>"),
        ("<lastmod>2024-01-01</lastmod>", "<url> has no <loc>"),
        ("", "<url> has no <loc>"),
        (f"{L}{L}", "<url> may hold one <loc>; this is another"),
        (f"{L}<lastmod>2024-01-01</lastmod><lastmod>2024-01-02</lastmod>", "<url> may hold one <lastmod>; this is another"),
        (f"{L}<title>x</title>", "<title> is not an element of <url>, which holds <loc>, <lastmod>, <changefreq>, "
         "<priority> and elements of other namespaces (extensions)"),
        (f"{L}<image:image><image:loc>https://www.example.com/i.png</image:loc></image:image><lastmod>2024-01-01</lastmod>",
         "<lastmod> must come before <image:image> inside <url>: extension elements go last"),
        (f"hello{L}", "<url> holds text between its elements, where only elements may go"),
        (f'{L}<xhtml:link rel="alternate" hreflang="en_US" href="https://www.example.com/b"/>',
         "the hreflang attribute of <xhtml:link> 'en_US' is not a language tag: letters and digits in parts of at "
         "most 8, joined by '-' (en, en-GB)"),
        (f'{L}<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/b" foo="1"/>',
         "<xhtml:link> may not have the attribute foo"),
        (f"{L}<image:image><image:title>t</image:title></image:image>",
         "<image:title> is not allowed here: the schema expects <image:loc> at this place"),
        (f"{L}<video:video><video:title>t</video:title></video:video>",
         "<video:title> is not allowed here: the schema expects <video:thumbnail_loc> at this place"),
        (f"{L}<news:news>{NEWS.format('pt-br')}<news:publication_date>2024-01-01</news:publication_date>"
         "<news:title>t</news:title></news:news>",
         "<news:language> 'pt-br' is not an ISO 639 language code of 2 or 3 lower-case letters, without region "
         "(zh-cn and zh-tw excepted)"),
        (f"{L}<news:news>{NEWS.format('pt')}<news:publication_date>2024-01-01</news:publication_date></news:news>",
         "<news:news> has no <news:title>"),
    ],
)  # fmt: skip
def test_xsd_findings_in_words(url: str, detail: str) -> None:
    data = f'<?xml version="1.0"?>\n<urlset {NS}>\n<url>{url}</url>\n</urlset>\n'.encode()
    session = Session()
    check_document(io.BytesIO(data), "f.xml", None, session)
    xsd = [f.detail for f in session.log.listed if f.rule == "xsd"]
    assert xsd == [detail]


@pytest.mark.parametrize(
    ("message", "detail"),
    [
        ("Element '{http://www.sitemaps.org/schemas/sitemap/0.9}changefreq': [facet 'enumeration'] The value "
         "'Daily' is not an element of the set {'always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'}.",
         "<changefreq> 'Daily' is not one of always, hourly, daily, weekly, monthly, yearly, never"),
        ("Element '{http://www.sitemaps.org/schemas/sitemap/0.9}priority': [facet 'maxInclusive'] The value '1.5' "
         "is greater than the maximum value allowed ('1.0').", "<priority> '1.5' is over the maximum, 1.0"),
        ("Element '{http://www.sitemaps.org/schemas/sitemap/0.9}priority': 'high' is not a valid value of the "
         "atomic type '{http://www.sitemaps.org/schemas/sitemap/0.9}tPriority'.",
         "<priority> 'high' is not a decimal from 0.0 to 1.0"),
        ("Element '{http://www.sitemaps.org/schemas/sitemap/0.9}loc': [facet 'minLength'] The value has a length of "
         "'2'; this underruns the allowed minimum length of '12'.", "<loc> has 2 characters; the schema allows at least 12"),
        ("Element '{http://www.google.com/schemas/sitemap-video/1.1}duration': 'abc' is not a valid value of the "
         "local atomic type.", "<video:duration> 'abc' is not of the type the schema requires"),
        ("Element '{http://www.w3.org/1999/xhtml}link': Character content is not allowed, because the content type "
         "is empty.", "<xhtml:link> must be empty"),
        ("Element '{http://www.w3.org/1999/xhtml}link': The attribute 'href' is required but missing.",
         "<xhtml:link> lacks the required attribute href"),
        ("Something libxml2 says of {http://www.google.com/schemas/sitemap-image/1.1}loc", "Something libxml2 says of image:loc"),
    ],
)  # fmt: skip
def test_describe(message: str, detail: str) -> None:
    assert describe(message) == detail


def test_name_of() -> None:
    assert name_of("{http://www.sitemaps.org/schemas/sitemap/0.9}loc") == "loc"
    assert name_of("{http://www.google.com/schemas/sitemap-news/0.9}title") == "news:title"
    assert name_of("{urn:other}thing") == "{urn:other}thing"
