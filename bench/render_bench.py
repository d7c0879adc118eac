"""Rendering benchmark: what ``render=auto`` costs and finds on a mostly static site.

    .venv/bin/python bench/render_bench.py --pages 3000 --js-share 0.03

Generates the crawl benchmark's static site (bench/sitegen.py), then gives a few percent of its
pages an inline script that builds a link to a page linked from nowhere else. Runs, in the same
run, ``render=never`` and ``render=auto`` (and ``render=always`` with ``--always``) and reports
wall time, CPU seconds (Chromium's included: it is a child of the crawl), pages rendered,
rendered pages per second, whether each published set is exactly the expected one, and the
ratio auto / never.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import compile_project
from run import Result, crawl_ours
from server import serve
from sitegen import GeneratedSite, generate, page_path

SCRIPT = (
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
        file.write_text(html.replace("</body>", SCRIPT.format(href=target) + "</body>", 1), encoding="utf-8")
        page = site.root / target.lstrip("/")
        page.parent.mkdir(exist_ok=True)
        page.write_text(
            f"<!DOCTYPE html><html><head><title>J{index}</title></head><body><p>Reached only through a "
            f"script on {path}.</p><a href=\"/\">home</a></body></html>",
            encoding="utf-8",
        )
        hidden.add(target)
    return replace(site, expected=site.expected | hidden), hidden


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--js-share", type=float, default=0.03, help="share of pages with a script-built link")
    parser.add_argument("--always", action="store_true", help="also run render=always (slow: every page)")
    parser.add_argument("--server", choices=("auto", "nginx", "python"), default="auto")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    compile_project()

    with tempfile.TemporaryDirectory(prefix="render-bench-") as tmp:
        work = Path(tmp)
        site, hidden = add_script_links(generate(work, args.pages), args.js_share)
        static_site = replace(site, expected=site.expected - hidden)
        kind, server = serve(site.root, site.redirects, work, args.server)
        modes = ["never", "auto"] + (["always"] if args.always else [])
        results: dict[str, tuple[Result, int]] = {}
        with server as base:
            print(f"site: {args.pages:,} pages, {len(hidden)} reached only through scripts; server: {kind}")
            for mode in modes:
                expected_site = static_site if mode == "never" else site
                result = crawl_ours(base, work, expected_site, mode, [f"SITEMAP_RENDER={mode}"], None)
                log = (work / f"{mode}.log").read_text(errors="replace")
                rendered = sum(int(n) for n in re.findall(r"'sitemap/render/pages': (\d+)", log))
                results[mode] = (result, rendered)

    print(f"\n{'mode':<8}{'wall s':>9}{'CPU s':>8}{'fetched':>9}{'rendered':>10}{'rendered/s':>12}  output check")
    for mode, (result, rendered) in results.items():
        per_second = rendered / result.wall if rendered else 0.0
        print(
            f"{mode:<8}{result.wall:>9.1f}{result.cpu:>8.1f}{result.pages:>9,}{rendered:>10,}"
            f"{per_second:>12.1f}  {result.check}"
        )
    never, auto = results["never"][0], results["auto"][0]
    print(f"\nauto / never: {auto.wall / never.wall:.2f}x wall time, {auto.cpu / never.cpu:.2f}x CPU")
    if args.json:
        args.json.write_text(
            json.dumps({mode: {**vars(r), "rendered": n} for mode, (r, n) in results.items()}, indent=1)
        )


if __name__ == "__main__":
    main()
