"""Which static pages the auto mode sends to the browser: the heuristics, page by page."""

from __future__ import annotations

import pytest
from parsel import Selector

from sitemap_spider.render import scripts
from sitemap_spider.render.scripts import lex
from sitemap_spider.render.signs import builds_navigation, site_script_urls, static_render_reason

GTM = (
    "<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime()});"
    "var f=d.getElementsByTagName(s)[0],j=d.createElement(s);j.async=true;"
    "j.src='https://www.googletagmanager.com/gtm.js?id='+i;f.parentNode.insertBefore(j,f);"
    "})(window,document,'script','dataLayer','GTM-XXXX');</script>"
)
TEXT = "<p>" + "An ordinary paragraph of text that a reader came for. " * 4 + "</p>"


def page(body: str, head: str = "") -> Selector:
    return Selector(text=f"<html><head>{head}</head><body>{body}</body></html>")


@pytest.mark.parametrize(
    ("body", "head", "reason"),
    [
        (TEXT + '<a href="/a">a</a>', "", None),
        (TEXT + GTM, "", None),
        (TEXT + '<script async src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>'
         "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}</script>", "", None),
        (TEXT + "<div id=nav></div><script>var a=document.createElement('a');a.href='/x';nav.appendChild(a)</script>",
         "", "inline_script"),
        (TEXT, "<script>document.head.insertAdjacentHTML('beforeend','<meta name=robots content=noindex>')</script>",
         "inline_script"),
        (TEXT + "<script>document.write('<a href=/y>y</a>')</script>", "", "inline_script"),
        ('<div id="root"></div><script src="/static/js/main.js"></script>', "", "app_root"),
        ('<div id="__next"><noscript>enable JS</noscript></div><script src="/_next/app.js"></script>', "", "app_root"),
        ("<app-root></app-root><script src=main.js></script>", "", "app_root"),
        ('<div id="root"><h1>Server-rendered</h1>' + TEXT + '</div><script src="/main.js"></script>', "", None),
        ("<h1>Loading…</h1><script src=/bundle.js></script>", "", "empty_body"),
        ("<h1>Loading…</h1>", "", None),
        # javadoc 8's frameset index: a script and no body, but its frames carry the links
        (('<frameset cols="20%,80%"><frame src="overview-frame.html"><frame src="overview-summary.html">'
          "</frameset>"), "<script>targetPage = '' + window.location.search;</script>", None),
        (TEXT + "<script>console.log('hello')</script>", "", None),
        # A block theme's archive page: its skip link goes to the page's own <main>, a link the
        # static HTML lacks but no page to crawl (#28: the whole template went to the browser).
        ('<div class="wp-site-blocks"><main>' + TEXT + "</main></div>"
         "<script>(function(){var t=document.querySelector('main'),w=document.querySelector('.wp-site-blocks');"
         "if(!t||!w){return;}var id=t.id||'skip-to-main';t.id=id;var a=document.createElement('a');"
         "a.className='skip-link';a.href='#'+id;a.innerText='Skip to content';w.parentNode.insertBefore(a,w);})();"
         "</script>", "", None),
    ],
)
def test_static_render_reason(body: str, head: str, reason: str | None) -> None:
    assert static_render_reason(page(body, head)) == reason


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("function initMenu(){ $('#main-menu').append(makeTree(menudata)); } // href", True),
        ("el.innerHTML = items.map(i => `<a href=\"${i.url}\">${i.t}</a>`).join('')", True),
        ("history.pushState({}, '', url); root.replaceChildren(view())", True),
        ("document.getElementById('x').classList.toggle('open')", False),
        ("var a = document.createElement('div'); a.className = 'spinner';", False),
        # A skip link to the page's own main element, as block themes add to every page (our own
        # script of the same shape as WordPress 6's): a fragment of the page leads nowhere new.
        ("var m = document.querySelector('main'), id = m.id || 'skip-target'; m.id = id;"
         " var s = document.createElement('a'); s.href = '#' + id; s.textContent = 'Skip';"
         " document.body.insertBefore(s, document.body.firstChild);", False),
        ("var s = document.createElement('a'); s.setAttribute('href', '#top'); document.body.appendChild(s);", False),
        ("var s = document.createElement('a'); s.href = '/new-page'; document.body.appendChild(s);", True),
        ("var s = document.createElement('a'); s.href = base + id; document.body.appendChild(s);", True),
        ("var s = document.createElement('a'); s.href = next.url; document.body.appendChild(s);", True),
    ],
)
def test_builds_navigation(script: str, expected: bool) -> None:
    assert builds_navigation(script) is expected


