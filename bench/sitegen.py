"""A generated static site for the crawl benchmark, and the sitemap the crawl must publish for it.

The site is a directory of ``.html`` files that any static server (nginx) can serve, plus a
redirect table for the server. It looks like a real site to a crawler:

- nested directories (``/s07/t03/p012345.html``), 20-60 links per page: a navigation block
  repeated on every page, links down a tree (so every page is reachable in a few clicks),
  and random links across the site;
- about 2% ``noindex`` pages, 2% pages whose canonical URL is another page, 1% links through a
  301 redirect, 1% links to pages that do not exist (404), links with tracking parameters,
  links to another site, and a ``/private/`` directory that robots.txt disallows.

``expected`` is exactly the set of URL paths the sitemap must list (each once).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, replace
from pathlib import Path

SECTIONS = 12
TOPICS = 10
# Children per page in the tree that makes every page reachable (depth ~ log_5 N).
FANOUT = 5
_WORDS = (
    "sitemap", "crawler", "index", "page", "link", "robots", "canonical", "redirect", "server", "static",
    "archive", "product", "review", "guide", "news", "report", "season", "travel", "recipe", "garden",
    "music", "library", "city",
)


@dataclass(frozen=True)
class GeneratedSite:
    """A site on disk: its root directory, redirects and the paths its sitemap must list."""

    root: Path
    pages: int
    redirects: dict[str, str]
    expected: frozenset[str]

    def save_manifest(self) -> None:
        manifest = {"pages": self.pages, "redirects": self.redirects, "expected": sorted(self.expected)}
        (self.root.parent / "manifest.json").write_text(json.dumps(manifest))

    @classmethod
    def load(cls, root: Path) -> GeneratedSite:
        """A site generated earlier (``--site DIR``): DIR/www and DIR/manifest.json."""
        manifest = json.loads((root.parent / "manifest.json").read_text())
        return cls(root, manifest["pages"], manifest["redirects"], frozenset(manifest["expected"]))


def page_path(index: int) -> str:
    if index == 0:
        return "/"
    return f"/s{index % SECTIONS:02d}/t{index // SECTIONS % TOPICS:02d}/p{index:06d}.html"


def _paragraphs(rng: random.Random, count: int) -> str:
    return "\n".join(
        "<p>" + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(40, 90))) + ".</p>" for _ in range(count)
    )


def _html(title: str, head: str, nav: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title><meta name=\"viewport\" content=\"width=device-width\">"
        f"<link rel=\"stylesheet\" href=\"/static/site.css\">{head}</head>\n"
        f"<body><header><nav>{nav}</nav></header>\n<main><h1>{title}</h1>\n{body}</main>\n"
        "<footer><a href=\"/about.html\">About</a> <a href=\"https://other.example.org/\">Partner</a>"
        "</footer></body></html>\n"
    )


def generate(directory: Path, pages: int, seed: int = 1, small: bool = False) -> GeneratedSite:
    """Write a site of ``pages`` HTML pages (plus a few extra files) under ``directory/www``.

    ``small``: pages with few links (a navigation of four, the tree's children and 1-3 others) and
    one to three paragraphs, as on a site of short articles, instead of 20-60 links a page.
    """
    rng = random.Random(seed)
    root = directory / "www"
    root.mkdir(parents=True)
    sections = range(1, 3) if small else range(1, SECTIONS)
    nav = " ".join(f'<a href="/s{s:02d}/t00/p{s:06d}.html">Section {s}</a>' for s in sections) + (
        ' <a href="/">Home</a> <a href="/about.html">About</a>'
    )
    cross_links, paragraphs = ((1, 3), (1, 3)) if small else ((8, 36), (3, 8))
    noindex = {i for i in range(1, pages) if rng.random() < 0.02}
    canonical = {i: rng.randrange(1, pages) for i in range(1, pages) if i not in noindex and rng.random() < 0.02}
    canonical = {i: target for i, target in canonical.items() if target not in canonical and target != i}
    redirects: dict[str, str] = {}
    expected = {"/", "/about.html"}
    for index in range(pages):
        path = page_path(index)
        links = [page_path(child) for child in range(index * FANOUT + 1, min(pages, index * FANOUT + FANOUT + 1))]
        links += [page_path(rng.randrange(pages)) for _ in range(rng.randint(*cross_links))]
        extra = rng.random()
        if extra < 0.01:  # through a redirect to a real page
            old = f"/old/{index:06d}.html"
            redirects[old] = page_path(rng.randrange(pages))
            links.append(old)
        elif extra < 0.02:  # a page that does not exist
            links.append(f"/gone/{index:06d}.html")
        elif extra < 0.03:  # the same page with tracking parameters
            links.append(page_path(rng.randrange(pages)) + "?utm_source=newsletter&utm_medium=email")
        elif extra < 0.035:  # disallowed by robots.txt
            links.append(f"/private/{index:06d}.html")
        head = ""
        if index in noindex:
            head = '<meta name="robots" content="noindex, follow">'
        elif index in canonical:
            head = f'<link rel="canonical" href="{page_path(canonical[index])}">'
            if canonical[index] in noindex:  # a canonical URL that is not indexable: the page is listed itself
                expected.add(path)
        else:
            expected.add(path)
        body = _paragraphs(rng, rng.randint(*paragraphs)) + "\n<ul>" + "".join(
            f'<li><a href="{link}">{rng.choice(_WORDS)} {n}</a></li>' for n, link in enumerate(links)
        ) + "</ul>"
        _write(root, path, _html(f"Page {index}", head, nav, body))
    _write(root, "/about.html", _html("About", "", nav, _paragraphs(rng, 2)))
    for index in range(0, pages, 200):  # exists, but robots.txt forbids it: never fetched, never listed
        _write(root, f"/private/{index:06d}.html", _html("Private", "", nav, ""))
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (root / "static").mkdir()
    (root / "static" / "site.css").write_text("body { font-family: sans-serif; }\n")
    # World-readable: nginx's worker processes do not run as the user who generated it.
    for dirpath, _, _ in os.walk(directory):
        os.chmod(dirpath, 0o755)
    site = GeneratedSite(root, pages, redirects, frozenset(expected))
    site.save_manifest()
    return site


_SCRIPT = (
    '<div id="more"></div><script>const a = document.createElement("a"); a.href = "{href}";'
    'a.textContent = "more"; document.getElementById("more").appendChild(a);</script>'
)


def add_script_links(site: GeneratedSite, share: float, seed: int = 7) -> tuple[GeneratedSite, set[str]]:
    """Give ``share`` of the pages a script-built link to a page of its own; return the new paths."""
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(1, site.pages), max(1, int(site.pages * share))))
    hidden = set()
    for index in chosen:
        path = page_path(index)
        file = site.root / path.lstrip("/")
        target = f"/js/j{index:06d}.html"
        html = file.read_text(encoding="utf-8")
        file.write_text(html.replace("</body>", _SCRIPT.format(href=target) + "</body>", 1), encoding="utf-8")
        page = site.root / target.lstrip("/")
        page.parent.mkdir(exist_ok=True)
        page.write_text(
            f"<!DOCTYPE html><html><head><title>J{index}</title></head><body><p>Reached only through a "
            f"script on {path}.</p><a href=\"/\">home</a></body></html>",
            encoding="utf-8",
        )
        hidden.add(target)
    return replace(site, expected=site.expected | hidden), hidden


def _write(root: Path, path: str, html: str) -> None:
    target = root / (path.lstrip("/") or "index.html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
