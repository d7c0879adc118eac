"""Static sites whose every page carries scripts, for render=auto's benchmark and tests.

``javadoc_site``: modelled on the JDK 6 API docs (frames, overview/package/class pages,
the ``windowTitle()`` script, and on every class page an inline
``document.writeln('<A HREF="../../index.html?java/lang/String.html" ...>')`` whose link the
navigation bar has statically). ``blog_site``: a Hexo blog with Baidu's analytics and
link-push loaders, jQuery ``$(document).ready`` snippets and a theme script. Neither builds
a link a visitor could not find without JavaScript: ``render=auto`` should list exactly
what ``render=never`` lists, at about its cost.

Each returns ``{path: html}`` (a path ending in ``/`` is a directory's index.html) and
the paths of the pages the sitemap lists.
"""

from __future__ import annotations

from pathlib import Path

Pages = dict[str, str]

_CLASS_NAMES = ("String", "Integer", "Thread", "Object", "Math", "System", "Runtime", "Number", "Double", "Float")


def _class_name(index: int) -> str:
    base = _CLASS_NAMES[index % len(_CLASS_NAMES)]
    return base if index < len(_CLASS_NAMES) else f"{base}{index}"


def _javadoc_nav(up: str, here: str, frames_target: str, prev_next: str) -> str:
    return f"""
<A NAME="navbar_top"><!-- --></A>
<TABLE BORDER="0" WIDTH="100%" CELLPADDING="1" CELLSPACING="0" SUMMARY="">
<TR><TD COLSPAN=2 BGCOLOR="#EEEEFF" CLASS="NavBarCell1">
  <A HREF="{up}overview-summary.html"><FONT CLASS="NavBarFont1"><B>Overview</B></FONT></A>&nbsp;
  <A HREF="package-summary.html"><FONT CLASS="NavBarFont1"><B>Package</B></FONT></A>&nbsp;
  <A HREF="{up}deprecated-list.html"><FONT CLASS="NavBarFont1"><B>Deprecated</B></FONT></A>&nbsp;
  <A HREF="{up}help-doc.html"><FONT CLASS="NavBarFont1"><B>Help</B></FONT></A>&nbsp;</TD></TR>
<TR><TD BGCOLOR="white" CLASS="NavBarCell2"><FONT SIZE="-2">{prev_next}</FONT></TD>
<TD BGCOLOR="white" CLASS="NavBarCell2"><FONT SIZE="-2">
  <A HREF="{up}index.html?{frames_target}" target="_top"><B>FRAMES</B></A>  &nbsp;
&nbsp;<A HREF="{here}" target="_top"><B>NO FRAMES</B></A>  &nbsp;
&nbsp;<SCRIPT type="text/javascript">
  <!--
  if(window==top) {{
    document.writeln('<A HREF="{up}allclasses-noframe.html"><B>All Classes</B></A>');
  }}
  //-->
</SCRIPT>
<NOSCRIPT>
  <A HREF="{up}allclasses-noframe.html"><B>All Classes</B></A>
</NOSCRIPT>
<SCRIPT type="text/javascript">
  if (window == top) {{
    document.writeln('<A HREF="{up}index.html?{frames_target}" target="_top"><B>Show in frames</B></A>');
  }}
</SCRIPT>
</FONT></TD></TR></TABLE>
"""


def _javadoc_page(title: str, up: str, body: str, nav: str = "") -> str:
    return f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">
<HTML>
<HEAD>
<TITLE>{title} (Java Platform SE 6)</TITLE>
<LINK REL ="stylesheet" TYPE="text/css" HREF="{up}stylesheet.css" TITLE="Style">
<SCRIPT type="text/javascript">
function windowTitle()
{{
    if (location.href.indexOf('is-external=true') == -1) {{
        parent.document.title="{title} (Java Platform SE 6)";
    }}
}}
</SCRIPT>
</HEAD>
<BODY BGCOLOR="white" onload="windowTitle();">
<HR>{nav}<HR>
{body}
<HR>{nav}<HR>
<FONT SIZE="-1">Copyright 2006 Sun Microsystems, Inc. All rights reserved.</FONT>
</BODY>
</HTML>
"""


_JAVADOC_INDEX = """<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Frameset//EN" "http://www.w3.org/TR/html4/frameset.dtd">
<HTML><HEAD><TITLE>Java Platform SE 6</TITLE>
<SCRIPT type="text/javascript">
    targetPage = "" + window.location.search;
    if (targetPage != "" && targetPage != "undefined")
        targetPage = targetPage.substring(1);
    if (targetPage.indexOf(":") != -1 || (targetPage != "" && !validURL(targetPage)))
        targetPage = "undefined";
    function validURL(url) {
        var pos = url.indexOf(".html");
        if (pos == -1 || pos != url.length - 5) return false;
        return true;
    }
    function loadFrames() {
        if (targetPage != "" && targetPage != "undefined")
             top.classFrame.location = top.targetPage;
    }