def test_site_script_urls_skip_libraries_analytics_and_other_sites() -> None:
    selector = page(
        '<script src="/js/menu.js"></script><script src="jquery-3.7.1.min.js"></script>'
        '<script src="https://cdn.example.net/app.js"></script><script src="/js/menu.js"></script>'
        '<script src="/gtag/js?id=1"></script><script src="navtree.js?v=2"></script>'
        '<script src="/static/bootstrap.bundle.js"></script>'
    )
    assert site_script_urls(selector, "http://h/docs/", "http://h") == [
        "http://h/js/menu.js",
        "http://h/docs/navtree.js?v=2",
    ]



def test_site_script_urls_resolve_each_page_s_addresses_against_its_own_base() -> None:
    """The addresses a template repeats are resolved once per directory (or host), never across them."""
    selector = page('<script src="nav.js"></script><script src="/js/menu.js"></script>'
                    '<script src="../up.js"></script><script src="?v=1"></script>')
    first = site_script_urls(selector, "http://h/a/one.html", "http://h")
    assert first == ["http://h/a/nav.js", "http://h/js/menu.js", "http://h/up.js", "http://h/a/one.html?v=1"]
    assert site_script_urls(selector, "http://h/b/c/two.html", "http://h") == [
        "http://h/b/c/nav.js", "http://h/js/menu.js", "http://h/b/up.js", "http://h/b/c/two.html?v=1",
    ]
    # Another host with the same paths: nothing of the first host's answers is reused.
    assert site_script_urls(selector, "http://g/a/one.html", "http://h") == []
    assert site_script_urls(selector, "http://h/a/one.html", "http://h") == first


def test_site_script_urls_resolve_addresses_urlsplit_changes_on_each_page() -> None:
    """urlsplit drops tabs and newlines: "/<newline>/" is "//", the page's own address, not the host's."""
    selector = page('<script src="/&#10;/"></script><script src="/&#9;/?v=1"></script>')
    assert site_script_urls(selector, "http://h/a/one.html", "http://h") == [
        "http://h/a/one.html", "http://h/a/one.html?v=1",
    ]
    assert site_script_urls(selector, "http://h/b/two.html?q=2", "http://h") == [
        "http://h/b/two.html?q=2", "http://h/b/two.html?v=1",
    ]


def test_site_script_urls_keep_no_verdict_of_a_long_address() -> None:
    """A megabyte-long address would be kept with its verdict: 4096 of them, gigabytes."""
    from sitemap_spider.render import signs

    signs._SITE_SCRIPTS.clear()
    long_src = "/js/" + "a" * 100_000 + ".js"
    base = "http://h/" + "d" * 100_000 + "/page.html"
    selector = page(f'<script src="{long_src}"></script><script src="nav.js"></script>')
    assert site_script_urls(selector, base, "http://h") == ["http://h" + long_src, base[:-9] + "nav.js"]
    assert max((len(key[0]) + len(key[2]) for key in signs._SITE_SCRIPTS), default=0) <= 1024


@pytest.mark.parametrize(
    ("html", "reason"),
    [
        # The id table keeps the first element of an id: the head's script sends the question to the body.
        ('<html><head><script id="app" src="/a.js"></script></head><body><div id="app"></div></body></html>',
         "app_root"),
        ('<html><body id="app"><div id="app"></div>' + TEXT + "<script src=/a.js></script></body></html>",
         "app_root"),
        # An Angular root after a stray </html> still counts.
        ("<html><body>" + TEXT + "<script src=/a.js></script></body></html><app-root></app-root>", "app_root"),
        # Ids are case-sensitive, as getElementById is.
        ('<html><body><div id="Root"></div>' + TEXT + "<script src=/a.js></script></body></html>", None),
        # libxml2 enters an <a>'s name in the id table: a javadoc field's empty anchor is no mount point,
        ('<html><body><a name="root"><!-- --></a>' + TEXT + "<script src=/a.js></script></body></html>",
         None),
        # nor does a named anchor hide the empty element that has the id.
        ('<html><body><a name="root">Tree</a><div id="root"></div>' + TEXT + "<script src=/a.js></script>"
         "</body></html>", "app_root"),
        # The table keeps an id's first element: a filled one does not hide an empty one after it.
        ('<html><body><div id="app">' + TEXT + '</div><div id="app"></div><script src=/a.js></script>'
         "</body></html>", "app_root"),
        # An id outside the body sends the question to the walk, and <app-root> is still looked for.
        ('<html><head><link id="app" rel="stylesheet" href="/a.css"></head><body><app-root></app-root>' + TEXT
         + "<script src=/a.js></script></body></html>", "app_root"),
        ('<html><body id="root"><app-root></app-root>' + TEXT + "<script src=/a.js></script></body></html>",
         "app_root"),
    ],
)
def test_empty_app_roots_are_found_by_their_ids(html: str, reason: str | None) -> None:
    assert static_render_reason(Selector(text=html)) == reason

