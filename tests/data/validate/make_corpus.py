"""How the corpus of tests/data/validate was made (run from this folder): one file per rule of
``scrapy validate`` under broken/, files with no finding under valid/. The large ones (gzip
bomb, 50,001 URLs or sitemaps) are generated, hence this script."""

import gzip
from pathlib import Path

root = Path(".")
B = root / "broken"
V = root / "valid"
for d in (B, V):
    d.mkdir(exist_ok=True)
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'


def urlset(*urls, ns=NS, extra=""):
    body = "".join(f"  {u}\n" for u in urls)
    return f"{HEAD}<urlset {ns}{extra}>\n{body}</urlset>\n"


def index(*locs):
    body = "".join(f"  <sitemap><loc>{l}</loc></sitemap>\n" for l in locs)
    return f"{HEAD}<sitemapindex {NS}>\n{body}</sitemapindex>\n"


def u(loc, rest=""):
    return f"<url><loc>{loc}</loc>{rest}</url>"


E = "https://www.example.com"


def w(path, text):
    p = root / path
    p.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    p.write_bytes(gzip.compress(data, mtime=0) if p.name.endswith(".gz") else data)


ok = u(E + "/ok")
w("broken/xml.not_well_formed.xml", urlset(u(E + "/?a=1&b=2"), ok))
w(
    "broken/xml.dtd-xxe.xml",
    f'{HEAD}<!DOCTYPE urlset [\n  <!ENTITY xxe SYSTEM "file:///etc/passwd">\n]>\n<urlset {NS}>\n  <url><loc>https://www.example.com/&xxe;</loc></url>\n</urlset>\n',
)
lol = "".join(f'  <!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">\n' for i in range(1, 10))
w(
    "broken/xml.dtd-billion_laughs.xml",
    f'{HEAD}<!DOCTYPE lolz [\n  <!ENTITY lol0 "lol">\n{lol}]>\n<urlset {NS}>\n  <url><loc>https://www.example.com/&lol9;</loc></url>\n</urlset>\n',
)
w("broken/xml.encoding.xml", urlset(ok).replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'))
w("broken/xml.root.xml", f'{HEAD}<rss version="2.0">\n  <channel><title>feed</title></channel>\n</rss>\n')
w(
    "broken/xml.root-html.xml",
    "<!DOCTYPE html>\n<html><head><title>Not found</title></head><body>404</body></html>\n",
)
w("broken/xml.namespace.xml", urlset(ok, ns='xmlns="https://www.sitemaps.org/schemas/sitemap/0.9"'))
w("broken/xsd.xml", urlset(ok, f"<url><lastmod>2024-01-01</lastmod><loc>{E}/late-loc</loc></url>"))
w(
    "broken/xsd.unknown_extension.xml",
    urlset(
        u(E + "/a", "<mobile:mobile/>"),
        u(E + "/b", "<mobile:mobile/>"),
        extra=' xmlns:mobile="http://www.google.com/schemas/sitemap-mobile/1.0"',
    ),
)
w("broken/file.empty.xml", f"{HEAD}<urlset {NS}>\n</urlset>\n")
w("broken/loc.not_absolute.xml", urlset(u("/relative/page"), ok))
w("broken/loc.scheme.xml", urlset(u("ftp://www.example.com/file.txt"), ok))
w("broken/loc.too_long.xml", urlset(u(E + "/" + "a" * 2100), ok))
w("broken/loc.not_encoded.xml", urlset(u(E + "/caf\u00e9"), ok))
w("broken/loc.invalid.xml", urlset(u("https://www.example.com:99999/"), ok))
w("broken/loc.double_escaped.xml", urlset(u(E + "/?a=1&amp;amp;b=2"), ok))
w("broken/loc.fragment.xml", urlset(u(E + "/a#top"), ok))
w(
    "broken/loc.cross_submission.xml",
    urlset(u(E + "/catalog/item"), u(E + "/other/page"), u("https://cdn.example.org/catalog/x")),
)
w("broken/lastmod.format.xml", urlset(u(E + "/a", "<lastmod>2024-13-01</lastmod>"), ok))
w("broken/lastmod.timezone.xml", urlset(u(E + "/a", "<lastmod>2024-05-01T10:20:30</lastmod>"), ok))
w("broken/lastmod.future.xml", urlset(u(E + "/a", "<lastmod>2999-01-01</lastmod>"), ok))
# What Hugo wrote for pages without a date (tests/data/wild/sites/hugo-multilingual-aws-fcj).
w("broken/lastmod.placeholder.xml", urlset(u(E + "/a", "<lastmod>1970-01-01T07:33:44+07:00</lastmod>"), ok))
w("broken/changefreq.invalid.xml", urlset(u(E + "/a", "<changefreq>Daily</changefreq>"), ok))
w("broken/priority.invalid.xml", urlset(u(E + "/a", "<priority>1.5</priority>"), ok))
w("broken/duplicate.in_file.xml", urlset(u(E + "/a"), ok, u(E + "/a")))
XHTML = ' xmlns:xhtml="http://www.w3.org/1999/xhtml"'
w(
    "broken/link.ignored.xml",
    urlset(u(E + "/a", f'<xhtml:link rel="amphtml" href="{E}/a.amp"/>'), ok, extra=XHTML),
)
w(
    "broken/link.hreflang.xml",
    urlset(u(E + "/a", f'<xhtml:link rel="alternate" hreflang="en-UK" href="{E}/a"/>'), ok, extra=XHTML),
)
w(
    "broken/link.not_absolute.xml",
    urlset(u(E + "/a", '<xhtml:link rel="alternate" hreflang="fr" href="/fr/tags/scene/"/>'), ok, extra=XHTML),
)
w(
    "broken/link.href.xml",
    urlset(u(E + "/a", f'<xhtml:link rel="alternate" hreflang="fr" href="{E}/caf\u00e9"/>'), ok, extra=XHTML),
)
# A PNG's first bytes: not XML, not text.
w("broken/file.binary.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
w("broken/duplicate.across_files/a.xml", urlset(u(E + "/a"), u(E + "/shared")))
w("broken/duplicate.across_files/b.xml", urlset(u(E + "/b"), u(E + "/shared")))
w("broken/text.line_too_long.txt.gz", E + "/first\n" + "x" * 100_000)
w("broken/text.encoding.txt", (E + "/ok\n").encode() + b"https://www.example.com/caf\xe9\n")
w("broken/read.gzip.xml.gz", b"")
(B / "read.gzip.xml.gz").write_bytes(gzip.compress(urlset(ok).encode() * 50, mtime=0)[:-40])
# gzip bomb: a valid sitemap followed by 60 MiB of white space (allowed after the root), about 60 KB compressed.
(B / "limits.bytes-gzip_bomb.xml.gz").write_bytes(
    gzip.compress(urlset(ok).encode() + b"\n" * (60 * 1024 * 1024), 9, mtime=0)
)
many = "".join(f"<url><loc>{E}/p/{i}</loc></url>\n" for i in range(50_001))
w("broken/limits.urls.xml.gz", f"{HEAD}<urlset {NS}>\n{many}</urlset>\n")
sm = "".join(f"<sitemap><loc>{E}/s/{i}.xml</loc></sitemap>\n" for i in range(50_001))
w("broken/limits.sitemaps.xml.gz", f"{HEAD}<sitemapindex {NS}>\n{sm}</sitemapindex>\n")
# indexes
w("broken/index.nested/index.xml", index(E + "/inner.xml"))
w("broken/index.nested/inner.xml", index(E + "/leaf.xml"))
w("broken/index.nested/leaf.xml", urlset(ok))
w("broken/index.loop/index.xml", index(E + "/leaf.xml", E + "/index.xml"))
w("broken/index.loop/leaf.xml", urlset(ok))
w("broken/index.duplicate/index.xml", index(E + "/leaf.xml", E + "/leaf.xml"))
w("broken/index.duplicate/leaf.xml", urlset(ok))
w("broken/index.child_not_local/index.xml", index(E + "/leaf.xml", E + "/missing.xml"))
w("broken/index.child_not_local/leaf.xml", urlset(ok))
# valid
ext = urlset(
    u(
        E + "/",
        "<lastmod>2024-05-01T10:20:30+02:00</lastmod><changefreq>daily</changefreq><priority>0.8</priority>"
        "<image:image><image:loc>https://www.example.com/a.png</image:loc></image:image>"
        '<xhtml:link rel="alternate" hreflang="fr" href="https://www.example.com/fr/"/>'
        '<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/"/>'
        # Valid forms the official schema and search engines accept (#25): a lower-case region,
        # Google's separate mobile URL.
        '<xhtml:link rel="alternate" hreflang="en-gb" href="https://www.example.com/"/>'
        '<xhtml:link rel="alternate" media="only screen and (max-width: 640px)" href="https://m.example.com/"/>',
    ),
    u(
        E + "/fr/",
        '<xhtml:link rel="alternate" hreflang="fr" href="https://www.example.com/fr/"/>'
        '<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/"/>',
    ),
    u(
        E + "/video",
        "<video:video><video:thumbnail_loc>https://www.example.com/t.jpg</video:thumbnail_loc>"
        "<video:title>A video</video:title><video:description>What it shows</video:description>"
        "<video:content_loc>https://www.example.com/v.mp4</video:content_loc></video:video>",
    ),
    u(
        E + "/news",
        "<news:news><news:publication><news:name>Example</news:name><news:language>en</news:language>"
        "</news:publication><news:publication_date>2024-05-01</news:publication_date><news:title>Title</news:title></news:news>",
    ),
    extra=' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
    ' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'
    ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    ' xmlns:xhtml="http://www.w3.org/1999/xhtml"',
)
w("valid/extensions.xml", ext)
w("valid/urls.txt", "\ufeff" + E + "/\r\n" + E + "/a%20b\r\n\r\n" + E + "/%C3%A9\n")
w("valid/set/sitemap_index.xml", index(E + "/sitemap-1.xml.gz", E + "/sitemap-2.xml"))
w("valid/set/sitemap-1.xml.gz", urlset(u(E + "/1", "<lastmod>2024-05-01</lastmod>")))
w("valid/set/sitemap-2.xml", urlset(u(E + "/2", "<lastmod>2024-05-01T10:20:30Z</lastmod>")))
# libxml2's own limits, without XML_PARSE_HUGE: a text node over 10 MB, nesting over 256 levels.
w("broken/xml.not_well_formed-huge_text.xml.gz", urlset(u(E + "/" + "a" * 20_000_000)))
w("broken/xml.not_well_formed-deep.xml", f"{HEAD}<urlset {NS}>\n{'<a>' * 1000}\n</urlset>\n")
# A DOCTYPE hidden behind a 70 KB comment: the prolog is not read past 64 KiB.
w(
    "broken/xml.dtd-behind_long_comment.xml",
    f"{HEAD}<!--{'x' * 70_000}-->\n" + (B / "xml.dtd-xxe.xml").read_text()[len(HEAD) :],
)