</SCRIPT>
</HEAD>
<FRAMESET cols="20%,80%" title="" onLoad="top.loadFrames()">
<FRAMESET rows="30%,70%" title="" onLoad="top.loadFrames()">
<FRAME src="overview-frame.html" name="packageListFrame" title="All Packages">
<FRAME src="allclasses-frame.html" name="packageFrame" title="All classes and interfaces">
</FRAMESET>
<FRAME src="overview-summary.html" name="classFrame" title="Package, class and interface descriptions" scrolling="yes">
<NOFRAMES><H2>Frame Alert</H2>
<P>This document is designed to be viewed using the frames feature.
Link to<A HREF="overview-summary.html">Non-frame version.</A></NOFRAMES>
</FRAMESET>
</HTML>
"""


def javadoc_site(packages: int, classes_per_package: int) -> tuple[Pages, set[str]]:
    """A JDK 6 style API doc site under /api/: packages x classes class pages and their frames."""
    pages: Pages = {}
    package_names = [f"java/pkg{p:02d}" for p in range(packages)]
    all_classes: list[tuple[str, str]] = []
    for package in package_names:
        names = [_class_name(c) for c in range(classes_per_package)]
        all_classes += [(package, name) for name in names]
        items = "".join(f'<A HREF="{name}.html" title="class in {package}" target="classFrame">{name}</A><BR>'
                        for name in names)
        pages[f"/api/{package}/package-frame.html"] = _javadoc_page(package, "../../", items)
        rows = "".join(f'<TR><TD><B><A HREF="{name}.html">{name}</A></B></TD><TD>The {name} class.</TD></TR>'
                       for name in names)
        pages[f"/api/{package}/package-summary.html"] = _javadoc_page(
            package, "../../", f"<H2>Package {package}</H2><TABLE>{rows}</TABLE>",
            _javadoc_nav("../../", "package-summary.html", f"{package}/package-summary.html", "PREV PACKAGE"),
        )
        for index, name in enumerate(names):
            prev_link = f'<A HREF="{names[index - 1]}.html"><B>PREV CLASS</B></A>' if index else "PREV CLASS"
            next_link = (f'<A HREF="{names[index + 1]}.html"><B>NEXT CLASS</B></A>'
                         if index + 1 < len(names) else "NEXT CLASS")
            body = (f"<H2><FONT SIZE=\"-1\">{package.replace('/', '.')}</FONT><BR>Class {name}</H2>"
                    f"<PRE>java.lang.Object<IMG SRC=\"../../resources/inherit.gif\" ALT=\"extended by \">"
                    f"<B>{package.replace('/', '.')}.{name}</B></PRE>"
                    f"<P>The <CODE>{name}</CODE> class represents a thing of the platform. " * 3
                    + '<P><B>See Also:</B><DD><A HREF="../../java/pkg00/Object.html"><CODE>Object</CODE></A>')
            pages[f"/api/{package}/{name}.html"] = _javadoc_page(
                name, "../../", body,
                _javadoc_nav("../../", f"{name}.html", f"{package}/{name}.html", f"{prev_link} {next_link}"),
            )
    links = "".join(f'<A HREF="{p}/{n}.html" target="classFrame">{n}</A><BR>' for p, n in all_classes)
    pages["/api/allclasses-frame.html"] = _javadoc_page("All Classes", "", links)
    pages["/api/allclasses-noframe.html"] = _javadoc_page("All Classes", "", links.replace(' target="classFrame"', ""))
    package_links = "".join(f'<A HREF="{p}/package-frame.html" target="packageFrame">{p}</A><BR>'
                            for p in package_names)
    pages["/api/overview-frame.html"] = _javadoc_page(
        "Overview", "", '<A HREF="allclasses-frame.html" target="packageFrame">All Classes</A><P>' + package_links
    )
    summary = "".join(f'<TR><TD><A HREF="{p}/package-summary.html">{p}</A></TD></TR>' for p in package_names)
    nav = _javadoc_nav("", "overview-summary.html", "overview-summary.html", "PREV NEXT")
    pages["/api/overview-summary.html"] = _javadoc_page("Overview", "", f"<TABLE>{summary}</TABLE>", nav)
    pages["/api/deprecated-list.html"] = _javadoc_page("Deprecated", "", "<H2>Deprecated API</H2>", nav)
    pages["/api/help-doc.html"] = _javadoc_page("Help", "", "<H2>How This API Document Is Organized</H2>", nav)
    pages["/api/index.html"] = _JAVADOC_INDEX
    pages["/"] = '<!DOCTYPE html><html><head><title>Docs</title></head><body><a href="/api/index.html">API</a></body></html>'
    return pages, set(pages)


_BAIDU_ANALYTICS = """<script>
var _hmt = _hmt || [];
(function() {
  var hm = document.createElement("script");
  hm.src = "//hm.baidu.com/hm.js?5f2c1e0d9a8b7c6d5e4f3a2b1c0d9e8f";
  var s = document.getElementsByTagName("script")[0];
  s.parentNode.insertBefore(hm, s);
})();
</script>"""
_BAIDU_PUSH = """<script>
(function(){
    var bp = document.createElement('script');
    var curProtocol = window.location.protocol.split(':')[0];
    if (curProtocol === 'https') {
        bp.src = 'https://zz.bdstatic.com/linksubmit/push.js';
    }
    else {
        bp.src = 'http://push.zhanzhang.baidu.com/push.js';
    }
    var s = document.getElementsByTagName("script")[0];
    s.parentNode.insertBefore(bp, s);
})();
</script>"""
_READY = """<script>
$(document).ready(function () {
  $('.article-entry img').addClass('img-responsive');
  $('#back-to-top').hide();
  $(window).scroll(function () {
    if ($(this).scrollTop() > 200) { $('#back-to-top').fadeIn(); } else { $('#back-to-top').fadeOut(); }
  });
  $('#back-to-top').click(function () { $('body,html').animate({scrollTop: 0}, 500); return false; });
  $('.highlight').each(function () { $(this).prepend('<span class="copy-btn">Copy</span>'); });
  $('#post-title').text(document.title.split(' | ')[0]);
});
</script>"""
# The theme's script: menus and search box, nothing that builds a link.
THEME_JS = """(function($){
  var $searchWrap = $('#search-form-wrap'), isSearchAnim = false, searchAnimDuration = 200;
  var startSearchAnim = function(){ isSearchAnim = true; };
  var stopSearchAnim = function(callback){ setTimeout(function(){ isSearchAnim = false; callback && callback(); }, searchAnimDuration); };
  $('#nav-search-btn').on('click', function(){
    if (isSearchAnim) return;
    startSearchAnim(); $searchWrap.addClass('on');
    stopSearchAnim(function(){ $('.search-form-input').focus(); });
  });
  $('.search-form-input').on('blur', function(){ startSearchAnim(); $searchWrap.removeClass('on'); stopSearchAnim(); });
  $('#main-nav-toggle').on('click', function(){ $('#container').toggleClass('mobile-nav-on'); });
})(jQuery);
"""


def _blog_page(title: str, body: str) -> str:
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title} | A Hexo Blog</title>
<link rel="stylesheet" href="/css/style.css">
<script src="/js/jquery.min.js"></script>
{_BAIDU_ANALYTICS}
</head><body>
<header><a href="/">Home</a> <a href="/archives/">Archives</a> <a href="/about/">About</a>
<a id="nav-search-btn" href="javascript:;">Search</a></header>
<main><h1 id="post-title">{title}</h1>{body}</main>
<a id="back-to-top" href="#">Top</a>
<script src="/js/script.js"></script>
{_READY}
{_BAIDU_PUSH}
</body></html>
"""


