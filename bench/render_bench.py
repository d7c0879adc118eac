"""Rendering benchmark: what ``render=auto`` costs and finds, against ``render=never``, per site.

    .venv/bin/python bench/render_bench.py                      # issue #15's sites and sizes
    .venv/bin/python bench/render_bench.py --cases generated --pages 3000 --js-share 0.01
    .venv/bin/python bench/render_bench.py --cases "" --site tests/data/sites/hexo-blog --site tests/data/sites/javadoc

Sites (bench/js_sites.py; ``--cases`` picks some):

- ``generated``: the crawl benchmark's static site (bench/sitegen.py) with a share of its pages
  given an inline script that builds a link to a page linked from nowhere else; by default the
  issue's case, 20,000 pages and 60 (0.3%) with such a script. A browser's fixed cost (starting,
  about 0.1 CPU s per render) weighs more on a smaller site: ``--pages 3000 --js-share 0.01``;
- ``javadoc``: a JDK 6 style API doc (frames, windowTitle(), document.writeln links on every page);
- ``blog``: a Hexo blog (Baidu analytics and link-push loaders, jQuery ready snippets).

Runs, in the same run, ``render=never`` and ``render=auto`` (and ``render=always`` with
``--always``) on each and reports wall time, CPU seconds (Chromium's included: it is a child
of the crawl), pages rendered, rendered pages per second, whether each published set is
exactly the expected one, and per site the ratio auto / never. ``rendered/s`` is pages
rendered per second of the whole crawl; the summary also gives the rate beyond ``never``:
rendered pages per second the mode added to the crawl's wall time. Rendering throughput on
its own: ``--cases generated --pages 300 --always`` (every page rendered).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import compile_project
from js_sites import BLOG_FILES, JAVADOC_FILES, blog_site, javadoc_site, write_site
from run import Result, crawl_ours, published_entries
from server import serve
from sitegen import GeneratedSite, add_script_links, generate, page_path

def _js_site(work: Path, case: str, scale: int) -> GeneratedSite:
    if case == "javadoc":
        pages, expected = javadoc_site(packages=max(1, scale // 50), classes_per_package=50)
        files = JAVADOC_FILES
    else:
        pages, expected = blog_site(posts=scale)
        files = BLOG_FILES
    root = work / case / "www"
    write_site(pages, root, files)
    # The sitemap check compares paths: javadoc's index.html?<class> URLs list as /api/index.html.
    return GeneratedSite(root, len(pages), {}, frozenset(expected))


def _run_case(case: str, site: GeneratedSite, never_site: GeneratedSite, modes: list[str], args: argparse.Namespace,
              work: Path, real: bool = False) -> dict[str, tuple[Result, int]]:
    kind, server = serve(site.root, site.redirects, work / case, args.server)
    results: dict[str, tuple[Result, int]] = {}
    with server as base:
        print(f"{case}: {site.pages:,} pages; server: {kind}", flush=True)
        for mode in modes:
            name = f"{case}-{mode}"
            expected_site = never_site if mode == "never" else site
            # A real site's expected set is not known: auto and always are compared with never's.
            result = crawl_ours(base, work, None if real else expected_site, name, [f"SITEMAP_RENDER={mode}"], None)
            if real and mode != "never":
                never = published_entries(work / f"sitemaps-{case}-never")
                same = published_entries(work / f"sitemaps-{name}") == never
                result.check += ", the same set as never" if same else ", NOT THE SET NEVER PUBLISHED"
            log = (work / f"{name}.log").read_text(errors="replace")
            rendered = sum(int(n) for n in re.findall(r"'sitemap/render/(?:pages|probes)': (\d+)", log))
            browser = "yes" if "Starting download handler" in log else "no"
            result.check = f"{result.check}; browser started: {browser}"
            results[mode] = (result, rendered)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=20_000, help="pages of the generated site")
    parser.add_argument("--js-share", type=float, default=0.003, help="share of pages with a script-built link")
    parser.add_argument("--javadoc-classes", type=int, default=2000, help="class pages of the javadoc site")
    parser.add_argument("--blog-posts", type=int, default=500, help="posts of the blog")
    parser.add_argument("--cases", default="generated,javadoc,blog", help="comma-separated: generated, javadoc, blog")
    parser.add_argument("--site", type=Path, action="append", default=[],
                        help="a real static site's directory (tests/data/sites/*), served as it is; repeatable")
    parser.add_argument("--always", action="store_true", help="also run render=always (slow: every page)")
    parser.add_argument("--server", choices=("auto", "nginx", "python"), default="auto")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    compile_project()
    modes = ["never", "auto"] + (["always"] if args.always else [])
    all_results: dict[str, dict[str, tuple[Result, int]]] = {}
    with tempfile.TemporaryDirectory(prefix="render-bench-") as tmp:
        work = Path(tmp)
        for directory in args.site:
            case = directory.resolve().name
            pages = sum(1 for _ in directory.rglob("*.html"))
            real_site = GeneratedSite(directory.resolve(), pages, {}, frozenset())
            all_results[case] = _run_case(case, real_site, real_site, modes, args, work, real=True)
        for case in (args.cases.split(",") if args.cases else []):
            (work / case).mkdir()
            if case == "generated":
                site, hidden = add_script_links(generate(work / case, args.pages), args.js_share)
                print(f"generated: {len(hidden)} pages reached only through scripts")
                never_site = replace(site, expected=site.expected - hidden)
            else:
                site = never_site = _js_site(work, case, args.javadoc_classes if case == "javadoc" else args.blog_posts)
            all_results[case] = _run_case(case, site, never_site, modes, args, work)

    print(f"\n{'site':<12}{'mode':<8}{'wall s':>9}{'CPU s':>8}{'fetched':>9}{'rendered':>10}{'rendered/s':>12}  output check")
    for case, results in all_results.items():
        for mode, (result, rendered) in results.items():
            per_second = rendered / result.wall if rendered else 0.0
            print(
                f"{case:<12}{mode:<8}{result.wall:>9.1f}{result.cpu:>8.1f}{result.pages:>9,}{rendered:>10,}"
                f"{per_second:>12.1f}  {result.check}"
            )
    print()
    for case, results in all_results.items():
        never, auto = results["never"][0], results["auto"][0]
        print(f"{case}: auto / never = {auto.wall / never.wall:.2f}x wall time, {auto.cpu / never.cpu:.2f}x CPU")
        for mode, (result, rendered) in results.items():
            added = result.wall - never.wall
            if rendered and added > 0:
                print(f"{case}: {mode} rendered {rendered:,} pages in {added:.1f} s beyond never: "
                      f"{rendered / added:.1f} rendered pages per added second")
    if args.json:
        args.json.write_text(json.dumps(
            {case: {mode: {**vars(r), "rendered": n} for mode, (r, n) in results.items()}
             for case, results in all_results.items()}, indent=1))


if __name__ == "__main__":
    main()
