"""A site in the layout of Doxygen's HTML output, whose navigation only scripts build.

Every page loads ``menudata.js`` and ``menu.js`` (the top menu, built from a data
object) and ``navtree.js`` (the side tree). The tree script adds a ``<script>``
element for ``navtreedata.js`` once the page has loaded; that file's top nodes
name further script files, one per section, which the tree loads in turn before
it draws the section's links. The index page's static HTML links nowhere; class
and file pages link only a few neighbours. A crawler finds most pages only
through what the scripts build, after a chain of script loads.

``doxygen_site`` returns ``{path: html}``, the script files, and every page path.
"""

from __future__ import annotations

Pages = dict[str, str]

_MENU_JS = """function initMenu(relPath) {
  function list(items) {
    var ul = document.createElement('ul');
    items.forEach(function (item) {
      var li = document.createElement('li'), a = document.createElement('a');
      a.href = relPath + item.url; a.textContent = item.text; li.appendChild(a);
      if (item.children) li.appendChild(list(item.children));
      ul.appendChild(li);
    });
    return ul;
  }
  document.getElementById('main-nav').appendChild(list(menudata.children));
}
"""
_NAVTREE_JS = """var NAVTREE, NAVSECTIONS = {};
function loadScript(src, done) {
  var s = document.createElement('script'); s.src = src; s.onload = done;
  document.head.appendChild(s);
}
function drawSection(tree, name) {
  var ul = document.createElement('ul');
  NAVSECTIONS[name].forEach(function (node) {
    var li = document.createElement('li'), a = document.createElement('a');
    a.href = node[1]; a.textContent = node[0]; li.appendChild(a); ul.appendChild(li);
  });
  tree.appendChild(ul);
}
function initNavTree() {
  var tree = document.getElementById('nav-tree');
  loadScript('navtreedata.js', function () {
    NAVTREE.forEach(function (top) {
      var a = document.createElement('a'); a.href = top[1]; a.textContent = top[0]; tree.appendChild(a);
      loadScript(top[2], function () { drawSection(tree, top[2]); });
    });
  });
}
window.addEventListener('load', initNavTree);
"""


def _page(title: str, body: str) -> str:
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Project: {title}</title>
<link href="doxygen.css" rel="stylesheet">
<script src="menudata.js"></script><script src="menu.js"></script><script src="navtree.js"></script>
</head><body>
<div id="top"><div id="main-nav"></div></div>
<div id="side-nav"><div id="nav-tree"></div></div>
<div class="contents"><h1>{title}</h1>{body}</div>
<script>initMenu('');</script>
</body></html>
"""


def doxygen_site(classes: int = 60, files: int = 20) -> tuple[Pages, dict[str, str], set[str]]:
    """The pages (under /docs/), the script files, and the paths of every page."""
    class_names = [f"class_widget{n:03d}.html" for n in range(classes)]
    file_names = [f"file_source{n:03d}_8h.html" for n in range(files)]
    text = "<p>" + "Documentation a reader came for, long enough to be content. " * 3 + "</p>"
    pages: Pages = {"/docs/index.html": _page("Main Page", text)}
    for kind, names in (("class", class_names), ("file", file_names)):
        for n, name in enumerate(names):
            neighbour = names[(n + 1) % len(names)]
            pages[f"/docs/{name}"] = _page(f"{kind} {n}", text + f'<a href="{neighbour}">next {kind}</a>')
    pages["/docs/annotated.html"] = _page("Class List", text)
    pages["/docs/files.html"] = _page("File List", text)
    menu = ("var menudata = {children: [{text: 'Main Page', url: 'index.html'}, "
            "{text: 'Classes', url: 'annotated.html'}, {text: 'Files', url: 'files.html'}]};\n")
    navtree = ("NAVTREE = [['Classes', 'annotated.html', 'navtree_classes.js'], "
               "['Files', 'files.html', 'navtree_files.js']];\n")
    scripts = {
        "/docs/menu.js": _MENU_JS,
        "/docs/menudata.js": menu,
        "/docs/navtree.js": _NAVTREE_JS,
        "/docs/navtreedata.js": navtree,
        "/docs/navtree_classes.js": _section("navtree_classes.js", class_names),
        "/docs/navtree_files.js": _section("navtree_files.js", file_names),
        "/docs/doxygen.css": "body { font: 400 14px/22px Roboto, sans-serif; }",
    }
    return pages, scripts, set(pages)


def _section(name: str, pages: list[str]) -> str:
    nodes = ", ".join(f"['{page[:-5]}', '{page}']" for page in pages)
    return f"NAVSECTIONS['{name}'] = [{nodes}];\n"