def blog_site(posts: int, per_page: int = 10) -> tuple[Pages, set[str]]:
    """A Hexo blog: ``posts`` posts, paginated index, archives, tags; scripts on every page."""
    pages: Pages = {}
    slugs = [f"/{2015 + i % 8}/{1 + i % 12:02d}/{1 + i % 28:02d}/post-{i:04d}/" for i in range(posts)]
    tags = [f"/tags/tag{t}/" for t in range(8)]
    text = "<p>" + "A post about things a reader might care about, long enough to be content. " * 6 + "</p>"
    for i, slug in enumerate(slugs):
        neighbours = "".join(f'<a href="{slugs[j]}">Post {j}</a> ' for j in (i - 1, i + 1) if 0 <= j < posts)
        body = (f'<article class="article-entry">{text}<figure class="highlight"><pre>print({i})</pre></figure>'
                f'<img src="/images/p{i}.png"></article><a href="{tags[i % len(tags)]}">tag</a> {neighbours}')
        pages[slug] = _blog_page(f"Post {i}", body)
    index_pages = max(1, -(-posts // per_page))
    for n in range(index_pages):
        items = "".join(f'<li><a href="{slug}">Post {i}</a></li>'
                        for i, slug in list(enumerate(slugs))[n * per_page : (n + 1) * per_page])
        more = f'<a href="/page/{n + 2}/">Older</a>' if n + 1 < index_pages else ""
        pages["/" if n == 0 else f"/page/{n + 1}/"] = _blog_page("Home", f"<ul>{items}</ul>{more}")
    pages["/archives/"] = _blog_page("Archives", "<ul>" + "".join(f'<li><a href="{s}">{s}</a></li>' for s in slugs)
                                     + "</ul>")
    for t, tag in enumerate(tags):
        tagged = "".join(f'<a href="{s}">{s}</a> ' for i, s in enumerate(slugs) if i % len(tags) == t)
        pages[tag] = _blog_page(f"Tag {t}", tagged)
    pages["/about/"] = _blog_page("About", text)
    return pages, set(pages)


def write_site(pages: Pages, root: Path, files: dict[str, str] | None = None) -> None:
    """Write the pages (and other files, e.g. scripts) under ``root`` for a static server."""
    for path, html in {**pages, **(files or {})}.items():
        target = root / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")


BLOG_FILES = {"/js/script.js": THEME_JS, "/js/jquery.min.js": "/*! jQuery v3.7.1 */ window.jQuery = window.$ = function(){};",
              "/css/style.css": "body { margin: 0; }", "/robots.txt": ""}
JAVADOC_FILES = {"/api/stylesheet.css": "body { background-color: #FFFFFF; }", "/robots.txt": ""}
