"""``scrapy publish`` on the values of real exports: empty fields, URLs given twice, fragments.

The real command in a subprocess; every set validated against the XSDs and read back by Scrapy's
reader (``Run.urls``). Each input is published twice where it matters: read in this process, and
in chunks by the worker processes (``SITEMAP_SORT_RUN_SIZE``), which must give the same set.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.crawl_fixtures import folder_files
from tests.test_publish_command import BASE, Run, jsonl, publish, write_lines


def _both(tmp_path: Path, path: Path, *options: str) -> tuple[Run, Run]:
    """``path`` published in this process and by the worker processes (chunks of 1,000 lines)."""
    single = publish(tmp_path, path, *options, output="single")
    batched = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", *options, output="batched")
    for run in (single, batched):
        assert run.returncode == 0, run.describe()
    return single, batched


def test_an_empty_or_blank_field_is_no_value(tmp_path: Path) -> None:
    """"" and whitespace are what a CMS or ``.get(default="")`` writes for no value: the URL is
    listed without it, as with null or an empty CSV cell, never left out as a bad line."""
    lines = jsonl(
        {"loc": BASE + "a", "lastmod": ""},
        {"loc": BASE + "b", "lastmod": "  "},
        {"loc": BASE + "c", "changefreq": "", "priority": ""},
        {"loc": BASE + "d", "lastmod": "2024-06-01", "changefreq": " ", "priority": "\t"},
        {"loc": BASE + "e", "lastmod": None, "changefreq": "daily", "priority": "0.5"},
    )
    run = publish(tmp_path, write_lines(tmp_path / "in.jl", lines))
    assert run.returncode == 0, run.describe()
    assert run.urls() == [
        {"loc": BASE + "a"},
        {"loc": BASE + "b"},
        {"loc": BASE + "c"},
        {"loc": BASE + "d", "lastmod": "2024-06-01"},
        {"loc": BASE + "e", "changefreq": "daily", "priority": "0.5"},
    ]
    assert "0 bad line(s) skipped" in run.stdout and "skipped" not in run.stderr, run.describe()


def test_a_quarter_of_empty_lastmods_in_a_big_input_all_listed(tmp_path: Path) -> None:
    """Blocks with an empty lastmod leave the fast path for the general one: same set either way."""
    lines = [
        json.dumps({"loc": f"{BASE}p/{n}", "lastmod": "" if n % 4 == 0 else f"2024-05-{n % 28 + 1:02d}"})
        for n in range(3000)
    ]
    single, batched = _both(tmp_path, write_lines(tmp_path / "big.jl", lines))
    assert folder_files(single.output_dir) == folder_files(batched.output_dir)
    urls = single.urls()
    assert len(urls) == 3000
    assert sum("lastmod" not in url for url in urls) == 750
    assert "Published 3,000 URLs" in single.stdout and "0 bad line(s)" in single.stdout, single.stdout


def test_a_fragment_is_dropped_and_its_url_listed_once(tmp_path: Path) -> None:
    """A sitemap lists pages, never a part of one: ``/a#top`` is ``/a``, given twice."""
    lines = [BASE + "a#top", BASE + "a", BASE + "b#x#y", "HTTPS://WWW.Example.COM/c?q=1#frag"]
    lines += [f"{BASE}p/{n}" for n in range(2500)]  # batched: fragments in one chunk, not in others
    single, batched = _both(tmp_path, write_lines(tmp_path / "urls.txt", lines))
    assert folder_files(single.output_dir) == folder_files(batched.output_dir)
    locs = [url["loc"] for url in single.urls()]
    # Nothing else of a loc valid as given changes.
    assert {BASE + "a", BASE + "b", "HTTPS://WWW.Example.COM/c?q=1"} <= set(locs)
    assert not any("#" in loc for loc in locs) and len(locs) == 2503
    assert "3 URL(s) with raw UTF-8 or spaces percent-encoded or a #fragment dropped" in single.stdout
    assert "1 repeated URL(s) listed once" in single.stdout, single.stdout


def test_a_url_given_twice_is_listed_with_its_latest_lastmod(tmp_path: Path) -> None:
    """Compared as instants, not as text; an undated line erases no date; the other fields are
    those of the line whose lastmod is kept. Where the lines are (one chunk or two) does not matter."""
    firsts = [
        {"loc": BASE + "d", "lastmod": "2024-06-01"},
        {"loc": BASE + "d2", "lastmod": "2024-01-01"},
        {"loc": BASE + "e", "lastmod": "2024-06-01T10:00:00+00:00"},
        {"loc": BASE + "g"},
        {"loc": BASE + "g2", "lastmod": "2020-01-01"},
        {"loc": BASE + "h", "lastmod": "2024-01-01", "changefreq": "daily", "priority": 0.9},
        {"loc": BASE + "z", "lastmod": "2024-06-01T05:00:00Z"},
    ]
    seconds = [
        {"loc": BASE + "d", "lastmod": "2024-01-01"},
        {"loc": BASE + "d2", "lastmod": "2024-06-01"},
        {"loc": BASE + "e", "lastmod": "2024-06-01T09:00:00-05:00"},  # 14:00 UTC
        {"loc": BASE + "g", "lastmod": "2020-01-01"},
        {"loc": BASE + "g2", "priority": 0.1},
        {"loc": BASE + "h", "lastmod": "2024-02-01"},
        {"loc": BASE + "z", "lastmod": "2024-06-01T12:00:00+0530"},  # 06:30 UTC
    ]
    pages = jsonl(*({"loc": f"{BASE}p/{n}", "lastmod": "2024-05-01"} for n in range(2500)))
    lines = jsonl(*firsts) + pages + jsonl(*seconds)
    single, batched = _both(tmp_path, write_lines(tmp_path / "dup.jl", lines))
    assert folder_files(single.output_dir) == folder_files(batched.output_dir)
    urls = {url["loc"]: url for url in single.urls() if "/p/" not in url["loc"]}
    assert urls == {
        BASE + "d": {"loc": BASE + "d", "lastmod": "2024-06-01"},
        BASE + "d2": {"loc": BASE + "d2", "lastmod": "2024-06-01"},
        BASE + "e": {"loc": BASE + "e", "lastmod": "2024-06-01T09:00:00-05:00"},
        BASE + "g": {"loc": BASE + "g", "lastmod": "2020-01-01"},
        BASE + "g2": {"loc": BASE + "g2", "lastmod": "2020-01-01"},
        BASE + "h": {"loc": BASE + "h", "lastmod": "2024-02-01"},
        BASE + "z": {"loc": BASE + "z", "lastmod": "2024-06-01T12:00:00+05:30"},
    }
    assert "7 repeated URL(s) listed once" in single.stdout, single.stdout
    # Reversed, the input gives the same files.
    reverse = publish(tmp_path, write_lines(tmp_path / "reversed.jl", lines[::-1]), output="reversed")
    assert reverse.returncode == 0, reverse.describe()
    assert folder_files(reverse.output_dir) == folder_files(single.output_dir)


def test_urls_not_under_the_base_url_are_counted_with_an_example(tmp_path: Path) -> None:
    lines = [BASE + "a", "http://www.example.com/b", "https://shop.example.com/c"]
    run = publish(tmp_path, write_lines(tmp_path / "urls.txt", lines))
    assert run.returncode == 0, run.describe()
    assert f"2 URL(s) not under {BASE} published as given (such as http://www.example.com/b)" in run.stdout
    assert len(run.urls()) == 3