JAVADOC_FRAMES = (
    "<script>\n<!--\nif(window==top) {\n  document.writeln('<A HREF=\"../../index.html?java/lang/String.html\" "
    "target=\"_top\"><B>FRAMES</B></A>');\n}\n//-->\n</script>"
)
JAVADOC_TITLE = (
    "<script>function windowTitle()\n{\n    if (location.href.indexOf('is-external=true') == -1) {\n"
    "        parent.document.title=\"String (Java Platform SE 6)\";\n    }\n}</script>"
)
BAIDU_ANALYTICS = (
    '<script>var _hmt = _hmt || [];(function() { var hm = document.createElement("script");'
    'hm.src = "//hm.baidu.com/hm.js?0f1e2d3c4b5a"; var s = document.getElementsByTagName("script")[0];'
    "s.parentNode.insertBefore(hm, s);})();</script>"
)
BAIDU_PUSH = (
    "<script>(function(){ var bp = document.createElement('script');"
    "var curProtocol = window.location.protocol.split(':')[0];"
    "if (curProtocol === 'https') { bp.src = 'https://zz.bdstatic.com/linksubmit/push.js'; }"
    "else { bp.src = 'http://push.zhanzhang.baidu.com/push.js'; }"
    'var s = document.getElementsByTagName("script")[0]; s.parentNode.insertBefore(bp, s);})();</script>'
)
JQUERY_READY = (
    "<script>$(document).ready(function(){ $('.article img').addClass('responsive');"
    "$(window).scroll(function(){ if ($(this).scrollTop() > 100) { $('#top').fadeIn(); } });"
    "$('pre').append('<span class=\"copy\">Copy</span>'); $('h1').text('Title'); });</script>"
)
CLASS_PAGE_URL = "http://h/docs/api/java/lang/String.html"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        # javadoc 6: the frames link the script writes is in the navigation bar already
        (TEXT + '<a href="../../index.html?java/lang/String.html" target="_top">FRAMES</a>' + JAVADOC_FRAMES
         + JAVADOC_TITLE, None),
        # ... spelled another way, it is still the same link once normalised
        (TEXT + '<a href="/docs/api/index.html?java/lang/String.html">FRAMES</a>' + JAVADOC_FRAMES, None),
        # ... but a link the page does not have is one a browser would find
        (TEXT + '<a href="/docs/api/index.html">FRAMES</a>' + JAVADOC_FRAMES, "inline_script"),
        # script loaders and cosmetic jQuery, whoever wrote them
        (TEXT + '<a href="/a">a</a>' + BAIDU_ANALYTICS + BAIDU_PUSH + JQUERY_READY, None),
        (TEXT + "<script>var l = document.createElement('link'); l.rel = 'stylesheet'; l.href = '/x.css';"
         "document.head.appendChild(l)</script>", None),
        (TEXT + "<script>var l = document.createElement('link'); l.rel = 'canonical'; l.href = '/other';"
         "document.head.appendChild(l)</script>", "inline_script"),
        # markup built at run time cannot be read: it counts
        (TEXT + "<script>$('img').wrap('<a href=\"' + this.src + '\"></a>')</script>", "inline_script"),
        (TEXT + "<script>document.getElementById('nav').innerHTML = menuHtml;</script>", "inline_script"),
        (TEXT + "<script>$('#x').attr('href', next)</script>", "inline_script"),
        (TEXT + "<script>$('<a href=\"/new\">new</a>').appendTo('#nav')</script>", "inline_script"),
    ],
)
def test_what_inline_scripts_do_decides(body: str, reason: str | None) -> None:
    assert static_render_reason(page(body), CLASS_PAGE_URL) == reason


