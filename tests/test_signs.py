"""Which static pages the auto mode sends to the browser: the heuristics, page by page."""

from __future__ import annotations

import pytest
from parsel import Selector

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
