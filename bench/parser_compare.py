"""HTML parsers on saved pages (#28): lxml, as Scrapy's selectors build their tree, against lexbor (selectolax).

    .venv/bin/pip install selectolax      # not a dependency of the project
    .venv/bin/python bench/parser_compare.py tests/data/sites/hexo-blog tests/data/sites/javadoc ...

For each folder, up to 300 of its ``.html`` files are read into memory, then each parser is
timed over all of them, best of 5 rounds: the parse alone, and the parse plus every ``a[href]``
(what a crawler reads from every page). Microseconds per page. No server, no crawl.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree


def lxml_tree(body: bytes) -> etree._Element:
    # The parser parsel's Selector uses for HTML (parsel.selector.create_root_node).
    parser = etree.HTMLParser(recover=True, encoding="utf-8", remove_comments=True)
    return etree.fromstring(body, parser=parser, base_url="http://example.invalid/")


def lxml_links(body: bytes) -> list[str]:
    return [href for a in lxml_tree(body).iter("a") if (href := a.get("href")) is not None]


def per_page(read: Callable[[bytes], object], bodies: list[bytes], rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for body in bodies:
            read(body)
        best = min(best, time.perf_counter() - started)
    return best / len(bodies) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--pages", type=int, default=300)
    args = parser.parse_args()
    try:
        from selectolax.lexbor import LexborHTMLParser
    except ImportError:
        parser.error("selectolax is not installed: .venv/bin/pip install selectolax")

    def lexbor_links(body: bytes) -> list[str]:
        return [href for node in LexborHTMLParser(body).css("a[href]") if (href := node.attributes.get("href"))]

    print("| pages | KiB a page | parse: lxml | lexbor | parse + links: lxml | lexbor |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for folder in args.folders:
        bodies = [path.read_bytes() for path in sorted(folder.rglob("*.html"))[: args.pages]]
        if not bodies:
            continue
        kib = sum(map(len, bodies)) / len(bodies) / 1024
        cells = [per_page(read, bodies) for read in (lxml_tree, LexborHTMLParser, lxml_links, lexbor_links)]
        print(f"| {folder.name} ({len(bodies)}) | {kib:.1f} | " + " | ".join(f"{cell:.0f}" for cell in cells) + " |")


if __name__ == "__main__":
    main()