@pytest.mark.parametrize(
    ("script", "literals"),
    [
        ("a = 'x' + \"y\"; // 'not a literal'\n b = `t${c}u`", ["x", "y", "t\ue001u"]),
        ("r = /['\"]/g; s = 'ok'", ["['\"]", "ok"]),
        ("x = a / b / c; s = 'ok'", ["ok"]),
        ("<!--\ndocument.write('<b>') /* 'no' */\n//-->", ["<b>"]),
    ],
)
def test_lex_lifts_literals_out(script: str, literals: list[str]) -> None:
    assert list(lex(script).literals) == literals


def test_template_is_the_same_for_pages_of_one_template() -> None:
    one = lex("windowTitle('String (Java SE 6)', 12); document.writeln('<A HREF=\"a.html\">')").template()
    two = lex("windowTitle('Integer (Java SE 6)', 7);  document.writeln('<A HREF=\"b.html\">')").template()
    assert one == two
    assert one != lex("windowTitle('String', 12); menu.build()").template()


def test_long_scripts_and_markup_are_judged_but_not_cached() -> None:
    """The verdict caches keep short texts only: a hostile page's megabyte scripts are not kept."""
    padding = "x" * 70_000
    # Texts no other test uses: each short one enters the caches here.
    long_script = f'var pad = "{padding}"; document.write("<a href=\\"/cache-test\\">new</a>");'
    short_script = 'document.write("<a href=\\"/cache-test\\">new</a>");'
    page = "<html><body><a href='/old'>old</a><script>{}</script></body></html>"
    lexed, markups = scripts._cached_lex.cache_info().currsize, scripts._cached_markup_targets.cache_info().currsize
    assert static_render_reason(Selector(text=page.format(long_script)), "http://example.com/") == "inline_script"
    assert scripts._cached_lex.cache_info().currsize == lexed
    assert static_render_reason(Selector(text=page.format(short_script)), "http://example.com/") == "inline_script"
    assert scripts._cached_lex.cache_info().currsize == lexed + 1
    assert scripts._cached_markup_targets.cache_info().currsize == markups + 1  # the same short markup, both times
    long_markup = f'<a href="/old">old</a><!-- cache-test {"y" * 20_000} -->'
    assert scripts.markup_is_known(long_markup, lambda href: href == "/old")
    assert scripts._cached_markup_targets.cache_info().currsize == markups + 1


def test_a_verdict_is_kept_only_when_it_does_not_depend_on_the_page() -> None:
    """The same script writes a link one page has and another lacks: each page gets its own verdict."""
    writes_link = "document.write('<a href=\"/verdict-test\">x</a>');"
    with_link = "<html><body><a href='/verdict-test'>x</a><script>{}</script></body></html>"
    without_link = "<html><body><a href='/other'>x</a><script>{}</script></body></html>"
    for _ in range(2):
        assert static_render_reason(Selector(text=with_link.format(writes_link)), "http://example.com/") is None
        assert (
            static_render_reason(Selector(text=without_link.format(writes_link)), "http://example.com/")
            == "inline_script"
        )
    assert scripts._script_key(writes_link) not in scripts._SAME_ON_EVERY_PAGE
    # A script that builds a tree is judged without the page's links: kept.
    builds = "var n = document.createElement('div'); n.innerHTML = menu; document.body.appendChild(n); /* v-test */"
    assert static_render_reason(Selector(text=without_link.format(builds)), "http://example.com/") == "inline_script"
    assert scripts._SAME_ON_EVERY_PAGE.get(scripts._script_key(builds)) is True


def test_the_skeletons_own_mark_in_a_script_s_code_is_not_read_as_a_literal() -> None:
    # U+E000 marks lifted literals in the skeleton; a page that writes it in its code must not
    # make the rules read "literal 7" of a script that has none (an IndexError lost the page).
    text = "<p>" + "A page with enough text of its own to be judged as it is. " * 3 + "<a href='/b'>b</a></p>"
    page = Selector(text=f"<html><body>{text}<script>x.setAttribute(\ue0007\ue000, 1)</script></body></html>")
    assert static_render_reason(page, "http://example.com/") is None


def test_an_address_urlsplit_refuses_is_no_script_and_no_link() -> None:
    """A script at "//[oops/a.js" raised ValueError out of the spider's parse: the page was lost."""
    selector = page(TEXT + '<script src="//[oops/a.js"></script><script src="/js/nav.js"></script>')
    assert site_script_urls(selector, "http://h/p.html", "http://h") == ["http://h/js/nav.js"]
    writes_a_link = "<script>document.write('<a href=/new>new</a>')</script>"
    assert static_render_reason(page(TEXT + '<a href="http://[::1">x</a>' + writes_a_link), "http://h/") == (
        "inline_script"
    )
